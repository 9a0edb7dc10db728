//===- BinaryPlanTest.cpp - The binary plan container ---------------------===//
//
// Round trips compare the plan field by field; every byte of a small plan
// file is flipped and every length truncated, and each must be refused;
// counts and indices made wrong behind valid checksums (the test re-seals
// the file) must be refused too, with a message naming what is wrong.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/LayoutHash.h"

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/formats/plan/PlanWriter.h"

#include "CapturedDiagnostics.h"
#include "SamplePlan.h"
#include "SamplePlanText.h"
#include "ScratchDirectory.h"

#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <random>
#include <set>

using namespace aoa;

namespace {

/// The sample with every optional field set: a Hugging Face destination,
/// shared source access, copied files, recorded source sizes and data
/// offsets, transforms of every kind (shared by two instructions).
plan::Plan richPlan() {
  plan::Plan plan = test::readSamplePlan();
  plan.destinationFormat = plan::DestinationFormat::HuggingFace;
  plan.sourceAccess = plan::SourceAccess::Shared;
  plan.copiedFiles = {"config.json", "tokenizer/vocab.txt"};
  plan.sourceFiles[1].size = 123456789012ULL;
  plan.sourceTensors[2].data = plan::ByteRange{64, 128};
  plan::Round &round = plan.programs[1].rounds[0];
  plan::Instruction copy = round.instructions[5];
  EXPECT_EQ(copy.opcode, plan::Opcode::Copy);
  std::string why;
  std::optional<std::vector<plan::TransformStep>> steps =
      plan::parseTransformSteps({"[2, 0, 1]", "bfloat16", "[1, 0, 2]"}, 3, why);
  EXPECT_TRUE(steps) << why;
  copy.transform = plan.transforms.intern(*steps);
  round.instructions.push_back(copy);
  round.instructions.push_back(copy);
  plan.memoryBudget = -5; // any value round-trips; the verifier judges it
  return plan;
}

void expectSameBox(const Box &a, const Box &b, const std::string &what) {
  EXPECT_EQ(a.toString(), b.toString()) << what;
}

void expectSameSteps(const std::vector<plan::TransformStep> &a,
                     const std::vector<plan::TransformStep> &b,
                     const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].kind, b[i].kind) << what;
    EXPECT_EQ(a[i].permutation, b[i].permutation) << what;
    EXPECT_EQ(a[i].dtype, b[i].dtype) << what;
    EXPECT_EQ(a[i].canonical, b[i].canonical) << what;
  }
}

void expectSameTensors(const std::vector<plan::StoredTensor> &a,
                       const std::vector<plan::StoredTensor> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    std::string what = "tensor " + std::to_string(i);
    EXPECT_EQ(a[i].file, b[i].file) << what;
    EXPECT_EQ(a[i].name, b[i].name) << what;
    EXPECT_EQ(a[i].key, b[i].key) << what;
    EXPECT_EQ(a[i].dtype, b[i].dtype) << what;
    EXPECT_EQ(a[i].globalShape, b[i].globalShape) << what;
    expectSameBox(a[i].box, b[i].box, what);
    EXPECT_EQ(a[i].flat, b[i].flat) << what;
    EXPECT_EQ(a[i].data, b[i].data) << what;
  }
}

void expectSameFiles(const std::vector<plan::File> &a,
                     const std::vector<plan::File> &b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].path, b[i].path);
    EXPECT_EQ(a[i].rank, b[i].rank);
    EXPECT_EQ(a[i].size, b[i].size);
  }
}

/// Rank `r`'s programs of plans `pa` and `pb` are the same (copies compared
/// by their steps: transform ids are each plan's own).
void expectSameProgram(const plan::Plan &pa, const plan::Plan &pb, uint32_t r,
                       const std::string &rank) {
  const plan::RankProgram &a = pa.programs[r], &b = pb.programs[r];
  ASSERT_EQ(a.rounds.size(), b.rounds.size()) << rank;
  for (size_t k = 0; k < a.rounds.size(); ++k) {
    const plan::Round &ra = a.rounds[k], &rb = b.rounds[k];
    std::string where = rank + " round " + std::to_string(k);
    ASSERT_EQ(ra.buffers.size(), rb.buffers.size()) << where;
    for (size_t i = 0; i < ra.buffers.size(); ++i) {
      EXPECT_EQ(ra.buffers[i].dtype, rb.buffers[i].dtype) << where;
      EXPECT_EQ(ra.buffers[i].shape, rb.buffers[i].shape) << where;
    }
    ASSERT_EQ(ra.instructions.size(), rb.instructions.size()) << where;
    for (size_t i = 0; i < ra.instructions.size(); ++i) {
      const plan::Instruction &x = ra.instructions[i], &y = rb.instructions[i];
      std::string what = where + " instruction " + std::to_string(i);
      EXPECT_EQ(x.opcode, y.opcode) << what;
      EXPECT_EQ(x.buffer, y.buffer) << what;
      EXPECT_EQ(x.input, y.input) << what;
      EXPECT_EQ(x.tensor, y.tensor) << what;
      expectSameBox(x.region, y.region, what);
      EXPECT_EQ(x.peer, y.peer) << what;
      EXPECT_EQ(x.buffers, y.buffers) << what;
      expectSameSteps(pa.steps(x), pb.steps(y), what);
    }
  }
}

void expectSamePlan(const plan::Plan &a, const plan::Plan &b) {
  EXPECT_EQ(a.ranks, b.ranks);
  EXPECT_EQ(a.memoryBudget, b.memoryBudget);
  EXPECT_EQ(a.destinationFormat, b.destinationFormat);
  EXPECT_EQ(a.sourceAccess, b.sourceAccess);
  expectSameFiles(a.sourceFiles, b.sourceFiles);
  expectSameFiles(a.destinationFiles, b.destinationFiles);
  expectSameTensors(a.sourceTensors, b.sourceTensors);
  expectSameTensors(a.destinationTensors, b.destinationTensors);
  EXPECT_EQ(a.addedKeys, b.addedKeys);
  EXPECT_EQ(a.copiedFiles, b.copiedFiles);
  ASSERT_EQ(a.programs.size(), b.programs.size());
  for (size_t r = 0; r < a.programs.size(); ++r)
    expectSameProgram(a, b, uint32_t(r), "rank " + std::to_string(r));
}

std::optional<plan::Plan> decode(std::string_view bytes, std::string &message,
                                 binplan::PlanOrigin *origin = nullptr) {
  test::CapturedDiagnostics captured;
  std::optional<plan::Plan> plan =
      binplan::readBinaryPlanBytes("p.bin", bytes, captured.diags, origin);
  message = captured.diagnostics.empty() ? "" : captured.message();
  EXPECT_EQ(bool(plan), captured.diagnostics.empty());
  return plan;
}

//===----------------------------------------------------------------------===//
// Raw access to the container, to damage it behind valid checksums
//===----------------------------------------------------------------------===//

uint64_t get64(const std::string &b, size_t at) {
  uint64_t v = 0;
  std::memcpy(&v, b.data() + at, 8); // little-endian hosts only (x86, arm)
  return v;
}
void put64(std::string &b, size_t at, uint64_t v) {
  std::memcpy(b.data() + at, &v, 8);
}
void put32(std::string &b, size_t at, uint32_t v) {
  std::memcpy(b.data() + at, &v, 4);
}

/// The byte offset of section `id` (directory entry `id`).
size_t sectionOffset(const std::string &b, size_t id) {
  return size_t(get64(b, 80 + 24 * id));
}

/// Recomputes every checksum, as a writer would have.
void reseal(std::string &b) {
  uint32_t sections;
  std::memcpy(&sections, b.data() + 48, 4);
  for (uint32_t i = 0; i < sections; ++i) {
    size_t entry = 80 + 24 * i;
    put64(b, entry + 16,
          XXH3_64bits(b.data() + get64(b, entry), get64(b, entry + 8)));
  }
  put64(b, 64, XXH3_64bits(b.data() + 80, 24 * sections));
  put64(b, 72, XXH3_64bits(b.data(), 72));
}

/// The offset, in the tensor table, of its first range record: after the
/// six counts, the tensor, shape and box records.
size_t tensorTableRangesOffset(const std::string &b) {
  size_t table = sectionOffset(b, 2);
  return 48 + 24 * (get64(b, table) + get64(b, table + 8)) +
         16 * (get64(b, table + 16) + get64(b, table + 24));
}

//===----------------------------------------------------------------------===//
// Round trips and determinism
//===----------------------------------------------------------------------===//

TEST(BinaryPlanTest, SamplePlanRoundTripsFieldByField) {
  plan::Plan plan = test::readSamplePlan();
  std::string bytes = binplan::encodeBinaryPlan(plan, {});
  ASSERT_TRUE(binplan::isBinaryPlan(bytes));
  std::string message;
  binplan::PlanOrigin origin{1, 2};
  std::optional<plan::Plan> back = decode(bytes, message, &origin);
  ASSERT_TRUE(back) << message;
  expectSamePlan(plan, *back);
  EXPECT_EQ(printPlanText(*back), test::kSamplePlanText);
  EXPECT_FALSE(origin.sourceLayoutHash);
  EXPECT_FALSE(origin.destinationLayoutHash);
  // A rank section stores each distinct shape once: the reader gives its
  // buffers of one shape one list (plan::BufferDecl).
  size_t sharedPairs = 0;
  for (const plan::RankProgram &program : back->programs)
    for (const plan::Round &round : program.rounds)
      for (size_t i = 0; i < round.buffers.size(); ++i)
        for (size_t j = 0; j < i; ++j)
          if (round.buffers[i].shape == round.buffers[j].shape) {
            EXPECT_TRUE(round.buffers[i].shape.sharesWith(
                round.buffers[j].shape));
            ++sharedPairs;
          }
  EXPECT_GT(sharedPairs, 0u);
}

TEST(BinaryPlanTest, EveryOptionalFieldAndTheOriginRoundTrip) {
  plan::Plan plan = richPlan();
  binplan::PlanOrigin origin{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  std::string bytes = binplan::encodeBinaryPlan(plan, origin);
  std::string message;
  binplan::PlanOrigin back;
  std::optional<plan::Plan> decoded = decode(bytes, message, &back);
  ASSERT_TRUE(decoded) << message;
  expectSamePlan(plan, *decoded);
  EXPECT_EQ(printPlanText(plan), printPlanText(*decoded));
  EXPECT_EQ(back, origin);
  // Only the destination hash: the flags keep them apart.
  bytes = binplan::encodeBinaryPlan(plan, {std::nullopt, 7});
  ASSERT_TRUE(decode(bytes, message, &back)) << message;
  EXPECT_EQ(back, (binplan::PlanOrigin{std::nullopt, 7}));
}

// Shared source access is bit 2 of the header's flags, set only for such
// plans (so every other plan keeps its bytes); a reader that predates it
// refuses it as an unknown flag, as this one refuses bit 3.
TEST(BinaryPlanTest, SharedSourceAccessIsAHeaderFlag) {
  auto flags = [](const std::string &b) {
    uint32_t v = 0;
    std::memcpy(&v, b.data() + 12, 4);
    return v;
  };
  plan::Plan plan = test::readSamplePlan();
  std::string owner = binplan::encodeBinaryPlan(plan, {});
  EXPECT_EQ(flags(owner), 0u);
  plan.sourceAccess = plan::SourceAccess::Shared;
  std::string shared = binplan::encodeBinaryPlan(plan, {});
  EXPECT_EQ(flags(shared), 4u);
  std::string message;
  std::optional<plan::Plan> back = decode(shared, message);
  ASSERT_TRUE(back) << message;
  EXPECT_EQ(back->sourceAccess, plan::SourceAccess::Shared);
  back = decode(owner, message);
  ASSERT_TRUE(back) << message;
  EXPECT_EQ(back->sourceAccess, plan::SourceAccess::Owner);
  put32(shared, 12, 4u | 8u);
  reseal(shared);
  EXPECT_FALSE(decode(shared, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': unknown header flags "
                     "0x0000000000000008");
}

TEST(BinaryPlanTest, SharedTransformsAndStringsAreStoredOnce) {
  plan::Plan plan = richPlan();
  std::string once = binplan::encodeBinaryPlan(plan, {});
  // Ten more instructions with the same transform add only their records.
  plan::Round &round = plan.programs[1].rounds[0];
  for (int i = 0; i < 10; ++i)
    round.instructions.push_back(round.instructions.back());
  std::string more = binplan::encodeBinaryPlan(plan, {});
  EXPECT_EQ(more.size() - once.size(), 10u * 24);
  // "m.moment1_0" is a name and a key of four tensors, stored once.
  size_t first = once.find("m.moment1_0");
  ASSERT_NE(first, std::string::npos);
  EXPECT_EQ(once.find("m.moment1_0", first + 1), std::string::npos);
}

TEST(BinaryPlanTest, SameInputsGiveTheSameBytes) {
  plan::Plan plan = richPlan();
  std::string a = binplan::encodeBinaryPlan(plan, {1, 2});
  std::string b = binplan::encodeBinaryPlan(richPlan(), {1, 2});
  EXPECT_EQ(a, b);
  std::string message;
  std::optional<plan::Plan> back = decode(a, message);
  ASSERT_TRUE(back) << message;
  EXPECT_EQ(binplan::encodeBinaryPlan(*back, {1, 2}), a);
  // Every section is 8-byte aligned, so every record is too.
  for (size_t id = 0; id < 5 + plan.ranks; ++id)
    EXPECT_EQ(sectionOffset(a, id) % 8, 0u) << id;
}

TEST(BinaryPlanTest, ATensorTableOfManyPiecesRoundTrips) {
  // The writer streams the tensor table a MB at a time, hashing each piece
  // as it goes; the reader checks the whole section's checksum at once.
  // 25,000 more tensors, each with data offsets and a box of its own (about
  // 2.6 MB of records and integers), make the table several pieces, the
  // records' boundaries falling inside them.
  plan::Plan plan = richPlan();
  plan::StoredTensor extra = plan.sourceTensors[0];
  for (int i = 0; i < 25000; ++i) {
    extra.name = SharedString("streamed." + std::to_string(i));
    extra.data = plan::ByteRange{uint64_t(i) * 64, uint64_t(i) * 64 + 64};
    llvm::SmallVector<Interval, 4> dims(extra.box.dims().begin(),
                                        extra.box.dims().end());
    dims[0] = Interval{i, i + 1};
    extra.box = Box(dims);
    plan.sourceTensors.push_back(extra);
  }
  std::string bytes = binplan::encodeBinaryPlan(plan, {1, 2});
  size_t tensorTable = get64(bytes, 80 + 24 * 2 + 8);
  EXPECT_GT(tensorTable, size_t(2) << 20);
  std::string message;
  std::optional<plan::Plan> back = decode(bytes, message);
  ASSERT_TRUE(back) << message;
  expectSamePlan(plan, *back);
  // Tensors one after another with one shape share one list.
  const std::vector<plan::StoredTensor> &read = back->sourceTensors;
  for (size_t i = read.size() - 24999; i < read.size(); ++i)
    ASSERT_TRUE(read[i].globalShape.sharesWith(read[i - 1].globalShape)) << i;
  // Through a file (the path aoa-compile takes), the same bytes.
  test::ScratchDirectory dir;
  std::string path = dir.file("p.bin");
  {
    std::ofstream os(path, std::ios::binary);
    ASSERT_TRUE(binplan::writeBinaryPlan(plan, {1, 2}, os));
  }
  std::ifstream is(path, std::ios::binary);
  std::string written((std::istreambuf_iterator<char>(is)),
                      std::istreambuf_iterator<char>());
  EXPECT_EQ(written, bytes);
}

TEST(BinaryPlanTest, ReadsOneRankFromAFile) {
  plan::Plan plan = richPlan();
  test::ScratchDirectory dir;
  std::string path = dir.file("p.bin");
  std::string bytes = binplan::encodeBinaryPlan(plan, {5, 6});
  // Damage rank 0's section: rank 1 does not read it.
  std::string damaged = bytes;
  damaged[sectionOffset(bytes, 5) + 3] ^= 0x40;
  std::ofstream(path, std::ios::binary) << damaged;

  test::CapturedDiagnostics captured;
  binplan::PlanOrigin origin;
  std::optional<plan::Plan> one =
      binplan::readBinaryPlanRank(path, 1, captured.diags, &origin);
  ASSERT_TRUE(one) << captured.all();
  EXPECT_EQ(origin, (binplan::PlanOrigin{5, 6}));
  ASSERT_EQ(one->programs.size(), 2u);
  EXPECT_TRUE(one->programs[0].rounds.empty());
  expectSameProgram(plan, *one, 1, "rank 1");
  expectSameTensors(plan.sourceTensors, one->sourceTensors);
  EXPECT_EQ(one->copiedFiles, plan.copiedFiles);

  EXPECT_FALSE(binplan::readBinaryPlanRank(path, 0, captured.diags));
  EXPECT_EQ(captured.message(),
            "invalid binary plan '" + path + "': rank 0's section's checksum "
            "does not match (recorded " +
                captured.message().substr(captured.message().find("0x"), 18) +
                ", computed " +
                captured.message().substr(captured.message().rfind("0x"), 18) +
                ")");
  EXPECT_FALSE(binplan::readBinaryPlan(path, captured.diags));
  EXPECT_FALSE(binplan::readBinaryPlanRank(path, 2, captured.diags));
  EXPECT_EQ(captured.message(2),
            "the plan '" + path + "' has 2 ranks; there is no rank 2");
}

//===----------------------------------------------------------------------===//
// Every damage is refused
//===----------------------------------------------------------------------===//

TEST(BinaryPlanTest, EveryFlippedByteIsRefused) {
  std::string bytes = binplan::encodeBinaryPlan(richPlan(), {1, 2});
  for (size_t i = 0; i < bytes.size(); ++i)
    for (unsigned char mask : {0x01, 0x80}) {
      std::string damaged = bytes;
      damaged[i] = char(damaged[i] ^ mask);
      std::string message;
      EXPECT_FALSE(decode(damaged, message)) << "byte " << i;
      EXPECT_NE(message.find("p.bin"), std::string::npos) << message;
    }
}

TEST(BinaryPlanTest, EveryTruncationAndExtensionIsRefused) {
  std::string bytes = binplan::encodeBinaryPlan(richPlan(), {});
  std::string message;
  for (size_t n = 0; n < bytes.size(); ++n)
    EXPECT_FALSE(decode(std::string_view(bytes).substr(0, n), message)) << n;
  decode(std::string_view(bytes).substr(0, bytes.size() - 8), message);
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the header records " +
                         std::to_string(bytes.size()) + " bytes, the file has " +
                         std::to_string(bytes.size() - 8) + " (truncated)");
  EXPECT_FALSE(decode(bytes + '\0', message));
}

TEST(BinaryPlanTest, MagicAndVersionAreCheckedFirst) {
  std::string bytes = binplan::encodeBinaryPlan(test::readSamplePlan(), {});
  std::string message;
  std::string text = test::kSamplePlanText;
  EXPECT_FALSE(decode(text, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': it does not start with the "
                     "magic \"AOAPLAN\\0\"");
  std::string other = bytes;
  put32(other, 8, 4);
  EXPECT_FALSE(decode(other, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': unsupported binary plan "
                     "version 4; this reader supports version 3");
  // Version 1 stored every tensor's shape and box in full, version 2 every
  // instruction in a 48-byte record: their plans are compiled again.
  for (uint32_t old : {1u, 2u}) {
    put32(other, 8, old);
    EXPECT_FALSE(decode(other, message));
    EXPECT_EQ(message, "invalid binary plan 'p.bin': unsupported binary plan "
                       "version " +
                           std::to_string(old) +
                           "; this reader supports version 3");
  }
  put32(other, 8, 0);
  EXPECT_FALSE(decode(other, message));
  EXPECT_NE(message.find("version 0;"), std::string::npos);
}

TEST(BinaryPlanTest, HugeCountsBehindValidChecksumsAreRefused) {
  std::string bytes = binplan::encodeBinaryPlan(test::readSamplePlan(), {});
  std::string message;
  struct Case {
    size_t section, offset;
    std::string expected;
  };
  const Case cases[] = {
      {0, 0, "the string table: the count of strings, 18446744073709551615, "
             "is more than the section's bytes hold"},
      {1, 0, "the file table: the file counts 18446744073709551615 + 4 are "
             "more than the section's bytes hold"},
      {2, 16, "the tensor table: the tensor, shape, box, range and integer "
              "counts do not match the section's size"},
      {3, 0, "the transform table: the transform, step and integer counts "
             "are more than the section's bytes hold"},
      {5, 8, "rank 0's section: its round, buffer, instruction and "
             "buffer-list counts are more than the section's bytes hold"},
  };
  for (const Case &c : cases) {
    std::string damaged = bytes;
    put64(damaged, sectionOffset(bytes, c.section) + c.offset, ~uint64_t(0));
    reseal(damaged);
    EXPECT_FALSE(decode(damaged, message));
    EXPECT_EQ(message, "invalid binary plan 'p.bin': " + c.expected);
  }
}

TEST(BinaryPlanTest, IndicesOutOfRangeBehindValidChecksumsAreRefused) {
  plan::Plan plan = test::readSamplePlan();
  std::string bytes = binplan::encodeBinaryPlan(plan, {});
  std::string message;
  size_t tensors = sectionOffset(bytes, 2) + 48;
  size_t rank0 = sectionOffset(bytes, 5);
  const plan::Round &round = plan.programs[0].rounds[0];
  size_t roundCount = plan.programs[0].rounds.size();
  size_t bufferCount = 0;
  for (const plan::Round &r : plan.programs[0].rounds)
    bufferCount += r.buffers.size();
  size_t instructions = rank0 + 40 + 8 * roundCount + 16 * bufferCount;
  struct Case {
    size_t at;
    uint32_t value;
    std::string expected;
  };
  const Case cases[] = {
      {tensors + 4, 999, "the tensor table: source tensor 0's name refers to "
                         "string 999, but the string table has 15"},
      {tensors, 7, "the tensor table: source tensor 0 refers to file 7, but "
                   "there are 2"},
      {tensors + 20, 77, "the tensor table: source tensor 0 has an unknown "
                         "dtype code 77"},
      {instructions, 9, "rank 0's section: round 0, instruction 0 has an "
                        "unknown opcode 9"},
      {instructions + 4, 40, "rank 0's section: round 0, instruction 0 refers "
                             "to buffer %40, but the round declares " +
                                 std::to_string(round.buffers.size())},
      {instructions + 8, 6, "rank 0's section: round 0, instruction 0 refers "
                            "to tensor 6, but there are 6"},
      {instructions + 4 * 24 + 12, 4,
       "rank 0's section: round 0, instruction 4 refers to transform 4, but "
       "the transform table has 4"},
      {instructions + 2 * 24 + 4, 2,
       "rank 0's section: round 0, instruction 2 names peer rank 2, but the "
       "plan has 2"},
      // Fields an opcode does not use: a read's third, a copy's integer
      // offset, a send's third.
      {instructions + 12, 1, "rank 0's section: round 0, instruction 0 has a "
                             "field its opcode does not use that is not zero"},
      {instructions + 4 * 24 + 16, 1,
       "rank 0's section: round 0, instruction 4 has a field its opcode does "
       "not use that is not zero"},
      {instructions + 2 * 24 + 12, 1,
       "rank 0's section: round 0, instruction 2 has a field its opcode does "
       "not use that is not zero"},
  };
  for (const Case &c : cases) {
    std::string damaged = bytes;
    put32(damaged, c.at, c.value);
    reseal(damaged);
    EXPECT_FALSE(decode(damaged, message));
    EXPECT_EQ(message, "invalid binary plan 'p.bin': " + c.expected);
  }
}

TEST(BinaryPlanTest, RangesThatStandForNoneAreRefused) {
  // In memory a stored tensor's flat range and data offsets spend no flag
  // (PackedOptional): one value of each stands for none, and a file that
  // flags it as present is refused rather than read as absent.
  plan::Plan plan = richPlan();
  for (auto *side : {&plan.sourceTensors, &plan.destinationTensors})
    for (plan::StoredTensor &t : *side) {
      t.flat.reset();
      t.data.reset();
    }
  plan.sourceTensors[0].flat = FlatElementRange{0, 8};
  plan.sourceTensors[0].data = plan::ByteRange{0, 16};
  std::string bytes = binplan::encodeBinaryPlan(plan, {1, 2});
  // Source tensor 0's range record, the first (docs/plan-format.md).
  size_t table = sectionOffset(bytes, 2);
  size_t record = table + tensorTableRangesOffset(bytes);
  std::string message;
  std::string flat = bytes;
  flat[table + 48 + 21] = 1; // flags bit 0 only: a flat range
  put64(flat, record, uint64_t(std::numeric_limits<int64_t>::min()));
  put64(flat, record + 8, uint64_t(std::numeric_limits<int64_t>::min()));
  put64(flat, record + 16, 0);
  put64(flat, record + 24, 0);
  reseal(flat);
  EXPECT_FALSE(decode(flat, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: source "
                     "tensor 0 has the flat range [-9223372036854775808:"
                     "-9223372036854775808], which no tensor stores");
  std::string data = bytes;
  data[table + 48 + 21] = 2; // flags bit 1 only: data offsets
  put64(data, record, 0);
  put64(data, record + 8, 0);
  put64(data, record + 16, ~uint64_t(0));
  put64(data, record + 24, ~uint64_t(0));
  reseal(data);
  EXPECT_FALSE(decode(data, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: source "
                     "tensor 0 has the data offsets [18446744073709551615:"
                     "18446744073709551615], which no file holds");
  // One below the least int64 is a flat range like any other (the verifier
  // judges it).
  put64(flat, record, uint64_t(std::numeric_limits<int64_t>::min() + 1));
  reseal(flat);
  std::optional<plan::Plan> back = decode(flat, message);
  ASSERT_TRUE(back) << message;
  ASSERT_TRUE(back->sourceTensors[0].flat);
  EXPECT_EQ(back->sourceTensors[0].flat->begin,
            std::numeric_limits<int64_t>::min() + 1);
  EXPECT_FALSE(back->sourceTensors[0].data);
}

TEST(BinaryPlanTest, RangeRecordsMatchTheTensorsThatFlagThem) {
  plan::Plan plan = richPlan();
  for (auto *side : {&plan.sourceTensors, &plan.destinationTensors})
    for (plan::StoredTensor &t : *side)
      t.flat.reset();
  ASSERT_TRUE(plan.sourceTensors[2].data); // the only range left
  std::string bytes = binplan::encodeBinaryPlan(plan, {1, 2});
  size_t table = sectionOffset(bytes, 2);
  ASSERT_EQ(get64(bytes, table + 32), 1u);
  std::string message;
  // A flag set on a tensor without a range record: the records run out.
  std::string extra = bytes;
  extra[table + 48 + 24 * plan.sourceTensors.size() + 21] = 1;
  reseal(extra);
  EXPECT_FALSE(decode(extra, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: "
                     "destination tensor 0 has a flat range or data offsets, "
                     "but the table holds only 1");
  // The one flag cleared: a range record no tensor claims.
  std::string missing = bytes;
  missing[table + 48 + 2 * 24 + 21] = 0;
  reseal(missing);
  EXPECT_FALSE(decode(missing, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: the "
                     "table holds 1 flat ranges and data offsets, but 0 "
                     "tensors flag one");
  // A range field its flags do not announce.
  std::string stray = bytes;
  put64(stray, table + tensorTableRangesOffset(bytes), 5); // flat begin
  reseal(stray);
  EXPECT_FALSE(decode(stray, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: source "
                     "tensor 2 has a flat range without its flag");
}

TEST(BinaryPlanTest, ShapesAndBoxesAreStoredOnce) {
  // A model's layers repeat the few shapes and boxes of its layout: the
  // table stores each once, and the reader shares each shape among its
  // tensors.
  plan::Plan plan = richPlan();
  plan::StoredTensor layer = plan.sourceTensors[0];
  std::set<std::string> boxes, shapes;
  for (const auto *side : {&plan.sourceTensors, &plan.destinationTensors})
    for (const plan::StoredTensor &t : *side) {
      boxes.insert(t.box.toString());
      shapes.insert(Box::fromShape(t.globalShape).toString());
    }
  for (int i = 0; i < 100; ++i) {
    layer.name = SharedString("layers." + std::to_string(i) + ".w");
    layer.key = layer.name;
    layer.globalShape = SharedShape(layer.globalShape.vec()); // another list
    plan.sourceTensors.push_back(layer);
  }
  std::string bytes = binplan::encodeBinaryPlan(plan, {1, 2});
  size_t table = sectionOffset(bytes, 2);
  EXPECT_EQ(get64(bytes, table + 16), shapes.size());
  EXPECT_EQ(get64(bytes, table + 24), boxes.size());
  std::string message;
  std::optional<plan::Plan> back = decode(bytes, message);
  ASSERT_TRUE(back) << message;
  expectSamePlan(plan, *back);
  const std::vector<plan::StoredTensor> &read = back->sourceTensors;
  EXPECT_TRUE(read.back().globalShape.sharesWith(read[0].globalShape));
  // An index past its pool is refused.
  std::string damaged = bytes;
  put32(damaged, table + 48 + 12, uint32_t(shapes.size()));
  reseal(damaged);
  EXPECT_FALSE(decode(damaged, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: source "
                     "tensor 0 refers to shape " + std::to_string(shapes.size()) +
                     ", but there are " + std::to_string(shapes.size()));
  damaged = bytes;
  put32(damaged, table + 48 + 16, 1000);
  reseal(damaged);
  EXPECT_FALSE(decode(damaged, message));
  EXPECT_EQ(message, "invalid binary plan 'p.bin': the tensor table: source "
                     "tensor 0 refers to box 1000, but there are " +
                     std::to_string(boxes.size()));
  // A pooled box whose integers lie outside the table.
  damaged = bytes;
  size_t records = table + 48 + 24 * (get64(bytes, table) + get64(bytes, table + 8));
  put64(damaged, records + 16 * shapes.size() + 8, 1u << 20);
  reseal(damaged);
  EXPECT_FALSE(decode(damaged, message));
  EXPECT_NE(message.find("the tensor table: box 0: integers 1048576 + "),
            std::string::npos)
      << message;
}

TEST(BinaryPlanTest, RandomDamageBehindValidChecksumsIsDecodedSafely) {
  // The checks after the checksums, with bytes an attacker chose: random
  // bytes of the sections changed and the checksums recomputed. Each must be
  // refused with a message or decode into some plan (for the verifier to
  // judge); under ASan + UBSan (scripts/check.sh) none may read outside the
  // file or allocate what its size cannot hold.
  std::string bytes = binplan::encodeBinaryPlan(richPlan(), {1, 2});
  size_t first = sectionOffset(bytes, 0);
  std::mt19937_64 random(15);
  int refused = 0;
  for (int trial = 0; trial < 3000; ++trial) {
    std::string damaged = bytes;
    int changes = 1 + int(random() % 4);
    for (int i = 0; i < changes; ++i) {
      size_t at = first + random() % (bytes.size() - first);
      // Small values and all-ones are the interesting counts and indices.
      uint64_t kind = random() % 3;
      damaged[at] = char(kind == 0 ? 0xFF : kind == 1 ? random() % 8 : random());
    }
    reseal(damaged);
    std::string message;
    if (!decode(damaged, message)) {
      ++refused;
      EXPECT_EQ(message.rfind("invalid binary plan 'p.bin': ", 0), 0u) << message;
    }
  }
  EXPECT_GT(refused, 1000);
}

TEST(BinaryPlanTest, LayoutHashIgnoresTextButNotLayout) {
  auto build = [](int64_t offset, const char *key) {
    ShardMetadataBuilder b;
    b.addTensor(key, DType::F32, {4, 4});
    b.addShard(0, "a.safetensors", key, {offset, 0}, {2, 4});
    return b.finish();
  };
  ShardMetadata a = build(0, "w"), same = build(0, "w"),
                moved = build(2, "w"), renamed = build(0, "v");
  EXPECT_EQ(binplan::layoutHash(a), binplan::layoutHash(same));
  EXPECT_NE(binplan::layoutHash(a), binplan::layoutHash(moved));
  EXPECT_NE(binplan::layoutHash(a), binplan::layoutHash(renamed));
}

} // namespace
