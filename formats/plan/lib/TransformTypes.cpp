//===- TransformTypes.cpp -------------------------------------------------===//
#include "TransformTypes.h"

#include "aoa/ir/ShardMetadata.h"

#include <algorithm>

namespace aoa {

namespace {
std::string quote(const std::string &text) { return "'" + text + "'"; }
} // namespace

std::string typeText(DType dtype, llvm::ArrayRef<int64_t> shape) {
  return std::string(dtypeName(dtype)) + formatShape(shape);
}

std::string typeText(const plan::BufferDecl &decl) {
  return typeText(decl.dtype, decl.shape);
}

std::optional<int64_t> checkedBytes(const plan::BufferDecl &decl) {
  std::optional<int64_t> elements = elementCount(decl.shape);
  int64_t bytes = 0;
  if (!elements ||
      __builtin_mul_overflow(
          *elements, static_cast<int64_t>(dtypeSize(decl.dtype)), &bytes))
    return std::nullopt;
  return bytes;
}

bool applyStep(const plan::TransformStep &step, DType &dtype,
               std::vector<int64_t> &shape, std::string &why) {
  using StepKind = plan::TransformStep::Kind;
  switch (step.kind) {
  case StepKind::Permute:
    if (step.permutation.rank() != shape.size()) {
      why = "permutation step " + quote(step.text()) + " has " +
            std::to_string(step.permutation.rank()) +
            (step.permutation.rank() == 1 ? " axis" : " axes") +
            ", but the data has rank " + std::to_string(shape.size()) +
            " here (" + typeText(dtype, shape) + ")";
      return false;
    }
    shape = step.permutation.apply(shape);
    return true;
  case StepKind::Cast:
    // Every pair of dtypes casts (runtime Cast.h).
    dtype = step.dtype;
    return true;
  case StepKind::Reshape:
  case StepKind::Flatten: {
    const std::vector<int64_t> &c = step.canonical;
    std::string name = quote(step.text());
    if (c.size() < 3 ||
        std::any_of(c.begin(), c.end(), [](int64_t e) { return e <= 0; })) {
      why = "step " + name +
            " needs a canonical shape of at least 3 positive extents";
      return false;
    }
    llvm::ArrayRef<int64_t> trailing = llvm::ArrayRef<int64_t>(c).drop_front(2);
    std::optional<int64_t> columns = elementCount(trailing);
    if (!columns) {
      why = "step " + name + " has a canonical shape too large to address";
      return false;
    }
    int64_t blockRows = c[1];
    if (step.kind == StepKind::Reshape) {
      // (rows, columns) -> (rows / c1, c1, r...): whole blocks of c1 rows.
      if (shape.size() != 2 || shape[0] % blockRows != 0 ||
          shape[1] != *columns) {
        why = "step " + name + " turns rows into blocks of " +
              std::to_string(blockRows) + " rows of " +
              std::to_string(*columns) +
              " elements, so the data must be 2-D with a multiple of " +
              std::to_string(blockRows) + " rows and " +
              std::to_string(*columns) + " columns, not " + formatShape(shape);
        return false;
      }
      std::vector<int64_t> out = {shape[0] / blockRows, blockRows};
      out.insert(out.end(), trailing.begin(), trailing.end());
      shape = std::move(out);
      return true;
    }
    // (blocks, c1, r...) -> (blocks * c1, prod(r)).
    if (shape.size() != c.size() ||
        !std::equal(shape.begin() + 1, shape.end(), c.begin() + 1)) {
      std::vector<int64_t> expected(c.begin(), c.end());
      expected[0] = shape.empty() ? 0 : shape[0];
      why = "step " + name + " merges whole blocks of shape " +
            formatShape(llvm::ArrayRef<int64_t>(c).drop_front()) +
            ", so the data must be " + formatShape(expected) + ", not " +
            formatShape(shape);
      return false;
    }
    int64_t rows = 0;
    if (__builtin_mul_overflow(shape[0], blockRows, &rows)) {
      why = "step " + name + " gives a shape too large to address";
      return false;
    }
    shape = {rows, *columns};
    return true;
  }
  }
  return true;
}

} // namespace aoa
