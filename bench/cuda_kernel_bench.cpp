//===- cuda_kernel_bench.cpp - Bandwidth of the strided-copy kernels ------===//
//
// aoa-bench-cuda-kernels [--size=N] [--repetitions=R] [--launches=L]
//
// Measures, on GPU 0, the copies the nccl backend runs as kernels
// (Device::copy, lib/cuda/StridedCopyKernel.cu) on an N x N matrix
// (default 8192 x 8192), each against a device-to-device memcpy
// (Device::copyBytes) of the copy's source bytes in the same run:
//
//   contiguous copy     bf16 -> bf16, the whole matrix (a memcpy itself)
//   column half         bf16 -> bf16, columns [0, N/2) of every row (a
//                       tensor-parallel split: the kernel moving 16-byte words)
//   cast                bf16 -> f32 and f32 -> bf16
//   transpose           "[1, 0]" of bf16 and of f32 (tiled through shared
//                       memory)
//   transpose + cast    "[1, 0]" with bf16 -> f32 and f32 -> bf16, fused into
//                       one kernel
//
// Each repetition queues L launches on one stream and waits for them; the
// time per launch is the wall time over L. Bandwidth counts the bytes read
// plus the bytes written (a memcpy of B bytes moves 2B), so the kernel's
// and the memcpy's GB/s compare directly; the table gives the median and
// the best of R repetitions, kernel and memcpy alternating. Without a GPU
// it prints "no CUDA GPU: ..." and exits 0.
//
//===----------------------------------------------------------------------===//
#include "Device.h"
#include "aoa/ir/Box.h"
#include "aoa/ir/Permutation.h"
#include "aoa/runtime/transforms/StridedCopy.h"
#include "aoa/runtime/transforms/TensorView.h"

#include "llvm/Support/CommandLine.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <vector>

using namespace aoa;
using namespace aoa::runtime;
namespace cl = llvm::cl;

namespace {

cl::OptionCategory category("aoa-bench-cuda-kernels options");
cl::opt<unsigned> size("size", cl::init(8192),
                       cl::desc("The matrix is size x size elements"),
                       cl::cat(category));
cl::opt<unsigned> repetitions("repetitions", cl::init(10),
                              cl::desc("Timed repetitions per case"),
                              cl::cat(category));
cl::opt<unsigned> launches("launches", cl::init(20),
                           cl::desc("Launches queued per repetition"),
                           cl::cat(category));

struct Case {
  const char *name;
  DType from;
  DType to;
  bool transpose;
  bool columnHalf;
};

/// Seconds per launch of `queue` (which queues one launch on stream 0):
/// the wall time of `launches` of them, once all have run.
Expected<double> timeLaunches(Device &device,
                              const std::function<Status()> &queue) {
  auto start = std::chrono::steady_clock::now();
  for (unsigned i = 0; i < launches; ++i)
    if (Status status = queue(); !status)
      return status.error();
  if (Status status = device.synchronize(0); !status)
    return status.error();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
             .count() /
         launches;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

int fail(const Error &error) {
  std::fprintf(stderr, "error: %s\n", error.toString().c_str());
  return 1;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::ParseCommandLineOptions(
      argc, argv, "Measures the strided-copy kernels against a memcpy\n");
  std::string why;
  if (cudaDeviceCount(&why) == 0) {
    std::printf("no CUDA GPU: %s\n", why.c_str());
    return 0;
  }
  Expected<std::unique_ptr<Device>> opened = openCudaDevice(0);
  if (!opened)
    return fail(opened.error());
  Device &device = **opened;

  const int64_t n = std::max(2u, unsigned(size));
  const uint64_t elements = uint64_t(n) * uint64_t(n);
  const uint64_t largest = elements * 4; // float32
  Expected<DeviceMemory> source = device.allocate(largest);
  if (!source)
    return fail(source.error());
  Expected<DeviceMemory> target = device.allocate(largest);
  if (!target)
    return fail(target.error());
  // Finite numbers in both formats (the conversions are branch-free, so
  // the values do not change the timing; NaNs would not either).
  std::vector<uint32_t> pattern(elements);
  for (uint64_t i = 0; i < elements; ++i)
    pattern[i] = 0x3F800000u + uint32_t((i * 2654435761u) & 0x007FFFFFu);
  if (Status status = device.upload(0, source->data(), pattern.data(), largest);
      !status)
    return fail(status.error());
  if (Status status = device.synchronize(0); !status)
    return fail(status.error());

  std::printf("%s; %lld x %lld; median and best of %u repetitions of %u "
              "launches; GB/s = (bytes read + bytes written) / time\n\n",
              device.name().c_str(), (long long)n, (long long)n,
              unsigned(repetitions), unsigned(launches));
  std::printf("%-26s %10s | %9s %9s %9s | %9s %9s %9s | %7s\n", "case",
              "moved MiB", "ms", "GB/s", "best GB/s", "memcpy ms", "GB/s",
              "best GB/s", "ratio");

  const Case cases[] = {
      {"contiguous copy bf16", DType::BF16, DType::BF16, false, false},
      {"column half bf16", DType::BF16, DType::BF16, false, true},
      {"cast bf16 -> f32", DType::BF16, DType::F32, false, false},
      {"cast f32 -> bf16", DType::F32, DType::BF16, false, false},
      {"transpose [1, 0] bf16", DType::BF16, DType::BF16, true, false},
      {"transpose [1, 0] f32", DType::F32, DType::F32, true, false},
      {"transpose + cast bf16->f32", DType::BF16, DType::F32, true, false},
      {"transpose + cast f32->bf16", DType::F32, DType::BF16, true, false},
  };
  for (const Case &c : cases) {
    int64_t columns = c.columnHalf ? n / 2 : n;
    Box region({0, 0}, {n, columns});
    Permutation permutation =
        c.transpose ? Permutation::reversed(2) : Permutation::identity(2);
    std::vector<int64_t> outShape = permutation.apply(region.shape());
    Expected<StridedCopy> copy = describeRegionCopy(
        TensorView(source->data(), elements * dtypeSize(c.from), c.from,
                   {n, n}),
        region, MutableTensorView(target->data(), largest, c.to, outShape),
        Box::fromShape(outShape), permutation);
    if (!copy)
      return fail(copy.error());
    uint64_t readBytes = copy->elementCount() * dtypeSize(c.from);
    uint64_t writtenBytes = copy->elementCount() * dtypeSize(c.to);
    uint64_t moved = readBytes + writtenBytes;

    auto kernel = [&] { return device.copy(0, *copy); };
    auto plainCopy = [&] {
      return device.copyBytes(0, target->data(), source->data(), readBytes);
    };
    // Warm up both (first launches load modules and touch the pages).
    for (const std::function<Status()> &queue :
         {std::function<Status()>(kernel), std::function<Status()>(plainCopy)})
      if (Expected<double> seconds = timeLaunches(device, queue); !seconds)
        return fail(seconds.error());

    std::vector<double> kernelTimes, memcpyTimes;
    for (unsigned r = 0; r < std::max(1u, unsigned(repetitions)); ++r) {
      Expected<double> kernelTime = timeLaunches(device, kernel);
      if (!kernelTime)
        return fail(kernelTime.error());
      Expected<double> memcpyTime = timeLaunches(device, plainCopy);
      if (!memcpyTime)
        return fail(memcpyTime.error());
      kernelTimes.push_back(*kernelTime);
      memcpyTimes.push_back(*memcpyTime);
    }
    double kernelMedian = median(kernelTimes);
    double kernelBest =
        *std::min_element(kernelTimes.begin(), kernelTimes.end());
    double memcpyMedian = median(memcpyTimes);
    double memcpyBest =
        *std::min_element(memcpyTimes.begin(), memcpyTimes.end());
    double kernelRate = double(moved) / kernelMedian / 1e9;
    double memcpyRate = 2.0 * double(readBytes) / memcpyMedian / 1e9;
    std::printf(
        "%-26s %10.1f | %9.3f %9.1f %9.1f | %9.3f %9.1f %9.1f | %7.2f\n",
        c.name, double(moved) / (1 << 20), kernelMedian * 1e3, kernelRate,
        double(moved) / kernelBest / 1e9, memcpyMedian * 1e3, memcpyRate,
        2.0 * double(readBytes) / memcpyBest / 1e9, kernelRate / memcpyRate);
  }
  return 0;
}
