//===- PlanToolDriver.cpp - aoa-plan's commands ---------------------------===//
#include "aoa/driver/PlanToolDriver.h"

#include "aoa/analysis/ClusterSpec.h"
#include "aoa/analysis/EstimateText.h"
#include "aoa/analysis/PlanEstimate.h"
#include "aoa/analysis/PlanReport.h"
#include "aoa/analysis/PlanTraffic.h"

#include "aoa/driver/OutputFile.h"
#include "aoa/driver/PlanFile.h"
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/formats/plan/PlanSummary.h"
#include "aoa/formats/plan/PlanWriter.h"
#include "aoa/ir/Diagnostics.h"

#include <iomanip>
#include <ostream>
#include <sstream>

namespace aoa {

namespace {

/// The plan's text with only rank `rank`'s block: the other programs are
/// empty, so their blocks are single `rank N` lines, dropped here.
std::string onlyRankBlock(const std::string &text, uint32_t rank) {
  std::string keep = "rank " + std::to_string(rank);
  std::string out;
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    bool otherRank = line.rfind("rank ", 0) == 0 && line != keep;
    if (!otherRank)
      out += line + "\n";
  }
  return out;
}

/// Reads the plan for `command`; a dump of one rank of a binary plan reads
/// only that rank's section and checks what that rank alone can
/// (verifyPlanRank: not the exchanges between ranks).
std::optional<plan::Plan> readPlan(const PlanToolCommand &command,
                                   SourceManager &sources,
                                   DiagnosticEngine &diags,
                                   binplan::PlanOrigin &origin) {
  if (command.rank) {
    if (isBinaryPlanFile(command.planPath)) {
      std::optional<plan::Plan> plan = binplan::readBinaryPlanRank(
          command.planPath, *command.rank, diags, &origin);
      if (plan && !verifyPlanRank(*plan, *command.rank, diags))
        return std::nullopt;
      return plan;
    }
  }
  std::string bytes;
  std::optional<plan::Plan> plan =
      readPlanFileAnyForm(command.planPath, bytes, sources, diags, &origin);
  if (plan && command.rank) {
    if (*command.rank >= plan->ranks) {
      diags.error(SourceLocation{}, "the plan '" + command.planPath +
                                        "' has " + std::to_string(plan->ranks) +
                                        " ranks; there is no rank " +
                                        std::to_string(*command.rank));
      return std::nullopt;
    }
    for (uint32_t r = 0; r < plan->programs.size(); ++r)
      if (r != *command.rank)
        plan->programs[r].rounds.clear();
  }
  return plan;
}

std::string hashText(const std::optional<uint64_t> &hash) {
  if (!hash)
    return "none";
  std::ostringstream os;
  os << "0x" << std::hex << std::setw(16) << std::setfill('0') << *hash;
  return os.str();
}

/// Estimate and report: the plan's traffic, and its estimate on `cluster`
/// when there is one, printed or written as a page.
void writeAnalysis(const PlanToolCommand &command, const plan::Plan &plan,
                   const std::optional<analysis::ClusterSpec> &cluster,
                   std::ostream &os) {
  analysis::PlanTraffic traffic = analysis::computePlanTraffic(plan);
  std::optional<analysis::PlanEstimate> estimate;
  if (cluster)
    estimate = analysis::estimatePlan(traffic, *cluster);
  if (command.action == PlanToolAction::Estimate) {
    analysis::EstimateTextOptions options;
    options.planName = command.planPath;
    options.clusterName = *command.clusterPath;
    options.allRounds = command.allRounds;
    analysis::printEstimate(traffic, *cluster, *estimate, options, os);
    return;
  }
  analysis::PlanReportInput input;
  input.planName = command.planPath;
  input.traffic = &traffic;
  if (cluster) {
    input.cluster = &*cluster;
    input.estimate = &*estimate;
    input.clusterName = *command.clusterPath;
  }
  analysis::writePlanReport(input, os);
}

} // namespace

int runPlanTool(const PlanToolCommand &command, std::ostream &out,
                std::ostream &err) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  TextDiagnosticPrinter printer(err, sources, command.color);
  diags.setHandler(printer.handler());
  auto failed = [&] {
    err << "aoa-plan: " << diags.errorCount()
        << (diags.errorCount() == 1 ? " error" : " errors") << "\n";
    return 1;
  };

  bool analyses = command.action == PlanToolAction::Estimate ||
                  command.action == PlanToolAction::Report;
  if (command.action == PlanToolAction::Estimate && !command.clusterPath) {
    diags.error(SourceLocation{}, "aoa-plan estimate needs a cluster spec")
        .hint("name it with --cluster SPEC (docs/aoa-plan.md)");
    return failed();
  }
  if (command.action == PlanToolAction::Report && command.outputPath == "-") {
    diags.error(SourceLocation{}, "aoa-plan report writes an HTML file")
        .hint("name it with -o FILE");
    return failed();
  }
  // The spec first: it is small, and its mistakes are quick to fix.
  std::optional<analysis::ClusterSpec> cluster;
  if (analyses && command.clusterPath) {
    cluster = analysis::loadClusterSpec(*command.clusterPath, sources, diags);
    if (!cluster)
      return failed();
  }

  binplan::PlanOrigin origin;
  std::optional<plan::Plan> plan = readPlan(command, sources, diags, origin);
  if (!plan)
    return failed();

  if (command.action == PlanToolAction::Summary) {
    // The broadcast comparison needs the compiler's metadata: not printed.
    printPlanSummary(*plan, out, -1);
    out << "layouts: source " << hashText(origin.sourceLayoutHash)
        << ", destination " << hashText(origin.destinationLayoutHash) << "\n";
    return 0;
  }
  if (command.action == PlanToolAction::Assemble && command.outputPath == "-") {
    diags.error(SourceLocation{}, "aoa-plan assemble writes a binary file")
        .hint("name it with -o PLAN");
    return failed();
  }
  std::string openError;
  std::optional<OutputFile> output =
      OutputFile::open(command.outputPath, out, openError);
  if (!output) {
    diags.error(SourceLocation{}, openError);
    return failed();
  }
  if (command.action == PlanToolAction::Assemble)
    binplan::writeBinaryPlan(*plan, origin, output->stream());
  else if (analyses)
    writeAnalysis(command, *plan, cluster, output->stream());
  else if (command.rank)
    output->stream() << onlyRankBlock(printPlanText(*plan), *command.rank);
  else
    writePlanText(*plan, output->stream());
  if (std::optional<std::string> failure = output->commit()) {
    diags.error(SourceLocation{}, *failure);
    return failed();
  }
  return 0;
}

} // namespace aoa
