//===- SafetensorsReaderTest.cpp - Opening, validating, reading -----------===//
//
// Files are built here byte by byte: byte strings copied from the official
// safetensors library's own tests (so the reader is checked against real
// output, not against our writer), and hand-made corruptions of the header,
// each of which must give its own message naming the file and the tensor.
//
//===----------------------------------------------------------------------===//
#include "aoa/runtime/storage/SafetensorsReader.h"

#include "OfficialSafetensors.h"
#include "ScratchDirectory.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <unistd.h>

using namespace aoa;
using namespace aoa::runtime;
using namespace aoa::test;
using ::testing::HasSubstr;

namespace {

/// A file with the given header text and `dataSize` data bytes 0, 1, 2, ...
std::string fileWithHeader(const std::string &json, size_t dataSize) {
  std::string bytes;
  uint64_t length = json.size();
  for (int i = 0; i < 8; ++i)
    bytes += static_cast<char>((length >> (8 * i)) & 0xFF);
  bytes += json;
  for (size_t i = 0; i < dataSize; ++i)
    bytes += static_cast<char>(i);
  return bytes;
}

class SafetensorsReaderTest : public ::testing::Test {
protected:
  std::string put(const std::string &bytes, const std::string &name = "x.st") {
    std::string path = dir.file(name);
    writeWholeFile(path, bytes);
    return path;
  }

  /// Opens a file that must be refused; returns the error's text.
  std::string openError(const std::string &bytes) {
    Expected<SafetensorsReader> reader = SafetensorsReader::open(put(bytes));
    EXPECT_FALSE(reader) << "opened a corrupt file";
    return reader ? "" : reader.error().toString();
  }

  /// The message for a header `json` over `dataSize` data bytes.
  std::string headerError(const std::string &json, size_t dataSize) {
    return openError(fileWithHeader(json, dataSize));
  }

  ScratchDirectory dir;
};

std::vector<float> floats(const std::string &bytes) {
  std::vector<float> values(bytes.size() / 4);
  std::memcpy(values.data(), bytes.data(), values.size() * 4);
  return values;
}

TEST_F(SafetensorsReaderTest, ReadsOfficialLibraryOutput) {
  std::string path = put(officialAttnFile());
  Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
  ASSERT_TRUE(reader) << reader.error().toString();
  ASSERT_EQ(reader->tensors().size(), 1u);
  const SafetensorsTensor &t = reader->tensors()[0];
  EXPECT_EQ(t.name, "attn.0");
  EXPECT_EQ(t.dtype, DType::F32);
  EXPECT_EQ(t.shape, (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(t.dataBegin, 0u);
  EXPECT_EQ(t.dataEnd, 24u);
  EXPECT_EQ(t.elementCount(), 6);
  EXPECT_EQ(reader->dataOffset(), 72u);
  EXPECT_EQ(reader->fileSize(), 96u);
  EXPECT_TRUE(reader->header().metadata().empty());

  std::string data(24, '\0');
  ASSERT_TRUE(reader->readTensor(t, data.data(), data.size()));
  EXPECT_EQ(floats(data), (std::vector<float>{0, 1, 2, 3, 4, 5}));
}

TEST_F(SafetensorsReaderTest, ReadsPaddedHeaderAndMetadataOnlyFiles) {
  Expected<SafetensorsReader> padded =
      SafetensorsReader::open(put(officialPaddedFile(), "a.st"));
  ASSERT_TRUE(padded) << padded.error().toString();
  ASSERT_NE(padded->find("attn0"), nullptr);
  EXPECT_EQ(padded->find("attn0")->shape, (std::vector<int64_t>{1, 1, 2, 3}));
  EXPECT_EQ(padded->dataOffset(), 80u);
  float third = 0;
  ASSERT_TRUE(padded->readElements(*padded->find("attn0"), 3, 1, &third));
  EXPECT_EQ(third, 3.0f);

  Expected<SafetensorsReader> metadataOnly =
      SafetensorsReader::open(put(officialMetadataOnlyFile(), "b.st"));
  ASSERT_TRUE(metadataOnly) << metadataOnly.error().toString();
  EXPECT_TRUE(metadataOnly->tensors().empty());
  EXPECT_EQ(metadataOnly->header().metadata(),
            (SafetensorsMetadata{{"framework", "pt"}}));
}

TEST_F(SafetensorsReaderTest, ReadsRanges) {
  std::string json =
      R"({"b":{"dtype":"U8","shape":[4],"data_offsets":[16,20]},)"
      R"("a":{"dtype":"I64","shape":[2],"data_offsets":[0,16]},)"
      R"("__metadata__":{"k":"v","esc\"aped":"\u00e9\n"}})";
  std::string path = put(fileWithHeader(json, 20));
  {
    Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
    ASSERT_TRUE(reader) << reader.error().toString();
    // Header order is kept.
    ASSERT_EQ(reader->tensors().size(), 2u);
    EXPECT_EQ(reader->tensors()[0].name, "b");
    EXPECT_EQ(reader->tensors()[1].name, "a");
    EXPECT_EQ(reader->header().indexOf("a"), std::optional<size_t>(1));
    EXPECT_EQ(reader->find("c"), nullptr);
    EXPECT_EQ(reader->header().metadata(),
              (SafetensorsMetadata{{"k", "v"}, {"esc\"aped", "\xc3\xa9\n"}}));
    EXPECT_EQ(reader->header().dataSize(), 20u);

    const SafetensorsTensor &b = *reader->find("b");
    char middle[2] = {};
    ASSERT_TRUE(reader->readBytes(b, 1, middle, 2));
    EXPECT_EQ(middle[0], 17);
    EXPECT_EQ(middle[1], 18);
    // Empty reads at either end succeed.
    EXPECT_TRUE(reader->readBytes(b, 4, middle, 0));

    Status outside = reader->readBytes(b, 3, middle, 2);
    ASSERT_FALSE(outside);
    EXPECT_EQ(outside.error().message,
              path + ": tensor 'b': cannot read bytes [3, 5): the tensor "
                     "holds 4 bytes");
    Status elements = reader->readElements(*reader->find("a"), 1, 2, middle);
    ASSERT_FALSE(elements);
    EXPECT_THAT(elements.error().message,
                HasSubstr("cannot read elements [1, 3): the tensor holds 2"));
    Status small = reader->readTensor(*reader->find("a"), middle, 2);
    ASSERT_FALSE(small);
    EXPECT_THAT(small.error().message,
                HasSubstr("a buffer of 2 bytes cannot hold its 16 bytes"));
  }
}

TEST_F(SafetensorsReaderTest, ZeroSizedTensorsMayShareOffsets) {
  std::string json =
      R"({"e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]},)"
      R"("s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
      R"("f":{"dtype":"BF16","shape":[2,0],"data_offsets":[4,4]}})";
  Expected<SafetensorsReader> reader =
      SafetensorsReader::open(put(fileWithHeader(json, 4)));
  ASSERT_TRUE(reader) << reader.error().toString();
  EXPECT_EQ(reader->find("s")->elementCount(), 1);
  EXPECT_EQ(reader->find("e")->elementCount(), 0);
}

TEST_F(SafetensorsReaderTest, FileTooShortForLength) {
  std::string path = dir.file("x.st");
  EXPECT_EQ(openError(std::string("\x05\0\0", 3)),
            path + ": the file holds 3 bytes, too few for a safetensors "
                   "header length\nhint: a safetensors file starts with an "
                   "8-byte little-endian header length followed by a JSON "
                   "header; this file is truncated, corrupt, or of another "
                   "format");
}

TEST_F(SafetensorsReaderTest, HeaderLengthPastEndOfFile) {
  std::string bytes = fileWithHeader("{}", 0);
  bytes[0] = 100;
  EXPECT_THAT(openError(bytes),
              HasSubstr(": header length 100 runs past the end of the file "
                        "(10 bytes)\nhint: a safetensors file starts"));
}

TEST_F(SafetensorsReaderTest, HeaderLengthBeyondLimit) {
  std::string bytes = fileWithHeader("{}", 0);
  bytes[5] = 1; // 2^40
  EXPECT_THAT(openError(bytes),
              HasSubstr(": header length 1099511627778 is larger than the "
                        "100000000-byte limit for safetensors headers"));
}

TEST_F(SafetensorsReaderTest, MalformedJson) {
  std::string message = headerError(R"({"a":{"dtype":"F32","shape":[1],)", 4);
  EXPECT_THAT(message,
              HasSubstr(dir.file("x.st") + ": malformed JSON in the header"));
  EXPECT_THAT(message, HasSubstr("hint: a safetensors header looks like"));
  EXPECT_THAT(headerError(R"({"a" {}})", 0),
              HasSubstr("malformed JSON in the header"));
  EXPECT_THAT(headerError("{\"a\xff\":{}}", 0),
              HasSubstr("malformed JSON in the header"));
  EXPECT_THAT(headerError("        ", 0), HasSubstr(": the header is empty"));
  EXPECT_THAT(headerError("[1, 2]", 0),
              HasSubstr(": the header is not a JSON object"));
  EXPECT_THAT(headerError(R"({} {})", 0),
              HasSubstr(": unexpected bytes after the header's JSON object, "
                        "at byte 3 of the header (file offset 11)"));
}

TEST_F(SafetensorsReaderTest, TrailingBytesAfterTheHeaderObject) {
  // Garbage that unbalances quotes or brackets used to stop the JSON parser
  // inside the header with "document ended early"; the message now names
  // the first byte after the object that is not padding.
  std::string tensor =
      R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})";
  size_t end = tensor.size();
  for (const std::string &garbage :
       {std::string("\""), std::string("}"), std::string("]"),
        std::string("xyz"), std::string("{\"a\":"), std::string("\0\0", 2),
        std::string("  \"x")}) {
    std::string header = tensor + garbage;
    size_t at = header.find_first_not_of(' ', end);
    EXPECT_EQ(headerError(header, 4),
              dir.file("x.st") +
                  ": unexpected bytes after the header's JSON object, at "
                  "byte " + std::to_string(at) + " of the header (file "
                  "offset " + std::to_string(at + 8) + ")\nhint: a "
                  "safetensors header is one JSON object, padded with spaces "
                  "up to the header length; the file is corrupt or its header "
                  "length is wrong: re-copy or re-save it")
        << "garbage: " << garbage;
  }
  // Spaces (and other JSON whitespace) after the object are padding.
  for (const char *padding : {"", " ", "        ", "\n\t\r "}) {
    Expected<SafetensorsReader> reader =
        SafetensorsReader::open(put(fileWithHeader(tensor + padding, 4)));
    ASSERT_TRUE(reader) << reader.error().toString();
    EXPECT_NE(reader->find("w"), nullptr);
  }
  // Brackets that do not match are a syntax error inside the object, not
  // bytes after it.
  EXPECT_THAT(headerError(R"({"a":]} x)", 0),
              HasSubstr("malformed JSON in the header"));
}

TEST_F(SafetensorsReaderTest, OffsetsPastTheDataSection) {
  std::string message = headerError(
      R"({"w":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", 8);
  EXPECT_EQ(message,
            dir.file("x.st") +
                ": tensor 'w': data_offsets [0, 16] end past the data "
                "section, which holds 8 bytes\nhint: the file is probably "
                "truncated (an interrupted copy, download or save); re-copy "
                "or re-save it");
}

TEST_F(SafetensorsReaderTest, TruncatedFile) {
  // A whole file cut short by an interrupted copy.
  std::string whole = officialAttnFile();
  EXPECT_THAT(openError(whole.substr(0, whole.size() - 3)),
              HasSubstr(": tensor 'attn.0': data_offsets [0, 24] end past "
                        "the data section, which holds 21 bytes"));
  EXPECT_THAT(openError(whole.substr(0, 40)),
              HasSubstr(": header length 64 runs past the end of the file "
                        "(40 bytes)"));
}

TEST_F(SafetensorsReaderTest, OverlappingTensors) {
  std::string message =
      headerError(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                  R"("b":{"dtype":"F32","shape":[3],"data_offsets":[12,24]},)"
                  R"("c":{"dtype":"F32","shape":[2],"data_offsets":[16,24]}})",
                  24);
  EXPECT_THAT(message, HasSubstr(": tensors 'b' (bytes [12, 24)) and 'c' "
                                 "(bytes [16, 24)) overlap in the data "
                                 "section"));
  // One tensor inside another that began earlier.
  EXPECT_THAT(
      headerError(R"({"big":{"dtype":"U8","shape":[10],"data_offsets":[0,10]},)"
                  R"("mid":{"dtype":"U8","shape":[2],"data_offsets":[3,5]}})",
                  10),
      HasSubstr("tensors 'big' (bytes [0, 10)) and 'mid' (bytes [3, 5)) "
                "overlap"));
}

TEST_F(SafetensorsReaderTest, ByteSizeDisagreesWithShape) {
  EXPECT_THAT(
      headerError(
          R"({"w":{"dtype":"F32","shape":[2,2],"data_offsets":[0,12]}})", 16),
      HasSubstr(": tensor 'w': data_offsets [0, 12] hold 12 bytes, but shape "
                "[2, 2] of F32 needs 16"));
  EXPECT_THAT(
      headerError(R"({"w":{"dtype":"F32","shape":[4294967296,4294967296],)"
                  R"("data_offsets":[0,0]}})",
                  0),
      HasSubstr(": tensor 'w': shape [4294967296, 4294967296] is too large "
                "to address"));
}

TEST_F(SafetensorsReaderTest, UnknownDType) {
  EXPECT_EQ(
      headerError(R"({"w":{"dtype":"F9","shape":[2],"data_offsets":[0,2]}})",
                  2),
      dir.file("x.st") +
          ": tensor 'w': unsupported dtype 'F9'\nhint: supported dtypes "
          "are F64, F32, F16, BF16, F8_E4M3, F8_E5M2, F8_E8M0, I64, I32, I16, "
          "I8, U64, U32, U16, U8, BOOL, F8_E4M3FNUZ, F8_E5M2FNUZ and C64; "
          "convert the checkpoint to one of them");
  // The sub-byte dtypes are named with their size, and refused.
  EXPECT_EQ(
      headerError(R"({"w":{"dtype":"F4","shape":[2],"data_offsets":[0,1]}})",
                  1),
      dir.file("x.st") +
          ": tensor 'w': dtype 'F4' (4 bits per element) is not supported: "
          "aoa moves only dtypes of whole bytes\nhint: sub-byte tensors (F4, "
          "F6_E2M3, F6_E3M2) cannot be converted by aoa yet; store them as "
          "U8 bytes, or leave them out of the conversion");
  EXPECT_THAT(
      headerError(
          R"({"w":{"dtype":"F6_E3M2","shape":[4],"data_offsets":[0,3]}})", 3),
      HasSubstr("dtype 'F6_E3M2' (6 bits per element) is not supported"));
  // Paddle's spelling is not the header's.
  EXPECT_THAT(
      headerError(
          R"({"w":{"dtype":"float32","shape":[],"data_offsets":[0,4]}})", 4),
      HasSubstr("unsupported dtype 'float32'"));
}

TEST_F(SafetensorsReaderTest, DuplicateNames) {
  EXPECT_THAT(
      headerError(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
                  R"("w":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
                  2),
      HasSubstr(": tensor 'w': the name appears twice in the header\nhint: "
                "tensor names in a safetensors file are unique"));
  EXPECT_THAT(headerError(R"({"__metadata__":{},"__metadata__":{}})", 0),
              HasSubstr("\"__metadata__\" appears twice in the header"));
  // Escapes are resolved before names are compared.
  EXPECT_THAT(
      headerError(
          R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1]},)"
          R"("\u0077":{"dtype":"U8","shape":[1],"data_offsets":[1,2]}})",
          2),
      HasSubstr("tensor 'w': the name appears twice"));
}

TEST_F(SafetensorsReaderTest, MalformedEntries) {
  auto entry = [&](const std::string &body) {
    return headerError("{\"w\":" + body + "}", 8);
  };
  EXPECT_THAT(entry("[1]"),
              HasSubstr(": tensor 'w': the entry must be an object with "
                        "'dtype', 'shape' and 'data_offsets'"));
  EXPECT_THAT(entry(R"({"dtype":"U8","shape":[1]})"),
              HasSubstr(": tensor 'w': the entry has no 'data_offsets'"));
  EXPECT_THAT(entry(R"({"shape":[1],"data_offsets":[0,1]})"),
              HasSubstr(": tensor 'w': the entry has no 'dtype'"));
  EXPECT_THAT(entry(R"({"dtype":7,"shape":[1],"data_offsets":[0,1]})"),
              HasSubstr(": tensor 'w': 'dtype' must be a string"));
  EXPECT_THAT(entry(R"({"dtype":"U8","shape":[-1],"data_offsets":[0,1]})"),
              HasSubstr(": tensor 'w': 'shape' must be a list of "
                        "non-negative integers"));
  EXPECT_THAT(entry(R"({"dtype":"U8","shape":[1.5],"data_offsets":[0,1]})"),
              HasSubstr("'shape' must be a list of non-negative integers"));
  EXPECT_THAT(entry(R"({"dtype":"U8","shape":"1","data_offsets":[0,1]})"),
              HasSubstr("'shape' must be a list of non-negative integers"));
  EXPECT_THAT(entry(R"({"dtype":"U8","shape":[1],"data_offsets":[0,1,2]})"),
              HasSubstr(": tensor 'w': 'data_offsets' must be [begin, end], "
                        "not [0, 1, 2]"));
  EXPECT_THAT(entry(R"({"dtype":"U8","shape":[0],"data_offsets":[2,1]})"),
              HasSubstr(": tensor 'w': data_offsets [2, 1] end before they "
                        "begin"));
  EXPECT_THAT(
      entry(R"({"dtype":"U8","dtype":"I8","shape":[1],"data_offsets":[0,1]})"),
      HasSubstr(": tensor 'w': 'dtype' is given twice"));
  // Unknown fields are ignored, as by the official library.
  Expected<SafetensorsReader> extra = SafetensorsReader::open(put(
      fileWithHeader(R"({"w":{"dtype":"U8","shape":[1],"data_offsets":[0,1],)"
                     R"("note":{"x":[1,2]}}})",
                     1)));
  EXPECT_TRUE(extra) << extra.error().toString();
}

TEST_F(SafetensorsReaderTest, MalformedMetadata) {
  EXPECT_THAT(headerError(R"({"__metadata__":[]})", 0),
              HasSubstr(": \"__metadata__\" must be an object mapping strings "
                        "to strings"));
  EXPECT_THAT(headerError(R"({"__metadata__":{"step":100}})", 0),
              HasSubstr(": \"__metadata__\" entry 'step' is not a string"));
}

TEST_F(SafetensorsReaderTest, NamesWithControlCharactersAreShownEscaped) {
  EXPECT_THAT(
      headerError(
          R"({"a\u0007b":{"dtype":"X","shape":[],"data_offsets":[0,1]}})", 1),
      HasSubstr("tensor 'a\\x07b': unsupported dtype 'X'"));
}

TEST_F(SafetensorsReaderTest, MissingFileAndDirectory) {
  std::string missing = dir.file("absent.safetensors");
  Expected<SafetensorsReader> reader = SafetensorsReader::open(missing);
  ASSERT_FALSE(reader);
  EXPECT_EQ(reader.error().toString(),
            missing + ": cannot open: No such file or directory\nhint: check "
                      "the path and the --src-dir the plan was run with");
  Expected<SafetensorsReader> directory = SafetensorsReader::open(dir.path());
  ASSERT_FALSE(directory);
  EXPECT_THAT(directory.error().toString(),
              HasSubstr("Is a directory\nhint: the path names a directory"));
}

TEST_F(SafetensorsReaderTest, FileShortenedAfterOpening) {
  std::string path = put(officialAttnFile());
  Expected<SafetensorsReader> reader = SafetensorsReader::open(path);
  ASSERT_TRUE(reader) << reader.error().toString();
  ASSERT_EQ(::truncate(path.c_str(), 80), 0);
  char buffer[24];
  Status status = reader->readTensor(reader->tensors()[0], buffer, 24);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().toString(),
            path + ": tensor 'attn.0': the file ended while reading bytes "
                   "[0, 24) (it was shortened after it was opened)\nhint: "
                   "another process truncated or rewrote the file; make sure "
                   "nothing writes the source checkpoint during a run");
  // The bytes still there are read fine.
  EXPECT_TRUE(reader->readBytes(reader->tensors()[0], 0, buffer, 8));
}

TEST_F(SafetensorsReaderTest, ForeignTensorEntriesAreRefused) {
  Expected<SafetensorsReader> reader =
      SafetensorsReader::open(put(officialAttnFile()));
  ASSERT_TRUE(reader);
  SafetensorsTensor foreign = reader->tensors()[0];
  foreign.dataBegin = 16;
  foreign.dataEnd = 1000;
  char byte;
  Status status = reader->readBytes(foreign, 0, &byte, 1);
  ASSERT_FALSE(status);
  EXPECT_THAT(status.error().message,
              HasSubstr("the tensor's data lies outside this file"));
}

} // namespace
