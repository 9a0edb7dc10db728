//===- SafetensorsIndexTest.cpp - Reading model.safetensors.index.json ----===//
#include "aoa/formats/SafetensorsIndex.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::formats;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

namespace {

std::string errorOf(std::string_view text) {
  runtime::Expected<SafetensorsIndex> index =
      parseSafetensorsIndex(text, "idx.json");
  EXPECT_FALSE(index.ok()) << text;
  return index.ok() ? std::string() : index.error().message;
}

TEST(SafetensorsIndexTest, ReadsWeightMapAndTotalSize) {
  runtime::Expected<SafetensorsIndex> index = parseSafetensorsIndex(
      R"({"metadata": {"format": "pt", "total_size": 16060522496},
          "weight_map": {"x": "sub/dir.safetensors",
                         "lm_head.weight": "model-00002-of-00002.safetensors",
                         "model.embed\u005ftokens.weight": "model-00001-of-00002.safetensors",
                         "a.first": "model-00002-of-00002.safetensors"},
          "extra": [1, {"nested": true}]})",
      "idx.json");
  ASSERT_TRUE(index.ok()) << index.error().toString();
  EXPECT_THAT(index->files, ElementsAre("model-00001-of-00002.safetensors",
                                        "model-00002-of-00002.safetensors",
                                        "sub/dir.safetensors"));
  std::vector<std::pair<std::string, uint32_t>> entries;
  for (const SafetensorsIndex::Entry &entry : index->weightMap)
    entries.emplace_back(index->key(entry), entry.file);
  // Sorted by key.
  EXPECT_THAT(entries,
              ElementsAre(Pair("a.first", 1u), Pair("lm_head.weight", 1u),
                          Pair("model.embed_tokens.weight", 0u),
                          Pair("x", 2u)));
  EXPECT_EQ(index->totalSize, 16060522496u);
}

TEST(SafetensorsIndexTest, TotalSizeIsInformative) {
  for (
      const char *text :
      {R"({"weight_map": {}})", R"({"metadata": null, "weight_map": {}})",
       R"({"metadata": {"total_size": "12"}, "weight_map": {}})",
       R"({"metadata": {"total_size": -3}, "weight_map": {}})",
       R"({"metadata": {"total_size": 1.5e3}, "weight_map": {}})",
       R"({"metadata": {"total_size": [1, {"a": null}], "b": false}, "weight_map": {}})",
       R"({"metadata": [true, "a\u00e9"], "x": {"y": [[]]}, "weight_map": {}})"}) {
    runtime::Expected<SafetensorsIndex> index =
        parseSafetensorsIndex(text, "idx.json");
    ASSERT_TRUE(index.ok()) << text << ": " << index.error().toString();
    EXPECT_FALSE(index->totalSize.has_value()) << text;
    EXPECT_TRUE(index->weightMap.empty());
  }
}

TEST(SafetensorsIndexTest, MalformedJsonIsLocated) {
  EXPECT_THAT(errorOf("{\"weight_map\": {\n  \"a\": \"f.safetensors\",\n"
                      "  \"b\" \"g.safetensors\"}}"),
              HasSubstr("idx.json:3:7: malformed JSON: syntax error while "
                        "parsing object separator"));
  EXPECT_THAT(errorOf("{\"weight_map\": {\"a\": \"f\"}"),
              HasSubstr("idx.json:1:"));
  EXPECT_THAT(errorOf("{\"weight_map\": {\"a\": \"f\"}} x"),
              HasSubstr("idx.json:1:"));
  EXPECT_EQ(errorOf(""), "idx.json: the index is empty");
  // Fields that are ignored must still be JSON.
  EXPECT_THAT(errorOf(R"({"x": abc, "weight_map": {}})"),
              HasSubstr("idx.json:1:7: malformed JSON: syntax error while "
                        "parsing value - invalid literal"));
  EXPECT_THAT(
      errorOf(R"({"metadata": {"a": [1, {"b": tru}]}, "weight_map": {}})"),
      HasSubstr("idx.json:1:"));
  EXPECT_THAT(errorOf(R"({"weight_map": {}, "metadata": "x\q"})"),
              HasSubstr("idx.json:1:"));
  EXPECT_THAT(errorOf(R"({"metadata": {"total_size": 12e}, "weight_map": {}})"),
              HasSubstr("idx.json:1:"));
}

TEST(SafetensorsIndexTest, ShapeErrors) {
  EXPECT_EQ(errorOf("[1, 2]"), "idx.json: the index is not a JSON object");
  EXPECT_EQ(errorOf(R"({"metadata": {}})"),
            "idx.json: the index has no \"weight_map\"");
  EXPECT_EQ(errorOf(R"({"weight_map": ["a"]})"),
            "idx.json:1:16: \"weight_map\" is not an object from tensor "
            "names to file names");
  EXPECT_EQ(errorOf("{\"weight_map\": {\"a\": \"f.safetensors\",\n"
                    "                \"b\": 7}}"),
            "idx.json:2:22: weight_map: the file of tensor 'b' is not a "
            "string");
  EXPECT_EQ(
      errorOf(
          R"({"weight_map": {"a": "f.safetensors", "a": "g.safetensors"}})"),
      "idx.json:1:44: weight_map: tensor 'a' is listed twice (in "
      "'f.safetensors' and in 'g.safetensors')");
  EXPECT_EQ(errorOf(R"({"weight_map": {}, "weight_map": {}})"),
            "idx.json:1:34: \"weight_map\" appears twice");
  for (const char *file : {"../f.safetensors", "/abs.safetensors", "",
                           "a/../b.safetensors", "./x.safetensors"})
    EXPECT_THAT(
        errorOf(std::string(R"({"weight_map": {"a": ")") + file + "\"}}"),
        HasSubstr("which is not a file inside the index's directory"))
        << file;
}

} // namespace
