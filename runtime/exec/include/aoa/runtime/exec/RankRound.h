//===- RankRound.h - One rank's work in one round of a plan -----*- C++ -*-===//
//
// Every backend executes a rank's round the same way (docs/plan-format.md,
// "Rounds"): its reads fill buffers from the rank's source files, its
// messages are exchanged, its copies transform buffers, and its writes store
// buffers into the rank's destination files. Only the exchange differs
// between backends (the local one hands the sender's buffer to the
// receiver; the mpi one moves the bytes), so a RankRound does the rest:
// it sorts the round's live instructions into phases, lays the round's
// buffers out in one arena, and runs a read, a copy or a write by its
// instruction index. Instructions of one phase are independent and may run
// concurrently; copies come in levels (a copy whose input another copy of
// the round produces is in a later level).
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_EXEC_RANKROUND_H
#define AOA_RUNTIME_EXEC_RANKROUND_H

#include "aoa/ir/DType.h"
#include "aoa/ir/Plan.h"
#include "aoa/runtime/support/Error.h"

#include "llvm/ADT/ArrayRef.h"

#include <cstdint>
#include <string>
#include <vector>

namespace aoa::runtime {

class DestinationFiles;
class SourceFiles;

/// Which buffers get memory of their own in a rank's arena.
enum class ReceivedBuffers {
  /// Every buffer, those a recv defines included (the bytes arrive there).
  Owned,
  /// Not those a recv defines: the receiver uses the sender's memory (the
  /// local backend, where all ranks share one address space).
  Borrowed,
};

/// The arena bytes `round` needs: its buffers, each on a 64-byte boundary.
uint64_t roundArenaBytes(const plan::Round &round, ReceivedBuffers received);

/// The largest roundArenaBytes over `rank`'s rounds.
uint64_t largestRoundArenaBytes(const plan::Plan &plan, uint32_t rank,
                                ReceivedBuffers received);

class RankRound {
public:
  /// Round `round` of `rank`, keeping the instructions `live` marks (one
  /// entry per instruction of the round; empty keeps all). A rank whose
  /// program has fewer rounds gets an empty RankRound.
  RankRound(const plan::Plan &plan, uint32_t rank, size_t round,
            llvm::ArrayRef<uint8_t> live = {});

  uint32_t rank() const { return rank_; }
  size_t roundNumber() const { return roundNumber_; }
  /// Precondition: the rank has this round.
  const plan::Round &round() const { return *round_; }
  const plan::Instruction &instruction(uint32_t i) const {
    return round_->instructions[i];
  }

  /// No live instruction: nothing to do on this rank in this round.
  bool empty() const;
  /// Live instruction indices by phase, in program order.
  const std::vector<uint32_t> &reads() const { return reads_; }
  const std::vector<uint32_t> &sends() const { return sends_; }
  const std::vector<uint32_t> &receives() const { return receives_; }
  const std::vector<std::vector<uint32_t>> &copyLevels() const {
    return copyLevels_;
  }
  const std::vector<uint32_t> &writes() const { return writes_; }

  /// Points the round's buffers into `arena`, which holds at least
  /// roundArenaBytes(round(), received) bytes; with Borrowed, buffers a recv
  /// defines stay null until setBuffer.
  void layOutBuffers(uint8_t *arena, ReceivedBuffers received);

  /// Which buffers need memory in the arena: those the live instructions
  /// use, except, with Borrowed, those a recv defines, and the buffers of
  /// the reads and writes marked in `copiedDirectly` (one entry per
  /// instruction of the round, or empty), whose bytes go file to file.
  std::vector<uint8_t> buffersInArena(
      ReceivedBuffers received,
      llvm::ArrayRef<uint8_t> copiedDirectly = {}) const;
  /// The arena bytes the buffers marked in `inArena` need, each on a
  /// 64-byte boundary.
  uint64_t arenaBytes(llvm::ArrayRef<uint8_t> inArena) const;
  /// Points the buffers marked in `inArena` into `arena`, which holds at
  /// least arenaBytes(inArena) bytes; the others stay null (setBuffer).
  void layOutBuffers(uint8_t *arena, llvm::ArrayRef<uint8_t> inArena);

  uint8_t *buffer(uint32_t id) const { return pointers_[id]; }
  void setBuffer(uint32_t id, uint8_t *data) { pointers_[id] = data; }
  uint64_t bufferBytes(uint32_t id) const {
    return uint64_t(round_->buffers[id].bytes());
  }

  /// Runs instruction `i` (a read, a copy, a write). Errors start with
  /// "rank R, round N: ". Thread-safe for distinct instructions of a phase.
  Status runRead(uint32_t i, const SourceFiles &sources) const;
  Status runCopy(uint32_t i) const;
  Status runWrite(uint32_t i, DestinationFiles &destinations) const;
  /// Runs write `i` into memory instead of a file: `tensorData` holds the
  /// whole destination tensor as its file would store it (CallerTensors.h).
  Status runWriteToMemory(uint32_t i, uint8_t *tensorData) const;

  /// "rank R, round N".
  std::string where() const;

  /// The error of copy `i` whose cast from `from` to `to` met an element
  /// without a result at row-major offset `offset` of the copy's output:
  /// it names the destination key the element is written to and its
  /// global coordinates there (following later copies of the round), or
  /// the output buffer where no write of this round takes it.
  Error castFailure(uint32_t i, DType from, DType to, uint64_t offset) const;

private:
  /// Write `i`'s buffer fits its region of the destination tensor.
  Status checkWrite(uint32_t i) const;

  const plan::Plan &plan_;
  uint32_t rank_;
  size_t roundNumber_;
  const plan::Round *round_ = nullptr;
  std::vector<uint32_t> reads_, sends_, receives_, writes_;
  std::vector<std::vector<uint32_t>> copyLevels_;
  std::vector<uint8_t *> pointers_;
};

} // namespace aoa::runtime

#endif // AOA_RUNTIME_EXEC_RANKROUND_H
