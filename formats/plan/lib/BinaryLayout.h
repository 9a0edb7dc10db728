//===- BinaryLayout.h - Sizes and ids of the binary plan --------*- C++ -*-===//
//
// The container's fixed numbers, shared by writer and reader; the layout
// itself is specified in docs/plan-format.md ("Binary form").
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_BINARYLAYOUT_H
#define AOA_FORMATS_PLAN_LIB_BINARYLAYOUT_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

struct XXH3_state_s;

namespace aoa {
namespace binplan {

/// Header: magic[8], version u32, flags u32, ranks u32, destination format
/// u32, memory budget i64, source layout hash u64, destination layout hash
/// u64, section count u32, reserved u32 (zero), file size u64, directory
/// checksum u64, header checksum u64 (of the 72 bytes before it).
constexpr size_t kHeaderSize = 80;
constexpr size_t kHeaderChecksumOffset = 72;
/// Directory entry: offset u64, size u64, checksum u64.
constexpr size_t kDirectoryEntrySize = 24;

/// Header flags.
constexpr uint32_t kHasSourceLayoutHash = 1u << 0;
constexpr uint32_t kHasDestinationLayoutHash = 1u << 1;
/// plan::SourceAccess::Shared (a reader that predates it refuses the plan
/// as having an unknown flag, rather than running it as another plan).
constexpr uint32_t kSharedSourceAccess = 1u << 2;
constexpr uint32_t kKnownFlags =
    kHasSourceLayoutHash | kHasDestinationLayoutHash | kSharedSourceAccess;

/// The shared sections, in file order; rank r's section is kSharedSections + r.
enum SharedSection : uint32_t {
  kStrings,
  kFiles,
  kTensors,
  kTransforms,
  kLists,
  kSharedSections
};

/// Record sizes of the flat arrays (docs/plan-format.md).
constexpr size_t kFileRecordSize = 24;
constexpr size_t kTensorRecordSize = 24;
/// The tensor table's pooled shapes and boxes, and its flat ranges and data
/// offsets (version 2).
constexpr size_t kShapeRecordSize = 16;
constexpr size_t kBoxRecordSize = 16;
constexpr size_t kRangeRecordSize = 32;
constexpr size_t kTransformRecordSize = 8;
constexpr size_t kStepRecordSize = 24;
constexpr size_t kRoundRecordSize = 8;
constexpr size_t kBufferRecordSize = 16;
constexpr size_t kInstructionRecordSize = 24;

/// An instruction's record (version 3): the opcode, the rank of a read's or
/// write's region, and three u32 and one u64 field whose meaning depends on
/// the opcode (docs/plan-format.md); a field an opcode does not use is 0.
struct InstructionRecord {
  uint8_t opcode = 0;
  uint8_t regionRank = 0;
  uint32_t a = 0, b = 0, c = 0;
  uint64_t d = 0;
};

/// Record flags.
constexpr uint32_t kFileHasSize = 1u << 0;
constexpr uint8_t kTensorHasFlat = 1u << 0;
constexpr uint8_t kTensorHasData = 1u << 1;

/// The plan model allows at most this many ranks (as the text form).
constexpr uint32_t kMaxRanks = 1u << 24;

/// "rank 12's section", "the string table", ... for messages.
std::string sectionName(uint64_t section);

/// `0x0123456789abcdef`: a hash or flags for messages.
std::string hexText(uint64_t value);

/// xxh3-64 (seed 0) of the bytes.
uint64_t checksum(const void *data, size_t size);

/// checksum() of bytes given in pieces: a section streamed into a file is
/// never held whole.
class StreamingChecksum {
public:
  StreamingChecksum();
  ~StreamingChecksum();
  StreamingChecksum(const StreamingChecksum &) = delete;
  StreamingChecksum &operator=(const StreamingChecksum &) = delete;

  void update(std::string_view bytes);
  /// checksum() of every byte given so far.
  uint64_t digest() const;

private:
  struct FreeState {
    void operator()(XXH3_state_s *state) const;
  };
  std::unique_ptr<XXH3_state_s, FreeState> state_;
};

} // namespace binplan
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_BINARYLAYOUT_H
