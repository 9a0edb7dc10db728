//===- Plan.cpp ------------------------------------------------------------===//
#include "aoa/ir/Plan.h"

#include "aoa/ir/IntegerList.h"

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

std::optional<std::vector<TransformStep>>
parseTransformSteps(const std::vector<std::string> &texts, size_t inputRank,
                    std::string &why) {
  std::vector<TransformStep> steps;
  size_t rank = inputRank;
  for (const std::string &text : texts) {
    TransformStep step;
    auto marker = [&](std::string_view prefix) {
      return text.compare(0, prefix.size(), prefix) == 0;
    };
    if (!text.empty() && text.front() == '[') {
      std::optional<Permutation> p = Permutation::parse(text, rank, &why);
      if (!p)
        return std::nullopt;
      step.kind = TransformStep::Kind::Permute;
      step.permutation = *p;
    } else if (marker("reshape:") || marker("flatten:")) {
      bool flatten = marker("flatten:");
      std::optional<std::vector<int64_t>> canonical =
          parseIntegerList(std::string_view(text).substr(8));
      if (!canonical || canonical->size() < 3 ||
          std::any_of(canonical->begin(), canonical->end(),
                      [](int64_t extent) { return extent <= 0; }) ||
          rank != (flatten ? canonical->size() : 2)) {
        why = "'" + text + "' does not apply to data of rank " +
              std::to_string(rank);
        return std::nullopt;
      }
      step.kind = flatten ? TransformStep::Kind::Flatten
                          : TransformStep::Kind::Reshape;
      step.canonical = *canonical;
      rank = flatten ? 2 : canonical->size();
    } else if (std::optional<DType> dtype = parseDTypeName(text)) {
      step.kind = TransformStep::Kind::Cast;
      step.dtype = *dtype;
    } else {
      why = "unknown transform '" + text + "'";
      return std::nullopt;
    }
    steps.push_back(std::move(step));
  }
  return steps;
}

DType dtypeAfter(const std::vector<TransformStep> &steps, DType dtype) {
  for (const TransformStep &step : steps)
    if (step.kind == TransformStep::Kind::Cast)
      dtype = step.dtype;
  return dtype;
}

bool keepsBoxes(const std::vector<TransformStep> &steps) {
  return std::all_of(steps.begin(), steps.end(), [](const TransformStep &s) {
    return s.kind == TransformStep::Kind::Permute ||
           s.kind == TransformStep::Kind::Cast;
  });
}

Permutation composedPermutation(const std::vector<TransformStep> &steps,
                                size_t rank) {
  Permutation p = Permutation::identity(rank);
  for (const TransformStep &step : steps)
    if (step.kind == TransformStep::Kind::Permute)
      p = p.then(step.permutation);
  return p;
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

uint32_t TransformTable::intern(const std::vector<TransformStep> &steps) {
  std::string key;
  for (const TransformStep &step : steps) {
    key += step.text();
    key += '\n'; // no step's text holds one
  }
  auto [it, inserted] =
      ids_.emplace(std::move(key), static_cast<uint32_t>(transforms.size()));
  if (inserted)
    transforms.push_back(steps);
  return it->second;
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
