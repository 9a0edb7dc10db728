//===- ElementValue.h - One stored element as a number or text --*- C++ -*-===//
//
// Reports about tensor data (two checkpoints that differ, replicas that
// disagree) show the elements involved. Floating elements are shown as the
// shortest decimal that reads back as the same float (or double), so two
// values that differ in the last bit never print alike; a NaN also shows its
// bits, since NaNs are compared bit for bit.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_ELEMENTVALUE_H
#define AOA_RUNTIME_TRANSFORMS_ELEMENTVALUE_H

#include "aoa/ir/DType.h"

#include <string>

namespace aoa::runtime {

/// The element at `element` (dtypeSize(dtype) bytes, little-endian, any
/// alignment) as a double: exact for floating dtypes and for integers up to
/// 2^53 in magnitude; bool is 0 or 1 (any non-zero byte is 1); NaN for the
/// opaque dtypes (float8_e4m3fnuz, float8_e5m2fnuz, complex64).
double elementAsDouble(DType dtype, const void *element);

/// The element in decimal: "-3", "0.1", "-0", "inf", "nan (bits 0x7fc00001)";
/// a bool is "false" or "true" (another byte value shows as "true (0x02)");
/// an opaque dtype shows its bytes in memory order, "0x0000803f00000000".
std::string formatElement(DType dtype, const void *element);

} // namespace aoa::runtime

#endif // AOA_RUNTIME_TRANSFORMS_ELEMENTVALUE_H
