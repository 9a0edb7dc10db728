//===- plan_rank_read.cpp - Time what one process reads of a plan ---------===//
//
// aoa-bench-plan-read PLAN [--rank=R | --whole]
//
// Reads a binary plan as one process of an mpi or nccl run does (the header,
// the shared tables and rank R's section, then verifyPlanRank and
// exchangeSignature), or, with --whole, as the local backend does (every
// section, then verifyPlan). Prints the wall time of each step, the bytes of
// the sections read, and the process's peak resident memory, so that the
// cost of a rank's start can be compared with the world size.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/BinaryPlan.h"
#include "aoa/formats/plan/MessagePairing.h"
#include "aoa/formats/plan/PlanVerifier.h"
#include "aoa/ir/Diagnostics.h"
#include "aoa/ir/SourceManager.h"

#include "llvm/Support/CommandLine.h"

#include <chrono>
#include <cstdio>
#include <iostream>
#include <sys/resource.h>

using namespace llvm;

namespace {

cl::opt<std::string> planPath(cl::Positional, cl::Required,
                              cl::desc("<binary plan>"));
cl::opt<unsigned> rankToRead("rank", cl::init(0),
                             cl::desc("The rank whose part is read"));
cl::opt<bool> whole("whole", cl::desc("Read and verify every rank"));

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

long peakKiB() {
  struct rusage usage {};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "time reading a binary plan\n");
  aoa::SourceManager sources;
  aoa::DiagnosticEngine diags(sources);
  aoa::TextDiagnosticPrinter printer(std::cerr, sources);
  diags.setHandler(printer.handler());

  auto start = std::chrono::steady_clock::now();
  std::optional<aoa::plan::Plan> plan =
      whole ? aoa::binplan::readBinaryPlan(planPath, diags)
            : aoa::binplan::readBinaryPlanRank(planPath, rankToRead, diags);
  if (!plan)
    return 1;
  double read = secondsSince(start);
  start = std::chrono::steady_clock::now();
  bool verified = whole ? aoa::verifyPlan(*plan, diags)
                        : aoa::verifyPlanRank(*plan, rankToRead, diags);
  if (!verified)
    return 1;
  aoa::plan::ExchangeSignature signature;
  if (!whole)
    signature = aoa::plan::exchangeSignature(*plan, rankToRead);
  double verify = secondsSince(start);

  size_t instructions = 0;
  for (const aoa::plan::RankProgram &program : plan->programs)
    for (const aoa::plan::Round &round : program.rounds)
      instructions += round.instructions.size();
  std::printf("%s: %u ranks, %s: read %.3f s, verify %.3f s, %zu instructions "
              "of %zu source / %zu destination tensors, peak RSS %ld KiB "
              "(signature %016llx)\n",
              planPath.c_str(), plan->ranks,
              whole ? "whole plan"
                    : ("rank " + std::to_string(rankToRead)).c_str(),
              read, verify, instructions, plan->sourceTensors.size(),
              plan->destinationTensors.size(), peakKiB(),
              (unsigned long long)(signature.sends ^ signature.recvs));
  return 0;
}
