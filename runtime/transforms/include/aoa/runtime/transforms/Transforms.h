//===- Transforms.h - The runtime's CPU transforms --------------*- C++ -*-===//
//
// One include for everything the executor needs to transform tensor data on
// the CPU:
//  - FloatConversion.h: single-value conversions between float formats;
//  - Cast.h: bulk casts of contiguous arrays;
//  - TensorView.h: caller-owned memory seen as a row-major tensor;
//  - RegionCopy.h: strided box copies with a permutation and a cast fused in.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_RUNTIME_TRANSFORMS_TRANSFORMS_H
#define AOA_RUNTIME_TRANSFORMS_TRANSFORMS_H

#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/FloatConversion.h"
#include "aoa/runtime/transforms/RegionCopy.h"
#include "aoa/runtime/transforms/TensorView.h"

#endif // AOA_RUNTIME_TRANSFORMS_TRANSFORMS_H
