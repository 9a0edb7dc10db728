//===- SafetensorsWriterTest.cpp - Layout, round trips, atomicity ---------===//
//
// The writer's output is compared byte for byte with the official library's
// (byte strings from its own tests), read back through the reader after
// random out-of-order writes, and checked for atomicity: no final file
// before commit, no temporary after destruction, no commit after a failed
// write (the failure is provoked with RLIMIT_FSIZE, which works as root).
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/SafetensorsReader.h"
#include "aoa/runtime/storage/SafetensorsWriter.h"

#include "OfficialSafetensors.h"
#include "ScratchDirectory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <random>
#include <sys/resource.h>

using namespace aoa;
using namespace aoa::runtime;
using namespace aoa::test;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

SafetensorsWriter createOk(const std::string &path,
                           std::vector<TensorDeclaration> tensors,
                           SafetensorsMetadata metadata = {}) {
  Expected<SafetensorsWriter> writer =
      SafetensorsWriter::create(path, std::move(tensors), std::move(metadata));
  EXPECT_TRUE(writer) << writer.error().toString();
  return std::move(*writer);
}

std::string createError(const std::string &path,
                        std::vector<TensorDeclaration> tensors,
                        SafetensorsMetadata metadata = {}) {
  Expected<SafetensorsWriter> writer =
      SafetensorsWriter::create(path, std::move(tensors), std::move(metadata));
  EXPECT_FALSE(writer) << "created " << path;
  return writer ? "" : writer.error().toString();
}

TEST(SafetensorsWriter, MatchesOfficialLibraryBytes) {
  ScratchDirectory dir;
  std::string path = dir.file("attn.safetensors");
  SafetensorsWriter writer =
      createOk(path, {{"attn.0", DType::F32, {1, 2, 3}}});
  float values[] = {0, 1, 2, 3, 4, 5};
  ASSERT_TRUE(writer.writeTensor("attn.0", values, sizeof(values)));
  ASSERT_TRUE(writer.commit());
  EXPECT_EQ(readWholeFile(path), officialAttnFile());
}

TEST(SafetensorsWriter, PadsHeaderLikeOfficialLibrary) {
  ScratchDirectory dir;
  // test_serialization_forced_alignement: 65 bytes of JSON, 7 spaces.
  SafetensorsWriter padded =
      createOk(dir.file("a.st"), {{"attn0", DType::F32, {1, 1, 2, 3}}});
  std::vector<float> values = {0, 1, 2, 3, 4, 5};
  // Written back to front, in pieces.
  for (int i = 5; i >= 0; --i)
    ASSERT_TRUE(padded.write("attn0", uint64_t(i) * 4, &values[i], 4));
  ASSERT_TRUE(padded.commit());
  EXPECT_EQ(readWholeFile(dir.file("a.st")), officialPaddedFile());

  // test_empty: no tensors, then metadata only.
  SafetensorsWriter empty = createOk(dir.file("e.st"), {});
  ASSERT_TRUE(empty.commit());
  EXPECT_EQ(readWholeFile(dir.file("e.st")), officialEmptyFile());
  SafetensorsWriter metadata =
      createOk(dir.file("m.st"), {}, {{"framework", "pt"}});
  ASSERT_TRUE(metadata.commit());
  EXPECT_EQ(readWholeFile(dir.file("m.st")), officialMetadataOnlyFile());
}

TEST(SafetensorsWriter, EscapesNamesAsJson) {
  ScratchDirectory dir;
  std::string path = dir.file("n.st");
  SafetensorsWriter writer = createOk(
      path, {{"q\"b\\s\n\x01\xc3\xa9/", DType::U8, {0}}}, {{"k\t", "v\r"}});
  ASSERT_TRUE(writer.commit());
  std::string json = readWholeFile(path).substr(8);
  EXPECT_EQ(json, R"({"__metadata__":{"k\t":"v\u000d"},)"
                  R"("q\"b\\s\n\u0001é/":{"dtype":"U8","shape":[0],)"
                  R"("data_offsets":[0,0]}})"
                  " ");
}

TEST(SafetensorsWriter, LaysOutTensorsInOfficialOrder) {
  ScratchDirectory dir;
  SafetensorsWriter writer =
      createOk(dir.file("o.st"), {{"flag", DType::Bool, {3}},
                                  {"b.half", DType::F16, {3}},
                                  {"a.half", DType::F16, {1}},
                                  {"brain", DType::BF16, {1}},
                                  {"byte", DType::U8, {1}},
                                  {"signed", DType::I8, {1}},
                                  {"short", DType::I16, {1}},
                                  {"int", DType::I32, {1}},
                                  {"single", DType::F32, {1}},
                                  {"double", DType::F64, {1}},
                                  {"long", DType::I64, {1}}});
  // Dtypes by descending alignment (the official enum's order, largest
  // first), names ascending within a dtype; packed with no gaps.
  std::vector<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsTensor &t : writer.header().tensors()) {
    names.push_back(t.name);
    EXPECT_EQ(t.dataBegin, offset) << t.name;
    EXPECT_EQ(t.dataBegin % dtypeSize(t.dtype), 0u) << t.name;
    offset = t.dataEnd;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "long", "double", "single", "int", "brain", "a.half",
                       "b.half", "short", "signed", "byte", "flag"}));
  EXPECT_EQ(writer.fileSize() % 8, offset % 8);
}

TEST(SafetensorsWriter, OrdersEveryDTypeAsTheOfficialEnum) {
  // The official Dtype enum (safetensors/src/tensor.rs) declares BOOL, F4,
  // F6_E2M3, F6_E3M2, U8, I8, F8_E5M2, F8_E4M3, F8_E8M0, F8_E4M3FNUZ,
  // F8_E5M2FNUZ, I16, U16, F16, BF16, I32, U32, F32, C64, F64, I64, U64;
  // the writer sorts by it, last first. Declared here in name order, so
  // only the dtype can put them in the expected order.
  std::vector<TensorDeclaration> decls;
  for (DType dtype : kAllDTypes)
    decls.push_back({std::string(safetensorsDTypeName(dtype)), dtype, {3}});
  std::sort(decls.begin(), decls.end(),
            [](const TensorDeclaration &a, const TensorDeclaration &b) {
              return a.name < b.name;
            });
  ScratchDirectory dir;
  std::string path = dir.file("all.st");
  SafetensorsWriter writer = createOk(path, decls);
  std::vector<std::string> names;
  uint64_t offset = 0;
  for (const SafetensorsTensor &t : writer.header().tensors()) {
    names.push_back(t.name);
    EXPECT_EQ(t.dataBegin, offset) << t.name;
    EXPECT_EQ(t.dataBegin % dtypeSize(t.dtype), 0u) << t.name;
    offset = t.dataEnd;
  }
  EXPECT_EQ(names, (std::vector<std::string>{
                       "U64", "I64", "F64", "C64", "F32", "U32", "I32",
                       "BF16", "F16", "U16", "I16", "F8_E5M2FNUZ",
                       "F8_E4M3FNUZ", "F8_E8M0", "F8_E4M3", "F8_E5M2", "I8",
                       "U8", "BOOL"}));
  // Every dtype reads back with its name, shape and bytes.
  std::mt19937_64 rng(7);
  std::vector<std::string> data;
  for (const TensorDeclaration &d : decls) {
    data.push_back(std::string(3 * dtypeSize(d.dtype), '\0'));
    for (char &c : data.back())
      c = static_cast<char>(rng());
    ASSERT_TRUE(writer.writeTensor(d.name, data.back().data(),
                                   data.back().size()));
  }
  ASSERT_TRUE(writer.commit());
  Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
  ASSERT_TRUE(reader) << reader.error().toString();
  for (size_t i = 0; i < decls.size(); ++i) {
    const SafetensorsTensor *t = reader->header().find(decls[i].name);
    ASSERT_NE(t, nullptr) << decls[i].name;
    EXPECT_EQ(t->dtype, decls[i].dtype);
    EXPECT_EQ(t->shape, std::vector<int64_t>{3});
    std::string back(data[i].size(), '\0');
    ASSERT_TRUE(reader->readTensor(*t, back.data(), back.size()));
    EXPECT_EQ(back, data[i]) << decls[i].name;
  }
}

/// Random bytes for a tensor of `size` bytes.
std::string randomBytes(std::mt19937_64 &rng, size_t size) {
  std::string bytes(size, '\0');
  for (char &c : bytes)
    c = static_cast<char>(rng());
  return bytes;
}

TEST(SafetensorsWriter, RandomRoundTripsThroughTheReader) {
  std::mt19937_64 rng(20261121);
  for (int round = 0; round < 40; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    ScratchDirectory dir;
    std::string path = dir.file("model.safetensors");
    // Tensors of random dtype and rank 0-3; names with characters that JSON
    // must escape, and non-ASCII ones.
    std::vector<TensorDeclaration> decls;
    std::map<std::string, std::string> contents;
    int count = int(rng() % 6);
    for (int i = 0; i < count; ++i) {
      TensorDeclaration decl;
      static const char *const kStems[] = {"w",          "a\"q",
                                           "b\\s",       "tab\there",
                                           "line\nfeed", "\xc3\xa9t\xc3\xa9",
                                           "ctl\x01"};
      decl.name = std::string(kStems[rng() % 7]) + "." + std::to_string(i);
      decl.dtype = kAllDTypes[rng() % std::size(kAllDTypes)];
      size_t rank = rng() % 4;
      for (size_t d = 0; d < rank; ++d)
        decl.shape.push_back(int64_t(rng() % 5));
      int64_t elements = 1;
      for (int64_t extent : decl.shape)
        elements *= extent;
      contents[decl.name] =
          randomBytes(rng, size_t(elements) * dtypeSize(decl.dtype));
      decls.push_back(decl);
    }
    SafetensorsMetadata metadata;
    if (rng() % 2)
      metadata = {{"format", "pt"}, {"note \"quoted\"", "line\nbreak"}};
    SafetensorsWriter writer = createOk(path, decls, metadata);

    // Every tensor in 1-3 pieces, all pieces in random order.
    struct Piece {
      std::string name;
      uint64_t begin, end;
    };
    std::vector<Piece> pieces;
    for (const auto &[name, bytes] : contents) {
      uint64_t cut1 = bytes.empty() ? 0 : rng() % (bytes.size() + 1);
      uint64_t cut2 = bytes.empty() ? 0 : rng() % (bytes.size() + 1);
      if (cut1 > cut2)
        std::swap(cut1, cut2);
      pieces.push_back({name, 0, cut1});
      pieces.push_back({name, cut1, cut2});
      pieces.push_back({name, cut2, bytes.size()});
    }
    std::shuffle(pieces.begin(), pieces.end(), rng);
    for (const Piece &p : pieces) {
      Status written = writer.write(
          p.name, p.begin, contents[p.name].data() + p.begin, p.end - p.begin);
      ASSERT_TRUE(written) << written.error().toString();
    }
    Status committed = writer.commit();
    ASSERT_TRUE(committed) << committed.error().toString();

    Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
    ASSERT_TRUE(reader) << reader.error().toString();
    EXPECT_EQ(reader->fileSize(), writer.fileSize());
    EXPECT_EQ(reader->dataOffset() % 8, 0u);
    EXPECT_EQ(reader->header().metadata(), metadata);
    ASSERT_EQ(reader->tensors().size(), decls.size());
    for (const TensorDeclaration &decl : decls) {
      const SafetensorsTensor *t = reader->find(decl.name);
      ASSERT_NE(t, nullptr) << decl.name;
      EXPECT_EQ(t->dtype, decl.dtype);
      EXPECT_EQ(t->shape, decl.shape);
      std::string data(t->byteSize(), '\0');
      ASSERT_TRUE(reader->readTensor(*t, data.data(), data.size()));
      EXPECT_EQ(data, contents[decl.name]) << decl.name;
    }
    EXPECT_EQ(dir.list(), std::vector<std::string>{"model.safetensors"});
  }
}

TEST(SafetensorsWriter, NothingUnderTheFinalNameBeforeCommit) {
  ScratchDirectory dir;
  std::string path = dir.file("out.safetensors");
  std::string temporary;
  {
    SafetensorsWriter writer = createOk(path, {{"w", DType::U8, {4}}});
    temporary = writer.temporaryPath();
    EXPECT_THAT(temporary, StartsWith(dir.file(".out.safetensors.tmp.")));
    ASSERT_TRUE(writer.writeTensor("w", "abcd", 4));
    EXPECT_FALSE(fileExists(path));
    EXPECT_TRUE(fileExists(temporary));
    EXPECT_FALSE(writer.isCommitted());
    // Destroyed without commit.
  }
  EXPECT_FALSE(fileExists(path));
  EXPECT_FALSE(fileExists(temporary));
  EXPECT_TRUE(dir.list().empty());
}

TEST(SafetensorsWriter, CommitRenamesOverAnExistingFile) {
  ScratchDirectory dir;
  std::string path = dir.file("out.safetensors");
  aoa::test::writeWholeFile(path, "old contents");
  SafetensorsWriter writer = createOk(path, {{"w", DType::U8, {2}}});
  ASSERT_TRUE(writer.writeTensor("w", "xy", 2));
  EXPECT_EQ(readWholeFile(path), "old contents");
  ASSERT_TRUE(writer.commit());
  EXPECT_TRUE(writer.isCommitted());
  EXPECT_TRUE(writer.temporaryPath().empty());
  Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
  ASSERT_TRUE(reader) << reader.error().toString();
  EXPECT_EQ(dir.list(), std::vector<std::string>{"out.safetensors"});

  Status again = writer.commit();
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().message, path + ": the file was already committed");
  Status late = writer.write("w", 0, "z", 1);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().message,
            path + ": tensor 'w': cannot write after the file was committed");
}

TEST(SafetensorsWriter, MovedWriterKeepsOwnership) {
  ScratchDirectory dir;
  std::string path = dir.file("m.st");
  Expected<SafetensorsWriter> created =
      SafetensorsWriter::create(path, {{"w", DType::U8, {1}}});
  ASSERT_TRUE(created);
  SafetensorsWriter moved(std::move(*created));
  ASSERT_TRUE(moved.writeTensor("w", "q", 1));
  ASSERT_TRUE(moved.commit());
  EXPECT_EQ(dir.list(), std::vector<std::string>{"m.st"});
}

TEST(SafetensorsWriter, IncompleteDataIsNotCommitted) {
  ScratchDirectory dir;
  std::string path = dir.file("part.st");
  SafetensorsWriter writer =
      createOk(path, {{"a", DType::F32, {2}}, {"b", DType::F32, {2}}});
  ASSERT_TRUE(writer.writeTensor("a", "12345678", 8));
  ASSERT_TRUE(writer.write("b", 0, "1234", 4));
  Status status = writer.commit();
  ASSERT_FALSE(status);
  // The header is 8 + 112 bytes; "b" spans data bytes [8, 16).
  EXPECT_EQ(status.error().toString(),
            path + ": tensor 'b' is incomplete: the data written ends at "
                   "byte 132 of 136\nhint: write every tensor's data before "
                   "commit()");
  EXPECT_FALSE(fileExists(path));
  // Finishing the data makes the commit succeed.
  ASSERT_TRUE(writer.write("b", 4, "5678", 4));
  EXPECT_TRUE(writer.commit());
  EXPECT_TRUE(fileExists(path));
}

TEST(SafetensorsWriter, InvalidDeclarations) {
  ScratchDirectory dir;
  std::string path = dir.file("bad.st");
  const std::string hint =
      "\nhint: the plan declares the destination's tensors; recompile it, or "
      "check the destination layout";
  EXPECT_EQ(createError(path, {{"w", DType::F32, {2}}, {"w", DType::U8, {1}}}),
            path + ": tensor 'w' is declared twice" + hint);
  EXPECT_EQ(createError(path, {{"w", DType::F32, {2, -1}}}),
            path + ": tensor 'w': shape [2, -1] has a negative extent" + hint);
  EXPECT_EQ(createError(path, {{"", DType::F32, {}}}),
            path + ": a tensor name is empty" + hint);
  EXPECT_THAT(createError(path, {{"__metadata__", DType::F32, {}}}),
              HasSubstr("a tensor cannot be called \"__metadata__\""));
  EXPECT_EQ(createError(path, {{"bad\xff", DType::F32, {}}}),
            path + ": tensor 'bad\xff': the name is not valid UTF-8" + hint);
  EXPECT_THAT(
      createError(path, {{"huge", DType::F64, {int64_t(1) << 40, 1 << 30}}}),
      HasSubstr("tensor 'huge': shape [1099511627776, 1073741824] is too "
                "large to address"));
  EXPECT_THAT(createError(path, {}, {{"k", "1"}, {"k", "2"}}),
              HasSubstr("metadata key 'k' is given twice"));
  EXPECT_THAT(createError(path, {}, {{"k", "\xc3"}}),
              HasSubstr("metadata entry 'k' is not valid UTF-8"));
  EXPECT_TRUE(dir.list().empty());
}

TEST(SafetensorsWriter, InvalidWrites) {
  ScratchDirectory dir;
  std::string path = dir.file("w.st");
  SafetensorsWriter writer = createOk(path, {{"w", DType::I16, {2}}});
  Status unknown = writer.write("v", 0, "ab", 2);
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().toString(),
            path + ": tensor 'v': no such tensor was declared\nhint: declare "
                   "every tensor when creating the writer");
  Status outside = writer.write("w", 3, "ab", 2);
  ASSERT_FALSE(outside);
  EXPECT_EQ(outside.error().message,
            path + ": tensor 'w': cannot write bytes [3, 5): the tensor "
                   "holds 4 bytes");
  Status whole = writer.writeTensor("w", "ab", 2);
  ASSERT_FALSE(whole);
  EXPECT_EQ(whole.error().message,
            path + ": tensor 'w': 2 bytes given for its 4");
  // Refused writes do not poison the file.
  ASSERT_TRUE(writer.writeTensor("w", "abcd", 4));
  EXPECT_TRUE(writer.commit());
}

TEST(SafetensorsWriter, MissingDirectory) {
  ScratchDirectory dir;
  std::string path = dir.file("no/such/dir/x.st");
  std::string message = createError(path, {{"w", DType::U8, {1}}});
  EXPECT_THAT(message,
              StartsWith(path + ": cannot create the temporary file '" +
                         dir.file("no/such/dir/.x.st.tmp.")));
  EXPECT_THAT(message,
              HasSubstr("': No such file or directory\nhint: the destination "
                        "directory does not exist; create it first"));
}

/// Lowers the file-size limit for the scope; SIGXFSZ is ignored so that
/// writes past the limit fail with EFBIG instead of killing the process.
/// Unlike a read-only directory, this holds for root too.
class FileSizeLimit {
public:
  explicit FileSizeLimit(rlim_t bytes) {
    getrlimit(RLIMIT_FSIZE, &saved_);
    previousHandler_ = std::signal(SIGXFSZ, SIG_IGN);
    rlimit lowered = saved_;
    lowered.rlim_cur = bytes;
    active_ = setrlimit(RLIMIT_FSIZE, &lowered) == 0;
  }
  ~FileSizeLimit() {
    setrlimit(RLIMIT_FSIZE, &saved_);
    std::signal(SIGXFSZ, previousHandler_);
  }
  bool active() const { return active_; }

private:
  rlimit saved_{};
  void (*previousHandler_)(int) = SIG_DFL;
  bool active_ = false;
};

TEST(SafetensorsWriter, WriteFailureIsReportedAndBlocksCommit) {
  ScratchDirectory dir;
  std::string path = dir.file("big.st");
  std::string temporary;
  {
    SafetensorsWriter writer = createOk(path, {{"w", DType::U8, {100000}}});
    temporary = writer.temporaryPath();
    std::string data(100000, 'x');
    Status status;
    {
      FileSizeLimit limit(4096);
      ASSERT_TRUE(limit.active());
      status = writer.writeTensor("w", data.data(), data.size());
    }
    ASSERT_FALSE(status);
    EXPECT_EQ(status.error().toString(),
              path + ": tensor 'w': writing bytes [0, 100000) to '" +
                  temporary +
                  "' failed: File too large\nhint: the file is larger than "
                  "the file-size limit (ulimit -f) or the file system's "
                  "largest file");
    // Even with the data complete afterwards, the file is not committed.
    ASSERT_TRUE(writer.writeTensor("w", data.data(), data.size()));
    Status commit = writer.commit();
    ASSERT_FALSE(commit);
    EXPECT_EQ(commit.error().message,
              path + ": an earlier write failed, so the file is incomplete "
                     "and is not committed");
    EXPECT_FALSE(fileExists(path));
  }
  EXPECT_FALSE(fileExists(temporary));
  EXPECT_TRUE(dir.list().empty());
}

TEST(SafetensorsWriter, HeaderWriteFailureLeavesNothing) {
  ScratchDirectory dir;
  std::string path = dir.file("h.st");
  std::string message;
  {
    FileSizeLimit limit(16);
    ASSERT_TRUE(limit.active());
    message =
        createError(path, {{"a.long.name.for.a.long.header", DType::U8, {1}}});
  }
  EXPECT_THAT(message, HasSubstr("File too large"));
  EXPECT_THAT(message, StartsWith(path + ": "));
  EXPECT_TRUE(dir.list().empty());
}

} // namespace

TEST(SafetensorsWriter, MappedWritesGiveTheSameFileAsWrites) {
  // Strided stores through the mapping (and pages released in between)
  // must produce exactly the bytes that plain writes do.
  ScratchDirectory dir;
  std::vector<TensorDeclaration> tensors{{"a", DType::F32, {64, 1024}},
                                         {"b", DType::U8, {3}}};
  std::vector<uint8_t> a(64 * 1024 * 4);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = uint8_t(i * 7 + 3);
  SafetensorsWriterOptions mapped;
  mapped.mapForWrites = true;
  Expected<SafetensorsWriter> viaMap = SafetensorsWriter::create(
      dir.file("mapped.safetensors"), tensors, {}, mapped);
  ASSERT_TRUE(viaMap.ok()) << viaMap.error().toString();
  EXPECT_TRUE(viaMap->isMapped()) << "ext4 and tmpfs can reserve space";
  // Column halves of every row, odd rows first.
  for (size_t half : {1u, 0u})
    for (size_t row = 0; row < 64; ++row) {
      size_t offset = row * 4096 + half * 2048;
      ASSERT_TRUE(viaMap->writeMapped("a", offset, a.data() + offset, 2048));
      viaMap->releaseMapped("a", offset, 2048);
    }
  ASSERT_TRUE(viaMap->writeMapped("b", 0, "xyz", 3));
  ASSERT_TRUE(viaMap->commit());

  SafetensorsWriter plain =
      createOk(dir.file("plain.safetensors"), tensors);
  ASSERT_TRUE(plain.writeTensor("a", a.data(), a.size()));
  ASSERT_TRUE(plain.writeTensor("b", "xyz", 3));
  ASSERT_TRUE(plain.commit());
  EXPECT_EQ(readWholeFile(dir.file("mapped.safetensors")),
            readWholeFile(dir.file("plain.safetensors")));
}
