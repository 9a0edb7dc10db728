//===- DeviceTransport.cpp ------------------------------------------------===//
#include "DeviceTransport.h"

#include "aoa/runtime/exec/RankRound.h"

namespace aoa::runtime {

DeviceTransport::~DeviceTransport() = default;

namespace {

class SingleRankTransport final : public DeviceTransport {
public:
  Status exchange(const RankRound &round,
                  llvm::function_ref<uint8_t *(uint32_t)>, Device &, unsigned,
                  uint64_t &) override {
    if (round.sends().empty() && round.receives().empty())
      return Status();
    return Error{round.where() + ": a message between ranks in a job of one "
                                 "process",
                 "the plan is inconsistent; recompile it"};
  }
};

} // namespace

std::unique_ptr<DeviceTransport> makeSingleRankTransport() {
  return std::make_unique<SingleRankTransport>();
}

} // namespace aoa::runtime
