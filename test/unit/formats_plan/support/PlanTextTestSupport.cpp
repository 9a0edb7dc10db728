//===- PlanTextTestSupport.cpp - Plans and checks for the plan tests ------===//
//
// The sample plan is built field by field, so that the writer's text of it
// (test::kSamplePlanText) is checked against a plan that no reader made.
//
//===----------------------------------------------------------------------===//
#include "PlanTextTestSupport.h"

#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/formats/plan/PlanWriter.h"

#include <gtest/gtest.h>

namespace aoa::test {

using plan::Opcode;

//===----------------------------------------------------------------------===//
// Building plans
//===----------------------------------------------------------------------===//

Box box(std::initializer_list<Interval> dims) {
  return Box(llvm::ArrayRef<Interval>(dims.begin(), dims.end()));
}

plan::StoredTensor tensor(uint32_t file, std::string name, DType dtype,
                          std::vector<int64_t> shape, Box held,
                          std::optional<FlatElementRange> flat) {
  plan::StoredTensor t;
  t.file = file;
  t.key = name;
  t.name = std::move(name);
  t.dtype = dtype;
  t.globalShape.assign(shape.begin(), shape.end());
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
  in.buffers.assign(buffers.begin(), buffers.end());
  return in;
}

plan::Instruction copy(plan::Plan &plan, uint32_t buffer, uint32_t input,
                       const std::vector<plan::TransformStep> &steps) {
  plan::Instruction in;
  in.opcode = Opcode::Copy;
  in.buffer = buffer;
  in.input = input;
  in.transform = plan.transforms.intern(steps);
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
  plan::BufferDecl d;
  d.dtype = dtype;
  d.shape.assign(shape.begin(), shape.end());
  return d;
}

/// Two ranks: a weight transposed and cast across ranks, a flattened
/// optimizer state moved between ranks, a reshape and a flatten, an empty
/// round, added keys (one that needs escapes).
plan::Plan samplePlan() {
  plan::Plan p;
  p.ranks = 2;
  p.memoryBudget = 1 << 20;
  p.sourceFiles = {{"src/rank0.safetensors", 0, std::nullopt},
                   {"src/rank1.safetensors", 1, std::nullopt}};
  p.destinationFiles = {{"model-00001.safetensors", 0, std::nullopt},
                        {"opt-rank0.safetensors", 0, std::nullopt},
                        {"opt-rank1.safetensors", 1, std::nullopt},
                        {"model-00002.safetensors", 1, std::nullopt}};
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
      copy(p, 4, 0, {permute({1, 0}), cast(f32)}),
      copy(p, 5, 2, {permute({1, 0}), cast(f32)}),
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
      copy(p, 4, 2, {reshape(false, {3, 2, 2})}),
      write(2, box({{2, 4}, {0, 8}}), 3),
      write(3, box({{0, 3}, {0, 2}, {0, 2}}), 4),
  };
  plan::Round flattenRound;
  flattenRound.buffers = {decl(f32, {2, 2, 3}), decl(f32, {4, 3})};
  flattenRound.instructions = {
      read(0, 5, box({{0, 2}, {0, 2}, {0, 3}})),
      copy(p, 1, 0, {reshape(true, {2, 2, 3})}),
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

namespace {

std::string stepText(const std::vector<plan::TransformStep> &steps) {
  std::string out;
  for (const plan::TransformStep &s : steps)
    out += s.text() + ";";
  return out;
}

} // namespace

/// The first difference between two plans in the fields the format carries
/// (an instruction's fields that its opcode does not use are ignored), or
/// an empty string.
std::string difference(const plan::Plan &a, const plan::Plan &b) {
  if (a.ranks != b.ranks || a.memoryBudget != b.memoryBudget ||
      a.destinationFormat != b.destinationFormat ||
      a.sourceAccess != b.sourceAccess)
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
                   stepText(a.steps(x)) == stepText(b.steps(y));
            for (size_t s = 0; same && s < a.steps(x).size(); ++s)
              same = a.steps(x)[s].kind == b.steps(y)[s].kind;
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

/// `plan.txt:LINE:COL` of the `occurrence`-th (0-based) `needle` in `text`.
std::string placeOf(const std::string &text, const std::string &needle,
                    int occurrence) {
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
                 const std::string &message, int occurrence) {
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
                     int occurrence) {
  SCOPED_TRACE(from + " -> " + to);
  expectError(edit(sampleText(), from, to), needle, message, occurrence);
}

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
                                const std::string &message, int occurrence) {
  SCOPED_TRACE(from + " -> " + to);
  expectError(edit(kHuggingFacePlan, from, to), needle, message, occurrence);
}

std::vector<std::string> verifyMessages(const plan::Plan &p) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  std::vector<std::string> messages;
  diags.setHandler([&](const Diagnostic &d) { messages.push_back(d.message); });
  verifyPlan(p, diags);
  return messages;
}

} // namespace aoa::test
