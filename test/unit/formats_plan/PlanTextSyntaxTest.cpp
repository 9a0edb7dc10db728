//===- PlanTextSyntaxTest.cpp - Syntax errors of the plan text ------------===//
//
// Every syntax rule of docs/plan-format.md is reported at the line and
// column it is about, with a hint.
//
//===----------------------------------------------------------------------===//
#include "PlanTextTestSupport.h"

#include <gtest/gtest.h>

using namespace aoa;
using namespace aoa::test;

namespace {

TEST(PlanTextSyntaxTest, HeaderAndVersion) {
  expectEditError("aoa-plan 3", "aoa-plan 4", "4",
                  "unsupported plan format version 4; this reader supports "
                  "versions 1 to 3");
  expectEditError("aoa-plan 3", "aoa-plan 0", "0",
                  "unsupported plan format version 0");
  expectError("ranks 2\n", "ranks", "expected the plan header 'aoa-plan 3'");
  expectError("", "", "empty plan: expected the header 'aoa-plan 3'");
  // Version 1 and 2 plans (without the lines and fields later versions
  // added) are still read.
  for (const char *old : {"aoa-plan 1", "aoa-plan 2"}) {
    Read earlier(edit(sampleText(), "aoa-plan 3", old));
    EXPECT_TRUE(earlier.plan) << earlier.all();
  }
  expectError("# only a comment\n", "", "empty plan");
  expectError("{\"format\": \"aoa-metadata\"}\n", "{",
              "expected a line keyword or an instruction, found '{'");
}

TEST(PlanTextSyntaxTest, Sections) {
  expectEditError("ranks 2\n", "ranks 2\nranks 3\n", "ranks 3",
                  "'ranks' is given twice");
  expectEditError("memory-budget 1048576\n", "", "source-file 0",
                  "missing 'memory-budget BYTES' line before the first "
                  "'source-file' line");
}

TEST(PlanTextSyntaxTest, SectionOrder) {
  std::string text = edit(
      sampleText(), "source-file 1 rank 1 \"src/rank1.safetensors\"\n", "");
  text = edit(text, "source-tensor 0 file 0",
              "source-file 1 rank 1 \"src/rank1.safetensors\"\n"
              "source-tensor 0 file 0");
  expectError(text, "source-file 1",
              "'source-file' lines must come before the 'destination-file' "
              "lines");
}

TEST(PlanTextSyntaxTest, Ids) {
  expectEditError("source-file 1 rank 1", "source-file 2 rank 1", "2 rank 1",
                  "expected 'source-file 1', found 'source-file 2'");
  expectEditError("destination-tensor 3 file", "destination-tensor 7 file",
                  "7 file", "expected 'destination-tensor 3'");
  expectEditError("rank 1\n", "rank 2\n", "2\n  round 0",
                  "expected 'rank 1', found 'rank 2'");
  expectEditError("  round 1\nrank 1", "  round 2\nrank 1", "2\nrank 1",
                  "expected 'round 1', found 'round 2'");
  expectEditError("ranks 2", "ranks 1", "1\n  round 0\n    %0 = read src 1",
                  "rank 1 is out of range: the plan has 1 rank");
  expectEditError("ranks 2", "ranks 3", "ranks 3",
                  "the plan has 3 ranks but rank blocks for only 0 to 1");
}

TEST(PlanTextSyntaxTest, Lines) {
  expectEditError("source-file 0", "sorce-file 0", "sorce-file",
                  "unknown line 'sorce-file'");
  Read r(edit(sampleText(), "source-file 0", "sorce-file 0"));
  EXPECT_EQ(r.hints(), "did you mean 'source-file'?\n");

  expectEditError("\"src/rank0.safetensors\"", "\"src/rank0.safetensors",
                  "\"src/rank0.safetensors",
                  "unterminated string: the file's path as a string has no "
                  "closing '\"'");
  expectEditError("\"src/rank0.safetensors\"", "\"src\\q\"", "\\q",
                  "invalid escape in a string");
  expectEditError("\"src/rank0.safetensors\"", "\"\\ud800\"", "\\ud800",
                  "invalid \\u escape in a string");
  expectEditError("name \"q\" key \"q\" float32[6, 2]",
                  "name \"q\" key \"q\" bfloat15[6, 2]", "bfloat15",
                  "unknown dtype 'bfloat15'");
  Read dtype(edit(sampleText(), "key \"q\" float32", "key \"q\" bfloat15"));
  EXPECT_EQ(dtype.hints(), "did you mean 'bfloat16'?\n");
  expectEditError("float32[6, 2] box [0:6, 0:2]",
                  "float32[6, -2] box [0:6, 0:2]", "-2",
                  "expected an extent, found '-2'");
  expectEditError("box [0:6, 0:2]", "box [0:6, 0 2]", "2]\nsource-tensor 5",
                  "expected ':' between the begin and the end of an interval, "
                  "found '2'");
  expectEditError("flat [0:16]", "flat [0:16", "\nsource-tensor 3",
                  "expected ']' after the flat range, found the end of the "
                  "line");
  // The least int64 stands for no flat range in memory (PackedOptional).
  expectEditError("flat [0:16]", "flat [-9223372036854775808:16]",
                  "-9223372036854775808",
                  "the begin of the flat range must be at least "
                  "-9223372036854775807, not -9223372036854775808");
  expectEditError("ranks 2", "ranks 99999999999", "99999999999",
                  "the number of ranks must be at most 16777216, not "
                  "99999999999");
  expectEditError("memory-budget 1048576", "memory-budget 99999999999999999999",
                  "999",
                  "the memory budget in bytes 99999999999999999999 is out of "
                  "range");
  expectEditError("ranks 2", "ranks 2 extra", "extra",
                  "expected the end of the line, found 'extra'");
  expectEditError("ranks 2", "ranks 2x", "2x",
                  "expected the number of ranks, found '2x'");
}

TEST(PlanTextSyntaxTest, Instructions) {
  expectEditError("%1 = read src 3 [2:4, 0:8] : float32[2, 8]",
                  "%1 = read src 3 [2:4, 0:8] float32[2, 8]", "float32[2, 8]",
                  "expected ':' and the buffer's type, found 'float32'");
  expectEditError("%1 = read src 3", "%1 = raed src 3", "raed",
                  "unknown instruction 'raed'");
  expectEditError("%1 = read src 3", "%1, %9 = read src 3", "%9",
                  "'read' defines one buffer, not 2");
  expectEditError("%1 = read src 3", "%1 = read dst 3", "dst 3",
                  "expected 'src', found 'dst'");
  expectEditError("send 1 %1", "%7 = send 1 %1", "send",
                  "'send' defines no buffers");
  expectEditError("send 1 %1", "send 1 1", "1\n    %2, %3",
                  "expected a buffer to send, e.g. '%0', found '1'");
  expectEditError("%2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]",
                  "%2, %3 = recv 1 : bfloat16[4, 4]", "\n    %4 = copy",
                  "expected ',' and the type of buffer %3");
  expectEditError("%3 = recv 0 : float32[2, 8]",
                  "%3 = recv 0 : float32[2, 8], float32[1]", ", float32[1]",
                  "more types than buffers: recv defines 1 buffer");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [0:2, 0:8]",
                  "\n  round 1\nrank 1",
                  "expected the buffer to write, e.g. '%3', found the end");
  expectEditError("recv 0 :", "recv :", ": float32[2, 8]\n    %4 = copy %2",
                  "expected the rank to receive from, found ':'");
  expectEditError("read src 5", "read 5", "5 [0:2",
                  "expected 'src', found '5'");
  expectEditError("    send 1 %1", "    recv 1 %1", "recv 1 %1",
                  "'recv' defines buffers: name them before '='");
}

TEST(PlanTextSyntaxTest, Transforms) {
  expectEditError("[\"reshape:[3, 2, 2]\"]", "[\"float33\"]", "\"float33\"",
                  "unknown transform step 'float33'");
  Read r(edit(sampleText(), "[\"reshape:[3, 2, 2]\"]", "[\"float33\"]"));
  EXPECT_EQ(r.hints(), "did you mean 'float32'?\n");
  expectEditError("%4 = copy %0 [\"[1, 0]\"", "%4 = copy %0 [\"[0, 0]\"",
                  "\"[0, 0]\"",
                  "invalid permutation step '[0, 0]': permutation '[0, 0]' "
                  "names axis 0 twice");
  expectEditError("%4 = copy %0 [\"[1, 0]\"", "%4 = copy %0 [\"[1 0]\"",
                  "\"[1 0]\"", "invalid permutation step '[1 0]'");
  expectEditError("\"reshape:[3, 2, 2]\"", "\"reshape:3, 2, 2\"", "\"reshape:3",
                  "invalid reshape step 'reshape:3, 2, 2'");
  expectEditError("%1 = copy %0 [\"flatten:[2, 2, 3]\"]",
                  "%1 = copy %0 \"flatten:[2, 2, 3]\"", "\"flatten",
                  "expected '[' and the transform steps");
  expectEditError("[\"[1, 0]\", \"float32\"] : float32[4, 4]\n    %5",
                  "[\"[1, 0]\" \"float32\"] : float32[4, 4]\n    %5",
                  "\"float32\"] : float32[4, 4]\n    %5",
                  "expected ',' or ']' after a transform step, found a string");
}

TEST(PlanTextSyntaxTest, RoundStructure) {
  expectEditError("  round 0\n    %0 = read src 0", "    %0 = read src 0",
                  "%0 = read src 0", "instruction outside a round");
  expectEditError("%2, %3 = recv 1", "%2, %1 = recv 1", "%1 = recv",
                  "buffer %1 is defined twice in this round");
  Read r(edit(sampleText(), "%2, %3 = recv 1", "%2, %1 = recv 1"));
  ASSERT_FALSE(r.diagnostics.empty());
  ASSERT_EQ(r.diagnostics[0].notes.size(), 1u);
  EXPECT_EQ(r.sources.describe(r.diagnostics[0].notes[0].location),
            placeOf(std::string(r.sources.text(1)), "%1 = read src 3"));
  expectEditError("%4 = copy %2 [\"reshape", "%7 = copy %2 [\"reshape", "%7",
                  "buffer %7 is defined, but %4 is not");
}

TEST(PlanTextSyntaxTest, ManyErrorsAreReportedAndCapped) {
  std::string text = sampleText();
  std::string broken = text;
  for (int i = 0; i < 30; ++i)
    broken += "bogus\n";
  Read r(broken);
  EXPECT_FALSE(r.plan);
  ASSERT_EQ(r.diagnostics.size(), 21u);
  EXPECT_EQ(r.message(20), "too many errors in the plan; stopped after 20");

  // Two independent mistakes are both reported.
  Read two(edit(edit(sampleText(), "ranks 2", "ranks 2 x"), "round 1\nrank 1",
                "round one\nrank 1"));
  EXPECT_EQ(two.diagnostics.size(), 2u) << two.all();
}

} // namespace
