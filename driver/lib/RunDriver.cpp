//===- RunDriver.cpp ------------------------------------------------------===//
#include "aoa/driver/RunDriver.h"

#include "aoa/driver/PlanFile.h"
#include "aoa/driver/SourceLayoutCheck.h"
#include "aoa/ir/ByteSize.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/runtime/exec/Device.h"
#include "aoa/runtime/exec/DeviceExecutor.h"
#include "aoa/runtime/exec/DeviceTransport.h"
#include "aoa/runtime/exec/LocalExecutor.h"
#include "aoa/runtime/exec/MpiExecutor.h"
#include "aoa/runtime/exec/MpiSession.h"
#include "aoa/runtime/exec/NcclJob.h"
#include "aoa/runtime/exec/ProgressMeter.h"
#include "aoa/runtime/storage/DestinationFiles.h"
#include "aoa/runtime/support/ContentHash.h"
#include "aoa/runtime/support/FaultInjection.h"

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <unistd.h>

namespace aoa {

namespace {

/// "aoa-run: error: …" (with `who`, "aoa-run: rank 2: error: …").
void printError(std::ostream &err, const runtime::Error &error,
                const std::string &who = "") {
  // One write, so that the lines of several ranks do not interleave.
  std::string text = "aoa-run: " + who + "error: " + error.message + "\n";
  if (!error.hint.empty())
    text += "hint: " + error.hint + "\n";
  err << text;
  err.flush();
}

std::string rate(uint64_t bytes, double seconds) {
  return formatByteSize(int64_t(seconds > 0 ? double(bytes) / seconds : 0)) +
         "/s";
}

/// The plan's bytes, text or binary (RunCommand::planText, or the plan
/// file's), or an error.
runtime::Expected<std::string> readPlanFile(const RunCommand &command) {
  if (command.planText)
    return *command.planText;
  const std::string &path = command.planPath;
  std::ifstream file(path, std::ios::binary);
  if (!file)
    return runtime::Error{"cannot open the plan '" + path + "'",
                          "write one with aoa-compile CONFIG --src SRC_META "
                          "--dst DST_META -o PLAN"};
  std::ostringstream buffer;
  buffer << file.rdbuf();
  return buffer.str();
}

/// Reads and verifies the plan (text or binary); diagnostics go to `err`.
std::optional<plan::Plan> parsePlan(const RunCommand &command,
                                    const std::string &text,
                                    std::ostream &err,
                                    binplan::PlanOrigin &origin) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(err, sources, command.color);
  diags.setHandler(printer.handler());
  std::optional<plan::Plan> plan =
      readPlanBytes(command.planPath, text, sources, diags, &origin);
  if (!plan)
    err << diags.errorCount()
        << (diags.errorCount() == 1 ? " error" : " errors")
        << " in the plan; nothing was written.\n";
  return plan;
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
  err << ("aoa-run: files finished so far are kept in '" +
          command.options.destinationDirectory +
          "/.aoa-run'; the same command resumes from them.\n");
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
    printError(err, runtime::Error{
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
    printError(err, text.error());
    return 1;
  }
  binplan::PlanOrigin origin;
  std::optional<plan::Plan> plan = parsePlan(command, *text, err, origin);
  if (!plan)
    return 1;
  if (runtime::Status layout = checkSourceLayout(
          command.planPath, origin, command.options.sourceDirectory);
      !layout.ok()) {
    printError(err, layout.error());
    return 1;
  }

  runtime::RunOptions options = command.options;
  options.planFingerprint = runtime::contentHash(text->data(), text->size());
  std::optional<runtime::ProgressMeter> meter;
  makeMeter(command.progress, meter);
  printHeader(err, command, *plan, "");

  runtime::Expected<runtime::RunReport> report =
      runtime::runPlanLocally(*plan, options, meter ? &*meter : nullptr);
  if (!report.ok()) {
    printError(err, report.error());
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

/// One rank of a job (mpi, nccl): rank 0 reads the plan and shares its
/// text, every rank runs its program; rank 0 prints the progress and the
/// summary, and every rank its own errors, prefixed with its rank.
int runAsRankOfJob(const RunCommand &command, const runtime::RankGroup &group,
                   const std::string &backendLabel, const RankRunner &runner,
                   std::ostream &err) {
  uint32_t rank = group.rank();
  std::string who =
      group.size() > 1 ? "rank " + std::to_string(rank) + ": " : "";

  runtime::Expected<std::string> text = std::string();
  if (rank == 0)
    text = readPlanFile(command);
  if (rank == 0 && !text.ok())
    printError(err, text.error(), who);
  if (!group.failedRanks(!text.ok()).empty())
    return 1;
  std::string planText = group.broadcast(std::move(*text));
  // Every rank reads the same text alike; rank 0 prints the diagnostics.
  std::ostringstream ignored;
  binplan::PlanOrigin origin;
  std::optional<plan::Plan> plan =
      parsePlan(command, planText, rank == 0 ? err : ignored, origin);
  if (!plan)
    return 1;
  // Rank 0 reads the source layout once; every rank stops on its verdict.
  runtime::Status layout;
  if (rank == 0)
    layout = checkSourceLayout(command.planPath, origin,
                               command.options.sourceDirectory);
  if (!layout.ok())
    printError(err, layout.error(), who);
  if (!group.failedRanks(!layout.ok()).empty())
    return 1;

  runtime::RunOptions options = command.options;
  options.planFingerprint =
      runtime::contentHash(planText.data(), planText.size());
  std::optional<runtime::ProgressMeter> meter;
  if (rank == 0) {
    makeMeter(command.progress, meter);
    printHeader(err, command, *plan,
                " (" + backendLabel + ", " + std::to_string(group.size()) +
                    (group.size() == 1 ? " process)" : " processes)"));
  }
  runtime::RankRunResult result =
      runner(*plan, options, meter ? &*meter : nullptr);
  if (!result.ok()) {
    if (result.error)
      printError(err, *result.error, who);
    if (rank == 0) {
      // One write, as printError's: other ranks print at the same time.
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
    printError(err, started.error());
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

/// An unsigned number from the environment variable `name`, if set.
std::optional<unsigned> environmentNumber(const char *name,
                                          runtime::Status &status) {
  const char *value = std::getenv(name);
  if (!value)
    return std::nullopt;
  char *end = nullptr;
  unsigned long number = std::strtoul(value, &end, 10);
  if (!*value || *end || number > 1u << 20) {
    status = runtime::Error{std::string(name) + "='" + value +
                                "' is not a rank number",
                            "set RANK, WORLD_SIZE and LOCAL_RANK to "
                            "non-negative integers, or start aoa-run with "
                            "mpirun"};
    return std::nullopt;
  }
  return unsigned(number);
}

/// The nccl backend: this process's rank on a GPU (or on the emulated
/// device), in a job started by mpirun or told RANK and WORLD_SIZE.
int runWithNccl(const RunCommand &command, std::ostream &err) {
  runtime::Status environment;
  std::optional<unsigned> envRank = environmentNumber("RANK", environment);
  std::optional<unsigned> envSize =
      environmentNumber("WORLD_SIZE", environment);
  std::optional<unsigned> localRank =
      environmentNumber("LOCAL_RANK", environment);
  if (!environment.ok()) {
    printError(err, environment.error());
    return 1;
  }

  // Under mpirun, MPI shares the NCCL id and carries the agreements.
  std::unique_ptr<runtime::MpiSession> session;
  if (launcherProcessCount() > 0 && runtime::MpiSession::available()) {
    runtime::Expected<std::unique_ptr<runtime::MpiSession>> started =
        runtime::MpiSession::start();
    if (!started.ok()) {
      printError(err, started.error());
      return 1;
    }
    session = std::move(*started);
  }
  runtime::NcclBootstrap bootstrap;
  bootstrap.mpi = session.get();
  bootstrap.rank = session ? session->rank() : envRank.value_or(0);
  bootstrap.size = session ? session->size() : envSize.value_or(1);
  bootstrap.rendezvousDirectory = command.rendezvousDirectory;
  if (const char *timeout = std::getenv("AOA_RENDEZVOUS_TIMEOUT"))
    bootstrap.timeout = std::chrono::seconds(std::strtoul(timeout, nullptr, 10));
  std::string who =
      bootstrap.size > 1 ? "rank " + std::to_string(bootstrap.rank) + ": " : "";
  // Before any collective exists, each process reports its own failure.
  auto fail = [&](const runtime::Error &error) {
    printError(err, error, who);
    if (session)
      session->failedRanks(true);
    return 1;
  };
  auto agreeOk = [&]() {
    return !session || session->failedRanks(false).empty();
  };
  if (!session) {
    if (bootstrap.rank >= bootstrap.size)
      return fail(runtime::Error{
          "RANK=" + std::to_string(bootstrap.rank) + " is not below "
              "WORLD_SIZE=" + std::to_string(bootstrap.size),
          "number the processes of the job 0 .. WORLD_SIZE-1"});
    if (bootstrap.size > 1 && command.emulateDevice)
      return fail(runtime::Error{
          "the emulated device moves messages over MPI, but this job of " +
              std::to_string(bootstrap.size) + " processes was not started "
              "by mpirun",
          "start it with mpirun -np " + std::to_string(bootstrap.size)});
    if (bootstrap.size > 1 && bootstrap.rendezvousDirectory.empty())
      return fail(runtime::Error{
          "the nccl backend without mpirun needs --rendezvous DIR for a job "
          "of " + std::to_string(bootstrap.size) + " processes (WORLD_SIZE)",
          "pass the same directory, one every rank sees, to every rank; or "
          "start the job with mpirun"});
  }

  std::unique_ptr<runtime::Device> device;
  if (command.emulateDevice) {
    device = runtime::makeEmulatedDevice();
  } else {
    std::string why;
    int gpus = runtime::cudaDeviceCount(&why);
    unsigned onHost = session ? session->hostRank() : bootstrap.rank;
    int ordinal = int(localRank ? *localRank : (gpus ? onHost % unsigned(gpus)
                                                     : 0u));
    runtime::Expected<std::unique_ptr<runtime::Device>> opened =
        runtime::openCudaDevice(ordinal);
    if (!opened.ok())
      return fail(opened.error());
    device = std::move(*opened);
  }
  if (!agreeOk())
    return 1;

  std::unique_ptr<runtime::NcclJob> job;
  std::unique_ptr<runtime::RankGroup> singleGroup;
  std::unique_ptr<runtime::DeviceTransport> hostTransport;
  const runtime::RankGroup *group = nullptr;
  runtime::DeviceTransport *transport = nullptr;
  if (command.emulateDevice) {
    if (session) {
      hostTransport = runtime::makeMpiHostTransport(*session);
      group = session.get();
    } else {
      hostTransport = runtime::makeSingleRankTransport();
      singleGroup = runtime::makeSingleRankGroup();
      group = singleGroup.get();
    }
    transport = hostTransport.get();
  } else {
    runtime::Expected<std::unique_ptr<runtime::NcclJob>> started =
        runtime::NcclJob::start(bootstrap, *device);
    if (!started.ok())
      return fail(started.error());
    if (!agreeOk())
      return 1;
    job = std::move(*started);
    group = &job->group();
    transport = &job->transport();
  }

  runtime::JobLauncher launcher;
  if (!session)
    launcher = {"WORLD_SIZE says",
                "start one process per rank (WORLD_SIZE=N), N = "};
  std::string label = "nccl backend on " + device->name();
  return runAsRankOfJob(
      command, *group, label,
      [&](const plan::Plan &plan, const runtime::RunOptions &options,
          runtime::ProgressMeter *meter) {
        return runtime::runPlanOnDevice(plan, options, *group, *device,
                                        *transport, launcher, meter);
      },
      err);
}

} // namespace

int runPlanCommand(const RunCommand &command, std::ostream &err) {
  if (runtime::Status hook = runtime::checkFaultInjectionSetting();
      !hook.ok()) {
    printError(err, hook.error());
    return 1;
  }
  if (command.backend == "local")
    return runLocally(command, err);
  if (command.backend == "mpi")
    return runWithMpi(command, err);
  if (command.backend == "nccl")
    return runWithNccl(command, err);
  printError(err, runtime::Error{"there is no backend '" + command.backend +
                                     "'",
                                 "use --backend=local (all ranks in one "
                                 "process), --backend=mpi (under mpirun) or "
                                 "--backend=nccl (one process per GPU)"});
  return 1;
}

} // namespace aoa
