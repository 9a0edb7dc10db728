//===- ExpandArrays.cpp - name[a:b] ----------------------------------------===//
#include "aoa/passes/Passes.h"

#include "ExpansionLimits.h"
#include "MacroUtils.h"
#include "aoa/passes/CompilationState.h"

#include <algorithm>

namespace aoa {

namespace {

class ExpandArraysPass : public Pass {
public:
  const char *name() const override { return "expand-arrays"; }
  const char *description() const override {
    return "expand name[a:b] into name_a, ..., name_(b-1)";
  }
  bool run(CompilationState &state) override {
    bool ok = true;
    int64_t written = namesWritten(state);
    for (Statement &statement : state.program.statements) {
      bool hasRange = false;
      for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
        for (const Name &name : *side)
          hasRange |= name.range.has_value();
      if (!hasRange)
        continue;
      if (!checkBounds(state, statement, written)) {
        ok = false;
        continue;
      }
      Statement child = deriveStatement(statement, name());
      child.tags = statement.tags;
      child.attributes = statement.attributes;
      auto expand = [](const std::vector<Name> &names) {
        std::vector<Name> result;
        for (const Name &name : names) {
          if (!name.range) {
            result.push_back(name);
            continue;
          }
          for (int64_t i = name.range->begin; i < name.range->end; ++i) {
            Name element = name;
            element.range.reset();
            element.text = name.text + "_" + std::to_string(i);
            result.push_back(std::move(element));
          }
        }
        return result;
      };
      child.lhs = expand(statement.lhs);
      child.rhs = expand(statement.rhs);
      statement = std::move(child);
    }
    return ok;
  }

private:
  static int64_t length(const Name &name) {
    return name.range ? name.range->end - name.range->begin : 1;
  }

  /// An upper bound of the names the statements write (a range counted by
  /// its length, at most kMaxExpandedNames; a star by the keys it can match).
  static int64_t namesWritten(const CompilationState &state) {
    int64_t count = 0;
    for (const Statement &statement : state.program.statements)
      for (const Name &name :
           state.program.reverse ? statement.lhs : statement.rhs)
        count += name.text.find('*') != std::string::npos
                     ? int64_t(state.destination.names().size())
                     : std::min(length(name), kMaxExpandedNames);
    return count;
  }

  /// Refuses a range that cannot be right, before its names are made: one
  /// longer than kMaxExpandedNames, one that splits a key into parts that do
  /// not divide it, one that reads more names than exist.
  bool checkBounds(CompilationState &state, const Statement &statement,
                   int64_t written) {
    bool reverse = state.program.reverse;
    const std::vector<Name> &read = reverse ? statement.rhs : statement.lhs;
    const std::vector<Name> &write = reverse ? statement.lhs : statement.rhs;
    for (const std::vector<Name> *side : {&statement.lhs, &statement.rhs})
      for (const Name &name : *side)
        if (length(name) > kMaxExpandedNames) {
          reportAt(state, statement, name.range->location,
                   "'" + name.text + "[" + std::to_string(name.range->begin) +
                       ":" + std::to_string(name.range->end) +
                       "]' stands for " + std::to_string(length(name)) +
                       " names, more than the " +
                       std::to_string(kMaxExpandedNames) +
                       " a range may expand to")
              .hint("a range names keys or split parts one by one; no "
                    "tensor has that many");
          return false;
        }
    int64_t parts = 0;
    const Name *range = nullptr;
    for (const Name &name : write) {
      parts += length(name);
      if (name.range && !range)
        range = &name;
    }
    // A split of a key: its parts must divide the key's extent.
    const Attribute *axisAttribute = statement.findAttribute("axis");
    if (range && read.size() == 1 && axisAttribute &&
        axisAttribute->isInteger())
      if (std::optional<TensorType> type = storedKeyType(state.source, read[0]))
        if (std::optional<size_t> axis = normalizedAxis(
                axisAttribute->integer(), type->shape.size())) {
          int64_t extent = type->shape[*axis];
          if (extent % parts != 0) {
            reportAt(state, statement, range->range->location,
                     "cannot split '" + read[0].text +
                         (read[0].transposed ? "^T" : "") + "' (" +
                         printTensorType(*type) + ") into " +
                         std::to_string(parts) + " equal parts along axis " +
                         std::to_string(*axis) + ": " +
                         std::to_string(extent) + " is not a multiple of " +
                         std::to_string(parts))
                .hint("splits are even; split into a divisor of " +
                      std::to_string(extent) + " parts");
            return false;
          }
        }
    // Names read must be source names or written by some statement.
    int64_t readable = int64_t(state.source.names().size()) + written;
    for (const Name &name : read)
      if (name.range && length(name) > readable) {
        reportAt(state, statement, name.range->location,
                 "'" + name.text + "[" + std::to_string(name.range->begin) +
                     ":" + std::to_string(name.range->end) + "]' reads " +
                     std::to_string(length(name)) + " names, but there are "
                     "at most " + std::to_string(readable) + ": " +
                     std::to_string(state.source.names().size()) + " in " +
                     state.source.describe() + " and " +
                     std::to_string(written) + " written by statements")
            .hint("each name of a range must be a source key or the result "
                  "of a statement");
        return false;
      }
    return true;
  }

public:
  void print(const CompilationState &state, std::ostream &os) const override {
    printStatements(state, os);
  }
};

} // namespace

std::unique_ptr<Pass> createExpandArraysPass() {
  return std::make_unique<ExpandArraysPass>();
}

} // namespace aoa
