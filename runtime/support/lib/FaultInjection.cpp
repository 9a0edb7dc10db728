//===- FaultInjection.cpp -------------------------------------------------===//
#include "aoa/runtime/support/FaultInjection.h"

#include <array>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <string_view>
#include <unistd.h>

namespace aoa::runtime {

namespace {

constexpr const char *kVariable = "AOA_FAULT_INJECT";
constexpr std::array<const char *, 5> kPointNames = {"read", "write", "fsync",
                                                     "rename", "message"};

/// What AOA_FAULT_INJECT asks for. Trivially destructible, so that the
/// exit-time report never sees it destroyed.
struct FaultSetting {
  enum class Mode { Off, Count, Fail, Kill } mode = Mode::Off;
  FaultPoint point = FaultPoint::Read;
  uint64_t ordinal = 0;
  bool understood = true;
};

bool parsePoint(std::string_view name, FaultPoint &point) {
  for (size_t i = 0; i < kPointNames.size(); ++i)
    if (name == kPointNames[i]) {
      point = FaultPoint(i);
      return true;
    }
  return false;
}

/// "OP:N", "kill:OP:N" or "count"; N counts from 1.
FaultSetting parseSetting(const char *value) {
  FaultSetting setting;
  if (!value || !*value)
    return setting;
  std::string_view text(value);
  if (text == "count") {
    setting.mode = FaultSetting::Mode::Count;
    return setting;
  }
  setting.mode = FaultSetting::Mode::Fail;
  if (text.substr(0, 5) == "kill:") {
    setting.mode = FaultSetting::Mode::Kill;
    text.remove_prefix(5);
  }
  size_t colon = text.find(':');
  std::string_view number =
      colon == std::string_view::npos ? "" : text.substr(colon + 1);
  auto parsed = std::from_chars(number.data(), number.data() + number.size(),
                                setting.ordinal);
  if (colon == std::string_view::npos ||
      !parsePoint(text.substr(0, colon), setting.point) ||
      parsed.ec != std::errc() || parsed.ptr != number.data() + number.size() ||
      setting.ordinal == 0)
    setting = FaultSetting{FaultSetting::Mode::Off, FaultPoint::Read, 0,
                           /*understood=*/false};
  return setting;
}

std::array<std::atomic<uint64_t>, kPointNames.size()> counts;

void reportCounts() {
  std::fprintf(stderr,
               "%s=count: read %llu, write %llu, fsync %llu, "
               "rename %llu, message %llu\n",
               kVariable, (unsigned long long)counts[0].load(),
               (unsigned long long)counts[1].load(),
               (unsigned long long)counts[2].load(),
               (unsigned long long)counts[3].load(),
               (unsigned long long)counts[4].load());
}

/// The setting, read from the environment on first use.
const FaultSetting &setting() {
  static const FaultSetting read = [] {
    FaultSetting parsed = parseSetting(std::getenv(kVariable));
    if (parsed.mode == FaultSetting::Mode::Count)
      std::atexit(reportCounts);
    return parsed;
  }();
  return read;
}

} // namespace

Status checkFaultInjectionSetting() {
  if (setting().understood)
    return Status();
  return Error{std::string(kVariable) + "='" + std::getenv(kVariable) +
                   "' is not understood",
               "use OP:N (the N-th OP fails with EIO), kill:OP:N (SIGKILL "
               "there) or count, with OP one of read, write, fsync, rename, "
               "message and N from 1; or unset it"};
}

bool injectedFault(FaultPoint point) {
  const FaultSetting &active = setting();
  if (active.mode == FaultSetting::Mode::Off)
    return false;
  uint64_t ordinal = counts[size_t(point)].fetch_add(1) + 1;
  if (active.mode == FaultSetting::Mode::Count || point != active.point ||
      ordinal != active.ordinal)
    return false;
  if (active.mode == FaultSetting::Mode::Kill)
    ::kill(::getpid(), SIGKILL);
  std::fprintf(stderr, "%s: %s %llu fails with EIO\n", kVariable,
               kPointNames[size_t(point)], (unsigned long long)ordinal);
  errno = EIO;
  return true;
}

bool injectedFault(FaultPoint point, std::error_code &error) {
  if (!injectedFault(point))
    return false;
  error = std::error_code(EIO, std::generic_category());
  return true;
}

} // namespace aoa::runtime
