//===- PlanTextSyntax.h - Spellings shared by the plan writer and reader --===//
//
// The words of the plan's text form (docs/plan-format.md) live here once, so
// the writer and the reader cannot drift apart.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_FORMATS_PLAN_LIB_PLANTEXTSYNTAX_H
#define AOA_FORMATS_PLAN_LIB_PLANTEXTSYNTAX_H

#include "aoa/ir/Plan.h"

#include <string>
#include <string_view>

namespace aoa {
namespace plantext {

// Line keywords, in the order their lines appear in a plan.
constexpr std::string_view kHeader = "aoa-plan";
constexpr std::string_view kRanks = "ranks";
constexpr std::string_view kMemoryBudget = "memory-budget";
constexpr std::string_view kDestinationFormat = "destination-format";
constexpr std::string_view kSourceAccess = "source-access";
constexpr std::string_view kSourceFile = "source-file";
constexpr std::string_view kDestinationFile = "destination-file";
constexpr std::string_view kSourceTensor = "source-tensor";
constexpr std::string_view kDestinationTensor = "destination-tensor";
constexpr std::string_view kAddedKey = "added-key";
constexpr std::string_view kCopyFile = "copy-file";
constexpr std::string_view kRank = "rank";
constexpr std::string_view kRound = "round";

// The values of `destination-format`.
constexpr std::string_view kFormatAoa = "aoa";
constexpr std::string_view kFormatHuggingFace = "huggingface";

// The values of `source-access`.
constexpr std::string_view kAccessOwner = "owner";
constexpr std::string_view kAccessShared = "shared";

// Field labels inside file and tensor lines.
constexpr std::string_view kFieldRank = "rank";
constexpr std::string_view kFieldFile = "file";
constexpr std::string_view kFieldName = "name";
constexpr std::string_view kFieldKey = "key";
constexpr std::string_view kFieldBox = "box";
constexpr std::string_view kFieldFlat = "flat";
constexpr std::string_view kFieldSize = "size"; ///< a source file's bytes
constexpr std::string_view kFieldData = "data"; ///< a source tensor's bytes

// Instruction operands that name a stored tensor.
constexpr std::string_view kSourceTensorRef = "src";
constexpr std::string_view kDestinationTensorRef = "dst";

/// The opcode's spelling: read, send, recv, copy, write.
std::string_view opcodeName(plan::Opcode opcode);

/// Appends `text` as a JSON string literal: `"` and `\` escaped, control
/// characters as \n, \t, \r, \b, \f or \u00XX; other bytes (UTF-8) as they
/// are.
void appendQuoted(std::string &out, std::string_view text);

} // namespace plantext
} // namespace aoa

#endif // AOA_FORMATS_PLAN_LIB_PLANTEXTSYNTAX_H
