//===- ProgressMeter.cpp --------------------------------------------------===//
#include "aoa/runtime/exec/ProgressMeter.h"

#include "aoa/ir/ByteSize.h"

namespace aoa::runtime {

namespace {

std::string formatDuration(double seconds) {
  if (seconds < 0 || seconds > 1e7)
    return "--:--";
  auto total = uint64_t(seconds + 0.5);
  char text[32];
  if (total >= 3600)
    std::snprintf(text, sizeof(text), "%llu:%02llu:%02llu",
                  (unsigned long long)(total / 3600),
                  (unsigned long long)(total / 60 % 60),
                  (unsigned long long)(total % 60));
  else
    std::snprintf(text, sizeof(text), "%llu:%02llu",
                  (unsigned long long)(total / 60),
                  (unsigned long long)(total % 60));
  return text;
}

} // namespace

std::string ProgressMeter::formatLine(const std::string &label, uint64_t done,
                                      uint64_t total, double seconds,
                                      bool bar) {
  double fraction = total ? double(done) / double(total) : 1.0;
  double rate = seconds > 0 ? double(done) / seconds : 0;
  std::string line = label + ": ";
  if (bar) {
    constexpr int kWidth = 24;
    int filled = int(fraction * kWidth);
    line += "[" + std::string(size_t(filled), '#') +
            std::string(size_t(kWidth - filled), '.') + "] ";
  }
  char percent[16];
  std::snprintf(percent, sizeof(percent), "%5.1f%%", fraction * 100);
  line += std::string(percent) + "  " + formatByteSize(int64_t(done)) + " of " +
          formatByteSize(int64_t(total)) + "  " +
          formatByteSize(int64_t(rate)) + "/s";
  if (done < total)
    line += "  ETA " + formatDuration(rate > 0 ? double(total - done) / rate
                                               : -1);
  else
    line += "  in " + formatDuration(seconds);
  return line;
}

void ProgressMeter::start(std::string label, uint64_t total,
                          const std::atomic<uint64_t> &done) {
  start(std::move(label), total, &done, nullptr);
}

void ProgressMeter::start(std::string label, uint64_t total,
                          const std::atomic<uint64_t> &done,
                          const std::atomic<uint64_t> &moreDone) {
  start(std::move(label), total, &done, &moreDone);
}

void ProgressMeter::start(std::string label, uint64_t total,
                          const std::atomic<uint64_t> *done,
                          const std::atomic<uint64_t> *moreDone) {
  stop();
  label_ = std::move(label);
  total_ = total;
  done_ = done;
  moreDone_ = moreDone;
  started_ = std::chrono::steady_clock::now();
  stopping_ = false;
  thread_ = std::thread([this] { run(); });
}

uint64_t ProgressMeter::doneNow() const {
  return done_->load(std::memory_order_relaxed) +
         (moreDone_ ? moreDone_->load(std::memory_order_relaxed) : 0);
}

void ProgressMeter::run() {
  using namespace std::chrono;
  uint64_t nextTenth = 1;
  auto lastLine = steady_clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  while (!wake_.wait_for(lock, milliseconds(terminal_ ? 200 : 500),
                         [&] { return stopping_; })) {
    uint64_t done = doneNow();
    auto now = steady_clock::now();
    double elapsed = duration<double>(now - started_).count();
    if (terminal_) {
      std::fprintf(out_, "\r%s\033[K",
                   formatLine(label_, done, total_, elapsed, true).c_str());
      std::fflush(out_);
      continue;
    }
    bool tenth = total_ && done * 10 >= nextTenth * total_;
    if (tenth || now - lastLine >= seconds(30)) {
      while (total_ && done * 10 >= nextTenth * total_)
        ++nextTenth;
      if (done < total_) {
        std::fprintf(out_, "%s\n",
                     formatLine(label_, done, total_, elapsed, false).c_str());
        std::fflush(out_);
      }
      lastLine = now;
    }
  }
}

void ProgressMeter::stop() {
  if (!thread_.joinable())
    return;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  thread_.join();
  double seconds = std::chrono::duration<double>(
                       std::chrono::steady_clock::now() - started_)
                       .count();
  std::string line = formatLine(label_, doneNow(), total_, seconds,
                                terminal_);
  std::fprintf(out_, terminal_ ? "\r%s\033[K\n" : "%s\n", line.c_str());
  std::fflush(out_);
}

} // namespace aoa::runtime
