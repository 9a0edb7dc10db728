//===- PlanTextTestSupport.h - Plans for the plan tests ---------*- C++ -*-===//
//
// What the plan text tests share: builders for plans made by hand (the
// sample plan of docs/plan-format.md among them), the first difference
// between two plans, and reading a plan text while keeping its diagnostics,
// with the checks that an edit of a sample is refused at the right place.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_FORMATS_PLAN_SUPPORT_PLANTEXTTESTSUPPORT_H
#define AOA_TEST_UNIT_FORMATS_PLAN_SUPPORT_PLANTEXTTESTSUPPORT_H

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/ir/Plan.h"

#include "CapturedDiagnostics.h"

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace aoa::test {

//===----------------------------------------------------------------------===//
// Building plans
//===----------------------------------------------------------------------===//

Box box(std::initializer_list<Interval> dims);
plan::StoredTensor tensor(uint32_t file, std::string name, DType dtype,
                          std::vector<int64_t> shape, Box held,
                          std::optional<FlatElementRange> flat = {});
plan::Instruction read(uint32_t buffer, uint32_t tensor, Box region);
plan::Instruction exchange(plan::Opcode opcode, uint32_t peer,
                           std::vector<uint32_t> buffers);
/// A copy whose steps are interned into `plan`'s transforms.
plan::Instruction copy(plan::Plan &plan, uint32_t buffer, uint32_t input,
                       const std::vector<plan::TransformStep> &steps);
plan::Instruction write(uint32_t tensor, Box region, uint32_t buffer);
plan::TransformStep permute(std::vector<int64_t> axes);
plan::TransformStep cast(DType dtype);
plan::TransformStep reshape(bool flatten, std::vector<int64_t> canonical);
plan::BufferDecl decl(DType dtype, std::vector<int64_t> shape);

/// Two ranks: a weight transposed and cast across ranks, a flattened
/// optimizer state moved between ranks, a reshape and a flatten, an empty
/// round, added keys (one that needs escapes).
plan::Plan samplePlan();

/// The sample plan's text, as the writer prints it.
const std::string &sampleText();

/// A one-rank plan with a Hugging Face destination and copied files.
extern const char *const kHuggingFacePlan;

//===----------------------------------------------------------------------===//
// Comparing plans
//===----------------------------------------------------------------------===//

/// The first difference between two plans in the fields the format carries
/// (an instruction's fields that its opcode does not use are ignored), or
/// an empty string.
std::string difference(const plan::Plan &a, const plan::Plan &b);

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
                    int occurrence = 0);

/// `text` with the single occurrence of `from` replaced by `to`.
std::string edit(const std::string &text, const std::string &from,
                 const std::string &to);

/// Reads `text` and expects its first diagnostic to be an error at the
/// place of `needle` (its `occurrence`-th match) whose message contains
/// `message`.
void expectError(const std::string &text, const std::string &needle,
                 const std::string &message, int occurrence = 0);

/// An edit of the sample text that must fail at `needle` in the edited text.
void expectEditError(const std::string &from, const std::string &to,
                     const std::string &needle, const std::string &message,
                     int occurrence = 0);

/// The same for an edit of kHuggingFacePlan.
void expectHuggingFaceEditError(const std::string &from, const std::string &to,
                                const std::string &needle,
                                const std::string &message, int occurrence = 0);

/// The messages of verifyPlan on an in-memory plan, in order.
std::vector<std::string> verifyMessages(const plan::Plan &p);

} // namespace aoa::test

#endif // AOA_TEST_UNIT_FORMATS_PLAN_SUPPORT_PLANTEXTTESTSUPPORT_H
