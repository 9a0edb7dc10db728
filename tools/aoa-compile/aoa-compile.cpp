//===- aoa-compile.cpp - Compile AOA statements ----------------------------===//
//
// Parses flags and hands them to the compile driver.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/CompileDriver.h"
#include "aoa/formats/ShardSize.h"
#include "aoa/ir/ByteSize.h"
#include "aoa/runtime/support/ThreadPool.h"

#include "ToolAllocator.h"

#include "llvm/Support/CommandLine.h"

#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <optional>
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory category("aoa-compile options");

static cl::opt<std::string> configPath(
    cl::Positional, cl::Required, cl::value_desc("CONFIG"),
    cl::desc("<CONFIG: Paddle JSON config or .aoa statements file>"),
    cl::cat(category));

static cl::opt<aoa::EmitKind> emit(
    "emit",
    cl::desc("Stop after a stage and print it (default: plan with --src, "
             "else ast)"),
    cl::init(aoa::EmitKind::Default),
    cl::values(clEnumValN(aoa::EmitKind::Tokens, "tokens",
                          "the tokens of each statement, one statement a line"),
               clEnumValN(aoa::EmitKind::Ast, "ast",
                          "the parsed statements, one a line"),
               clEnumValN(aoa::EmitKind::Expanded, "expanded",
                          "the statements after every macro pass (needs "
                          "--src)"),
               clEnumValN(aoa::EmitKind::Ir, "ir",
                          "the primitive ops with their result types (needs "
                          "--src)"),
               clEnumValN(aoa::EmitKind::Mappings, "mappings",
                          "Paddle's find_shard_sources answer for every "
                          "destination shard or --queries target, as JSON "
                          "(needs --src)"),
               clEnumValN(aoa::EmitKind::MappingsCount, "mappings-count",
                          "how many targets and entries --emit=mappings "
                          "would write, as one JSON line, without writing "
                          "them (needs --src)"),
               clEnumValN(aoa::EmitKind::Plan, "plan",
                          "the transfer program, binary (docs/plan-format.md; "
                          "needs --src; without --dst it writes the derived "
                          "outputs whole, rank 0, one file); a cost summary "
                          "goes to stderr"),
               clEnumValN(aoa::EmitKind::PlanText, "plan-text",
                          "the transfer program as text (aoa-plan 3), "
                          "otherwise as --emit=plan")),
    cl::cat(category));

static cl::opt<std::string> outputPath(
    "o", cl::desc("Write the output to <file> (atomically); '-' is stdout"),
    cl::value_desc("file"), cl::init("-"), cl::cat(category));

static cl::opt<bool> reverseFlag(
    "reverse",
    cl::desc("Run the statements backwards (Paddle's aoa_config_reverse), "
             "whatever the config says"),
    cl::cat(category));

static cl::opt<std::string> sourceMetadata(
    "src",
    cl::desc("Shard metadata of the source checkpoint (aoa-metadata v1), or "
             "the checkpoint's directory: aoa's output (metadata.json), a "
             "Hugging Face directory or a directory of *.safetensors files"),
    cl::value_desc("file|dir"), cl::cat(category));

static cl::opt<std::string> destinationMetadata(
    "dst",
    cl::desc("Shard metadata of the destination layout (aoa-metadata v1), "
             "or a checkpoint directory whose layout to take; without it "
             "outputs are derived unsharded (one tensor per output, rank 0, "
             "one file)"),
    cl::value_desc("file|dir"), cl::cat(category));

static cl::opt<std::string> layoutSpec(
    "layout",
    cl::desc("Instead of --dst: an aoa-layout spec whose rules place the "
             "statements' outputs by key pattern (docs/layouts.md)"),
    cl::value_desc("spec"), cl::cat(category));

static cl::opt<bool> toHuggingFace(
    "to-hf",
    cl::desc("Instead of --dst: write a Hugging Face directory (every output "
             "whole, model-0000K-of-0000N.safetensors up to "
             "--max-shard-size, model.safetensors.index.json; with --src "
             "DIR, its other files such as config.json are copied)"),
    cl::cat(category));

static cl::opt<std::string> maxShardSize(
    "max-shard-size",
    cl::desc("With --to-hf: the most tensor bytes per file, as Hugging Face "
             "spells sizes (5GB = 5*10^9 bytes, 5GiB = 5*2^30, 100MB, 40KB; "
             "default 5GB)"),
    cl::value_desc("size"), cl::cat(category));

static cl::opt<std::string> queriesPath(
    "queries",
    cl::desc("With --emit=mappings (or mappings-count): answer the targets "
             "of <file> ({\"queries\": [{key, global_offset, local_shape, "
             "global_shape, dtype}]}) instead of every destination shard; a "
             "target may be an optimizer state of a destination key "
             "(KEY.moment1_0, KEY.w_0, ...)"),
    cl::value_desc("file"), cl::cat(category));

static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Buffer memory each rank may use in one round of the plan, in "
             "bytes or with a K/M/G suffix; 0 is no limit (default 1G)"),
    cl::value_desc("size"), cl::init("1G"), cl::cat(category));

static cl::opt<bool> sharedSource(
    "shared-src",
    cl::desc("Every rank of the run sees every source file (a shared file "
             "system, or one host): each rank reads the pieces it writes "
             "itself, so no bytes travel between ranks. The plan records it "
             "and aoa-run --node-local refuses it; without it a rank reads "
             "only the source files the metadata gives it"),
    cl::cat(category));

static cl::list<std::string> printAfter(
    "print-after",
    cl::desc("Print the state after the named pass (to stderr with "
             "--emit=mappings)"),
    cl::value_desc("pass"), cl::CommaSeparated, cl::cat(category));

static cl::opt<bool> printAfterAll("print-after-all",
                                   cl::desc("Print the state after every pass"),
                                   cl::cat(category));

static cl::opt<bool> timePasses(
    "time-passes",
    cl::desc("Print the wall time of every pass and of the steps around the "
             "pipeline to stderr"),
    cl::cat(category));

static cl::opt<unsigned> threads(
    "threads",
    cl::desc("Threads that lower the fused_ffn statements, build and write "
             "the plan, or count the answers of --emit=mappings-count (0 = "
             "one per core); the output's bytes do not depend on it"),
    cl::init(0), cl::cat(category));

static cl::opt<bool> verifyPlan(
    "verify-plan",
    cl::desc("Before writing a plan, also verify every rank's rounds, the "
             "pairing of messages and that every destination element is "
             "written once (aoa-run verifies these when it reads the plan; "
             "without this flag only the plan's files and tensors are "
             "checked here)"),
    cl::cat(category));

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) {
    os << "aoa-compile 0.1.0\nallocator: " << aoa::toolAllocatorName() << "\n";
  });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-compile: compile AOA checkpoint-conversion statements\n\n"
      "  Reads a config (Paddle's JSON {\"aoa_statements\": [...]} or a .aoa\n"
      "  file with one statement per line, ';' separators and '#' comments)\n"
      "  and prints the requested stage. Errors are reported as\n"
      "  file:line:col diagnostics; the exit code is 1 if there was any.\n");

  aoa::CompileOptions options;
  std::optional<int64_t> budget = aoa::parseByteSize(memoryBudget);
  if (!budget) {
    errs() << "aoa-compile: error: --memory-budget='" << memoryBudget
           << "' is not a size\nhint: write bytes or a number with K, M or G, "
              "e.g. --memory-budget=512M\n";
    return 1;
  }
  options.memoryBudget = *budget;
  options.sharedSource = sharedSource;
  if (!maxShardSize.empty()) {
    if (!toHuggingFace) {
      errs() << "aoa-compile: error: --max-shard-size applies only with "
                "--to-hf\nhint: add --to-hf, or drop --max-shard-size\n";
      return 1;
    }
    aoa::runtime::Expected<uint64_t> size =
        aoa::formats::parseShardSize(maxShardSize);
    if (!size || *size == 0) {
      errs() << "aoa-compile: error: --max-shard-size="
             << (size ? std::string(maxShardSize) + " is zero"
                      : size.error().message)
             << "\nhint: write a size as Hugging Face does, e.g. 5GB (5*10^9 "
                "bytes), 5GiB, 100MB or 40KB\n";
      return 1;
    }
    options.maxShardSize = *size;
  }
  options.layoutSpecPath = layoutSpec;
  options.toHuggingFace = toHuggingFace;
  options.configPath = configPath;
  options.emit = emit;
  options.outputPath = outputPath;
  options.reverse = reverseFlag;
  options.sourceMetadataPath = sourceMetadata;
  options.destinationMetadataPath = destinationMetadata;
  options.queriesPath = queriesPath;
  options.printAfter.insert(printAfter.begin(), printAfter.end());
  options.printAfterAll = printAfterAll;
  options.timePasses = timePasses;
  options.verifyPrograms = verifyPlan;
  if (threads > aoa::runtime::ThreadPool::kMaxThreads) {
    std::cerr << "aoa-compile: error: --threads=" << threads << " is more than "
              << aoa::runtime::ThreadPool::kMaxThreads
              << "\nhint: 0 means one thread per core\n";
    return 1;
  }
  options.threads =
      threads == 0 ? aoa::runtime::defaultThreadCount() : unsigned(threads);
  options.color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  // Freeing the compiler's state would take seconds at the end of a large
  // compile: the process ends without it and the system takes the memory
  // back (the output is committed, the streams are flushed).
  aoa::CompileWorkspacePtr workspace;
  int code = aoa::runCompile(options, std::cout, std::cerr, &workspace);
  std::cout.flush();
  std::cerr.flush();
  std::fflush(nullptr);
  std::_Exit(code);
}
