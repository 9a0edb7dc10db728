//===- RunDriver.cpp ------------------------------------------------------===//
#include "aoa/driver/RunDriver.h"

#include "RunPlanReading.h"

#include "aoa/driver/PlanFile.h"
#include "aoa/driver/SourceLayoutCheck.h"
#include "aoa/ir/ByteSize.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/runtime/backends/LocalBackend.h"
#include "aoa/runtime/backends/MpiBackend.h"
#include "aoa/runtime/backends/NcclBackend.h"
#include "aoa/runtime/exec/ProgressMeter.h"
#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/support/FaultInjection.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iomanip>
#include <ostream>
#include <unistd.h>

namespace aoa {

namespace {

std::string rate(uint64_t bytes, double seconds) {
  return formatByteSize(int64_t(seconds > 0 ? double(bytes) / seconds : 0)) +
         "/s";
}

void makeMeter(ProgressStyle style,
               std::optional<runtime::ProgressMeter> &meter) {
  bool terminal = ::isatty(STDERR_FILENO);
  if (style == ProgressStyle::Bar || (style == ProgressStyle::Auto && terminal))
    meter.emplace(stderr, true);
  else if (style != ProgressStyle::None)
    meter.emplace(stderr, false);
}

void printHeader(std::ostream &err, const RunCommand &command,
                 const plan::Plan &plan, const std::string &backend) {
  err << "aoa-run: " << command.planPath << ": " << plan.ranks
      << (plan.ranks == 1 ? " rank, " : " ranks, ") << plan.sourceFiles.size()
      << " source files -> " << plan.destinationFiles.size()
      << " destination files in '" << command.options.destinationDirectory
      << "'" << backend << "\n";
  err.flush();
}

void printStagingNote(std::ostream &err, const RunCommand &command) {
  err << ("aoa-run: files finished so far are kept in " +
          std::string(command.options.nodeLocal ? "each rank's " : "") + "'" +
          command.options.destinationDirectory +
          "/.aoa-run'; the same command resumes from them.\n");
}

constexpr const char *kRankPlaceholder = "{rank}";

/// `path` with every {rank} replaced by `rank` (node-local directories).
std::string withRank(std::string path, uint32_t rank) {
  std::string number = std::to_string(rank);
  for (size_t at = path.find(kRankPlaceholder); at != std::string::npos;
       at = path.find(kRankPlaceholder, at + number.size()))
    path.replace(at, std::char_traits<char>::length(kRankPlaceholder), number);
  return path;
}

/// --node-local and {rank} in the directories: what the backend allows.
runtime::Status checkNodeLocal(const RunCommand &command) {
  const runtime::RunOptions &options = command.options;
  if (options.nodeLocal && command.backend == "local")
    return runtime::Error{
        "--node-local needs --backend=mpi or --backend=nccl",
        "the local backend runs every rank in one process, which reads "
        "every source file and writes every destination file itself"};
  auto placeholderIn = [&](const char *flag,
                           const std::string &path) -> runtime::Status {
    if (options.nodeLocal || path.find(kRankPlaceholder) == std::string::npos)
      return runtime::Status();
    return runtime::Error{std::string(flag) + " '" + path +
                              "' holds {rank}, which only --node-local "
                              "replaces",
                          "pass --node-local (with --backend=mpi or nccl) "
                          "to give every rank directories of its own, or "
                          "remove {rank}"};
  };
  if (runtime::Status source =
          placeholderIn("--src-dir", options.sourceDirectory);
      !source.ok())
    return source;
  return placeholderIn("--dst-dir", options.destinationDirectory);
}

/// A plan compiled with --shared-src has ranks read source files that the
/// metadata gives other ranks: node-local directories do not hold them.
runtime::Status checkSourceAccess(const RunCommand &command,
                                  const plan::Plan &plan) {
  if (!command.options.nodeLocal ||
      plan.sourceAccess != plan::SourceAccess::Shared)
    return runtime::Status();
  return runtime::Error{
      "the plan '" + command.planPath +
          "' was compiled with --shared-src: its ranks read source files "
          "that the metadata gives other ranks, which --node-local "
          "directories do not hold",
      "run it without --node-local, with a --src-dir that every rank sees "
      "(one host, or a shared file system), or compile the plan again "
      "without --shared-src"};
}

void printSummary(std::ostream &err, const runtime::RunReport &report) {
  err << "aoa-run: wrote " << report.filesWritten << " files ("
      << formatByteSize(int64_t(report.bytesWritten)) << ")";
  if (report.filesResumed)
    err << ", " << report.filesResumed << " finished by an earlier run";
  err << " in " << std::fixed << std::setprecision(2) << report.seconds
      << " s (" << rate(report.bytesWritten, report.seconds) << "); read "
      << formatByteSize(int64_t(report.bytesRead));
  if (report.bytesCopiedDirectly)
    err << " (" << formatByteSize(int64_t(report.bytesCopiedDirectly))
        << " of it copied file to file)";
  err << ", passed "
      << formatByteSize(int64_t(report.bytesExchanged))
      << " between ranks, buffers up to "
      << formatByteSize(int64_t(report.peakBufferBytes)) << "\n";
  if (report.verified)
    err << "aoa-run: verified: every tensor read back from disk matches its "
           "xxh3 in metadata.json\n";
}

/// The process count of the job this process belongs to, when a launcher
/// (mpirun, srun) started it; 0 otherwise.
unsigned launcherProcessCount() {
  for (const char *name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
    if (const char *value = std::getenv(name))
      return unsigned(std::strtoul(value, nullptr, 10));
  return 0;
}

int runLocally(const RunCommand &command, std::ostream &err) {
  if (unsigned processes = launcherProcessCount(); processes > 1) {
    printRunError(err, runtime::Error{
                        "aoa-run was started as one of " +
                            std::to_string(processes) +
                            " processes (by mpirun) with --backend=local, "
                            "which runs every rank in each process",
                        "pass --backend=mpi to run one rank per process, or "
                        "run aoa-run without mpirun"});
    return 1;
  }
  runtime::Expected<std::string> text = readPlanFile(command);
  if (!text.ok()) {
    printRunError(err, text.error());
    return 1;
  }
  binplan::PlanOrigin origin;
  std::optional<plan::Plan> plan = parsePlan(command, *text, err, origin);
  if (!plan)
    return 1;
  if (runtime::Status layout = checkSourceLayout(
          command.planPath, origin, command.options.sourceDirectory);
      !layout.ok()) {
    printRunError(err, layout.error());
    return 1;
  }

  runtime::RunOptions options = command.options;
  options.planFingerprint = planFingerprint(*text, origin);
  std::optional<runtime::ProgressMeter> meter;
  makeMeter(command.progress, meter);
  printHeader(err, command, *plan, "");

  runtime::Expected<runtime::RunReport> report =
      runtime::runPlanLocally(*plan, options, meter ? &*meter : nullptr);
  if (!report.ok()) {
    printRunError(err, report.error());
    std::error_code ignored;
    // Not when another run holds DST: its staging directory is its own.
    if (std::filesystem::exists(
            options.destinationDirectory + "/.aoa-run/journal", ignored) &&
        !runtime::DestinationFiles::isLockedByAnotherRun(
            options.destinationDirectory))
      printStagingNote(err, command);
    return 1;
  }
  printSummary(err, *report);
  return 0;
}

std::string rankList(const std::vector<uint32_t> &ranks) {
  std::string text = ranks.size() == 1 ? "rank " : "ranks ";
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (i == 8) {
      text += " and " + std::to_string(ranks.size() - i) + " more";
      break;
    }
    text += (i ? ", " : "") + std::to_string(ranks[i]);
  }
  return text;
}

/// Runs this process's rank of the plan, once read and shared.
using RankRunner = std::function<runtime::RankRunResult(
    const plan::Plan &, const runtime::RunOptions &, runtime::ProgressMeter *)>;

/// One rank of a job (mpi, nccl): every rank reads its part of the plan
/// (RunPlanReading.h) and runs its program; rank 0 prints the progress and
/// the summary, and every rank its own errors, prefixed with its rank.
int runAsRankOfJob(const RunCommand &command, const runtime::RankGroup &group,
                   const std::string &backendLabel, const RankRunner &runner,
                   std::ostream &err) {
  uint32_t rank = group.rank();
  std::string who =
      group.size() > 1 ? "rank " + std::to_string(rank) + ": " : "";

  // Node-local: this rank's own directories.
  runtime::RunOptions options = command.options;
  options.sourceDirectory = withRank(options.sourceDirectory, rank);
  options.destinationDirectory = withRank(options.destinationDirectory, rank);

  std::optional<JobPlan> job = readJobPlan(command, group, err);
  if (!job)
    return 1;
  const plan::Plan &plan = job->plan;
  // Every rank has the same plan and options, so all stop; rank 0 says why.
  if (runtime::Status access = checkSourceAccess(command, plan);
      !access.ok()) {
    if (rank == 0)
      printRunError(err, access.error(), who);
    return 1;
  }
  // Rank 0 reads the source layout once; every rank stops on its verdict.
  runtime::Status layout;
  if (rank == 0)
    layout =
        checkSourceLayout(command.planPath, job->origin,
                          options.sourceDirectory);
  if (!layout.ok())
    printRunError(err, layout.error(), who);
  if (!group.failedRanks(!layout.ok()).empty())
    return 1;

  options.planFingerprint = job->fingerprint;
  std::optional<runtime::ProgressMeter> meter;
  if (rank == 0) {
    makeMeter(command.progress, meter);
    printHeader(err, command, plan,
                " (" + backendLabel + ", " + std::to_string(group.size()) +
                    (group.size() == 1 ? " process" : " processes") +
                    (options.nodeLocal ? ", node-local directories)" : ")"));
  }
  runtime::RankRunResult result =
      runner(plan, options, meter ? &*meter : nullptr);
  if (!result.ok()) {
    if (result.error)
      printRunError(err, *result.error, who);
    if (rank == 0) {
      // One write, as printRunError's: other ranks print at the same time.
      if (!result.error)
        err << ("aoa-run: " + who + "stopped: " +
                rankList(result.failedRanks) + " failed (see " +
                (result.failedRanks.size() == 1 ? "its message"
                                                : "their messages") +
                "); every rank stops\n");
      if (result.keptFinishedFiles)
        printStagingNote(err, command);
    }
    err.flush();
    return 1;
  }
  if (rank == 0)
    printSummary(err, result.report);
  return 0;
}

int runWithMpi(const RunCommand &command, std::ostream &err) {
  runtime::Expected<std::unique_ptr<runtime::MpiSession>> started =
      runtime::MpiSession::start();
  if (!started.ok()) {
    printRunError(err, started.error());
    return 1;
  }
  const runtime::MpiSession &session = **started;
  return runAsRankOfJob(
      command, session, "mpi backend",
      [&](const plan::Plan &plan, const runtime::RunOptions &options,
          runtime::ProgressMeter *meter) {
        return runtime::runPlanWithMpi(plan, options, session, meter);
      },
      err);
}

/// The nccl backend: this process's rank on a GPU (or on the emulated
/// device), in a job started by mpirun or told RANK and WORLD_SIZE.
int runWithNccl(const RunCommand &command, std::ostream &err) {
  runtime::NcclRankOptions options;
  options.emulateDevice = command.emulateDevice;
  options.rendezvousDirectory = command.rendezvousDirectory;
  options.underLauncher = launcherProcessCount() > 0;
  runtime::NcclRank::Start started = runtime::NcclRank::start(options);
  if (started.error)
    printRunError(err, *started.error, started.who);
  if (!started.rank)
    return 1;
  runtime::NcclRank &rank = *started.rank;
  std::string label = "nccl backend on " + rank.deviceName();
  return runAsRankOfJob(
      command, rank.group(), label,
      [&](const plan::Plan &plan, const runtime::RunOptions &runOptions,
          runtime::ProgressMeter *meter) {
        return rank.run(plan, runOptions, meter);
      },
      err);
}

} // namespace

int runPlanCommand(const RunCommand &command, std::ostream &err) {
  if (runtime::Status hook = runtime::checkFaultInjectionSetting();
      !hook.ok()) {
    printRunError(err, hook.error());
    return 1;
  }
  if (runtime::Status checked = checkNodeLocal(command); !checked.ok()) {
    printRunError(err, checked.error());
    return 1;
  }
  if (command.backend == "local")
    return runLocally(command, err);
  if (command.backend == "mpi")
    return runWithMpi(command, err);
  if (command.backend == "nccl")
    return runWithNccl(command, err);
  printRunError(err, runtime::Error{"there is no backend '" + command.backend +
                                     "'",
                                 "use --backend=local (all ranks in one "
                                 "process), --backend=mpi (under mpirun) or "
                                 "--backend=nccl (one process per GPU)"});
  return 1;
}

} // namespace aoa
