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
          "weight_map": {"lm_head.weight": "model-00002-of-00002.safetensors",
                         "model.embed\u005ftokens.weight": "model-00001-of-00002.safetensors",
                         "x": "sub/dir.safetensors"},
          "extra": [1, {"nested": true}]})",
      "idx.json");
  ASSERT_TRUE(index.ok()) << index.error().toString();
  EXPECT_THAT(
      index->weightMap,
      ElementsAre(
          Pair("lm_head.weight", "model-00002-of-00002.safetensors"),
          Pair("model.embed_tokens.weight", "model-00001-of-00002.safetensors"),
          Pair("x", "sub/dir.safetensors")));
  EXPECT_EQ(index->totalSize, 16060522496u);
}

TEST(SafetensorsIndexTest, TotalSizeIsInformative) {
  for (const char *text :
       {R"({"weight_map": {}})", R"({"metadata": null, "weight_map": {}})",
        R"({"metadata": {"total_size": "12"}, "weight_map": {}})",
        R"({"metadata": {"total_size": -3}, "weight_map": {}})",
        R"({"metadata": {"total_size": 1.5e3}, "weight_map": {}})"}) {
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
