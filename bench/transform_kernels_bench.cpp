//===- transform_kernels_bench.cpp - CPU transforms against memcpy --------===//
//
// Google Benchmark of the runtime's CPU transforms on one thread, each next
// to a memcpy of the same source bytes measured in the same run (issue 16,
// item 2; results and the ratios in bench/RESULTS.md, made by
// bench/kernels_bench.sh):
//  - casts (castElements) of 4096 x 11008 elements between the float
//    dtypes a conversion meets (float32, bfloat16, float16, FP8), both ways,
//    of random bit patterns and (castWeights) of weights-like values;
//  - 2-D transposes (copyRegion through [1, 0]) of a [4096, 11008] bfloat16
//    or float32 tensor, alone and fused with a cast (to float32, bfloat16,
//    float8_e4m3fn);
//  - (castIntegers) casts from and to the integer dtypes and bool, of small
//    integers (0 to 100, which every integer dtype holds);
//  - a same-dtype region copy of half the columns (a tensor-parallel split);
//  - the fused pack and unpack: copyRegion of the column half of a
//    bfloat16 tensor into a dense float32 one (a strided sub-box packed
//    into a contiguous buffer and cast, in one pass), and of a dense
//    bfloat16 tensor into the column half of a float32 one (unpacked).
// Bytes per second count the source's bytes, as for the memcpy; the
// `bytes_moved` counter counts the bytes read and written (source and
// destination; twice the copied bytes for the memcpy).
//
//===----------------------------------------------------------------------===//
#include "aoa/ir/Box.h"
#include "aoa/ir/DType.h"
#include "aoa/ir/Permutation.h"
#include "aoa/runtime/transforms/Cast.h"
#include "aoa/runtime/transforms/RegionCopy.h"

#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;

namespace {

constexpr int64_t kRows = 4096;
constexpr int64_t kCols = 11008;
constexpr size_t kElements = size_t(kRows) * size_t(kCols);

/// Sets `bytes_moved` to `bytes` per iteration, as a rate.
void countBytesMoved(benchmark::State &state, size_t bytes) {
  state.counters["bytes_moved"] = benchmark::Counter(
      double(bytes), benchmark::Counter::kIsIterationInvariantRate,
      benchmark::Counter::kIs1024);
}

/// Random bytes that are finite values of every float dtype used here
/// (bfloat16, float16 and FP8 patterns below 0x7b, float32 from them).
std::vector<unsigned char> randomTensor(DType dtype) {
  std::vector<unsigned char> bytes(kElements * dtypeSize(dtype));
  std::mt19937_64 rng(1);
  uint64_t word = 0;
  for (size_t i = 0; i < bytes.size(); ++i) {
    // Eight bytes from each draw: the setup, repeated for every
    // repetition, then takes a fraction of the kernels' time.
    if (i % 8 == 0)
      word = rng();
    bytes[i] =
        static_cast<unsigned char>(((word >> (8 * (i % 8))) & 0xFF) % 0x7b);
  }
  return bytes;
}

void memcpyOf(benchmark::State &state, DType dtype) {
  std::vector<unsigned char> src = randomTensor(dtype);
  std::vector<unsigned char> dst(src.size());
  for (auto _ : state) {
    std::memcpy(dst.data(), src.data(), src.size());
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(src.size()));
  countBytesMoved(state, 2 * src.size());
}

/// Runs `kernel` (returning a Status) once per iteration of `state`,
/// stopping at an error; `out` is what it writes (kept from the optimizer).
template <typename Kernel>
void timeKernel(benchmark::State &state, unsigned char *out, Kernel kernel) {
  for (auto _ : state) {
    Status status = kernel();
    if (!status.ok()) {
      state.SkipWithError(status.error().message.c_str());
      break;
    }
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
}

/// Times castElements of `src` (kElements of `from`) into `to`.
void castLoop(benchmark::State &state, DType from,
              const std::vector<unsigned char> &src, DType to) {
  std::vector<unsigned char> dst(kElements * dtypeSize(to));
  timeKernel(state, dst.data(), [&] {
    return castElements(from, src.data(), to, dst.data(), kElements);
  });
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(src.size()));
  countBytesMoved(state, src.size() + dst.size());
}

void cast(benchmark::State &state, DType from, DType to) {
  castLoop(state, from, randomTensor(from), to);
}

/// Weights-like values: normal with a standard deviation of 0.02 (as in
/// LLM checkpoints), as `dtype`. Unlike randomTensor's bit patterns, spread
/// evenly over the exponents, few of them are subnormal in a 16- or 8-bit
/// format, which is what the 16-bit-lane conversions fall back on.
std::vector<unsigned char> weightsTensor(DType dtype) {
  std::vector<float> values(kElements);
  std::mt19937_64 rng(2);
  std::normal_distribution<float> normal(0.0f, 0.02f);
  for (float &value : values)
    value = normal(rng);
  std::vector<unsigned char> bytes(kElements * dtypeSize(dtype));
  if (!castElements(DType::F32, values.data(), dtype, bytes.data(), kElements))
    bytes.clear();
  return bytes;
}

void castWeights(benchmark::State &state, DType from, DType to) {
  castLoop(state, from, weightsTensor(from), to);
}

/// Integers from 0 to 100 (token ids, masks, quantized values: in the
/// range of every integer dtype, so that no checked cast fails), as
/// `dtype`.
std::vector<unsigned char> smallIntegersTensor(DType dtype) {
  std::vector<int32_t> values(kElements);
  std::mt19937_64 rng(3);
  uint64_t word = 0;
  for (size_t i = 0; i < kElements; ++i) {
    if (i % 8 == 0)
      word = rng();
    values[i] = int32_t(((word >> (8 * (i % 8))) & 0xFF) % 101);
  }
  std::vector<unsigned char> bytes(kElements * dtypeSize(dtype));
  if (!castElements(DType::I32, values.data(), dtype, bytes.data(), kElements))
    bytes.clear();
  return bytes;
}

void castIntegers(benchmark::State &state, DType from, DType to) {
  castLoop(state, from, smallIntegersTensor(from), to);
}

/// copyRegion of `region` of a [kRows, kCols] `from` tensor through
/// `permutation` into a dense `to` tensor of the permuted region's shape.
void regionCopy(benchmark::State &state, DType from, DType to, Box region,
                Permutation permutation) {
  std::vector<unsigned char> src = randomTensor(from);
  std::vector<int64_t> dstShape = permutation.apply(region.shape());
  std::vector<unsigned char> dst(size_t(region.volume()) * dtypeSize(to));
  TensorView srcView(src.data(), src.size(), from, {kRows, kCols});
  MutableTensorView dstView(dst.data(), dst.size(), to, dstShape);
  Box whole(std::vector<int64_t>(dstShape.size(), 0), dstShape);
  timeKernel(state, dst.data(), [&] {
    return copyRegion(srcView, region, dstView, whole, permutation);
  });
  state.SetBytesProcessed(int64_t(state.iterations()) * region.volume() *
                          int64_t(dtypeSize(from)));
  countBytesMoved(state,
                  size_t(region.volume()) * dtypeSize(from) + dst.size());
}

/// copyRegion of the column half [:, 0:kCols / 2] of a [kRows, kCols] `from`
/// tensor into a dense `to` tensor (a pack).
void packHalfColumns(benchmark::State &state, DType from, DType to) {
  regionCopy(state, from, to, Box({0, 0}, {kRows, kCols / 2}),
             Permutation::identity(2));
}

/// copyRegion of a dense [kRows, kCols / 2] `from` tensor into the column
/// half [:, 0:kCols / 2] of a [kRows, kCols] `to` tensor (an unpack).
void unpackHalfColumns(benchmark::State &state, DType from, DType to) {
  std::vector<unsigned char> src = randomTensor(from);
  src.resize(src.size() / 2);
  std::vector<unsigned char> dst(kElements * dtypeSize(to));
  Box half({0, 0}, {kRows, kCols / 2});
  TensorView srcView(src.data(), src.size(), from, {kRows, kCols / 2});
  MutableTensorView dstView(dst.data(), dst.size(), to, {kRows, kCols});
  timeKernel(state, dst.data(), [&] {
    return copyRegion(srcView, half, dstView, half);
  });
  state.SetBytesProcessed(int64_t(state.iterations()) * int64_t(src.size()));
  countBytesMoved(state, src.size() + size_t(half.volume()) * dtypeSize(to));
}

Box wholeTensor() { return Box({0, 0}, {kRows, kCols}); }

} // namespace

BENCHMARK_CAPTURE(memcpyOf, float32, DType::F32)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(memcpyOf, bfloat16, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float32_to_bfloat16, DType::F32, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, bfloat16_to_float32, DType::BF16, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float32_to_float16, DType::F32, DType::F16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float16_to_float32, DType::F16, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, bfloat16_to_float16, DType::BF16, DType::F16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float16_to_bfloat16, DType::F16, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float32_to_float8_e4m3fn, DType::F32, DType::F8E4M3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float8_e4m3fn_to_float32, DType::F8E4M3, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float32_to_float8_e5m2, DType::F32, DType::F8E5M2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float8_e5m2_to_float32, DType::F8E5M2, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, bfloat16_to_float8_e4m3fn, DType::BF16, DType::F8E4M3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float8_e4m3fn_to_bfloat16, DType::F8E4M3, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, bfloat16_to_float8_e5m2, DType::BF16, DType::F8E5M2)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float8_e5m2_to_bfloat16, DType::F8E5M2, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float16_to_float8_e4m3fn, DType::F16, DType::F8E4M3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(cast, float8_e4m3fn_to_float16, DType::F8E4M3, DType::F16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castWeights, bfloat16_to_float16, DType::BF16, DType::F16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castWeights, float16_to_bfloat16, DType::F16, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castWeights, bfloat16_to_float8_e4m3fn, DType::BF16,
                  DType::F8E4M3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castWeights, float16_to_float8_e4m3fn, DType::F16,
                  DType::F8E4M3)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castWeights, float32_to_float16, DType::F32, DType::F16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castWeights, float16_to_float32, DType::F16, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, int64_to_int32, DType::I64, DType::I32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, int32_to_int64, DType::I32, DType::I64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, int32_to_int8, DType::I32, DType::I8)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, uint8_to_bool, DType::U8, DType::Bool)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, int32_to_float32, DType::I32, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, float32_to_int32, DType::F32, DType::I32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, int8_to_bfloat16, DType::I8, DType::BF16)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, bool_to_float32, DType::Bool, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, bfloat16_to_int64, DType::BF16, DType::I64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(castIntegers, float32_to_int64, DType::F32, DType::I64)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(regionCopy, transpose_bfloat16, DType::BF16, DType::BF16,
                  wholeTensor(), Permutation::reversed(2))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(regionCopy, transpose_float32, DType::F32, DType::F32,
                  wholeTensor(), Permutation::reversed(2))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(regionCopy, transpose_bfloat16_to_float32, DType::BF16,
                  DType::F32, wholeTensor(), Permutation::reversed(2))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(regionCopy, transpose_float32_to_bfloat16, DType::F32,
                  DType::BF16, wholeTensor(), Permutation::reversed(2))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(regionCopy, transpose_bfloat16_to_float8_e4m3fn, DType::BF16,
                  DType::F8E4M3, wholeTensor(), Permutation::reversed(2))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(regionCopy, half_columns_bfloat16, DType::BF16, DType::BF16,
                  Box({0, 0}, {kRows, kCols / 2}), Permutation::identity(2))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(packHalfColumns, bfloat16_to_float32, DType::BF16, DType::F32)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(unpackHalfColumns, bfloat16_to_float32, DType::BF16,
                  DType::F32)
    ->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
