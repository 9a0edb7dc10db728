//===- Plan.cpp ------------------------------------------------------------===//
#include "aoa/ir/Plan.h"

#include <algorithm>

namespace aoa {
namespace plan {

std::vector<int64_t> StoredTensor::storedShape() const {
  if (flat)
    return {flat->size()};
  return box.shape();
}

int64_t StoredTensor::storedElements() const {
  return flat ? flat->size() : box.volume();
}

std::string TransformStep::text() const {
  switch (kind) {
  case Kind::Permute:
    return permutation.toString();
  case Kind::Cast:
    return std::string(dtypeName(dtype));
  case Kind::Reshape:
    return "reshape:" + formatShape(canonical);
  case Kind::Flatten:
    return "flatten:" + formatShape(canonical);
  }
  return "";
}

int64_t BufferDecl::bytes() const {
  int64_t n = static_cast<int64_t>(dtypeSize(dtype));
  for (int64_t d : shape)
    n *= d;
  return n;
}

int64_t Round::bufferBytes() const {
  int64_t total = 0;
  for (const BufferDecl &b : buffers)
    total += b.bytes();
  return total;
}

std::vector<RankCost> Plan::costs() const {
  std::vector<RankCost> out(ranks);
  for (uint32_t r = 0; r < programs.size() && r < ranks; ++r) {
    RankCost &c = out[r];
    for (const Round &round : programs[r].rounds) {
      c.peakBufferBytes = std::max(c.peakBufferBytes, round.bufferBytes());
      c.instructions += static_cast<int64_t>(round.instructions.size());
      for (const Instruction &in : round.instructions) {
        int64_t bytes = 0;
        for (uint32_t b : in.buffers)
          bytes += round.buffers[b].bytes();
        switch (in.opcode) {
        case Opcode::Read:
          c.bytesRead += round.buffers[in.buffer].bytes();
          break;
        case Opcode::Send:
          c.bytesSent += bytes;
          break;
        case Opcode::Recv:
          c.bytesReceived += bytes;
          break;
        case Opcode::Write:
          c.bytesWritten += round.buffers[in.buffer].bytes();
          break;
        case Opcode::Copy:
          break;
        }
      }
    }
  }
  return out;
}

} // namespace plan
} // namespace aoa
