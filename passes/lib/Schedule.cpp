//===- Schedule.cpp - Transfers into rounds of a plan ----------------------===//
//
// Turns the transfers into every rank's program of rounds under the per-rank
// memory budget:
//  - a transfer larger than a quarter of the budget is cut along its
//    destination's first axis (unless its transform reshapes);
//  - adjacent transfers between the same tensors with the same transform are
//    coalesced;
//  - transfers whose source regions on one rank overlap without being equal
//    are cut at each other's boundaries, rows first (SplitOverlappingReads.h),
//    so any two regions a rank reads from one source tensor are equal or
//    disjoint;
//  - transfers reading the same source region from the same rank share one
//    read, and one message carries it to each destination rank. Together:
//    a rank reads every source byte it needs once, except where a transfer
//    that reshapes (which cannot be cut) overlaps another transfer's region
//    without being equal to it: their common bytes are read twice;
//  - reads are packed into rounds in order; a round closes when a rank's
//    buffers would pass the budget (a single read larger than the budget gets
//    a round of its own, and the summary shows it);
//  - within a round, each rank's sends to one peer are one message, and every
//    receive has its send in the same round.
//
//===----------------------------------------------------------------------===//
#include "aoa/passes/Passes.h"

#include "aoa/passes/CompilationState.h"

#include "SplitOverlappingReads.h"

#include "aoa/ir/FirstOccurrence.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <ostream>

namespace aoa {

namespace {

int64_t bytesOf(const Box &region, DType dtype) {
  return region.volume() * static_cast<int64_t>(dtypeSize(dtype));
}

class Scheduler {
public:
  explicit Scheduler(CompilationState &state)
      : state_(state), plan_(state.plan) {}

  void run() {
    // Coalesce first: cut pieces must stay cut. Split overlapping reads
    // last: cutLarge can make them (equal regions cut along different
    // destination axes). The steps take the transfers over, so that no
    // step keeps a second copy of millions of them.
    std::vector<Transfer> transfers = std::move(state_.transfers);
    state_.transfers.clear();
    coalesce(transfers);
    transfers = splitOverlappingReads(cutLarge(std::move(transfers)),
                                      state_.transforms);
    groupReads(transfers);
    assignRounds(transfers);
    emit(transfers);
  }

private:
  DType sourceType(const Transfer &t) const {
    return plan_.sourceTensors[t.sourceTensor].dtype;
  }
  DType destinationType(const Transfer &t) const {
    return plan_.destinationTensors[t.destinationTensor].dtype;
  }
  const std::vector<plan::TransformStep> &steps(const Transfer &t) const {
    return state_.transforms.transforms[t.transform];
  }
  bool needsCopy(const Transfer &t) const {
    return !steps(t).empty();
  }

  /// Cuts transfers over a quarter of the budget along the destination's
  /// first axis that has more than one element (unless they reshape).
  bool isLarge(const Transfer &t, int64_t limit) const {
    // Most transfers are far below the limit whatever their dtypes: known
    // without reading their tensors (two lookups far apart in memory, for
    // each of millions of transfers).
    int64_t elements =
        std::max(t.sourceRegion.volume(), t.destinationRegion.volume());
    if (elements <= limit / int64_t(kLargestDTypeSize))
      return false;
    int64_t bytes = std::max(bytesOf(t.sourceRegion, sourceType(t)),
                             bytesOf(t.destinationRegion, destinationType(t)));
    return bytes > limit && plan::keepsBoxes(steps(t)) &&
           t.destinationRegion.rank() != 0;
  }

  /// How a large transfer is cut: along destination `axis`, `step`
  /// elements a part, into `count` parts.
  struct Cut {
    size_t axis;
    int64_t step;
    int64_t count;
  };
  Cut cut(const Transfer &t, int64_t limit) const {
    int64_t bytes = std::max(bytesOf(t.sourceRegion, sourceType(t)),
                             bytesOf(t.destinationRegion, destinationType(t)));
    size_t axis = 0;
    while (axis + 1 < t.destinationRegion.rank() &&
           t.destinationRegion.dim(axis).size() == 1)
      ++axis;
    int64_t size = t.destinationRegion.dim(axis).size();
    int64_t perUnit = bytes / size;
    int64_t step = std::max<int64_t>(1, limit / std::max<int64_t>(perUnit, 1));
    return {axis, step, (size + step - 1) / step};
  }

  std::vector<Transfer> cutLarge(std::vector<Transfer> transfers) {
    int64_t limit = std::max<int64_t>(plan_.memoryBudget / 4, 1);
    // The parts are counted first, so that the transfers are cut in place
    // when their vector has room (a conversion cuts a few of millions), or
    // else copied once into a vector of the right size: a copy, or a vector
    // that outgrew its reserve, held the compile's peak memory.
    size_t parts = 0;
    for (const Transfer &t : transfers)
      parts += isLarge(t, limit) ? cut(t, limit).count : 1;
    if (parts == transfers.size())
      return transfers;
    if (transfers.capacity() >= parts) {
      // In place, from the back: each transfer (or its parts) moves to its
      // final position, which is never before its own.
      size_t n = transfers.size();
      transfers.resize(parts);
      size_t next = parts;
      for (size_t i = n; i-- > 0;) {
        Transfer &t = transfers[i];
        if (!isLarge(t, limit)) {
          if (--next != i)
            transfers[next] = std::move(t);
          continue;
        }
        Cut how = cut(t, limit);
        Transfer whole = std::move(t);
        next -= size_t(how.count);
        for (int64_t k = 0; k < how.count; ++k)
          transfers[next + size_t(k)] = partOf(whole, how, k);
      }
      return transfers;
    }
    std::vector<Transfer> out;
    out.reserve(parts);
    for (Transfer &t : transfers) {
      if (!isLarge(t, limit)) {
        out.push_back(std::move(t));
        continue;
      }
      Cut how = cut(t, limit);
      for (int64_t k = 0; k < how.count; ++k)
        out.push_back(partOf(t, how, k));
    }
    return out;
  }

  /// Part `k` of transfer `t` cut as `how` says.
  Transfer partOf(const Transfer &t, const Cut &how, int64_t k) const {
    const Interval &along = t.destinationRegion.dim(how.axis);
    int64_t begin = along.begin + k * how.step;
    int64_t end = std::min(along.end, begin + how.step);
    Permutation p = plan::composedPermutation(steps(t), t.sourceRegion.rank());
    Transfer part = t;
    llvm::SmallVector<Interval, 4> dst(t.destinationRegion.dims().begin(),
                                       t.destinationRegion.dims().end());
    llvm::SmallVector<Interval, 4> src(t.sourceRegion.dims().begin(),
                                       t.sourceRegion.dims().end());
    dst[how.axis] = {begin, end};
    int64_t sourceBegin =
        t.sourceRegion.dim(p[how.axis]).begin + (begin - along.begin);
    src[p[how.axis]] = {sourceBegin, sourceBegin + (end - begin)};
    part.destinationRegion = Box(dst);
    part.sourceRegion = Box(src);
    return part;
  }

  /// Merges consecutive transfers that continue each other: same tensors,
  /// ranks and transform, regions adjacent along one destination axis and
  /// the source axis it shows.
  void coalesce(std::vector<Transfer> &transfers) {
    size_t kept = 0;
    for (size_t i = 0; i < transfers.size(); ++i) {
      if (kept > 0 && tryMerge(transfers[kept - 1], transfers[i]))
        continue;
      if (kept != i)
        transfers[kept] = std::move(transfers[i]);
      ++kept;
    }
    transfers.erase(transfers.begin() + kept, transfers.end());
  }

  bool tryMerge(Transfer &a, const Transfer &b) const {
    if (a.sourceTensor != b.sourceTensor ||
        a.destinationTensor != b.destinationTensor ||
        a.sourceRank != b.sourceRank ||
        a.destinationRank != b.destinationRank || a.transform != b.transform ||
        !plan::keepsBoxes(steps(a)))
      return false;
    size_t rank = a.destinationRegion.rank();
    Permutation p = plan::composedPermutation(steps(a), rank);
    for (size_t axis = 0; axis < rank; ++axis) {
      bool adjacent = true;
      for (size_t i = 0; i < rank && adjacent; ++i) {
        const Interval &da = a.destinationRegion.dim(i);
        const Interval &db = b.destinationRegion.dim(i);
        const Interval &sa = a.sourceRegion.dim(p[i]);
        const Interval &sb = b.sourceRegion.dim(p[i]);
        adjacent = i == axis ? da.end == db.begin && sa.end == sb.begin
                             : da == db && sa == sb;
      }
      if (!adjacent)
        continue;
      llvm::SmallVector<Interval, 4> dst(a.destinationRegion.dims().begin(),
                                         a.destinationRegion.dims().end());
      llvm::SmallVector<Interval, 4> src(a.sourceRegion.dims().begin(),
                                         a.sourceRegion.dims().end());
      dst[axis].end = b.destinationRegion.dim(axis).end;
      src[p[axis]].end = b.sourceRegion.dim(p[axis]).end;
      a.destinationRegion = Box(dst);
      a.sourceRegion = Box(src);
      return true;
    }
    return false;
  }

  /// One read per (source tensor, region, reading rank), in first-use order.
  struct ReadGroup {
    uint32_t first = 0; ///< a transfer that defines the read
    uint32_t round = 0;
  };

  static uint64_t readHash(const Transfer &t) {
    uint64_t h =
        uint64_t(t.sourceTensor) * 0x9e3779b97f4a7c15ull ^ t.sourceRank;
    for (const Interval &d : t.sourceRegion.dims())
      h = (h ^ uint64_t(d.begin)) * 0x100000001b3ull ^ uint64_t(d.end);
    return h ^ (h >> 29);
  }
  static bool sameRead(const Transfer &a, const Transfer &b) {
    return a.sourceTensor == b.sourceTensor && a.sourceRank == b.sourceRank &&
           a.sourceRegion == b.sourceRegion;
  }

  /// The transfers of group g, in transfer order.
  llvm::ArrayRef<uint32_t> consumers(size_t g) const {
    return llvm::ArrayRef<uint32_t>(consumers_)
        .slice(consumerStart_[g], consumerStart_[g + 1] - consumerStart_[g]);
  }

  void groupReads(const std::vector<Transfer> &transfers) {
    // By the first transfer of each read (FirstOccurrence.h): no key is
    // copied, and the table's slots are fetched ahead.
    std::vector<uint32_t> first = firstOccurrences(
        transfers.size(), [&](size_t i) { return readHash(transfers[i]); },
        [&](size_t a, size_t b) {
          return sameRead(transfers[a], transfers[b]);
        });
    groupOf_.resize(transfers.size());
    for (uint32_t i = 0; i < transfers.size(); ++i) {
      if (first[i] != i) {
        groupOf_[i] = groupOf_[first[i]];
        continue;
      }
      groupOf_[i] = uint32_t(groups_.size());
      groups_.push_back(ReadGroup{i, 0});
    }
    // Each group's consumers, by a counting sort that keeps transfer order.
    consumerStart_.assign(groups_.size() + 1, 0);
    for (uint32_t g : groupOf_)
      ++consumerStart_[g + 1];
    for (size_t g = 0; g < groups_.size(); ++g)
      consumerStart_[g + 1] += consumerStart_[g];
    consumers_.resize(transfers.size());
    std::vector<uint32_t> next(consumerStart_.begin(),
                               consumerStart_.end() - 1);
    for (uint32_t i = 0; i < transfers.size(); ++i)
      consumers_[next[groupOf_[i]]++] = i;
  }

  /// The buffer bytes each rank needs for a read group.
  /// (rank, bytes) pairs; a group touches a few ranks.
  using Footprint = llvm::SmallVector<std::pair<uint32_t, int64_t>, 4>;

  static void addBytes(Footprint &f, uint32_t rank, int64_t bytes) {
    for (auto &[r, b] : f)
      if (r == rank) {
        b += bytes;
        return;
      }
    f.push_back({rank, bytes});
  }

  Footprint footprint(const std::vector<Transfer> &transfers, size_t g) const {
    const ReadGroup &group = groups_[g];
    Footprint bytes;
    const Transfer &first = transfers[group.first];
    int64_t readBytes = bytesOf(first.sourceRegion, sourceType(first));
    addBytes(bytes, first.sourceRank, readBytes);
    llvm::SmallVector<uint32_t, 8> receivers; // (no allocation per group)
    for (uint32_t c : consumers(g)) {
      const Transfer &t = transfers[c];
      if (t.destinationRank != t.sourceRank &&
          std::find(receivers.begin(), receivers.end(), t.destinationRank) ==
              receivers.end()) {
        receivers.push_back(t.destinationRank);
        addBytes(bytes, t.destinationRank, readBytes);
      }
      if (needsCopy(t))
        addBytes(bytes, t.destinationRank,
                 bytesOf(t.destinationRegion, destinationType(t)));
    }
    return bytes;
  }

  void assignRounds(const std::vector<Transfer> &transfers) {
    // Per rank, by the ranks a round touches: rank ids may be sparse, and
    // clearing a table of every rank per round would cost ranks x rounds.
    // Open addressing (rank ids are below kRankLimit, never DenseMap's
    // reserved keys): it is looked up for every rank of every read group.
    llvm::DenseMap<uint32_t, int64_t> used;
    uint32_t round = 0;
    bool empty = true;
    for (size_t g = 0; g < groups_.size(); ++g) {
      ReadGroup &group = groups_[g];
      Footprint need = footprint(transfers, g);
      bool fits = true;
      for (const auto &[rank, bytes] : need)
        fits &= used[rank] + bytes <= plan_.memoryBudget;
      if (!fits && !empty) {
        ++round;
        used.clear();
      }
      for (const auto &[rank, bytes] : need)
        used[rank] += bytes;
      group.round = round;
      empty = false;
    }
    rounds_ = empty ? 0 : round + 1;
  }

  /// A round's buffer shapes, one SharedShape per distinct shape: a round
  /// declares thousands of buffers of a few shapes. Keys view the shapes.
  struct ShapeOrder {
    bool operator()(llvm::ArrayRef<int64_t> a,
                    llvm::ArrayRef<int64_t> b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(),
                                          b.end());
    }
  };
  using RoundShapes =
      std::map<llvm::ArrayRef<int64_t>, SharedShape, ShapeOrder>;

  uint32_t addBuffer(plan::Round &round, RoundShapes &shapes, DType dtype,
                     const Box &region) {
    llvm::SmallVector<int64_t, 4> extents;
    for (const Interval &dim : region.dims())
      extents.push_back(dim.size());
    plan::BufferDecl decl;
    decl.dtype = dtype;
    // Most buffers have the shape of the one before them on their rank.
    if (!round.buffers.empty() && round.buffers.back().shape == extents) {
      decl.shape = round.buffers.back().shape;
    } else {
      auto found = shapes.find(extents);
      if (found == shapes.end()) {
        SharedShape shape(extents);
        found = shapes.emplace(shape.extents(), shape).first;
      }
      decl.shape = found->second;
    }
    round.buffers.push_back(std::move(decl));
    return static_cast<uint32_t>(round.buffers.size() - 1);
  }

  void emit(const std::vector<Transfer> &transfers) {
    plan_.transforms = state_.transforms; // copies name their ids
    plan_.programs.assign(plan_.ranks, plan::RankProgram());
    for (plan::RankProgram &program : plan_.programs)
      program.rounds.resize(rounds_);
    // Groups of each round, in order.
    std::vector<std::vector<size_t>> byRound(rounds_);
    for (size_t g = 0; g < groups_.size(); ++g)
      byRound[groups_[g].round].push_back(g);
    // A round writes only its own Round of each rank: rounds are emitted at
    // once, and the plan does not depend on the thread count.
    runtime::ThreadPool pool(state_.threads);
    runtime::Status emitted = pool.parallelFor(rounds_, [&](size_t r) {
      emitRound(transfers, uint32_t(r), byRound[r]);
      return runtime::Status();
    });
    (void)emitted; // emitRound cannot fail
  }

  /// What one rank does in one round, counted before anything is emitted
  /// so that its buffers and instructions are placed once, in their final
  /// vectors, exactly sized: the plan holds millions of instructions, and
  /// vectors grown by doubling (or lists copied into place) cost a quarter
  /// of the pass and up to twice the memory.
  struct RankSlots {
    uint32_t buffers = 0, reads = 0, messages = 0, copies = 0, writes = 0;
    /// Where the next instruction of each kind goes.
    uint32_t nextRead = 0, nextCopy = 0, nextWrite = 0;
  };

  /// Where a read group's data is: rank -> the buffer holding it there, the
  /// reading rank first (a group reaches a few ranks).
  using Arrivals = llvm::SmallVector<std::pair<uint32_t, uint32_t>, 4>;
  static Arrivals::iterator findArrival(Arrivals &arrived, uint32_t rank) {
    return std::find_if(arrived.begin(), arrived.end(),
                        [&](auto &a) { return a.first == rank; });
  }

  void emitRound(const std::vector<Transfer> &transfers, uint32_t r,
                 const std::vector<size_t> &groups) {
    using plan::Instruction;
    using plan::Opcode;
    // Per rank: reads, then sends and receives, then copies, then writes;
    // only for the ranks the round's groups touch (rank ids may be sparse).
    std::map<uint32_t, RankSlots> slots;
    // (sender, receiver) -> buffers on each side, in group order.
    std::map<std::pair<uint32_t, uint32_t>,
             std::pair<llvm::SmallVector<uint32_t, 0>,
                       llvm::SmallVector<uint32_t, 0>>>
        messages;
    // Counting: the same walk as the emission below.
    for (size_t g : groups) {
      const Transfer &first = transfers[groups_[g].first];
      RankSlots &source = slots[first.sourceRank];
      ++source.buffers;
      ++source.reads;
      Arrivals arrived{{first.sourceRank, 0}};
      for (uint32_t c : consumers(g)) {
        const Transfer &t = transfers[c];
        RankSlots &destination = slots[t.destinationRank];
        if (findArrival(arrived, t.destinationRank) == arrived.end()) {
          arrived.push_back({t.destinationRank, 0});
          ++destination.buffers;
          messages[{first.sourceRank, t.destinationRank}];
        }
        if (needsCopy(t)) {
          ++destination.buffers;
          ++destination.copies;
        }
        ++destination.writes;
      }
    }
    for (const auto &[ranks, buffers] : messages) {
      ++slots[ranks.first].messages;
      ++slots[ranks.second].messages;
    }
    for (auto &[rank, count] : slots) {
      plan::Round &round = plan_.programs[rank].rounds[r];
      round.buffers.reserve(count.buffers);
      round.instructions.resize(count.reads + count.messages + count.copies +
                                count.writes);
      count.nextRead = 0;
      count.nextCopy = count.reads + count.messages;
      count.nextWrite = count.nextCopy + count.copies;
    }

    RoundShapes shapes;
    for (size_t g : groups) {
      const ReadGroup &group = groups_[g];
      const Transfer &first = transfers[group.first];
      plan::Round &sourceRound = plan_.programs[first.sourceRank].rounds[r];
      DType type = sourceType(first);
      uint32_t readBuffer =
          addBuffer(sourceRound, shapes, type, first.sourceRegion);
      Instruction &read =
          sourceRound.instructions[slots[first.sourceRank].nextRead++];
      read.opcode = Opcode::Read;
      read.buffer = readBuffer;
      read.tensor = first.sourceTensor;
      read.region = first.sourceRegion;
      Arrivals arrived{{first.sourceRank, readBuffer}};
      for (uint32_t c : consumers(g)) {
        const Transfer &t = transfers[c];
        plan::Round &round = plan_.programs[t.destinationRank].rounds[r];
        RankSlots &at = slots[t.destinationRank];
        auto holder = findArrival(arrived, t.destinationRank);
        if (holder == arrived.end()) {
          uint32_t received =
              addBuffer(round, shapes, type, first.sourceRegion);
          auto &message = messages[{first.sourceRank, t.destinationRank}];
          message.first.push_back(readBuffer);
          message.second.push_back(received);
          arrived.push_back({t.destinationRank, received});
          holder = arrived.end() - 1;
        }
        uint32_t data = holder->second;
        if (needsCopy(t)) {
          uint32_t out = addBuffer(round, shapes, destinationType(t),
                                   t.destinationRegion);
          // Copies before writes keeps each write next to nothing it
          // waits on.
          Instruction &copy = round.instructions[at.nextCopy++];
          copy.opcode = Opcode::Copy;
          copy.buffer = out;
          copy.input = data;
          copy.transform = t.transform;
          data = out;
        }
        Instruction &write = round.instructions[at.nextWrite++];
        write.opcode = Opcode::Write;
        write.buffer = data;
        write.tensor = t.destinationTensor;
        write.region = t.destinationRegion;
      }
    }
    // Messages in (sender, receiver) order: each rank's sends and receives
    // follow its reads in that order.
    for (auto &[ranks, buffers] : messages) {
      plan::Round &senderRound = plan_.programs[ranks.first].rounds[r];
      Instruction &send =
          senderRound.instructions[slots[ranks.first].nextRead++];
      send.opcode = Opcode::Send;
      send.peer = ranks.second;
      send.buffers = std::move(buffers.first);
      plan::Round &receiverRound = plan_.programs[ranks.second].rounds[r];
      Instruction &recv =
          receiverRound.instructions[slots[ranks.second].nextRead++];
      recv.opcode = Opcode::Recv;
      recv.peer = ranks.first;
      recv.buffers = std::move(buffers.second);
    }
  }

  CompilationState &state_;
  plan::Plan &plan_;
  std::vector<ReadGroup> groups_;
  std::vector<uint32_t> groupOf_;
  /// consumers(g) is consumers_[consumerStart_[g], consumerStart_[g + 1]).
  std::vector<uint32_t> consumerStart_, consumers_;
  uint32_t rounds_ = 0;
};

class SchedulePass : public Pass {
public:
  const char *name() const override { return "schedule"; }
  const char *description() const override {
    return "pack the transfers into rounds of reads, messages, copies and "
           "writes under the per-rank memory budget";
  }
  bool run(CompilationState &state) override {
    Scheduler(state).run();
    return true;
  }
  void print(const CompilationState &state, std::ostream &os) const override {
    std::vector<plan::RankCost> costs = state.plan.costs();
    for (size_t r = 0; r < costs.size(); ++r)
      os << "rank " << r << ": " << state.plan.programs[r].rounds.size()
         << " rounds, " << costs[r].instructions << " instructions, read "
         << costs[r].bytesRead << " B, sent " << costs[r].bytesSent
         << " B, received " << costs[r].bytesReceived << " B, wrote "
         << costs[r].bytesWritten << " B, peak " << costs[r].peakBufferBytes
         << " B\n";
  }
};

} // namespace

std::unique_ptr<Pass> createSchedulePass() {
  return std::make_unique<SchedulePass>();
}

} // namespace aoa
