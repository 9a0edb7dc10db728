//===- RankGroup.cpp ------------------------------------------------------===//
#include "aoa/runtime/exec/RankGroup.h"

namespace aoa::runtime {

RankGroup::~RankGroup() = default;

std::vector<uint32_t> RankGroup::failedRanks(bool failed) const {
  std::vector<uint64_t> flags(size(), 0);
  flags[rank()] = failed ? 1 : 0;
  sum(flags);
  std::vector<uint32_t> ranks;
  for (uint32_t r = 0; r < size(); ++r)
    if (flags[r])
      ranks.push_back(r);
  return ranks;
}

namespace {

class SingleRankGroup final : public RankGroup {
public:
  std::string broadcast(std::string text) const override { return text; }
  void sum(std::vector<uint64_t> &) const override {}
  void sumOnHost(std::vector<uint64_t> &) const override {}
  void max(std::vector<uint64_t> &) const override {}
  void bitwiseOrOnRankZero(std::vector<uint64_t> &) const override {}
  void barrier() const override {}
};

} // namespace

std::unique_ptr<RankGroup> makeSingleRankGroup() {
  return std::make_unique<SingleRankGroup>();
}

} // namespace aoa::runtime
