//===- aoa-compare.cpp - Compare two checkpoints key by key ---------------===//
//
// Parses flags, opens both checkpoint directories (CheckpointDirectory.h:
// metadata.json, or a scan of a Hugging Face or plain safetensors
// directory), checks their files (CheckpointReader), compares them
// (CheckpointComparison.h) and prints the report.
//
//===----------------------------------------------------------------------===//
#include "aoa/checkpoint/CheckpointComparison.h"
#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/formats/CheckpointDirectory.h"

#include "llvm/Support/CommandLine.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace cl = llvm::cl;
using aoa::runtime::Error;

static cl::OptionCategory category("aoa-compare options");

static cl::opt<std::string>
    firstDirectory(cl::Positional, cl::Required, cl::value_desc("A"),
                   cl::desc("<A: checkpoint directory>"), cl::cat(category));
static cl::opt<std::string>
    secondDirectory(cl::Positional, cl::Required, cl::value_desc("B"),
                    cl::desc("<B: checkpoint directory>"), cl::cat(category));
static cl::opt<std::string> absoluteTolerance(
    "atol",
    cl::desc("Floating elements within <x> of each other are equal (by "
             "default elements are equal when their bits are)"),
    cl::value_desc("x"), cl::cat(category));
static cl::opt<unsigned> maxKeysReported(
    "max-keys-reported",
    cl::desc("Report at most <n> differing keys in detail (default 20)"),
    cl::value_desc("n"), cl::init(20), cl::cat(category));
static cl::opt<bool>
    verifyHashes("verify-hashes",
                 cl::desc("Also check every shard's bytes against the xxh3 its "
                          "metadata.json records"),
                 cl::cat(category));
static cl::opt<bool> skipReplicas(
    "no-replica-check",
    cl::desc("Do not check that replicas inside each checkpoint agree"),
    cl::cat(category));

/// Exit codes.
enum : int { kIdentical = 0, kDifferent = 1, kFailed = 2 };

static int fail(const Error &error) {
  std::cerr << "aoa-compare: error: " << error.message << "\n";
  if (!error.hint.empty())
    std::cerr << "hint: " << error.hint << "\n";
  return kFailed;
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "aoa-compare 0.1.0\n"; });
  // Bad options are errors like any other: exit code 2, not LLVM's 1.
  bool parsed = cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-compare: compare two checkpoints key by key\n\n"
      "  A and B are checkpoint directories: aoa's output (metadata.json),\n"
      "  Hugging Face directories or directories of *.safetensors files;\n"
      "  their layouts may differ. Reports\n"
      "  keys present in only one, dtype and shape differences, and for\n"
      "  every other key the number of differing elements, the first one's\n"
      "  coordinates and both values, and the largest difference; also\n"
      "  replicas inside a checkpoint that disagree. Elements are equal when\n"
      "  their bits are (so -0 differs from +0, and a NaN equals only the\n"
      "  same NaN), unless --atol is given. The exit code is 0 when the\n"
      "  checkpoints are identical, 1 when they differ, and 2 on errors\n"
      "  (missing or corrupt files, bad metadata, bad options).\n",
      &llvm::errs());
  if (!parsed)
    return kFailed;

  std::optional<double> tolerance;
  if (absoluteTolerance.getNumOccurrences()) {
    const std::string &text = absoluteTolerance;
    char *end = nullptr;
    double value = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0' || !(value >= 0) || std::isinf(value))
      return fail(Error{"--atol=" + text + " is not a tolerance",
                        "give a finite non-negative number, e.g. "
                        "--atol=1e-6"});
    tolerance = value;
  }

  aoa::SourceManager sources;
  aoa::DiagnosticEngine diags(sources);
  bool color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  aoa::TextDiagnosticPrinter printer(std::cerr, sources, color);
  diags.setHandler(printer.handler());

  std::vector<aoa::checkpoint::CheckpointReader> readers;
  readers.reserve(2);
  for (const std::string &directory :
       {firstDirectory.getValue(), secondDirectory.getValue()}) {
    // The files are checked below, with the reader's messages.
    aoa::formats::OpenCheckpointOptions open;
    open.checkFiles = false;
    aoa::runtime::Expected<aoa::formats::CheckpointDirectory> checkpoint =
        aoa::formats::openCheckpointDirectory(directory, sources, diags, open);
    if (!checkpoint) {
      if (!diags.hadErrors())
        return fail(checkpoint.error());
      std::cerr << diags.errorCount()
                << (diags.errorCount() == 1 ? " error" : " errors")
                << " generated.\n";
      return kFailed;
    }
    readers.emplace_back(directory, std::move(checkpoint->metadata));
    std::vector<Error> problems = readers.back().validate();
    for (const Error &problem : problems)
      (void)fail(problem);
    if (!problems.empty())
      return kFailed;
  }

  aoa::checkpoint::ComparisonOptions options;
  options.absoluteTolerance = tolerance;
  options.verifyHashes = verifyHashes;
  options.checkReplicas = !skipReplicas;
  aoa::runtime::Expected<aoa::checkpoint::CheckpointComparison> comparison =
      aoa::checkpoint::compareCheckpoints(readers[0], readers[1], options);
  if (!comparison)
    return fail(comparison.error());
  aoa::checkpoint::ComparisonPrintOptions print;
  print.maxKeysReported = maxKeysReported;
  aoa::checkpoint::printCheckpointComparison(*comparison, std::cout, print);
  return comparison->identical() ? kIdentical : kDifferent;
}
