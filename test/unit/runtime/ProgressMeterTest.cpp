//===- ProgressMeterTest.cpp - What aoa-run shows while it works ----------===//
#include "aoa/runtime/exec/ProgressMeter.h"

#include <gtest/gtest.h>

#include <cstdio>

namespace aoa::runtime {
namespace {

TEST(ProgressMeter, LinesShowBytesThroughputAndEta) {
  // 1 GiB of 4 GiB after 2 s: 512 MiB/s, 3 GiB left -> 6 s.
  EXPECT_EQ(ProgressMeter::formatLine("aoa-run", uint64_t(1) << 30,
                                      uint64_t(4) << 30, 2.0, false),
            "aoa-run:  25.0%  1.00 GiB of 4.00 GiB  512.00 MiB/s  ETA 0:06");
  EXPECT_EQ(ProgressMeter::formatLine("aoa-run", uint64_t(1) << 30,
                                      uint64_t(4) << 30, 2.0, true),
            "aoa-run: [######..................]  25.0%  1.00 GiB of "
            "4.00 GiB  512.00 MiB/s  ETA 0:06");
  // Done: the elapsed time instead of an ETA; hours when it is long.
  EXPECT_EQ(ProgressMeter::formatLine("x", 100, 100, 3725.0, false),
            "x: 100.0%  100 B of 100 B  0 B/s  in 1:02:05");
  // Nothing to do yet is not a division by zero.
  EXPECT_EQ(ProgressMeter::formatLine("x", 0, 0, 0.0, false),
            "x: 100.0%  0 B of 0 B  0 B/s  in 0:00");
  EXPECT_EQ(ProgressMeter::formatLine("x", 0, 10, 0.0, false),
            "x:   0.0%  0 B of 10 B  0 B/s  ETA --:--");
}

TEST(ProgressMeter, PlainModePrintsAFinalLine) {
  std::FILE *out = std::tmpfile();
  ASSERT_NE(out, nullptr);
  std::atomic<uint64_t> done{0};
  {
    ProgressMeter meter(out, false);
    meter.start("run", 1000, done);
    done = 1000;
    meter.stop();
    meter.stop(); // idempotent
  }
  std::rewind(out);
  char text[256] = {};
  size_t n = std::fread(text, 1, sizeof(text) - 1, out);
  std::fclose(out);
  std::string printed(text, n);
  EXPECT_NE(printed.find("run: 100.0%  1000 B of 1000 B"), std::string::npos)
      << printed;
  EXPECT_EQ(printed.back(), '\n');
}

} // namespace
} // namespace aoa::runtime
