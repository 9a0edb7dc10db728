//===- PlanTextTest.cpp - Plan text writer, reader, verifier, summary -----===//
//
// Plans are built by hand: write -> read -> write must give the same bytes
// and an equal plan, and every rule of docs/plan-format.md must be reported
// at the line and column it is about.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanReader.h"
#include "aoa/formats/plan/PlanSummary.h"
#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/formats/plan/PlanWriter.h"

#include "CapturedDiagnostics.h"
#include "SamplePlanText.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <unistd.h>

using namespace aoa;
using plan::Opcode;

namespace {

//===----------------------------------------------------------------------===//
// Building plans
//===----------------------------------------------------------------------===//

Box box(std::initializer_list<Interval> dims) {
  return Box(llvm::ArrayRef<Interval>(dims.begin(), dims.end()));
}

plan::StoredTensor tensor(uint32_t file, std::string name, DType dtype,
                          std::vector<int64_t> shape, Box held,
                          std::optional<FlatElementRange> flat = {}) {
  plan::StoredTensor t;
  t.file = file;
  t.key = name;
  t.name = std::move(name);
  t.dtype = dtype;
  t.globalShape = std::move(shape);
  t.box = std::move(held);
  t.flat = flat;
  return t;
}

plan::Instruction read(uint32_t buffer, uint32_t tensor, Box region) {
  plan::Instruction in;
  in.opcode = Opcode::Read;
  in.buffer = buffer;
  in.tensor = tensor;
  in.region = std::move(region);
  return in;
}

plan::Instruction exchange(Opcode opcode, uint32_t peer,
                           std::vector<uint32_t> buffers) {
  plan::Instruction in;
  in.opcode = opcode;
  in.peer = peer;
  in.buffers = std::move(buffers);
  return in;
}

plan::Instruction copy(uint32_t buffer, uint32_t input,
                       std::vector<plan::TransformStep> steps) {
  plan::Instruction in;
  in.opcode = Opcode::Copy;
  in.buffer = buffer;
  in.input = input;
  in.transform = std::move(steps);
  return in;
}

plan::Instruction write(uint32_t tensor, Box region, uint32_t buffer) {
  plan::Instruction in;
  in.opcode = Opcode::Write;
  in.tensor = tensor;
  in.region = std::move(region);
  in.buffer = buffer;
  return in;
}

plan::TransformStep permute(std::vector<int64_t> axes) {
  plan::TransformStep s;
  s.kind = plan::TransformStep::Kind::Permute;
  s.permutation = *Permutation::fromAxes(axes, axes.size());
  return s;
}

plan::TransformStep cast(DType dtype) {
  plan::TransformStep s;
  s.kind = plan::TransformStep::Kind::Cast;
  s.dtype = dtype;
  return s;
}

plan::TransformStep reshape(bool flatten, std::vector<int64_t> canonical) {
  plan::TransformStep s;
  s.kind = flatten ? plan::TransformStep::Kind::Flatten
                   : plan::TransformStep::Kind::Reshape;
  s.canonical = std::move(canonical);
  return s;
}

plan::BufferDecl decl(DType dtype, std::vector<int64_t> shape) {
  return plan::BufferDecl{dtype, std::move(shape)};
}

/// Two ranks: a weight transposed and cast across ranks, a flattened
/// optimizer state moved between ranks, a reshape and a flatten, an empty
/// round, added keys (one that needs escapes).
plan::Plan samplePlan() {
  plan::Plan p;
  p.ranks = 2;
  p.memoryBudget = 1 << 20;
  p.sourceFiles = {{"src/rank0.safetensors", 0}, {"src/rank1.safetensors", 1}};
  p.destinationFiles = {{"model-00001.safetensors", 0},
                        {"opt-rank0.safetensors", 0},
                        {"opt-rank1.safetensors", 1},
                        {"model-00002.safetensors", 1}};
  const DType bf16 = DType::BF16, f32 = DType::F32;
  p.sourceTensors = {
      tensor(0, "w", bf16, {8, 4}, box({{0, 4}, {0, 4}})),
      tensor(1, "w", bf16, {8, 4}, box({{4, 8}, {0, 4}})),
      tensor(1, "m.moment1_0", f32, {4, 8}, box({{0, 4}, {0, 8}}),
             FlatElementRange{0, 16}),
      tensor(0, "m.moment1_0", f32, {4, 8}, box({{0, 4}, {0, 8}}),
             FlatElementRange{16, 32}),
      tensor(1, "q", f32, {6, 2}, box({{0, 6}, {0, 2}})),
      tensor(1, "kc", f32, {2, 2, 3}, box({{0, 2}, {0, 2}, {0, 3}})),
  };
  p.destinationTensors = {
      tensor(0, "wt", f32, {4, 8}, box({{0, 4}, {0, 8}})),
      tensor(1, "m.moment1_0", f32, {4, 8}, box({{0, 2}, {0, 8}})),
      tensor(2, "m.moment1_0", f32, {4, 8}, box({{2, 4}, {0, 8}})),
      tensor(3, "qc", f32, {3, 2, 2}, box({{0, 3}, {0, 2}, {0, 2}})),
      tensor(3, "kf", f32, {4, 3}, box({{0, 4}, {0, 3}})),
  };
  p.addedKeys = {"lm_head.bias", "we\"ird\\key\n\t\xc3\xa9"};

  plan::Round r0;
  r0.buffers = {decl(bf16, {4, 4}), decl(f32, {2, 8}), decl(bf16, {4, 4}),
                decl(f32, {2, 8}),  decl(f32, {4, 4}), decl(f32, {4, 4})};
  r0.instructions = {
      read(0, 0, box({{0, 4}, {0, 4}})),
      read(1, 3, box({{2, 4}, {0, 8}})),
      exchange(Opcode::Send, 1, {1}),
      exchange(Opcode::Recv, 1, {2, 3}),
      copy(4, 0, {permute({1, 0}), cast(f32)}),
      copy(5, 2, {permute({1, 0}), cast(f32)}),
      write(0, box({{0, 4}, {0, 4}}), 4),
      write(0, box({{0, 4}, {4, 8}}), 5),
      write(1, box({{0, 2}, {0, 8}}), 3),
  };
  plan::Round r1;
  r1.buffers = {decl(bf16, {4, 4}), decl(f32, {2, 8}), decl(f32, {6, 2}),
                decl(f32, {2, 8}), decl(f32, {3, 2, 2})};
  r1.instructions = {
      read(0, 1, box({{4, 8}, {0, 4}})),
      read(1, 2, box({{0, 2}, {0, 8}})),
      read(2, 4, box({{0, 6}, {0, 2}})),
      exchange(Opcode::Send, 0, {0, 1}),
      exchange(Opcode::Recv, 0, {3}),
      copy(4, 2, {reshape(false, {3, 2, 2})}),
      write(2, box({{2, 4}, {0, 8}}), 3),
      write(3, box({{0, 3}, {0, 2}, {0, 2}}), 4),
  };
  plan::Round flattenRound;
  flattenRound.buffers = {decl(f32, {2, 2, 3}), decl(f32, {4, 3})};
  flattenRound.instructions = {
      read(0, 5, box({{0, 2}, {0, 2}, {0, 3}})),
      copy(1, 0, {reshape(true, {2, 2, 3})}),
      write(4, box({{0, 4}, {0, 3}}), 1),
  };
  p.programs.resize(2);
  p.programs[0].rounds = {r0, plan::Round{}};
  p.programs[1].rounds = {r1, flattenRound};
  return p;
}

//===----------------------------------------------------------------------===//
// Comparing plans
//===----------------------------------------------------------------------===//

std::string stepText(const std::vector<plan::TransformStep> &steps) {
  std::string out;
  for (const plan::TransformStep &s : steps)
    out += s.text() + ";";
  return out;
}

/// The first difference between two plans in the fields the format carries
/// (an instruction's fields that its opcode does not use are ignored), or
/// an empty string.
std::string difference(const plan::Plan &a, const plan::Plan &b) {
  if (a.ranks != b.ranks || a.memoryBudget != b.memoryBudget)
    return "globals";
  auto sameFiles = [](const std::vector<plan::File> &x,
                      const std::vector<plan::File> &y) {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].path != y[i].path || x[i].rank != y[i].rank ||
          x[i].size != y[i].size)
        return false;
    return true;
  };
  if (!sameFiles(a.sourceFiles, b.sourceFiles) ||
      !sameFiles(a.destinationFiles, b.destinationFiles))
    return "files";
  auto sameTensors = [](const std::vector<plan::StoredTensor> &x,
                        const std::vector<plan::StoredTensor> &y) {
    if (x.size() != y.size())
      return false;
    for (size_t i = 0; i < x.size(); ++i)
      if (x[i].file != y[i].file || x[i].name != y[i].name ||
          x[i].key != y[i].key || x[i].dtype != y[i].dtype ||
          x[i].globalShape != y[i].globalShape || x[i].box != y[i].box ||
          x[i].flat != y[i].flat || x[i].data != y[i].data)
        return false;
    return true;
  };
  if (!sameTensors(a.sourceTensors, b.sourceTensors) ||
      !sameTensors(a.destinationTensors, b.destinationTensors))
    return "tensors";
  if (a.addedKeys != b.addedKeys)
    return "added keys";
  if (a.programs.size() != b.programs.size())
    return "program count";
  for (size_t r = 0; r < a.programs.size(); ++r) {
    const auto &ra = a.programs[r].rounds, &rb = b.programs[r].rounds;
    if (ra.size() != rb.size())
      return "round count of rank " + std::to_string(r);
    for (size_t k = 0; k < ra.size(); ++k) {
      std::string where =
          "rank " + std::to_string(r) + " round " + std::to_string(k);
      if (ra[k].buffers.size() != rb[k].buffers.size())
        return where + " buffer count";
      for (size_t i = 0; i < ra[k].buffers.size(); ++i)
        if (ra[k].buffers[i].dtype != rb[k].buffers[i].dtype ||
            ra[k].buffers[i].shape != rb[k].buffers[i].shape)
          return where + " buffer " + std::to_string(i);
      const auto &ia = ra[k].instructions, &ib = rb[k].instructions;
      if (ia.size() != ib.size())
        return where + " instruction count";
      for (size_t i = 0; i < ia.size(); ++i) {
        const plan::Instruction &x = ia[i], &y = ib[i];
        bool same = x.opcode == y.opcode;
        if (same) {
          switch (x.opcode) {
          case Opcode::Read:
          case Opcode::Write:
            same = x.buffer == y.buffer && x.tensor == y.tensor &&
                   x.region == y.region;
            break;
          case Opcode::Send:
          case Opcode::Recv:
            same = x.peer == y.peer && x.buffers == y.buffers;
            break;
          case Opcode::Copy:
            same = x.buffer == y.buffer && x.input == y.input &&
                   stepText(x.transform) == stepText(y.transform);
            for (size_t s = 0; same && s < x.transform.size(); ++s)
              same = x.transform[s].kind == y.transform[s].kind;
            break;
          }
        }
        if (!same)
          return where + " instruction " + std::to_string(i);
      }
    }
  }
  return "";
}

//===----------------------------------------------------------------------===//
// Reading with diagnostics kept
//===----------------------------------------------------------------------===//

struct Read : test::CapturedDiagnostics {
  std::optional<plan::Plan> plan;

  explicit Read(const std::string &text) {
    plan = readPlanText("plan.txt", text, sources, diags);
  }
};

/// `plan.txt:LINE:COL` of the `occurrence`-th (0-based) `needle` in `text`.
std::string placeOf(const std::string &text, const std::string &needle,
                    int occurrence = 0) {
  size_t at = text.find(needle);
  for (int i = 0; i < occurrence && at != std::string::npos; ++i)
    at = text.find(needle, at + 1);
  EXPECT_NE(at, std::string::npos) << needle;
  if (at == std::string::npos)
    return "";
  size_t line = 1, lineStart = 0;
  for (size_t i = 0; i < at; ++i)
    if (text[i] == '\n') {
      ++line;
      lineStart = i + 1;
    }
  return "plan.txt:" + std::to_string(line) + ":" +
         std::to_string(at - lineStart + 1);
}

/// `text` with the single occurrence of `from` replaced by `to`.
std::string edit(const std::string &text, const std::string &from,
                 const std::string &to) {
  size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  EXPECT_EQ(text.find(from, at + 1), std::string::npos)
      << "'" << from << "' occurs more than once";
  if (at == std::string::npos)
    return text;
  return text.substr(0, at) + to + text.substr(at + from.size());
}

const std::string &sampleText() {
  static const std::string text = printPlanText(samplePlan());
  return text;
}

/// Reads `text` and expects its first diagnostic to be an error at the
/// place of `needle` (its `occurrence`-th match) whose message contains
/// `message`.
void expectError(const std::string &text, const std::string &needle,
                 const std::string &message, int occurrence = 0) {
  Read r(text);
  EXPECT_FALSE(r.plan);
  ASSERT_FALSE(r.diagnostics.empty()) << text;
  EXPECT_EQ(r.diagnostics[0].severity, Severity::Error);
  EXPECT_EQ(r.where(), placeOf(text, needle, occurrence)) << r.all();
  EXPECT_NE(r.message().find(message), std::string::npos)
      << "message: " << r.message() << "\nexpected: " << message;
  EXPECT_FALSE(r.diagnostics[0].hints.empty()) << r.all();
}

/// An edit of the sample text that must fail at `needle` in the edited text.
void expectEditError(const std::string &from, const std::string &to,
                     const std::string &needle, const std::string &message,
                     int occurrence = 0) {
  SCOPED_TRACE(from + " -> " + to);
  expectError(edit(sampleText(), from, to), needle, message, occurrence);
}

//===----------------------------------------------------------------------===//
// The text form
//===----------------------------------------------------------------------===//

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
  p.sourceFiles = {{"a.safetensors", 0}};
  p.destinationFiles = {{"b.safetensors", 0}};
  p.sourceTensors = {tensor(0, "step", DType::I64, {}, Box())};
  p.destinationTensors = {tensor(0, "step", DType::I64, {}, Box())};
  plan::Round round;
  round.buffers = {decl(DType::I64, {}), decl(DType::I64, {})};
  round.instructions = {read(0, 0, Box()), copy(1, 0, {}), write(0, Box(), 1)};
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

//===----------------------------------------------------------------------===//
// Syntax errors
//===----------------------------------------------------------------------===//

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

//===----------------------------------------------------------------------===//
// Semantic errors (the verifier, located through the text)
//===----------------------------------------------------------------------===//

TEST(PlanTextVerifyTest, FilesAndTensors) {
  expectEditError("source-file 1 rank 1", "source-file 1 rank 5", "5 \"src",
                  "source file 'src/rank1.safetensors' belongs to rank 5, but "
                  "the plan has 2 ranks");
  expectEditError("\"opt-rank1.safetensors\"", "\"../opt.safetensors\"",
                  "\"../opt",
                  "destination file '../opt.safetensors' is not "
                  "inside the destination directory");
  expectEditError("\"opt-rank1.safetensors\"", "\"/tmp/x.safetensors\"",
                  "\"/tmp", "is not inside the destination directory");
  expectEditError("\"src/rank1.safetensors\"", "\"src/rank0.safetensors\"",
                  "\"src/rank0.safetensors\"",
                  "source file 'src/rank0.safetensors' is listed twice", 1);
  expectEditError("source-tensor 4 file 1", "source-tensor 4 file 9", "9 name",
                  "source tensor 4 names source file 9, but the plan lists 2 "
                  "source files");
  expectEditError("float32[6, 2] box [0:6, 0:2]", "float32[6, 2] box [0:6]",
                  "[0:6]\n",
                  "box [0:6] has 1 dimension, but key 'q' has 2 "
                  "dimensions (float32[6, 2])");
  expectEditError("float32[6, 2] box [0:6, 0:2]",
                  "float32[6, 2] box [0:7, 0:2]", "[0:7",
                  "box [0:7, 0:2] lies outside the global shape [6, 2] of key "
                  "'q'");
  expectEditError("flat [16:32]", "flat [16:33]", "[16:33]",
                  "flat range [16:33] does not lie within the 32 elements of "
                  "box [0:4, 0:8]");
  expectEditError("flat [16:32]", "flat [16:16]", "[16:16]",
                  "flat range [16:16] is empty");
  expectEditError("name \"kf\"", "name \"qc\"", "\"qc\" key \"kf\"",
                  "destination tensor 'qc' of file 'model-00002.safetensors' "
                  "is listed twice");
  expectEditError("added-key \"lm_head.bias\"",
                  "added-key \"lm_head.bias\"\nadded-key \"lm_head.bias\"",
                  "added-key", "added key 'lm_head.bias' is listed twice", 1);
  expectError("aoa-plan 3\nranks 0\nmemory-budget 0\n", "ranks 0",
              "a plan needs at least one rank");
  expectEditError("ranks 2", "ranks 0", "0\n  round 0\n    %0 = read src 0",
                  "rank 0 is out of range: the plan has 0 ranks");
}

TEST(PlanTextVerifyTest, RoundCounts) {
  expectEditError("  round 1\nrank 1", "rank 1", "rank 1\n",
                  "rank 1 has 2 rounds, but rank 0 has 1");
}

TEST(PlanTextVerifyTest, Regions) {
  expectEditError("%1 = read src 3 [2:4, 0:8]", "%1 = read src 9 [2:4, 0:8]",
                  "9 [2:4",
                  "source tensor 9 does not exist: the plan has 6 source "
                  "tensors");
  expectEditError("%1 = read src 3 [2:4, 0:8]", "%1 = read src 2 [2:4, 0:8]",
                  "2 [2:4",
                  "rank 0 reads source tensor 2, but its file "
                  "'src/rank1.safetensors' belongs to rank 1");
  expectEditError("%2 = read src 4 [0:6, 0:2]", "%2 = read src 4 [0:6]",
                  "[0:6]",
                  "region [0:6] has 1 dimension, but key 'q' has 2 "
                  "dimensions");
  expectEditError("%2 = read src 4 [0:6, 0:2]", "%2 = read src 4 [0:6, 1:3]",
                  "[0:6, 1:3]",
                  "region [0:6, 1:3] lies outside the global shape [6, 2] of "
                  "key 'q'");
  expectEditError("%2 = read src 4 [0:6, 0:2]", "%2 = read src 4 [0:6, 2:1]",
                  "[0:6, 2:1]", "lies outside the global shape");
  expectEditError("%0 = read src 0 [0:4, 0:4] : bfloat16[4, 4]",
                  "%0 = read src 0 [2:6, 0:4] : bfloat16[4, 4]", "[2:6",
                  "region [2:6, 0:4] is not inside source tensor 0 ('w'), "
                  "which holds [0:4, 0:4] of key 'w'");
  // Rows 0-1 of the moment are stored on rank 1 (flat [0:16]), not rank 0.
  expectEditError("%1 = read src 3 [2:4, 0:8]", "%1 = read src 3 [1:3, 0:8]",
                  "[1:3",
                  "region [1:3, 0:8] is not inside source tensor 3 "
                  "('m.moment1_0'): its elements lie at flat indices "
                  "8 to 23 of box [0:4, 0:8], but the tensor stores "
                  "only [16:32]");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [1:3, 0:8] %3",
                  "[1:3",
                  "region [1:3, 0:8] is not inside destination "
                  "tensor 1");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 2 [2:4, 0:8] %3",
                  "2 [2:4, 0:8] %3",
                  "rank 0 writes destination tensor 2, but its file "
                  "'opt-rank1.safetensors' belongs to rank 1");
}

TEST(PlanTextVerifyTest, BufferTypes) {
  expectEditError("%1 = read src 3 [2:4, 0:8] : float32[2, 8]",
                  "%1 = read src 3 [2:4, 0:8] : float32[8, 2]",
                  "float32[8, 2]\n    send",
                  "buffer %1 is declared float32[8, 2], but region [2:4, 0:8] "
                  "has shape [2, 8]");
  expectEditError("%0 = read src 0 [0:4, 0:4] : bfloat16[4, 4]",
                  "%0 = read src 0 [0:4, 0:4] : float32[4, 4]",
                  "float32[4, 4]\n    %1",
                  "read gives bfloat16 data, but buffer %0 is declared "
                  "float32[4, 4]");
  expectEditError("[\"[1, 0]\", \"float32\"] : float32[4, 4]\n    %5",
                  "[\"[1, 0]\"] : bfloat16[4, 4]\n    %5", "%4\n",
                  "buffer %4 holds bfloat16 data, but destination tensor 0 "
                  "(key 'wt') is float32");
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [0:2, 0:4] %3",
                  "%3\n  round 1",
                  "buffer %3 is float32[2, 8], but region [0:2, 0:4] has "
                  "shape [2, 4]");
}

TEST(PlanTextVerifyTest, BufferUses) {
  expectEditError("write dst 1 [0:2, 0:8] %3", "write dst 1 [0:2, 0:8] %9",
                  "%9", "buffer %9 is not defined in this round");
  expectEditError("%1 = copy %0 [\"flatten:[2, 2, 3]\"]",
                  "%1 = copy %1 [\"flatten:[2, 2, 3]\"]", "%1 [",
                  "buffer %1 is used before it is defined");
  expectEditError("    %5 = copy %2 [\"[1, 0]\", \"float32\"] : "
                  "float32[4, 4]\n    write dst 0 [0:4, 0:4] %4\n",
                  "    write dst 0 [0:4, 0:4] %4\n    %5 = copy %2 "
                  "[\"[1, 0]\", \"float32\"] : float32[4, 4]\n",
                  "%5 = copy %2", "'copy' comes after a write in this round");
  expectEditError("    send 1 %1\n",
                  "    %6 = copy %1 [] : float32[2, 8]\n"
                  "    send 1 %6\n",
                  "send 1", "'send' comes after a copy in this round");
  expectEditError("    send 1 %1\n"
                  "    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]\n",
                  "    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]\n"
                  "    send 1 %2\n",
                  "%2\n",
                  "buffer %2 comes from 'recv'; a round sends only buffers it "
                  "has read");
}

TEST(PlanTextVerifyTest, Exchanges) {
  expectEditError("send 1 %1", "send 7 %1", "7 %1",
                  "rank 7 does not exist: the plan has 2 ranks");
  expectEditError("send 1 %1", "send 0 %1", "0 %1", "rank 0 sends to itself");
  // Rank 0 stops receiving: rank 1's send has no partner.
  expectEditError("    %2, %3 = recv 1 : bfloat16[4, 4], float32[2, 8]\n"
                  "    %4 = copy %0 [\"[1, 0]\", \"float32\"] : float32[4, 4]\n"
                  "    %5 = copy %2 [\"[1, 0]\", \"float32\"] : float32[4, 4]\n"
                  "    write dst 0 [0:4, 0:4] %4\n"
                  "    write dst 0 [0:4, 4:8] %5\n"
                  "    write dst 1 [0:2, 0:8] %3\n",
                  "", "send 0 %0, %1",
                  "send to rank 0 has no matching recv: rank 0 receives 0 "
                  "messages from rank 1 in round 0");
  expectEditError("    send 1 %1\n", "", "%3 = recv 0",
                  "recv from rank 0 has no matching send: rank 0 sends 0 "
                  "messages to rank 1 in round 0");
  expectEditError("%3 = recv 0 : float32[2, 8]",
                  "%3, %5 = recv 0 : float32[2, 8], float32[1]",
                  "%3, %5 = recv 0",
                  "recv from rank 0 expects float32[2, 8], float32[1], but "
                  "the matching send of rank 0 sends float32[2, 8]");
  Read r(edit(sampleText(), "%3 = recv 0 : float32[2, 8]",
              "%3, %5 = recv 0 : float32[2, 8], float32[1]"));
  ASSERT_FALSE(r.diagnostics.empty());
  ASSERT_EQ(r.diagnostics[0].notes.size(), 1u);
  EXPECT_EQ(r.sources.describe(r.diagnostics[0].notes[0].location),
            placeOf(std::string(r.sources.text(1)), "send 1 %1"));
}

TEST(PlanTextVerifyTest, CopyTransforms) {
  expectEditError("%4 = copy %0 [\"[1, 0]\"", "%4 = copy %0 [\"[2, 0, 1]\"",
                  "\"[2, 0, 1]\"",
                  "permutation step '[2, 0, 1]' has 3 axes, but the data has "
                  "rank 2 here (bfloat16[4, 4])");
  expectEditError("[\"reshape:[3, 2, 2]\"]", "[\"reshape:[2, 4, 2]\"]",
                  "\"reshape:[2, 4, 2]\"",
                  "step 'reshape:[2, 4, 2]' turns rows into blocks of 4 rows "
                  "of 2 elements, so the data must be 2-D with a multiple of 4 "
                  "rows and 2 columns, not [6, 2]");
  expectEditError("[\"reshape:[3, 2, 2]\"]", "[\"reshape:[3, 2]\"]",
                  "\"reshape:[3, 2]\"",
                  "needs a canonical shape of at least 3 positive extents");
  expectEditError("[\"flatten:[2, 2, 3]\"]", "[\"flatten:[2, 3, 2]\"]",
                  "\"flatten",
                  "step 'flatten:[2, 3, 2]' merges whole blocks "
                  "of shape [3, 2], so the data must be "
                  "[2, 3, 2], not [2, 2, 3]");
  expectEditError("[\"reshape:[3, 2, 2]\"] : float32[3, 2, 2]",
                  "[\"reshape:[3, 2, 2]\"] : float32[6, 2]",
                  "float32[6, 2]\n    write",
                  "copy gives float32[3, 2, 2], but buffer %4 is declared "
                  "float32[6, 2]");
}

TEST(PlanTextVerifyTest, CastsBetweenAllDtypes) {
  std::string text =
      edit(sampleText(), "\"q\" float32[6, 2]", "\"q\" int32[6, 2]");
  text = edit(text, "%2 = read src 4 [0:6, 0:2] : float32[6, 2]",
              "%2 = read src 4 [0:6, 0:2] : int32[6, 2]");
  text = edit(text, "[\"reshape:[3, 2, 2]\"]",
              "[\"float32\", \"reshape:[3, 2, 2]\"]");
  // An int32 -> float32 cast is valid: the plan reads and verifies.
  Read r(text);
  ASSERT_TRUE(r.plan) << r.all();
  EXPECT_TRUE(r.diagnostics.empty()) << r.all();
}

//===----------------------------------------------------------------------===//
// In-memory plans
//===----------------------------------------------------------------------===//

std::vector<std::string> verifyMessages(const plan::Plan &p) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::vector<std::string> messages;
  diags.setHandler([&](const Diagnostic &d) { messages.push_back(d.message); });
  verifyPlan(p, diags);
  return messages;
}

TEST(PlanVerifierTest, NamesSitesInWords) {
  plan::Plan p = samplePlan();
  p.programs[1].rounds[1].instructions[1].transform[0].canonical = {2, 3, 2};
  std::vector<std::string> messages = verifyMessages(p);
  ASSERT_EQ(messages.size(), 1u);
  EXPECT_EQ(messages[0].rfind("rank 1, round 1, instruction 1 (copy): step "
                              "'flatten:[2, 3, 2]'",
                              0),
            0u)
      << messages[0];
}

TEST(PlanVerifierTest, StructuralRulesOfTheModel) {
  plan::Plan p = samplePlan();
  // A declared buffer that nothing defines, and one defined twice.
  p.programs[1].rounds[1].buffers.push_back(decl(DType::F32, {1}));
  p.programs[0].rounds[0].instructions[5].buffer = 4;
  std::vector<std::string> messages = verifyMessages(p);
  std::string all;
  for (const std::string &m : messages)
    all += m + "\n";
  EXPECT_NE(all.find("rank 0, round 0, instruction 5 (copy): buffer %4 is "
                     "defined twice in this round"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("rank 1, round 1: buffer %2 is declared, but no "
                     "instruction of the round defines it"),
            std::string::npos)
      << all;

  plan::Plan q = samplePlan();
  q.programs.pop_back();
  messages = verifyMessages(q);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0], "the plan has 2 ranks but 1 rank program");

  plan::Plan huge = samplePlan();
  huge.programs[0].rounds[0].buffers[0].shape = {INT64_MAX, 4};
  messages = verifyMessages(huge);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0], "rank 0, round 0, instruction 0 (read): buffer %0 of "
                         "type bfloat16[9223372036854775807, 4] has no valid "
                         "size in bytes");
}

//===----------------------------------------------------------------------===//
// Summary
//===----------------------------------------------------------------------===//

TEST(PlanSummaryTest, ByteSizes) {
  EXPECT_EQ(formatByteSize(0), "0 B");
  EXPECT_EQ(formatByteSize(1023), "1023 B");
  EXPECT_EQ(formatByteSize(1536), "1.50 KiB");
  EXPECT_EQ(formatByteSize(int64_t(3) << 30), "3.00 GiB");
}

TEST(PlanSummaryTest, Table) {
  plan::Plan p = samplePlan();
  // Rank 0 holds 320 bytes of buffers in round 0, rank 1 at most 256.
  p.memoryBudget = 300;
  std::ostringstream os;
  printPlanSummary(p, os, 4096);
  EXPECT_EQ(os.str(),
            "plan: 2 ranks, 2 rounds, 20 instructions\n"
            "files: 2 source files (6 tensors), 4 destination files (5 "
            "tensors), 2 added keys\n"
            "memory budget: 300 B of buffers per rank\n"
            "\n"
            "rank   instructions   read   sent  received  written  "
            "peak buffers\n"
            "0                 9   96 B   64 B      96 B    192 B       "
            "320 B !\n"
            "1                11  192 B   96 B      64 B    160 B         "
            "256 B\n"
            "total            20  288 B  160 B     160 B    352 B     "
            "max 320 B\n"
            "\n"
            "! the peak buffer memory of rank 0 exceeds the memory budget of "
            "300 B: a transfer that cannot be split is larger than the "
            "budget\n"
            "\n"
            "network: this plan sends 160 B between ranks; a "
            "broadcast-everything approach would move 4096 bytes (4.00 KiB), "
            "25.6x as much\n");
}

TEST(PlanSummaryTest, IdleRanksHaveNoRow) {
  // Rank ids may be sparse (issue 20 C2): a plan of ranks 0 and 2^24-1
  // printed a row for each of the 2^24 ranks. Idle ranks are one line.
  plan::Plan p = samplePlan();
  p.ranks = 6;
  p.programs.resize(6);
  std::swap(p.programs[1], p.programs[4]);
  std::ostringstream os;
  printPlanSummary(p, os, -1);
  std::string text = os.str();
  EXPECT_NE(text.find("\n0                 9"), std::string::npos) << text;
  EXPECT_NE(text.find("\n4                11"), std::string::npos) << text;
  EXPECT_EQ(text.find("\n1 "), std::string::npos) << text;
  EXPECT_NE(text.find("max 320 B\nidle (no instructions): 4 ranks (1-3, 5)\n"),
            std::string::npos)
      << text;
}

TEST(PlanSummaryTest, LargeSizesShowExactBytes) {
  plan::Plan p;
  p.ranks = 1;
  p.programs.resize(1);
  p.memoryBudget = int64_t(1) << 30;
  std::ostringstream os;
  printPlanSummary(p, os, -1);
  EXPECT_NE(os.str().find("memory budget: 1.00 GiB (1073741824 B) of buffers "
                          "per rank\n"),
            std::string::npos)
      << os.str();
  EXPECT_EQ(os.str().find("network"), std::string::npos);
}

} // namespace

//===----------------------------------------------------------------------===//
// Hugging Face destinations: `destination-format` and `copy-file`
//===----------------------------------------------------------------------===//

namespace {

const char *const kHuggingFacePlan =
    "aoa-plan 3\n"
    "ranks 1\n"
    "memory-budget 0\n"
    "destination-format huggingface\n"
    "source-file 0 rank 0 \"in.safetensors\"\n"
    "destination-file 0 rank 0 \"model-00001-of-00002.safetensors\"\n"
    "destination-file 1 rank 0 \"model-00002-of-00002.safetensors\"\n"
    "source-tensor 0 file 0 name \"a\" key \"a\" float32[2, 3] box [0:2, 0:3]\n"
    "source-tensor 1 file 0 name \"b\" key \"b\" int32[4] box [0:4]\n"
    "destination-tensor 0 file 0 name \"a\" key \"a\" float32[2, 3] box "
    "[0:2, 0:3]\n"
    "destination-tensor 1 file 1 name \"b\" key \"b\" int32[4] box [0:4]\n"
    "copy-file \"config.json\"\n"
    "copy-file \"tok/vocab.txt\"\n"
    "rank 0\n"
    "  round 0\n"
    "    %0 = read src 0 [0:2, 0:3] : float32[2, 3]\n"
    "    %1 = read src 1 [0:4] : int32[4]\n"
    "    write dst 0 [0:2, 0:3] %0\n"
    "    write dst 1 [0:4] %1\n";

void expectHuggingFaceEditError(const std::string &from, const std::string &to,
                                const std::string &needle,
                                const std::string &message,
                                int occurrence = 0) {
  SCOPED_TRACE(from + " -> " + to);
  expectError(edit(kHuggingFacePlan, from, to), needle, message, occurrence);
}

} // namespace

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
                             "config\n", "expected the copied file's path as "
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
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"/etc/passwd\"",
                             "\"/etc", "is not a path inside");
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
  std::string half = edit(kHuggingFacePlan,
                          "name \"b\" key \"b\" int32[4] box [0:4]\ncopy",
                          "name \"b\" key \"b\" int32[8] box [0:4]\ncopy");
  half = edit(half, "source-tensor 1 file 0 name \"b\" key \"b\" int32[4]",
              "source-tensor 1 file 0 name \"b\" key \"b\" int32[8]");
  expectError(half, "[0:4]\ncopy",
              "destination tensor 1 holds only part of key 'b'");
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

TEST(PlanTextHuggingFaceTest, VersionOnePlansHaveNeitherLine) {
  std::string v1 = edit(kHuggingFacePlan, "aoa-plan 3", "aoa-plan 1");
  expectError(v1, "destination-format",
              "'destination-format' lines need plan format version 2, but "
              "this plan is version 1");
  expectError(edit(v1, "destination-format huggingface\n", ""),
              "copy-file \"config.json\"",
              "'copy-file' lines need plan format version 2");
}

// Issue: a destination file named metadata.json was overwritten by the
// metadata, one under .aoa-run/ deleted with the staging directory, and
// `f` and `./f` were two files writing one (silently wrong data).
TEST(PlanTextVerifyTest, ReservedAndAliasedDestinationNames) {
  for (const char *reserved :
       {"metadata.json", "./metadata.json", "model.safetensors.index.json",
        ".aoa-run/files/x.safetensors", ".aoa-run", ".aoa/plan",
        "sub/.x.safetensors.tmp.1a2b3c4d"}) {
    SCOPED_TRACE(reserved);
    expectEditError("\"opt-rank1.safetensors\"",
                    "\"" + std::string(reserved) + "\"",
                    "\"" + std::string(reserved) + "\"",
                    "destination file '" + std::string(reserved) +
                        "' has a name that aoa-run uses for its own files");
  }
  // Not reserved: names that only look alike.
  for (const char *fine : {"metadata.json.safetensors", ".aoa-runs/x",
                           "sub/metadata.json", "x.tmp.safetensors"}) {
    SCOPED_TRACE(fine);
    Read r(edit(sampleText(), "\"opt-rank1.safetensors\"",
                "\"" + std::string(fine) + "\""));
    EXPECT_TRUE(r.plan) << r.all();
  }
  for (const char *alias : {"./model-00001.safetensors",
                            ".//model-00001.safetensors"}) {
    SCOPED_TRACE(alias);
    expectEditError("\"opt-rank0.safetensors\"",
                    "\"" + std::string(alias) + "\"",
                    "\"" + std::string(alias) + "\"",
                    "destination file '" + std::string(alias) +
                        "' is listed twice");
  }
  expectEditError("\"src/rank1.safetensors\"", "\"src//rank0.safetensors\"",
                  "\"src//rank0.safetensors\"",
                  "source file 'src//rank0.safetensors' is listed twice");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"./config.json\"",
                             "\"./config.json\"",
                             "copied file './config.json' is listed twice", 0);
}

// Issue 20 P1: `x` and `x/y` as two destination files, or a directory named
// metadata.json, failed halfway through the run with an OS error.
TEST(PlanTextVerifyTest, DestinationPathsDoNotCollide) {
  expectEditError("\"opt-rank1.safetensors\"",
                  "\"model-00001.safetensors/x.safetensors\"",
                  "\"model-00001.safetensors/x",
                  "destination file 'model-00001.safetensors/x.safetensors' "
                  "needs a directory 'model-00001.safetensors', but "
                  "destination file 'model-00001.safetensors' is a file there");
  expectEditError("\"opt-rank1.safetensors\"",
                  "\"./model-00001.safetensors//a/x.safetensors\"",
                  "\"./model-00001",
                  "but destination file "
                  "'model-00001.safetensors' is a file there");
  expectEditError("\"opt-rank1.safetensors\"",
                  "\"metadata.json/x.safetensors\"", "\"metadata.json/x",
                  "destination file 'metadata.json/x.safetensors' needs a "
                  "directory 'metadata.json', a name aoa-run writes a file to");
  expectHuggingFaceEditError(
      "\"tok/vocab.txt\"", "\"model-00002-of-00002.safetensors/vocab.txt\"",
      "\"model-00002-of-00002.safetensors/vocab.txt\"",
      "copied file 'model-00002-of-00002.safetensors/vocab.txt' needs a "
      "directory 'model-00002-of-00002.safetensors', but destination file "
      "'model-00002-of-00002.safetensors' is a file there");
  expectHuggingFaceEditError(
      "\"tok/vocab.txt\"", "\"config.json/vocab.txt\"",
      "\"config.json/vocab.txt\"",
      "copied file 'config.json/vocab.txt' needs a directory 'config.json', "
      "but copied file 'config.json' is a file there");
  // A shared directory is fine.
  Read r(edit(sampleText(), "\"opt-rank1.safetensors\"",
              "\"model-00001/x.safetensors\""));
  EXPECT_TRUE(r.plan) << r.all();
}

// Issue: a source file '../x' was read from outside --src-dir, a NUL in a
// path cut it short, and invalid UTF-8 in names made a metadata.json our own
// loader rejects.
TEST(PlanTextVerifyTest, NamesStayInsideAndAreText) {
  expectEditError("\"src/rank1.safetensors\"", "\"../rank1.safetensors\"",
                  "\"../rank1",
                  "source file '../rank1.safetensors' is not inside the "
                  "source directory");
  expectEditError("\"src/rank1.safetensors\"", "\"/etc/rank1.safetensors\"",
                  "\"/etc", "is not inside the source directory");
  expectEditError("\"opt-rank1.safetensors\"", "\"opt\\u0000.safetensors\"",
                  "\"opt\\u0000",
                  "contains the control character 0x00");
  expectEditError("\"src/rank1.safetensors\"", "\"src/rank1\\n.safetensors\"",
                  "\"src/rank1\\n", "contains the control character 0x0a");
  expectEditError("name \"kf\"", "name \"k\xff\"", "\"k\xff\" key",
                  "destination tensor 4: its name is not valid UTF-8");
  expectEditError("key \"kf\"", "key \"k\xc3\"", "destination-tensor 4",
                  "destination tensor 4: its key is not valid UTF-8");
  expectHuggingFaceEditError("\"tok/vocab.txt\"", "\"tok\\u0001.txt\"",
                             "\"tok\\u0001",
                             "contains the control character 0x01");
}

TEST(PlanTextVerifyTest, RankCountIsBounded) {
  expectEditError("ranks 2", "ranks 16777217", "16777217",
                  "the number of ranks must be at most 16777216, not "
                  "16777217");
  // An in-memory plan (the compiler's) is held to the same bound.
  plan::Plan huge = samplePlan();
  huge.ranks = uint32_t(kRankLimit) + 1;
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::string errors;
  diags.setHandler(
      [&](const Diagnostic &d) { errors += renderDiagnostic(d, sources); });
  EXPECT_FALSE(verifyPlan(huge, diags));
  EXPECT_NE(errors.find("a plan of 16777217 ranks is more than the 16777216 "
                        "aoa supports"),
            std::string::npos)
      << errors;
}

// Issue (UBSan): byte counts of float32 [2^61, 2] overflowed int64.
TEST(PlanTextVerifyTest, KeysWhoseBytesOverflowAreRefused) {
  std::string text = sampleText();
  text = edit(text, "source-tensor 4 file 1 name \"q\" key \"q\" float32[6, 2]",
              "source-tensor 4 file 1 name \"q\" key \"q\" "
              "float32[2305843009213693952, 2]");
  expectError(text, "float32[2305843009213693952, 2]",
              "key 'q' has an invalid global shape [2305843009213693952, 2]");
}
