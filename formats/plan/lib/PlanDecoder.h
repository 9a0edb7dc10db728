//===- PlanDecoder.h - Checks and decodes a binary plan ---------*- C++ -*-===//
//
// The decoder trusts nothing: the header is checked (magic, version, its
// checksum, the file size it records), then the directory (its checksum,
// every section contiguous and inside the file), then each section it needs
// (its checksum, then every count against the bytes left before anything
// is allocated, every index against the table it points into). The first
// problem found is reported, naming the file and the section.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANDECODER_H
#define AOA_FORMATS_PLAN_LIB_PLANDECODER_H

#include "aoa/formats/plan/BinaryPlan.h"

#include "ByteCoding.h"
#include "ByteSource.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {
namespace binplan {

struct DirectoryEntry {
  uint64_t offset = 0;
  uint64_t size = 0;
  uint64_t checksum = 0;
};

struct TransformList {
  uint32_t first = 0;
  uint32_t count = 0;
  uint32_t planId = 0; ///< its steps' id in Plan::transforms
};

/// A rank section's flat arrays (RankDecoder.cpp), each checked against the
/// section's size; records are read from them in order.
struct RankArrays {
  uint64_t rounds = 0, buffers = 0, instructions = 0, listCount = 0;
  std::string_view roundRecords, bufferRecords, instructionRecords,
      listEntries, pool;
};

class PlanDecoder {
public:
  PlanDecoder(const std::string &path, ByteSource &source, DiagnosticEngine &diags)
      : path_(path), source_(source), diags_(diags) {}

  /// The header and the directory.
  bool header(PlanOrigin *origin);
  /// The shared sections (strings, files, tensors, transforms, lists).
  bool shared();
  /// Rank `r`'s section (RankDecoder.cpp), after shared().
  bool rank(uint32_t r);
  plan::Plan take() { return std::move(plan_); }
  uint32_t ranks() const { return plan_.ranks; }

private:
  bool fail(const std::string &what, const std::string &hint = "");
  /// The section directory that follows the header: its checksum, then
  /// every section contiguous and inside the file.
  bool directory(uint32_t sections, uint64_t directorySum, uint64_t fileSize);
  /// Fetches section `id` and checks its checksum.
  bool fetch(uint64_t id, std::string &storage, std::string_view &bytes);
  /// Reads `count` (a u64) and checks that `count` records of `size` bytes
  /// fit in what is left.
  bool count(ByteCursor &c, uint64_t recordSize, uint64_t &n,
             const char *what);
  bool ints(std::string_view pool, uint64_t first, uint64_t n,
            llvm::SmallVectorImpl<int64_t> &out, const std::string &what);
  bool ints(std::string_view pool, uint64_t first, uint64_t n,
            std::vector<int64_t> &out, const std::string &what);
  bool box(std::string_view pool, uint64_t first, uint64_t rank, Box &out,
           const std::string &what);
  /// Whether `rank` (begin, end) pairs from integer `first` lie in `pool`;
  /// decodeBox reads them then (box() checks and says why not).
  static bool boxFits(std::string_view pool, uint64_t first, uint64_t rank);
  static Box decodeBox(std::string_view pool, uint64_t first, uint64_t rank);
  static bool knownDType(uint8_t code);
  bool string(uint32_t index, std::string &out, const std::string &what);
  bool string(uint32_t index, SharedString &out, const std::string &what);
  bool dtype(uint8_t code, DType &out, const std::string &what);
  bool strings(std::string_view bytes);
  bool files(std::string_view bytes);
  bool tensors(std::string_view bytes);
  bool transforms(std::string_view bytes);
  bool lists(std::string_view bytes);
  bool program(uint32_t r, std::string_view bytes);
  bool rankArrays(std::string_view bytes, RankArrays &arrays);
  /// A rank section's buffer shapes by (first integer, rank).
  using BufferShapes = std::map<std::pair<uint64_t, uint32_t>, SharedShape>;
  /// What a record is called in a message, made only for one.
  using Describe = llvm::function_ref<std::string()>;
  bool buffer(ByteCursor &records, std::string_view pool,
              BufferShapes &shapes, plan::BufferDecl &decl, Describe what);
  bool instruction(ByteCursor &records, const RankArrays &arrays,
                   plan::Instruction &in, Describe what);
  /// The fields `in`'s opcode uses point inside the plan; `buffers` is the
  /// count of its round's buffers.
  bool instructionReferences(const plan::Instruction &in, uint32_t buffers,
                             Describe what);

  const std::string &path_;
  ByteSource &source_;
  DiagnosticEngine &diags_;
  /// The section being decoded, for messages.
  std::string where_;
  std::vector<DirectoryEntry> directory_;
  /// Shared: the stored tensors of a plan repeat the same keys and names.
  std::vector<SharedString> strings_;
  std::vector<plan::TransformStep> steps_;
  std::vector<TransformList> transformLists_;
  plan::Plan plan_;
};

} // namespace binplan
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANDECODER_H
