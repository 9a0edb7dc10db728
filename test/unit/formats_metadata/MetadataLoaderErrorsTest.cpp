//===- MetadataLoaderErrorsTest.cpp - Metadata the loader refuses ---------===//
//
// Every rejection of the metadata loader, with its diagnostic: where it
// points, what it says, its hint.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/metadata/MetadataLoader.h"

#include "MetadataTestSupport.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::test;
using ::testing::HasSubstr;

namespace {

TEST(MetadataLoaderErrors, UnreadableFile) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::vector<Diagnostic> seen;
  diags.setHandler([&](const Diagnostic &d) { seen.push_back(d); });
  EXPECT_FALSE(loadShardMetadata("/nonexistent/meta.json", sources, diags));
  ASSERT_EQ(seen.size(), 1u);
  EXPECT_EQ(seen[0].message,
            "cannot read metadata '/nonexistent/meta.json': No such file or "
            "directory");
  EXPECT_FALSE(seen[0].hints.empty());
  EXPECT_FALSE(loadShardMetadata("/tmp", sources, diags));
  EXPECT_EQ(seen.back().message, "cannot read metadata '/tmp': is a directory");
}

TEST(MetadataLoaderErrors, MalformedJsonHasLineAndColumn) {
  std::string text = tensorW(shard("[0, 0]", "[512 512]"));
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 1u) << loaded.all();
  // At the unexpected token: the second 512.
  EXPECT_EQ(loaded.where(), placeOf(text, "512]", text.find("[512 512]")));
  EXPECT_NE(loaded.message().find("malformed JSON in metadata: syntax error"),
            std::string::npos)
      << loaded.message();
  EXPECT_NE(loaded.hints().find("\"format\": \"aoa-metadata\""),
            std::string::npos);
  // The caret line shows the offending shard.
  EXPECT_NE(loaded.all().find("\"local_shape\": [512 512]"), std::string::npos);
}

TEST(MetadataLoaderErrors, MalformedJsonPointsAtTheBadToken) {
  std::string literal = std::string(kHeader) + "\"a\": tru}}";
  Loaded bad(literal);
  ASSERT_EQ(bad.diagnostics.size(), 1u) << bad.all();
  EXPECT_EQ(bad.where(), placeOf(literal, "tru"));
  EXPECT_NE(bad.message().find("invalid literal"), std::string::npos);

  std::string colon = std::string(kHeader) + "\"a\": {\"dtype\" \"x\"}}}";
  Loaded missing(colon);
  ASSERT_EQ(missing.diagnostics.size(), 1u) << missing.all();
  EXPECT_EQ(missing.where(), placeOf(colon, "\"x\""));
  EXPECT_NE(missing.message().find("expected ':'"), std::string::npos);

  std::string comma = std::string(kHeader) + "\"a\": {\"dtype\": \"x\",}}}";
  Loaded trailing(comma);
  ASSERT_FALSE(trailing.diagnostics.empty());
  EXPECT_EQ(trailing.where(trailing.diagnostics.size() - 1),
            placeOf(comma, "}}}"));
}

TEST(MetadataLoaderErrors, TruncatedAndTrailingText) {
  std::string full = tensorW(shard("[0, 0]", "[512, 512]"));
  Loaded truncated(full.substr(0, full.size() - 4));
  EXPECT_FALSE(truncated.metadata);
  ASSERT_EQ(truncated.diagnostics.size(), 1u) << truncated.all();
  EXPECT_NE(truncated.message().find("malformed JSON in metadata"),
            std::string::npos);

  std::string trailing = full + "{}";
  Loaded extra(trailing);
  EXPECT_FALSE(extra.metadata);
  ASSERT_EQ(extra.diagnostics.size(), 1u) << extra.all();
  EXPECT_NE(extra.message().find("malformed JSON in metadata"),
            std::string::npos);
  EXPECT_EQ(extra.where(), placeOf(trailing, "{}"));
}

TEST(MetadataLoaderErrors, EmptyFileAndNonObjectRoot) {
  Loaded empty("  \n");
  EXPECT_FALSE(empty.metadata);
  ASSERT_EQ(empty.diagnostics.size(), 1u);
  EXPECT_EQ(empty.message(), "metadata file is empty");

  Loaded list("[1, 2]");
  EXPECT_FALSE(list.metadata);
  ASSERT_EQ(list.diagnostics.size(), 1u);
  EXPECT_EQ(list.message(), "metadata must be a JSON object, not a list");
  EXPECT_EQ(list.where(), "m.json:1:1");
}

TEST(MetadataLoaderErrors, WrongFormatAndVersion) {
  Loaded format("{\"format\": \"paddle-meta\", \"version\": 1, "
                "\"tensors\": {}}");
  EXPECT_FALSE(format.metadata);
  ASSERT_EQ(format.diagnostics.size(), 1u);
  EXPECT_EQ(format.message(), "unsupported metadata format 'paddle-meta'");
  EXPECT_EQ(format.where(), "m.json:1:12");

  Loaded version("{\"format\": \"aoa-metadata\", \"version\": 2, "
                 "\"tensors\": {}}");
  ASSERT_EQ(version.diagnostics.size(), 1u);
  EXPECT_EQ(version.message(), "unsupported metadata version 2");
  EXPECT_EQ(version.where(), "m.json:1:39");
  EXPECT_EQ(version.hints(), "this build reads aoa-metadata version 1\n");

  Loaded text("{\"format\": \"aoa-metadata\", \"version\": \"1\", "
              "\"tensors\": {}}");
  ASSERT_EQ(text.diagnostics.size(), 1u);
  EXPECT_EQ(text.message(), "'version' must be the integer 1, not a string");

  Loaded real("{\"format\": \"aoa-metadata\", \"version\": 1.0, "
              "\"tensors\": {}}");
  ASSERT_EQ(real.diagnostics.size(), 1u);
  EXPECT_EQ(real.message(),
            "'version' must be the integer 1, not the number 1.0");
}

TEST(MetadataLoaderErrors, MissingRootFields) {
  Loaded loaded("{\"tensors\": {}}");
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 2u);
  EXPECT_EQ(loaded.message(0), "metadata is missing the field 'format'");
  EXPECT_EQ(loaded.message(1), "metadata is missing the field 'version'");
  EXPECT_EQ(loaded.where(0), "m.json:1:1");
}

TEST(MetadataLoaderErrors, UnknownFieldsAtEveryLevelWithSuggestions) {
  std::string text =
      "{\"format\": \"aoa-metadata\", \"version\": 1, \"tensor\": {},\n"
      "\"tensors\": {\"w\": {\"dtype\": \"bfloat16\", \"global_shap\": [4],\n"
      "\"global_shape\": [4], \"shards\": [\n"
      "{\"rnak\": 0, \"rank\": 0, \"file\": \"f\", \"name\": \"w\", "
      "\"global_offset\": [0], \"local_shape\": [4], \"zzz\": 1}]}}}";
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 4u) << loaded.all();
  EXPECT_EQ(loaded.message(0), "unknown field 'tensor' in the metadata");
  EXPECT_EQ(loaded.where(0), placeOf(text, "\"tensor\""));
  EXPECT_EQ(loaded.hints(0), "did you mean 'tensors'?\n");
  EXPECT_EQ(loaded.message(1),
            "tensor 'w': unknown field 'global_shap' in a tensor");
  EXPECT_EQ(loaded.where(1), placeOf(text, "\"global_shap\""));
  EXPECT_EQ(loaded.hints(1), "did you mean 'global_shape'?\n");
  EXPECT_EQ(loaded.message(2),
            "tensor 'w', shard 0: unknown field 'rnak' in a shard");
  EXPECT_EQ(loaded.hints(2), "did you mean 'rank'?\n");
  EXPECT_EQ(loaded.message(3),
            "tensor 'w', shard 0: unknown field 'zzz' in a shard");
  EXPECT_EQ(loaded.hints(3),
            "known fields of a shard: rank, file, name, global_offset, "
            "local_shape, flat_range, xxh3\n");
}

// Field names are compared in place, as words of the raw key: a key that
// extends a name, one that stops short of it or differs in its last byte is
// not that name; one that spells it with an escape is (JSON's equal keys),
// here given twice.
TEST(MetadataLoaderErrors, KeysCloseToFieldNames) {
  std::string text =
      "{\"format\": \"aoa-metadata\", \"version\": 1, \"tensors\": {\"w\": "
      "{\"dtype\": \"bfloat16\", \"global_shape\": [4], \"shards\": [\n"
      "{\"rank\": 0, \"rank2\": 0, \"fil\": \"g\", \"global_offsez\": [0], "
      "\"r\\u0061nk\": 0, \"file\": \"f\", \"name\": \"w\", "
      "\"global_offset\": [0], \"local_shape\": [4]}]}}}";
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 4u) << loaded.all();
  EXPECT_EQ(loaded.message(0),
            "tensor 'w', shard 0: unknown field 'rank2' in a shard");
  EXPECT_EQ(loaded.message(1),
            "tensor 'w', shard 0: unknown field 'fil' in a shard");
  EXPECT_EQ(loaded.message(2),
            "tensor 'w', shard 0: unknown field 'global_offsez' in a shard");
  EXPECT_EQ(loaded.message(3),
            "tensor 'w', shard 0: field 'rank' appears twice");
  EXPECT_EQ(loaded.where(3), placeOf(text, "\"r\\u0061nk\""));
}

TEST(MetadataLoaderErrors, FieldNamesSpelledWithEscapes) {
  std::string text =
      "{\"form\\u0061t\": \"aoa-metadata\", \"version\": 1, \"tensors\": "
      "{\"w\": {\"dtyp\\u0065\": \"bfloat16\", \"global_shape\": [4], "
      "\"shards\": [{\"r\\u0061nk\": 0, \"file\": \"f\", \"name\": \"w\", "
      "\"global_offset\": [0], \"local_shape\": [4]}]}}}";
  Loaded loaded(text);
  ASSERT_TRUE(loaded.metadata) << loaded.all();
  ASSERT_EQ(loaded.metadata->tensorCount(), 1u);
  EXPECT_EQ(loaded.metadata->tensor(0).dtype(), DType::BF16);
}

TEST(MetadataLoaderErrors, WrongValueTypes) {
  std::string text =
      std::string(kHeader) +
      "\"a\": {\"dtype\": 16, \"global_shape\": \"4\", \"shards\": []},\n"
      "\"b\": {\"dtype\": \"float32\", \"global_shape\": [4, \"x\"], "
      "\"shards\": {}},\n"
      "\"c\": {\"dtype\": \"float32\", \"global_shape\": [4], \"shards\": [7, "
      "{\"rank\": \"0\", \"file\": 3, \"name\": null, \"global_offset\": "
      "[0.5], "
      "\"local_shape\": [true]}]},\n"
      "\"d\": [],\n"
      "\"e\": {\"dtype\": \"float32\", \"global_shape\": [4], \"shards\": [\n"
      "{\"rank\": 0, \"file\": \"f\", \"name\": \"e\", \"global_offset\": [0], "
      "\"local_shape\": [4], \"flat_range\": [0, 1, 2]}]}" +
      kFooter;
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  std::vector<std::string> messages;
  for (const Diagnostic &d : loaded.diagnostics)
    messages.push_back(d.message);
  EXPECT_EQ(
      messages,
      (std::vector<std::string>{
          "tensor 'a': 'dtype' must be a dtype name such as \"bfloat16\", not "
          "the number 16",
          "tensor 'a': 'global_shape' must be a list of integers, not a string",
          "tensor 'b': global_shape[1] must be an integer, not a string",
          "tensor 'b': 'shards' must be a list of shard objects, not an object",
          "tensor 'c', shard 0: a shard must be an object, not the number 7",
          "tensor 'c', shard 1: 'rank' must be a non-negative integer, not a "
          "string",
          "tensor 'c', shard 1: 'file' must be a string, not the number 3",
          "tensor 'c', shard 1: 'name' must be a string, not null",
          "tensor 'c', shard 1: global_offset[0] must be an integer, not the "
          "number 0.5",
          "tensor 'c', shard 1: local_shape[0] must be an integer, not true",
          "tensor 'd': a tensor must be an object with dtype, global_shape and "
          "shards, not a list",
          "tensor 'e', shard 0: 'flat_range' must have 2 entries [begin, end], "
          "not 3"}))
      << loaded.all();
  EXPECT_EQ(loaded.where(2), placeOf(text, "\"x\""));
  EXPECT_EQ(loaded.where(4), placeOf(text, "7, {"));
  EXPECT_EQ(loaded.where(9), placeOf(text, "true"));
}

TEST(MetadataLoaderErrors, UnknownDTypeWithSuggestion) {
  Loaded alias(tensorW(shard("[0, 0]", "[1024, 512]"),
                       "\"dtype\": \"bf16\", \"global_shape\": [1024, 512]"));
  EXPECT_FALSE(alias.metadata);
  ASSERT_EQ(alias.diagnostics.size(), 1u);
  EXPECT_EQ(alias.message(), "tensor 'w': unknown dtype 'bf16'");
  EXPECT_EQ(alias.where(), "m.json:2:16");
  EXPECT_EQ(alias.hints(),
            "did you mean 'bfloat16'? (metadata uses Paddle's dtype names)\n");

  Loaded typo(tensorW(shard("[0, 0]", "[1024, 512]"),
                      "\"dtype\": \"flaot32\", \"global_shape\": [1024, 512]"));
  ASSERT_EQ(typo.diagnostics.size(), 1u);
  EXPECT_EQ(typo.hints(),
            "did you mean 'float32'? (metadata uses Paddle's dtype names)\n");

  Loaded nothing(tensorW(shard("[0, 0]", "[1024, 512]"),
                         "\"dtype\": \"q4\", \"global_shape\": [1024, 512]"));
  ASSERT_EQ(nothing.diagnostics.size(), 1u);
  EXPECT_EQ(nothing.hints(),
            "dtypes: float64 float32 float16 bfloat16 float8_e4m3fn "
            "float8_e5m2 float8_e8m0fnu int64 int32 int16 int8 uint64 uint32 "
            "uint16 uint8 bool float8_e4m3fnuz float8_e5m2fnuz complex64\n");

  // The newer dtypes by their PyTorch names; a safetensors spelling is
  // pointed to the metadata's.
  Loaded fp8(
      tensorW(shard("[0, 0]", "[1024, 512]"),
              "\"dtype\": \"float8_e4m3fn\", \"global_shape\": [1024, 512]"));
  EXPECT_TRUE(fp8.diagnostics.empty());
  Loaded code(tensorW(shard("[0, 0]", "[1024, 512]"),
                      "\"dtype\": \"F8_E5M2\", \"global_shape\": [1024, 512]"));
  ASSERT_EQ(code.diagnostics.size(), 1u);
  EXPECT_EQ(
      code.hints(),
      "did you mean 'float8_e5m2'? (metadata uses Paddle's dtype names)\n");

  // Sub-byte dtypes are named, with their bit size, and refused.
  Loaded f4(
      tensorW(shard("[0, 0]", "[1024, 512]"),
              "\"dtype\": \"float4_e2m1fn\", \"global_shape\": [1024, 512]"));
  ASSERT_EQ(f4.diagnostics.size(), 1u);
  EXPECT_THAT(f4.diagnostics[0].message,
              HasSubstr("dtype 'float4_e2m1fn' (4 bits per element) is not "
                        "supported: aoa moves only dtypes of whole bytes"));
}

TEST(MetadataLoaderErrors, DimensionMismatch) {
  std::string text = tensorW(shard("[0, 0]", "[1024, 512]") + ",\n" +
                             shard("[0, 0, 0]", "[1024, 512]") + ",\n" +
                             shard("[0, 0]", "[1024]"));
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 2u) << loaded.all();
  EXPECT_EQ(loaded.message(0),
            "tensor 'w', shard 1: global_offset [0, 0, 0] has 3 dimensions "
            "but global_shape [1024, 512] has 2");
  EXPECT_EQ(loaded.where(0), placeOf(text, "[0, 0, 0]"));
  EXPECT_EQ(loaded.message(1),
            "tensor 'w', shard 2: local_shape [1024] has 1 dimensions but "
            "global_shape [1024, 512] has 2");
  EXPECT_EQ(loaded.where(1), placeOf(text, "[1024]}"));
}

// Issue (UBSan): float32 [2^61, 2] overflowed int64 byte counts downstream.
TEST(MetadataLoaderErrors, TensorsWhoseBytesOverflowAreRefused) {
  std::string text = tensorW(
      shard("[0, 0]", "[4, 2]"),
      "\"dtype\": \"float32\", \"global_shape\": [2305843009213693952, 2]");
  Loaded huge(text);
  EXPECT_FALSE(huge.metadata);
  ASSERT_EQ(huge.diagnostics.size(), 1u) << huge.all();
  EXPECT_EQ(huge.message(), "tensor 'w': global_shape [2305843009213693952, 2] "
                            "of float32 holds more than 2^63 bytes");
  EXPECT_EQ(huge.where(), placeOf(text, "[2305843009213693952, 2]"));
  // The same element count of a 1-byte dtype fits.
  Loaded fits(tensorW(shard("[0, 0]", "[4, 2]"),
                      "\"dtype\": \"uint8\", \"global_shape\": "
                      "[2305843009213693952, 2]"));
  EXPECT_TRUE(fits.metadata) << fits.all();
}

TEST(MetadataLoaderErrors, NegativeExtentsAndOffsets) {
  Loaded global(tensorW(shard("[0, 0]", "[4, 4]"),
                        "\"dtype\": \"float32\", \"global_shape\": [4, -4]"));
  EXPECT_FALSE(global.metadata);
  ASSERT_EQ(global.diagnostics.size(), 1u) << global.all();
  EXPECT_EQ(global.message(), "tensor 'w': global_shape [4, -4] has a "
                              "negative extent in dimension 1");
  EXPECT_EQ(global.where(), "m.json:2:43");

  std::string text = tensorW(shard("[0, 0]", "[-1, 512]") + ",\n" +
                             shard("[0, -512]", "[1, 512]"));
  Loaded local(text);
  ASSERT_EQ(local.diagnostics.size(), 2u) << local.all();
  EXPECT_EQ(local.message(0), "tensor 'w', shard 0: local_shape [-1, 512] has "
                              "a negative extent in dimension 0");
  EXPECT_EQ(local.where(0), placeOf(text, "[-1, 512]"));
  EXPECT_EQ(local.message(1), "tensor 'w', shard 1: global_offset [0, -512] "
                              "is negative in dimension 1");
}

TEST(MetadataLoaderErrors, ShardOutsideTheGlobalShapeNamesTheElements) {
  std::string text = tensorW(shard("[0, 0]", "[512, 512]") + ",\n" +
                             shard("[768, 0]", "[512, 512]"));
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 1u) << loaded.all();
  EXPECT_EQ(loaded.message(),
            "tensor 'w', shard 1: elements [768:1280, 0:512] lie outside "
            "global_shape [1024, 512] (dimension 0 ends at 1280 > 1024)");
  EXPECT_EQ(loaded.where(), "m.json:4:3");
  EXPECT_EQ(loaded.hints(), "global_offset + local_shape must not exceed "
                            "global_shape in any dimension\n");

  Loaded overflow(tensorW(shard("[9223372036854775807, 0]", "[1, 512]")));
  ASSERT_EQ(overflow.diagnostics.size(), 1u) << overflow.all();
  EXPECT_EQ(overflow.message(),
            "tensor 'w', shard 0: elements [9223372036854775807:overflow, "
            "0:512] lie outside global_shape [1024, 512] (dimension 0 ends at "
            "an overflowing index > 1024)");
}

TEST(MetadataLoaderErrors, BadFlatRanges) {
  std::string text = tensorW(
      shard("[0, 0]", "[512, 512]", ", \"flat_range\": [0, 262144]") + ",\n" +
      shard("[0, 0]", "[512, 512]", ", \"flat_range\": [5, 5]") + ",\n" +
      shard("[0, 0]", "[512, 512]", ", \"flat_range\": [9, 3]") + ",\n" +
      shard("[512, 0]", "[512, 512]", ", \"flat_range\": [100, 262145]") +
      ",\n" + shard("[512, 0]", "[512, 512]", ", \"flat_range\": [-1, 4]"));
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 4u) << loaded.all();
  EXPECT_EQ(loaded.message(0),
            "tensor 'w', shard 1: flat_range [5, 5) is empty");
  EXPECT_EQ(loaded.where(0), placeOf(text, "[5, 5]"));
  EXPECT_EQ(loaded.message(1),
            "tensor 'w', shard 2: flat_range [9, 3) ends before it begins");
  EXPECT_EQ(loaded.message(2),
            "tensor 'w', shard 3: flat_range [100, 262145) lies outside the "
            "262144 elements of the box [512:1024, 0:512]");
  EXPECT_EQ(loaded.hints(2), "flat_range [a, b) indexes the row-major "
                             "flattening of the box; it needs 0 <= a < b <= "
                             "262144\n");
  EXPECT_EQ(loaded.message(3),
            "tensor 'w', shard 4: flat_range [-1, 4) lies outside the 262144 "
            "elements of the box [512:1024, 0:512]");
}

TEST(MetadataLoaderErrors, BadContentHashes) {
  std::string text = tensorW(
      shard("[0, 0]", "[512, 512]", ", \"xxh3\": \"2d068005\"") + ",\n" +
      shard("[0, 0]", "[512, 512]", ", \"xxh3\": \"0x06800538d394c2\"") +
      ",\n" +
      shard("[0, 0]", "[512, 512]", ", \"xxh3\": \"2d06800538d394c2a\"") +
      ",\n" + shard("[0, 0]", "[512, 512]", ", \"xxh3\": 12") + ",\n" +
      shard("[512, 0]", "[512, 512]",
            ", \"xxh3\": \"2d06800538d394c2\", \"xxh3\": \"\""));
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 5u) << loaded.all();
  EXPECT_EQ(loaded.message(0),
            "tensor 'w', shard 0: 'xxh3' '2d068005' is not 16 hex digits");
  EXPECT_EQ(loaded.where(0), placeOf(text, "\"2d068005\""));
  EXPECT_EQ(loaded.hints(0),
            "xxh3 is the xxh3-64 hash (seed 0) of the stored tensor's bytes "
            "as 16 hex digits, e.g. \"2d06800538d394c2\"\n");
  EXPECT_EQ(loaded.message(1), "tensor 'w', shard 1: 'xxh3' "
                               "'0x06800538d394c2' is not 16 hex digits");
  EXPECT_EQ(loaded.message(2), "tensor 'w', shard 2: 'xxh3' "
                               "'2d06800538d394c2a' is not 16 hex digits");
  EXPECT_EQ(loaded.message(3), "tensor 'w', shard 3: 'xxh3' must be a string "
                               "of 16 hex digits, not the number 12");
  EXPECT_EQ(loaded.where(3), placeOf(text, "12}"));
  EXPECT_EQ(loaded.message(4),
            "tensor 'w', shard 4: field 'xxh3' appears twice");
}

TEST(MetadataLoaderErrors, KeyGivenTwiceNotesTheFirst) {
  std::string entry =
      "\"w\": {\"dtype\": \"float32\", \"global_shape\": [4], \"shards\": "
      "[{\"rank\": 0, \"file\": \"f\", \"name\": \"w\", \"global_offset\": "
      "[0], \"local_shape\": [4]}]}";
  std::string text = std::string(kHeader) + entry + ",\n" + entry + kFooter;
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 1u) << loaded.all();
  EXPECT_EQ(loaded.message(), "tensor 'w' appears twice");
  EXPECT_EQ(loaded.where(), "m.json:3:1");
  ASSERT_EQ(loaded.diagnostics[0].notes.size(), 1u);
  EXPECT_EQ(loaded.diagnostics[0].notes[0].message, "first given here");
  EXPECT_EQ(loaded.sources.describe(loaded.diagnostics[0].notes[0].location),
            "m.json:2:1");

  // Also when the first entry had errors of its own.
  std::string bad = std::string(kHeader) +
                    "\"w\": {\"dtype\": \"float99\", \"global_shape\": [4], "
                    "\"shards\": []},\n" +
                    entry + kFooter;
  Loaded second(bad);
  ASSERT_EQ(second.diagnostics.size(), 2u) << second.all();
  EXPECT_EQ(second.message(1), "tensor 'w' appears twice");
  EXPECT_EQ(second.where(1), "m.json:3:1");
}

TEST(MetadataLoaderErrors, MissingAndRepeatedFields) {
  std::string text =
      std::string(kHeader) +
      "\"a\": {\"global_shape\": [4], \"shards\": []},\n"
      "\"b\": {\"dtype\": \"float32\", \"global_shape\": [4], \"shards\": [\n"
      "{\"rank\": 0, \"file\": \"f\", \"name\": \"b\", \"global_offset\": [0]},"
      "\n{\"rank\": 0, \"rank\": 1, \"file\": \"\", \"name\": \"b\", "
      "\"global_offset\": [0], \"local_shape\": [4]}]},\n"
      "\"c\": {\"dtype\": \"float32\", \"global_shape\": [4], \"shards\": []}" +
      kFooter;
  Loaded loaded(text);
  EXPECT_FALSE(loaded.metadata);
  std::vector<std::string> messages;
  for (const Diagnostic &d : loaded.diagnostics)
    messages.push_back(d.message);
  EXPECT_EQ(
      messages,
      (std::vector<std::string>{
          "tensor 'a': missing the field 'dtype'",
          "tensor 'b', shard 0: missing the field 'local_shape'",
          "tensor 'b', shard 1: field 'rank' appears twice",
          "tensor 'b', shard 1: 'file' is empty", "tensor 'c': has no shards"}))
      << loaded.all();
  EXPECT_EQ(loaded.where(0), "m.json:2:1");
  EXPECT_EQ(loaded.where(1), "m.json:4:1");
  EXPECT_EQ(loaded.where(2), placeOf(text, "\"rank\": 1"));
}

TEST(MetadataLoaderErrors, RankOutOfRange) {
  Loaded negative(tensorW(shard("[0, 0]", "[1024, 512]", "", -3)));
  ASSERT_EQ(negative.diagnostics.size(), 1u);
  EXPECT_EQ(negative.message(),
            "tensor 'w', shard 0: 'rank' -3 is out of range");
  EXPECT_EQ(negative.where(), "m.json:3:12");
  // Issue: rank 4294967295 made aoa-compile size per-rank tables by it and
  // crash; ranks stop below kRankLimit (2^24).
  for (int64_t rank : {int64_t(4294967295), kRankLimit}) {
    Loaded huge(tensorW(shard("[0, 0]", "[1024, 512]", "", rank)));
    ASSERT_EQ(huge.diagnostics.size(), 1u) << huge.all();
    EXPECT_EQ(huge.message(), "tensor 'w', shard 0: 'rank' " +
                                  std::to_string(rank) + " is out of range");
    EXPECT_EQ(huge.hints(), "ranks are integers from 0 to 16777215\n");
  }
  Loaded largest(tensorW(shard("[0, 0]", "[1024, 512]", "", kRankLimit - 1)));
  EXPECT_TRUE(largest.metadata) << largest.all();
}

TEST(MetadataLoaderErrors, ReportsSeveralErrorsThenStops) {
  std::string shards;
  for (int i = 0; i < 30; ++i)
    shards += (i ? ",\n" : "") + shard("[0, 0]", "[2048, 512]");
  Loaded loaded(tensorW(shards));
  EXPECT_FALSE(loaded.metadata);
  ASSERT_EQ(loaded.diagnostics.size(), 21u);
  EXPECT_EQ(loaded.message(19).substr(0, 21), "tensor 'w', shard 19:");
  EXPECT_EQ(loaded.message(20),
            "too many errors in metadata 'm.json'; stopped after 20");
  EXPECT_EQ(loaded.diags.errorCount(), 21u);
}

} // namespace
