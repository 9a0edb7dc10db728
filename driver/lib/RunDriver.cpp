//===- RunDriver.cpp ------------------------------------------------------===//
#include "aoa/driver/RunDriver.h"

#include "aoa/codegen/PlanReader.h"
#include "aoa/ir/ByteSize.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/runtime/ContentHash.h"
#include "aoa/runtime/LocalExecutor.h"
#include "aoa/runtime/ProgressMeter.h"

#include <filesystem>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <unistd.h>

namespace aoa {

namespace {

void printError(std::ostream &err, const runtime::Error &error) {
  err << "aoa-run: error: " << error.message << "\n";
  if (!error.hint.empty())
    err << "hint: " << error.hint << "\n";
}

std::string rate(uint64_t bytes, double seconds) {
  return formatByteSize(int64_t(seconds > 0 ? double(bytes) / seconds : 0)) +
         "/s";
}

} // namespace

int runPlanCommand(const RunCommand &command, std::ostream &err) {
  if (command.backend != "local") {
    printError(err,
               runtime::Error{"backend '" + command.backend +
                                  "' is not available in this build",
                              command.backend == "mpi" ||
                                      command.backend == "nccl"
                                  ? "only --backend=local is implemented "
                                    "so far; run the plan on one machine"
                                  : "use --backend=local"});
    return 1;
  }
  std::ifstream file(command.planPath, std::ios::binary);
  if (!file) {
    printError(err, runtime::Error{"cannot open the plan '" +
                                       command.planPath + "'",
                                   "write one with aoa-compile CONFIG --src "
                                   "SRC_META --dst DST_META -o PLAN"});
    return 1;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  std::string text = buffer.str();

  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(err, sources, command.color);
  diags.setHandler(printer.handler());
  std::optional<plan::Plan> plan =
      readPlanText(command.planPath, text, sources, diags);
  if (!plan) {
    err << diags.errorCount()
        << (diags.errorCount() == 1 ? " error" : " errors")
        << " in the plan; nothing was written.\n";
    return 1;
  }

  runtime::RunOptions options = command.options;
  options.planFingerprint = runtime::contentHash(text.data(), text.size());
  bool terminal = ::isatty(STDERR_FILENO);
  std::optional<runtime::ProgressMeter> meter;
  if (command.progress == ProgressStyle::Bar ||
      (command.progress == ProgressStyle::Auto && terminal))
    meter.emplace(stderr, true);
  else if (command.progress != ProgressStyle::None)
    meter.emplace(stderr, false);
  err << "aoa-run: " << command.planPath << ": " << plan->ranks
      << (plan->ranks == 1 ? " rank, " : " ranks, ")
      << plan->sourceFiles.size() << " source files -> "
      << plan->destinationFiles.size() << " destination files in '"
      << options.destinationDirectory << "'\n";
  err.flush();

  runtime::Expected<runtime::RunReport> report =
      runtime::runPlanLocally(*plan, options, meter ? &*meter : nullptr);
  if (!report.ok()) {
    printError(err, report.error());
    std::string staging = options.destinationDirectory + "/.aoa-run";
    std::error_code ignored;
    if (std::filesystem::exists(staging + "/journal", ignored))
      err << "aoa-run: files finished so far are kept in '" << staging
          << "'; the same command resumes from them.\n";
    return 1;
  }
  err << "aoa-run: wrote " << report->filesWritten << " files ("
      << formatByteSize(int64_t(report->bytesWritten)) << ")";
  if (report->filesResumed)
    err << ", " << report->filesResumed << " finished by an earlier run";
  err << " in " << std::fixed << std::setprecision(2) << report->seconds
      << " s (" << rate(report->bytesWritten, report->seconds) << "); read "
      << formatByteSize(int64_t(report->bytesRead)) << ", passed "
      << formatByteSize(int64_t(report->bytesExchanged))
      << " between ranks, buffers up to "
      << formatByteSize(int64_t(report->peakBufferBytes)) << "\n";
  if (report->verified)
    err << "aoa-run: verified: every tensor read back from disk matches its "
           "xxh3 in metadata.json\n";
  return 0;
}

} // namespace aoa
