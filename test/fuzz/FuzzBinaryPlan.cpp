//===- FuzzBinaryPlan.cpp - Fuzz target: binary plans ---------------------===//
//
// The input is a binary plan (docs/plan-format.md, "Binary form") as
// `aoa-run PLAN` reads it: readPlanBytes (the container reader, then the
// plan verifier), and one rank's section as an mpi rank reads it
// (readBinaryPlanRank, through a memory file), then that rank's checks as a
// process of an mpi run makes them (verifyPlanRank, exchangeSignature).
//
// Every section is checksummed, so almost every mutation would stop at the
// first checksum. Each input is therefore read twice: as it is (the checksum
// checks themselves), then "resealed": the file size and every checksum that
// the header and directory can locate recomputed from the bytes, following
// the layout of docs/plan-format.md (written here from that table, not with
// the writer's code), so the mutations reach the tables and rank sections.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "aoa/driver/PlanFile.h"
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/MessagePairing.h"
#include "aoa/formats/plan/PlanVerifier.h"

#include <sys/mman.h>
#include <unistd.h>

#include <xxhash.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace {

constexpr size_t kHeaderSize = 80;
constexpr size_t kRanksOffset = 16;
constexpr size_t kSectionCountOffset = 48;
constexpr size_t kFileSizeOffset = 56;
constexpr size_t kDirectoryChecksumOffset = 64;
constexpr size_t kHeaderChecksumOffset = 72;
constexpr size_t kDirectoryEntrySize = 24;

/// The little-endian integer of `width` bytes at `at`.
uint64_t load(const std::string &b, size_t at, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i)
    v |= uint64_t(uint8_t(b[at + i])) << (8 * i);
  return v;
}

void storeU64(std::string &b, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i)
    b[at + i] = char(uint8_t(v >> (8 * i)));
}

/// The input with its file size and the checksums it can locate made right.
std::string reseal(std::string b) {
  if (b.size() < kHeaderSize)
    return b;
  storeU64(b, kFileSizeOffset, b.size());
  uint64_t sections = load(b, kSectionCountOffset, 4);
  uint64_t directorySize = sections * kDirectoryEntrySize;
  if (directorySize <= b.size() - kHeaderSize) {
    for (uint64_t i = 0; i < sections; ++i) {
      size_t entry = kHeaderSize + i * kDirectoryEntrySize;
      uint64_t offset = load(b, entry, 8), size = load(b, entry + 8, 8);
      if (offset <= b.size() && size <= b.size() - offset)
        storeU64(b, entry + 16, XXH3_64bits(b.data() + offset, size));
    }
    storeU64(b, kDirectoryChecksumOffset,
             XXH3_64bits(b.data() + kHeaderSize, directorySize));
  }
  storeU64(b, kHeaderChecksumOffset, XXH3_64bits(b.data(), kHeaderChecksumOffset));
  return b;
}

void readWhole(const std::string &bytes) {
  aoa::fuzz::RenderedDiagnostics r;
  aoa::binplan::PlanOrigin origin;
  aoa::readPlanBytes("fuzz.plan", bytes, r.sources, r.diags, &origin);
}

/// One rank's section, read from a memory file as aoa-run reads a file.
void readOneRank(const std::string &bytes) {
  int fd = memfd_create("fuzz.plan", 0);
  if (fd < 0)
    return;
  if (write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size())) {
    uint32_t ranks = bytes.size() >= kHeaderSize ? uint32_t(load(bytes, kRanksOffset, 4)) : 1;
    // The last rank when the count is plausible, else one past it.
    uint32_t rank = ranks > 0 ? ranks - 1 : 0;
    aoa::fuzz::RenderedDiagnostics r;
    // As a process of an mpi run: its own checks, then its side of the
    // pairing (a rank past the plan's ranks reads the tables only).
    std::optional<aoa::plan::Plan> plan = aoa::binplan::readBinaryPlanRank(
        "/proc/self/fd/" + std::to_string(fd), rank, r.diags, nullptr,
        aoa::binplan::AbsentRank::Allow);
    if (plan && aoa::verifyPlanRank(*plan, rank, r.diags))
      (void)aoa::plan::exchangeSignature(*plan, rank);
  }
  close(fd);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  readWhole(bytes);
  std::string sealed = reseal(bytes);
  if (sealed != bytes)
    readWhole(sealed);
  readOneRank(sealed);
  return 0;
}
