//===- PlanTextHuggingFaceTest.cpp - Hugging Face destinations ------------===//
//
// `destination-format huggingface` and `copy-file`: they round trip, their
// syntax errors and the rules of a Hugging Face directory are located.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanWriter.h"

#include "PlanTextTestSupport.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::test;

namespace {

TEST(PlanTextHuggingFaceTest, RoundTrips) {
  Read r(kHuggingFacePlan);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(r.plan->destinationFormat, plan::DestinationFormat::HuggingFace);
  EXPECT_EQ(r.plan->copiedFiles,
            (std::vector<std::string>{"config.json", "tok/vocab.txt"}));
  EXPECT_EQ(printPlanText(*r.plan), kHuggingFacePlan);
  // The default format is not written, so plans without it keep their text.
  plan::Plan aoaPlan = *r.plan;
  aoaPlan.destinationFormat = plan::DestinationFormat::Aoa;
  EXPECT_EQ(printPlanText(aoaPlan).find("destination-format"),
            std::string::npos);
  Read explicitAoa(edit(kHuggingFacePlan, "destination-format huggingface",
                        "destination-format aoa"));
  ASSERT_TRUE(explicitAoa.plan) << explicitAoa.all();
  EXPECT_EQ(explicitAoa.plan->destinationFormat, plan::DestinationFormat::Aoa);
}

TEST(PlanTextHuggingFaceTest, SyntaxErrors) {
  expectHuggingFaceEditError("destination-format huggingface",
                             "destination-format safetensors", "safetensors",
                             "unknown destination format 'safetensors'");
  expectHuggingFaceEditError("destination-format huggingface",
                             "destination-format", "\nsource-file",
                             "expected the destination format ('aoa' or "
                             "'huggingface'), found the end of the line");
  expectHuggingFaceEditError(
      "destination-format huggingface",
      "destination-format huggingface\ndestination-format aoa",
      "destination-format aoa", "'destination-format' is given twice");
  expectHuggingFaceEditError("copy-file \"config.json\"", "copy-file config",
                             "config\n",
                             "expected the copied file's path as "
                             "a string, found 'config'");
  expectHuggingFaceEditError(
      "destination-tensor 1 file 1 name \"b\" key \"b\" int32[4] box "
      "[0:4]\ncopy-file \"config.json\"\n",
      "copy-file \"config.json\"\ndestination-tensor 1 file 1 name \"b\" "
      "key \"b\" int32[4] box [0:4]\n",
      "destination-tensor 1",
      "'destination-tensor' lines must come before the 'copy-file' lines");
}

TEST(PlanTextHuggingFaceTest, CopiedFilesStayInsideAndApart) {
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"../vocab.txt\"",
                             "\"../vocab",
                             "copied file '../vocab.txt' is not a path inside "
                             "the source and destination directories");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"/etc/passwd\"", "\"/etc",
                             "is not a path inside");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"metadata.json\"",
                             "\"metadata.json\"",
                             "copied file 'metadata.json' would replace a "
                             "file that aoa-run writes itself");
  expectHuggingFaceEditError("\"tok/vocab.txt\"",
                             "\"model.safetensors.index.json\"",
                             "\"model.safetensors.index.json\"",
                             "would replace a file that aoa-run writes");
  expectHuggingFaceEditError("\"tok/vocab.txt\"",
                             "\"model-00002-of-00002.safetensors\"",
                             "\"model-00002-of-00002.safetensors\"\nrank",
                             "copied file 'model-00002-of-00002.safetensors' "
                             "is also a destination file");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"config.json\"",
                             "\"config.json\"",
                             "copied file 'config.json' is listed twice", 1);
}

TEST(PlanTextHuggingFaceTest, KeysAreStoredWholeUnderTheirNames) {
  expectHuggingFaceEditError(
      "name \"b\" key \"b\" int32[4] box [0:4]\ncopy",
      "name \"c\" key \"b\" int32[4] box [0:4]\ncopy", "\"c\" key \"b\" int32",
      "destination tensor 1 of key 'b' is named 'c' in its file");
  std::string half =
      edit(kHuggingFacePlan, "name \"b\" key \"b\" int32[4] box [0:4]\ncopy",
           "name \"b\" key \"b\" int32[8] box [0:4]\ncopy");
  half = edit(half, "source-tensor 1 file 0 name \"b\" key \"b\" int32[4]",
              "source-tensor 1 file 0 name \"b\" key \"b\" int32[8]");
  expectError(half, "[0:4]\ncopy",
              "destination tensor 1 holds only part of key 'b'");
}

TEST(PlanTextHuggingFaceTest, VersionOnePlansHaveNeitherLine) {
  std::string v1 = edit(kHuggingFacePlan, "aoa-plan 3", "aoa-plan 1");
  expectError(v1, "destination-format",
              "'destination-format' lines need plan format version 2, but "
              "this plan is version 1");
  expectError(edit(v1, "destination-format huggingface\n", ""),
              "copy-file \"config.json\"",
              "'copy-file' lines need plan format version 2");
}

} // namespace
