//===- RunPlanReading.cpp -------------------------------------------------===//
#include "RunPlanReading.h"

#include "aoa/driver/PlanFile.h"
#include "aoa/formats/plan/MessagePairing.h"
#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"
#include "aoa/runtime/support/ContentHash.h"

#include <fstream>
#include <ostream>
#include <sstream>
#include <unistd.h>

namespace aoa {

namespace {

/// How rank 0 tells the others the plan reaches them.
constexpr const char *kEachReadsItsSection = "sections";
constexpr const char *kSharedBytes = "bytes";

std::string errorCountLine(unsigned errors) {
  return std::to_string(errors) + (errors == 1 ? " error" : " errors") +
         " in the plan; nothing was written.\n";
}

/// Rank `rank`'s part of the binary plan (from the file, or from `bytes`
/// when given), verified for that rank; diagnostics go to `out`.
std::optional<JobPlan> readRankSection(const RunCommand &command, uint32_t rank,
                                       const std::string *bytes,
                                       std::ostream &out) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(out, sources, command.color);
  diags.setHandler(printer.handler());
  JobPlan job;
  std::optional<plan::Plan> plan =
      // A process beyond the plan's ranks reads the tables only, and the run
      // refuses the job on every process (RunLifeCycle::checkJob).
      bytes ? binplan::readBinaryPlanRankBytes(command.planPath, *bytes, rank,
                                               diags, &job.origin,
                                               binplan::AbsentRank::Allow)
            : binplan::readBinaryPlanRank(command.planPath, rank, diags,
                                          &job.origin,
                                          binplan::AbsentRank::Allow);
  if (!plan || !verifyPlanRank(*plan, rank, diags)) {
    out << errorCountLine(diags.errorCount());
    return std::nullopt;
  }
  job.plan = std::move(*plan);
  job.fingerprint = job.origin.headerChecksum.value_or(0);
  return job;
}

/// Collective: what no process can check alone of plans that hold only
/// their own rank's program. Every process finds the same answer; rank 0
/// reports it.
runtime::Status checkAcrossRanks(const RunCommand &command,
                                 const runtime::RankGroup &group,
                                 const JobPlan &job) {
  uint32_t rank = group.rank();
  uint64_t fingerprint = job.fingerprint;
  uint64_t rounds = rank < job.plan.programs.size()
                        ? job.plan.programs[rank].rounds.size()
                        : 0;
  // Maxima of v and ~v: the largest and the smallest value of each.
  std::vector<uint64_t> extremes = {fingerprint, ~fingerprint, rounds, ~rounds};
  group.max(extremes);
  if (extremes[0] != ~extremes[1])
    return runtime::Error{
        "the processes read different plans from '" + command.planPath +
            "': its header checksum differs between ranks",
        "every process must read the same plan: copy the same file to "
        "every node, or keep it on a shared file system"};
  // The same plan everywhere: a job of another size is refused as such,
  // by every process (RunLifeCycle::checkJob).
  if (job.plan.ranks != group.size())
    return runtime::Status();
  plan::ExchangeSignature signature = plan::exchangeSignature(job.plan, rank);
  std::vector<uint64_t> sums = {signature.sends, signature.recvs};
  group.sum(sums);
  if (extremes[2] != ~extremes[3])
    return runtime::Error{
        "the ranks' sections of the plan '" + command.planPath +
            "' disagree on the number of rounds (from " +
            std::to_string(~extremes[3]) + " to " +
            std::to_string(extremes[2]) + ")",
        "every rank runs the same rounds; the plan is inconsistent: "
        "recompile it"};
  if (sums[0] != sums[1])
    return runtime::Error{
        "the messages of the plan '" + command.planPath +
            "' do not pair up across ranks: some send has no recv that "
            "takes the same buffers in its round, or some recv no send",
        "the plan is inconsistent: recompile it (aoa-plan summary PLAN "
        "checks the whole plan and names the message)"};
  return runtime::Status();
}

} // namespace

void printRunError(std::ostream &err, const runtime::Error &error,
                   const std::string &who) {
  // One write, so that the lines of several ranks do not interleave.
  std::string text = "aoa-run: " + who + "error: " + error.message + "\n";
  if (!error.hint.empty())
    text += "hint: " + error.hint + "\n";
  err << text;
  err.flush();
}

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

std::optional<plan::Plan> parsePlan(const RunCommand &command,
                                    std::string_view bytes, std::ostream &err,
                                    binplan::PlanOrigin &origin) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(err, sources, command.color);
  diags.setHandler(printer.handler());
  std::optional<plan::Plan> plan =
      readPlanBytes(command.planPath, bytes, sources, diags, &origin);
  if (!plan)
    err << errorCountLine(diags.errorCount());
  return plan;
}

uint64_t planFingerprint(std::string_view bytes,
                         const binplan::PlanOrigin &origin) {
  if (origin.headerChecksum)
    return *origin.headerChecksum;
  return runtime::contentHash(bytes.data(), bytes.size());
}

std::optional<JobPlan> readJobPlan(const RunCommand &command,
                                   const runtime::RankGroup &group,
                                   std::ostream &err) {
  uint32_t rank = group.rank();
  std::string who =
      group.size() > 1 ? "rank " + std::to_string(rank) + ": " : "";
  // A binary plan file that every process can open is read there, each
  // process its own section; otherwise (a text plan, a plan in memory, a
  // file only rank 0 sees) rank 0 shares the plan's bytes.
  bool readable =
      !command.planText && ::access(command.planPath.c_str(), R_OK) == 0;
  bool everyoneReads = group.failedRanks(!readable).empty();
  std::string how;
  if (rank == 0)
    how = everyoneReads && isBinaryPlanFile(command.planPath)
              ? kEachReadsItsSection
              : kSharedBytes;
  how = group.broadcast(std::move(how));

  std::ostringstream diagnostics;
  std::optional<JobPlan> job;
  if (how == kEachReadsItsSection) {
    job = readRankSection(command, rank, nullptr, diagnostics);
  } else {
    runtime::Expected<std::string> read = std::string();
    if (rank == 0)
      read = readPlanFile(command);
    if (rank == 0 && !read.ok())
      printRunError(err, read.error(), who);
    if (!group.failedRanks(!read.ok()).empty())
      return std::nullopt;
    std::string bytes = group.broadcast(std::move(*read));
    if (binplan::isBinaryPlan(bytes)) {
      job = readRankSection(command, rank, &bytes, diagnostics);
    } else {
      JobPlan whole;
      std::optional<plan::Plan> plan =
          parsePlan(command, bytes, diagnostics, whole.origin);
      if (plan) {
        whole.plan = std::move(*plan);
        whole.fingerprint = planFingerprint(bytes, whole.origin);
        job = std::move(whole);
      }
    }
  }
  // The header and the tables are every process's: when rank 0 finds them
  // broken, it alone says so; a fault only in a rank's section, that rank.
  std::vector<uint32_t> failed = group.failedRanks(!job);
  if (!failed.empty()) {
    if (!job && (rank == 0 || failed.front() != 0)) {
      err << diagnostics.str();
      err.flush();
    }
    return std::nullopt;
  }
  if (job->plan.onlyRank) {
    if (runtime::Status across = checkAcrossRanks(command, group, *job);
        !across.ok()) {
      if (rank == 0)
        printRunError(err, across.error());
      return std::nullopt;
    }
  }
  return job;
}

} // namespace aoa
