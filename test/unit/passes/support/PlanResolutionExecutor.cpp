//===- PlanResolutionExecutor.cpp - Executing a plan on labels ------------===//
//
// Runs a compiled plan element by element on labels (source key, global
// coordinates), sharing no code with runtime/. With PlanResolutionChecker.cpp
// it checks:
//  - every stored destination element is written exactly once, with the
//    label the brute-force model of the statements predicts;
//  - plan tensors are the metadata's shards, unchanged, and every
//    destination shard is in the plan once;
//  - every send has its receive (same round, peer and order), buffers match
//    in shape and dtype, every buffer is filled once before it is used, and
//    copies give the shape and dtype of their output buffer;
//  - a rank reads only source files of its own rank (any source file, with
//    shared source access) and writes only destination files of its own
//    rank;
//  - per rank and round the buffers fit the memory budget unless they all
//    serve one indivisible transfer (one read) that is larger by itself;
//  - no data crosses ranks when the writing rank stores that source element
//    (replicas on the destination's own rank are preferred);
//  - no (rank, source tensor, region) is read twice;
//  - no copy casts more than once (no statement here does).
// Error cases: holes in the source, overlapping non-replica source shards,
// one file on two ranks. The checker is itself tested on corrupted plans.
//
//===----------------------------------------------------------------------===//
#include "PlanResolutionExecutor.h"

#include <algorithm>

namespace aoa::plan_resolution_test {

std::vector<std::string> Executor::run() {
  indexSources();
  matchTensors();
  if (!errors_.empty())
    return errors_;
  if (plan_.programs.size() != plan_.ranks)
    fail("plan has " + std::to_string(plan_.programs.size()) +
         " programs for " + std::to_string(plan_.ranks) + " ranks");
  size_t rounds = plan_.programs.empty() ? 0 : plan_.programs[0].rounds.size();
  for (const plan::RankProgram &p : plan_.programs)
    if (p.rounds.size() != rounds)
      fail("ranks have different round counts");
  if (!errors_.empty())
    return errors_;
  stats_.rounds += rounds;
  if (rounds > 1)
    ++stats_.multiRound;
  for (size_t r = 0; r < rounds && errors_.size() < 20; ++r)
    runRound(r);
  checkDestinations();
  return errors_;
}

void Executor::fail(std::string message) {
  if (errors_.size() < 20)
    errors_.push_back(std::move(message));
}

int32_t Executor::keyId(const std::string &key) const {
  auto it = keyIds_.find(key);
  return it == keyIds_.end() ? -1 : it->second;
}

void Executor::indexSources() {
  for (const KeySpec &k : c_.source) {
    int32_t id = int32_t(keyIds_.size());
    keyIds_[k.key] = id;
    keyShapes_.push_back(k.shape);
    std::vector<uint8_t> mask(size_t(volumeOf(k.shape)), 0);
    for (const ShardSpec &s : k.shards) {
      int64_t begin = s.flat ? s.flat->begin : 0;
      int64_t end = s.flat ? s.flat->end : s.box.volume();
      for (int64_t i = begin; i < end; ++i)
        mask[size_t(indexIn(wholeBox(k.shape), pointAt(s.box, i)))] |=
            uint8_t(1u << s.rank);
      if (s.flat)
        ++stats_.flatSource;
    }
    storedOnRank_.push_back(std::move(mask));
    std::set<std::pair<std::vector<int64_t>, std::vector<int64_t>>> boxes;
    for (const ShardSpec &s : k.shards)
      if (!boxes.insert({s.box.offsets(), s.box.shape()}).second) {
        ++stats_.replicatedSource;
        break;
      }
  }
}

int Executor::phaseOf(plan::Opcode op) {
  switch (op) {
  case plan::Opcode::Read:
    return 0;
  case plan::Opcode::Send:
  case plan::Opcode::Recv:
    return 1;
  case plan::Opcode::Copy:
    return 2;
  case plan::Opcode::Write:
    return 3;
  }
  return 4;
}

void Executor::runRound(size_t r) {
  RoundState round;
  round.r = r;
  round.at = "round " + std::to_string(r);
  round.buffers.resize(plan_.ranks);
  declareRound(round);
  runReads(round);
  exchangeMessages(round);
  runCopiesAndWrites(round);
  checkRoundMemory(round);
}

Buffer *Executor::buffer(RoundState &round, uint32_t rank, uint32_t id) {
  if (id >= round.buffers[rank].size()) {
    fail(round.at + " rank " + std::to_string(rank) + ": buffer " +
         std::to_string(id) + " not declared");
    return nullptr;
  }
  return &round.buffers[rank][id];
}

void Executor::declareRound(RoundState &round) {
  const std::string &at = round.at;
  // Declarations and instruction order.
  for (uint32_t rank = 0; rank < plan_.ranks; ++rank) {
    const plan::Round &planRound = plan_.programs[rank].rounds[round.r];
    for (const plan::BufferDecl &d : planRound.buffers) {
      Buffer b;
      b.dtype = d.dtype;
      b.shape.assign(d.shape.begin(), d.shape.end());
      round.buffers[rank].push_back(b);
    }
    int phase = 0;
    for (const plan::Instruction &in : planRound.instructions) {
      int p = phaseOf(in.opcode);
      if (p < phase)
        fail(at + " rank " + std::to_string(rank) +
             ": instructions out of phase order");
      phase = std::max(phase, p);
      if (in.opcode == plan::Opcode::Read)
        ++round.readsInRound;
    }
  }
  stats_.reads += round.readsInRound;
}

void Executor::runReads(RoundState &round) {
  for (uint32_t rank = 0; rank < plan_.ranks; ++rank) {
    const std::vector<plan::Instruction> &instructions =
        plan_.programs[rank].rounds[round.r].instructions;
    for (size_t n = 0; n < instructions.size(); ++n)
      if (instructions[n].opcode == plan::Opcode::Read)
        read(round, rank, n, instructions[n]);
  }
}

void Executor::read(RoundState &round, uint32_t rank, size_t n,
                    const plan::Instruction &in) {
  std::string where = round.at + " rank " + std::to_string(rank) + " read";
  if (in.tensor >= plan_.sourceTensors.size()) {
    fail(where + ": bad tensor");
    return;
  }
  const plan::StoredTensor &t = plan_.sourceTensors[in.tensor];
  if (plan_.sourceAccess != plan::SourceAccess::Shared &&
      plan_.sourceFiles[t.file].rank != rank)
    fail(where + " of " + t.name + ": its file is on rank " +
         std::to_string(plan_.sourceFiles[t.file].rank));
  if (!round.readsSeen
           .insert({rank, in.tensor, in.region.offsets(), in.region.shape()})
           .second)
    fail(where + ": " + t.key + in.region.toString() +
         " read twice in the round");
  else if (!readsEver_
                .insert(
                    {rank, in.tensor, in.region.offsets(), in.region.shape()})
                .second)
    fail(where + ": " + t.key + in.region.toString() +
         " read again (an earlier round read it too)");
  forEachPoint(in.region, [&](const Point &p) {
    if (!elementsRead_.insert({in.tensor, indexIn(t.box, p)}).second)
      ++stats_.elementsReadAgain;
  });
  Buffer *b = buffer(round, rank, in.buffer);
  if (!b)
    return;
  if (b->defined)
    fail(where + ": buffer filled twice");
  if (b->dtype != t.dtype || b->shape != in.region.shape() ||
      in.region.rank() != t.box.rank()) {
    fail(where + ": buffer " + str(b->shape) + " " +
         std::string(dtypeName(b->dtype)) + " for region " +
         in.region.toString() + " of " + std::string(dtypeName(t.dtype)));
    return;
  }
  int32_t key = keyId(t.key);
  b->data.clear();
  bool ok = true;
  forEachPoint(in.region, [&](const Point &p) {
    if (storedIndex(t, p) < 0) {
      ok = false;
      return;
    }
    b->data.push_back(
        Label{key, indexIn(wholeBox(keyShapes_[size_t(key)]), p)});
  });
  if (!ok) {
    fail(where + ": " + t.key + in.region.toString() + " is not stored in " +
         t.name);
    return;
  }
  b->defined = true;
  b->originRank = int(rank);
  b->originRead = {int(rank), n};
}

void Executor::exchangeMessages(RoundState &round) {
  const std::string &at = round.at;
  // Sends and receives: the k-th send from s to d matches the k-th
  // receive on d from s.
  std::map<std::pair<uint32_t, uint32_t>,
           std::vector<const plan::Instruction *>>
      sends, recvs;
  for (uint32_t rank = 0; rank < plan_.ranks; ++rank)
    for (const plan::Instruction &in :
         plan_.programs[rank].rounds[round.r].instructions) {
      if (in.opcode != plan::Opcode::Send && in.opcode != plan::Opcode::Recv)
        continue;
      if (in.peer >= plan_.ranks || in.peer == rank) {
        fail(at + " rank " + std::to_string(rank) + ": bad peer " +
             std::to_string(in.peer));
        continue;
      }
      if (in.opcode == plan::Opcode::Send)
        sends[{rank, in.peer}].push_back(&in);
      else
        recvs[{in.peer, rank}].push_back(&in);
    }
  std::set<std::pair<uint32_t, uint32_t>> pairs;
  for (const auto &s : sends)
    pairs.insert(s.first);
  for (const auto &s : recvs)
    pairs.insert(s.first);
  for (const auto &[from, to] : pairs) {
    const auto &ss = sends[{from, to}];
    const auto &rr = recvs[{from, to}];
    std::string where =
        at + " " + std::to_string(from) + "->" + std::to_string(to);
    if (ss.size() != rr.size()) {
      fail(where + ": " + std::to_string(ss.size()) + " sends, " +
           std::to_string(rr.size()) + " receives");
      continue;
    }
    for (size_t m = 0; m < ss.size(); ++m)
      deliver(round, from, *ss[m], to, *rr[m], where);
  }
}

void Executor::deliver(RoundState &round, uint32_t from,
                       const plan::Instruction &send, uint32_t to,
                       const plan::Instruction &recv,
                       const std::string &where) {
  ++stats_.messages;
  if (send.buffers.size() != recv.buffers.size()) {
    fail(where + ": message buffer counts differ");
    return;
  }
  for (size_t j = 0; j < send.buffers.size(); ++j) {
    Buffer *src = buffer(round, from, send.buffers[j]);
    Buffer *dst = buffer(round, to, recv.buffers[j]);
    if (!src || !dst)
      continue;
    if (!src->defined)
      fail(where + ": sends an unfilled buffer");
    if (dst->defined)
      fail(where + ": receives into a filled buffer");
    if (src->dtype != dst->dtype || src->shape != dst->shape) {
      fail(where + ": send " + str(src->shape) + " receive " + str(dst->shape));
      continue;
    }
    dst->data = src->data;
    dst->originRank = src->originRank;
    dst->originRead = src->originRead;
    dst->defined = src->defined;
  }
}

void Executor::runCopiesAndWrites(RoundState &round) {
  // Copies and writes, in order.
  for (uint32_t rank = 0; rank < plan_.ranks; ++rank)
    for (const plan::Instruction &in :
         plan_.programs[rank].rounds[round.r].instructions) {
      std::string where = round.at + " rank " + std::to_string(rank);
      if (in.opcode == plan::Opcode::Copy) {
        ++stats_.copies;
        copy(round, rank, in, where);
      } else if (in.opcode == plan::Opcode::Write) {
        ++stats_.writes;
        write(rank, in, buffer(round, rank, in.buffer), where);
      }
    }
}

void Executor::copy(RoundState &round, uint32_t rank,
                    const plan::Instruction &in, const std::string &where) {
  Buffer *input = buffer(round, rank, in.input);
  Buffer *output = buffer(round, rank, in.buffer);
  if (!input || !output)
    return;
  if (!input->defined || output->defined) {
    fail(where + ": copy from an unfilled or into a filled buffer");
    return;
  }
  // No statement here casts twice: data must not be rounded
  // through an intermediate dtype.
  int casts = 0;
  const std::vector<plan::TransformStep> &steps = plan_.steps(in);
  for (const plan::TransformStep &step : steps)
    casts += step.kind == plan::TransformStep::Kind::Cast;
  if (casts > 1) {
    std::string text;
    for (const plan::TransformStep &step : steps)
      text += " " + step.text();
    fail(where + ": copy casts " + std::to_string(casts) + " times:" + text);
  }
  Buffer result = *input;
  std::string why;
  if (!applyTransform(steps, result, why)) {
    fail(where + ": copy: " + why);
    return;
  }
  if (result.dtype != output->dtype || result.shape != output->shape) {
    fail(where + ": copy gives " + str(result.shape) + " " +
         std::string(dtypeName(result.dtype)) + ", buffer is " +
         str(output->shape) + " " + std::string(dtypeName(output->dtype)));
    return;
  }
  output->data = std::move(result.data);
  output->originRank = input->originRank;
  output->originRead = input->originRead;
  output->defined = true;
}

void Executor::checkRoundMemory(const RoundState &round) {
  const std::string &at = round.at;
  // Memory: a rank's buffers of a round fit the budget, unless they all
  // serve one indivisible transfer (one read, with its messages and
  // copies) that is larger by itself.
  for (uint32_t rank = 0; rank < plan_.ranks; ++rank) {
    const plan::Round &planRound = plan_.programs[rank].rounds[round.r];
    int64_t bytes = 0;
    for (const plan::BufferDecl &d : planRound.buffers)
      bytes += volumeOf(d.shape) * int64_t(dtypeSize(d.dtype));
    if (bytes > plan_.memoryBudget) {
      std::set<std::pair<int, size_t>> transfers;
      for (const Buffer &b : round.buffers[rank])
        transfers.insert(b.originRead);
      if (transfers.size() != 1)
        fail(at + " rank " + std::to_string(rank) + ": " +
             std::to_string(bytes) + " buffer bytes over the budget " +
             std::to_string(plan_.memoryBudget) + ", for " +
             std::to_string(transfers.size()) + " transfers (" +
             std::to_string(round.readsInRound) + " reads in the round)");
      else
        ++stats_.overBudgetSingles;
    }
    for (size_t b = 0; b < round.buffers[rank].size(); ++b)
      if (!round.buffers[rank][b].defined)
        fail(at + " rank " + std::to_string(rank) + ": buffer " +
             std::to_string(b) + " is never filled");
  }
}

bool Executor::applyTransform(const std::vector<plan::TransformStep> &steps,
                              Buffer &b, std::string &why) {
  for (const plan::TransformStep &step : steps) {
    switch (step.kind) {
    case plan::TransformStep::Kind::Cast:
      b.dtype = step.dtype;
      break;
    case plan::TransformStep::Kind::Permute: {
      const Permutation &p = step.permutation;
      size_t n = b.shape.size();
      if (p.rank() != n) {
        why = "permutation of rank " + std::to_string(p.rank()) +
              " on data of rank " + std::to_string(n);
        return false;
      }
      std::vector<int64_t> shape(n);
      for (size_t i = 0; i < n; ++i)
        shape[i] = b.shape[p[i]];
      Box in = wholeBox(b.shape), outBox = wholeBox(shape);
      std::vector<Label> data;
      data.reserve(b.data.size());
      forEachPoint(outBox, [&](const Point &q) {
        Point c(n);
        for (size_t i = 0; i < n; ++i)
          c[p[i]] = q[i];
        data.push_back(b.data[size_t(indexIn(in, c))]);
      });
      b.shape = shape;
      b.data = std::move(data);
      break;
    }
    case plan::TransformStep::Kind::Reshape: {
      // [blocks * c1, prod(r)] -> [blocks, c1, r...]
      const std::vector<int64_t> &canon = step.canonical;
      int64_t rest = 1;
      for (size_t i = 2; i < canon.size(); ++i)
        rest *= canon[i];
      if (b.shape.size() != 2 || b.shape[1] != rest ||
          b.shape[0] % canon[1] != 0) {
        why = "reshape " + str(canon) + " of " + str(b.shape);
        return false;
      }
      std::vector<int64_t> shape = canon;
      shape[0] = b.shape[0] / canon[1];
      b.shape = shape;
      break;
    }
    case plan::TransformStep::Kind::Flatten: {
      const std::vector<int64_t> &canon = step.canonical;
      if (b.shape.size() != canon.size() ||
          !std::equal(canon.begin() + 1, canon.end(), b.shape.begin() + 1)) {
        why = "flatten " + str(canon) + " of " + str(b.shape);
        return false;
      }
      int64_t rest = 1;
      for (size_t i = 2; i < canon.size(); ++i)
        rest *= canon[i];
      b.shape = {b.shape[0] * canon[1], rest};
      break;
    }
    }
  }
  return true;
}

std::vector<std::string> executePlan(const Case &c, const plan::Plan &plan,
                                     Stats &stats) {
  return Executor(c, plan, stats).run();
}

} // namespace aoa::plan_resolution_test
