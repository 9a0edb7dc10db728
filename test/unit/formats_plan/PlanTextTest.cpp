//===- PlanTextTest.cpp - Plan text writer and reader round trips ---------===//
//
// Plans are built by hand: write -> read -> write must give the same bytes
// and an equal plan, and the writer prints the form docs/plan-format.md
// documents. The other rules of the text form have their own files:
// PlanTextSyntaxTest.cpp, PlanTextVerifyTest.cpp, PlanTextHuggingFaceTest.cpp
// and PlanSummaryTest.cpp.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanReader.h"
#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/formats/plan/PlanWriter.h"

#include "PlanTextTestSupport.h"
#include "SamplePlanText.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace aoa;
using namespace aoa::test;

namespace {

using plan::Opcode;

const char *const kSampleText = test::kSamplePlanText;

TEST(PlanTextTest, WritesTheDocumentedForm) {
  EXPECT_EQ(sampleText(), kSampleText);
}

TEST(PlanTextTest, SamplePlanIsValid) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::string errors;
  diags.setHandler(
      [&](const Diagnostic &d) { errors += renderDiagnostic(d, sources); });
  EXPECT_TRUE(verifyPlan(samplePlan(), diags)) << errors;
}

TEST(PlanTextTest, RoundTripGivesTheSameBytesAndPlan) {
  Read r(sampleText());
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(difference(samplePlan(), *r.plan), "");
  EXPECT_EQ(printPlanText(*r.plan), sampleText());
}

TEST(PlanTextTest, TensorsOneAfterAnotherOfOneShapeShareIt) {
  // The shards of a key are listed together and share one global shape
  // (plan::StoredTensor): the reader shares a shape with the tensor before.
  plan::Plan plan = samplePlan();
  plan::StoredTensor copy = plan.sourceTensors[0];
  for (const char *name : {"a.copy1", "a.copy2"}) {
    copy.name = SharedString(name);
    plan.sourceTensors.push_back(copy);
  }
  Read r(printPlanText(plan));
  ASSERT_TRUE(r.plan) << r.all();
  const std::vector<plan::StoredTensor> &read = r.plan->sourceTensors;
  size_t n = read.size(); // ..., a.copy1, a.copy2
  ASSERT_EQ(n, plan.sourceTensors.size());
  EXPECT_TRUE(read[n - 1].globalShape.sharesWith(read[n - 2].globalShape));
  EXPECT_EQ(read[n - 2].globalShape, read[0].globalShape);
  EXPECT_FALSE(read[n - 2].globalShape.sharesWith(read[0].globalShape));
}

TEST(PlanTextTest, WritingIsDeterministic) {
  EXPECT_EQ(printPlanText(samplePlan()), printPlanText(samplePlan()));
  std::ostringstream os;
  writePlanText(samplePlan(), os);
  EXPECT_EQ(os.str(), sampleText());
}

TEST(PlanTextTest, EmptyPlanRoundTrips) {
  plan::Plan p;
  p.ranks = 3;
  p.programs.resize(3);
  std::string text = printPlanText(p);
  EXPECT_EQ(text, "aoa-plan 3\nranks 3\nmemory-budget 0\nrank 0\nrank 1\n"
                  "rank 2\n");
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(difference(p, *r.plan), "");
}

TEST(PlanTextTest, ScalarsAndEmptyTransforms) {
  plan::Plan p;
  p.ranks = 1;
  p.sourceFiles = {{"a.safetensors", 0, std::nullopt}};
  p.destinationFiles = {{"b.safetensors", 0, std::nullopt}};
  p.sourceTensors = {tensor(0, "step", DType::I64, {}, Box())};
  p.destinationTensors = {tensor(0, "step", DType::I64, {}, Box())};
  plan::Round round;
  round.buffers = {decl(DType::I64, {}), decl(DType::I64, {})};
  round.instructions = {read(0, 0, Box()), copy(p, 1, 0, {}), write(0, Box(), 1)};
  p.programs.resize(1);
  p.programs[0].rounds = {round};
  std::string text = printPlanText(p);
  EXPECT_NE(text.find("    %0 = read src 0 [] : int64[]\n"
                      "    %1 = copy %0 [] : int64[]\n"
                      "    write dst 0 [] %1\n"),
            std::string::npos)
      << text;
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(difference(p, *r.plan), "");
  EXPECT_EQ(printPlanText(*r.plan), text);
}

TEST(PlanTextTest, ReaderAcceptsCommentsBlankLinesAndSpacing) {
  std::string text = "# a plan\n\n" + sampleText();
  text = edit(text, "    %0 = read src 0 [0:4, 0:4] : bfloat16[4, 4]\n",
              "\t%0   =   read   src 0 [ 0 : 4 ,0:4 ]:bfloat16 [4,4]   \r\n"
              "   # a comment between instructions\n");
  text = edit(text, "\"src/rank0.safetensors\"",
              "\"src\\/rank0\\u002esafetensors\"");
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(difference(samplePlan(), *r.plan), "");
  EXPECT_EQ(printPlanText(*r.plan), sampleText());
}

TEST(PlanTextTest, StringsUseJsonEscapes) {
  plan::Plan p;
  p.ranks = 1;
  p.programs.resize(1);
  p.addedKeys = {std::string("a\x01"
                             "b\x7f"
                             "c\0",
                             6),
                 "\xf0\x9f\x98\x80"};
  std::string text = printPlanText(p);
  EXPECT_NE(text.find("added-key \"a\\u0001b\\u007fc\\u0000\"\n"),
            std::string::npos)
      << text;
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(r.plan->addedKeys, p.addedKeys);
  // A surrogate pair spells the same code point.
  Read pair(edit(text, "\xf0\x9f\x98\x80", "\\ud83d\\ude00"));
  ASSERT_TRUE(pair.plan) << pair.all();
  EXPECT_EQ(pair.plan->addedKeys, p.addedKeys);
}

TEST(PlanTextTest, FileVariantReadsFromDisk) {
  char dir[] = "/tmp/aoa-plan-test-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string path = std::string(dir) + "/plan.txt";
  {
    std::ofstream out(path, std::ios::binary);
    writePlanText(samplePlan(), out);
  }
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::optional<plan::Plan> p = readPlanFile(path, sources, diags);
  ASSERT_TRUE(p);
  EXPECT_EQ(difference(samplePlan(), *p), "");

  std::vector<Diagnostic> seen;
  diags.setHandler([&](const Diagnostic &d) { seen.push_back(d); });
  EXPECT_FALSE(readPlanFile(std::string(dir) + "/missing.txt", sources, diags));
  EXPECT_FALSE(readPlanFile(dir, sources, diags));
  ASSERT_EQ(seen.size(), 2u);
  EXPECT_NE(seen[0].message.find("cannot read plan"), std::string::npos);
  EXPECT_NE(seen[1].message.find("is a directory"), std::string::npos);
  std::remove(path.c_str());
  rmdir(dir);
}

TEST(PlanTextTest, WriterPrintsUndeclaredBuffersVisibly) {
  plan::Plan p = samplePlan();
  p.programs[0].rounds[0].instructions[0].buffer = 42;
  std::string text = printPlanText(p);
  EXPECT_NE(text.find("%42 = read src 0 [0:4, 0:4] : <undeclared>"),
            std::string::npos);
  expectError(text, "<undeclared>", "expected the buffer's type");
}

TEST(PlanTextSourceFactsTest, SizesAndDataOffsetsRoundTripAndAreChecked) {
  plan::Plan p = samplePlan();
  p.sourceFiles[0].size = 4096;
  p.sourceTensors[0].data = plan::ByteRange{64, 96}; // bfloat16[4, 4]
  std::string text = printPlanText(p);
  EXPECT_NE(text.find("source-file 0 rank 0 \"src/rank0.safetensors\" "
                      "size 4096\n"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("box [0:4, 0:4] data [64:96]\n"), std::string::npos)
      << text;
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_EQ(difference(p, *r.plan), "");
  EXPECT_EQ(printPlanText(*r.plan), text);

  expectError(edit(text, "data [64:96]", "data [64:100]"), "data [64:100]",
              "data offsets [64:100] do not hold the 32 bytes of "
              "bfloat16[4, 4] that the tensor stores");
  expectError(edit(text, "data [64:96]", "data [96:64]"), "data [96:64]",
              "data offsets [96:64] do not hold the 32 bytes");
  expectError(edit(text, "\"model-00001.safetensors\"",
                   "\"model-00001.safetensors\" size 10"),
              "size 10", "records a size; only source files do");
  expectError(edit(text, "key \"wt\" float32[4, 8] box [0:4, 0:8]",
                   "key \"wt\" float32[4, 8] box [0:4, 0:8] data [0:128]"),
              "data [0:128]", "records data offsets; only source tensors do");
  // Earlier versions have neither field.
  expectError(edit(text, "aoa-plan 3", "aoa-plan 2"), "size 4096",
              "'size' needs plan format version 3, but this plan is "
              "version 2");
  std::string noSize = edit(text, " size 4096", "");
  expectError(edit(noSize, "aoa-plan 3", "aoa-plan 2"), "data [64:96]",
              "'data' needs plan format version 3");
}

} // namespace
