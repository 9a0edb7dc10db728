//===- aoa-plan.cpp - Inspect and convert plans ---------------------------===//
//
// Parses flags and calls the plan tool driver (driver/PlanToolDriver.h).
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/PlanToolDriver.h"

#include "ToolAllocator.h"

#include "llvm/Support/CommandLine.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory category("aoa-plan options");

static cl::opt<std::string> actionName(
    cl::Positional, cl::Required, cl::value_desc("COMMAND"),
    cl::desc("<COMMAND: dump (print the plan's text form), summary (the cost "
             "summary aoa-compile prints), assemble (write the binary form "
             "to -o PLAN), estimate (its predicted time on --cluster SPEC), "
             "report (an HTML page of its traffic to -o FILE)>"),
    cl::cat(category));
static cl::opt<std::string> planPath(cl::Positional, cl::Required,
                                     cl::value_desc("PLAN"),
                                     cl::desc("<PLAN: text or binary>"),
                                     cl::cat(category));
static cl::opt<int64_t> rankOption(
    "rank",
    cl::desc("dump: print the header, the tables and only this rank's block "
             "(of a binary plan, only that rank's section is read)"),
    cl::value_desc("R"), cl::init(-1), cl::cat(category));
static cl::opt<std::string> clusterPath(
    "cluster",
    cl::desc("estimate: the cluster spec (JSON: ranks_per_node, "
             "disk_read_GBps, disk_write_GBps, nic_GBps, ...; "
             "docs/aoa-plan.md)"),
    cl::value_desc("SPEC"), cl::cat(category));
static cl::opt<std::string> estimatePath(
    "estimate",
    cl::desc("report: add the estimate of the plan on this cluster spec"),
    cl::value_desc("SPEC"), cl::cat(category));
static cl::opt<bool> allRounds(
    "all-rounds",
    cl::desc("estimate: print every round, not only the 20 slowest"),
    cl::cat(category));
static cl::opt<std::string> outputPath(
    "o", cl::desc("Write the output to <file> (atomically); '-' is stdout"),
    cl::value_desc("file"), cl::init("-"), cl::cat(category));

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "aoa-plan 0.1.0\nallocator: " << aoa::toolAllocatorName() << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-plan: inspect and convert transfer plans\n\n"
      "  Reads a plan in either form (the binary container aoa-compile\n"
      "  writes, or the text of --emit=plan-text) and checks it as aoa-run\n"
      "  does. The exit code is 0 on success and 1 on any error.\n");
  aoa::PlanToolCommand command;
  if (actionName == "dump")
    command.action = aoa::PlanToolAction::Dump;
  else if (actionName == "summary")
    command.action = aoa::PlanToolAction::Summary;
  else if (actionName == "assemble")
    command.action = aoa::PlanToolAction::Assemble;
  else if (actionName == "estimate")
    command.action = aoa::PlanToolAction::Estimate;
  else if (actionName == "report")
    command.action = aoa::PlanToolAction::Report;
  else {
    std::cerr << "aoa-plan: error: unknown command '" << actionName
              << "'\nhint: the commands are dump, summary, assemble, "
                 "estimate and report\n";
    return 1;
  }
  command.planPath = planPath;
  if (rankOption >= 0) {
    if (command.action != aoa::PlanToolAction::Dump || rankOption > int64_t(UINT32_MAX)) {
      std::cerr << "aoa-plan: error: --rank applies to dump and takes a rank "
                   "of the plan\n";
      return 1;
    }
    command.rank = uint32_t(rankOption);
  } else if (rankOption != -1) {
    std::cerr << "aoa-plan: error: --rank=" << rankOption << " is negative\n";
    return 1;
  }
  bool estimating = command.action == aoa::PlanToolAction::Estimate;
  bool reporting = command.action == aoa::PlanToolAction::Report;
  if (clusterPath.getNumOccurrences() && !estimating) {
    std::cerr << "aoa-plan: error: --cluster applies to estimate\n"
              << (reporting ? "hint: report takes --estimate SPEC\n" : "");
    return 1;
  }
  if (estimatePath.getNumOccurrences() && !reporting) {
    std::cerr << "aoa-plan: error: --estimate applies to report\n"
              << (estimating ? "hint: estimate takes --cluster SPEC\n" : "");
    return 1;
  }
  if (allRounds && !estimating) {
    std::cerr << "aoa-plan: error: --all-rounds applies to estimate\n";
    return 1;
  }
  if (clusterPath.getNumOccurrences())
    command.clusterPath = clusterPath;
  if (estimatePath.getNumOccurrences())
    command.clusterPath = estimatePath;
  command.allRounds = allRounds;
  command.outputPath = outputPath;
  command.color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  return aoa::runPlanTool(command, std::cout, std::cerr);
}
