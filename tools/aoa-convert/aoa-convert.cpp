//===- aoa-convert.cpp - Scan, compile and run in one command -------------===//
//
// Parses flags and calls the convert driver (driver/ConvertDriver.h).
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/ConvertDriver.h"
#include "aoa/formats/ShardSize.h"
#include "aoa/ir/ByteSize.h"

#include "aoa/runtime/support/ThreadPool.h"

#include "llvm/Support/CommandLine.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory category("aoa-convert options");

static cl::opt<std::string>
    sourceDirectory(cl::Positional, cl::Required, cl::value_desc("SRC_DIR"),
                    cl::desc("<SRC_DIR: a Hugging Face model directory, a "
                             "directory of safetensors files, or aoa's "
                             "output (only read)>"),
                    cl::cat(category));
static cl::opt<std::string> destinationDirectory(
    cl::Positional, cl::Required, cl::value_desc("DST_DIR"),
    cl::desc("<DST_DIR: where the converted checkpoint goes>"),
    cl::cat(category));
static cl::opt<std::string>
    configPath("config",
               cl::desc("AOA statements (Paddle's JSON or a .aoa file); "
                        "without them every key is kept"),
               cl::value_desc("file"), cl::init(""), cl::cat(category));
static cl::opt<std::string> layoutSpec(
    "layout",
    cl::desc("The destination layout: an aoa-layout spec whose rules place "
             "keys by pattern (docs/layouts.md)"),
    cl::value_desc("spec"), cl::init(""), cl::cat(category));
static cl::opt<bool> toHuggingFace(
    "to-hf",
    cl::desc("Write a Hugging Face directory: model-0000K-of-0000N."
             "safetensors, model.safetensors.index.json, and the source's "
             "other files (config.json, tokenizer files, ...)"),
    cl::cat(category));
static cl::opt<std::string> maxShardSize(
    "max-shard-size",
    cl::desc("With --to-hf: the most tensor bytes per file, as Hugging Face "
             "spells sizes (5GB = 5*10^9 bytes, 5GiB = 5*2^30, 100MB, 40KB; "
             "default 5GB)"),
    cl::value_desc("size"), cl::init(""), cl::cat(category));
static cl::opt<bool> reverseFlag("reverse",
                             cl::desc("Apply the statements in reverse "
                                      "(Paddle's aoa_config_reverse)"),
                             cl::cat(category));
static cl::opt<unsigned>
    threads("threads",
            cl::desc("Worker threads for reads, copies and writes (0 = one "
                     "per core)"),
            cl::init(0), cl::cat(category));
static cl::opt<bool> verify(
    "verify",
    cl::desc("Re-read every written file from disk and check its hashes"),
    cl::cat(category));
static cl::opt<bool> overwrite(
    "overwrite", cl::desc("Replace a checkpoint that exists in DST_DIR"),
    cl::cat(category));
static cl::opt<bool>
    restart("restart",
            cl::desc("Discard what an interrupted conversion finished and "
                     "start over (by default it resumes)"),
            cl::cat(category));
static cl::opt<std::string> memoryBudget(
    "memory-budget",
    cl::desc("Buffer bytes each rank may use in one round, e.g. 512M "
             "(default 1G)"),
    cl::value_desc("size"), cl::init(""), cl::cat(category));
static cl::opt<unsigned> stopAfterFiles(
    "stop-after-files",
    cl::desc("For testing resumption: fail as if interrupted once this many "
             "files are finished"),
    cl::init(0), cl::Hidden, cl::cat(category));
static cl::opt<aoa::ProgressStyle> progress(
    "progress", cl::desc("How to show progress on stderr"),
    cl::values(clEnumValN(aoa::ProgressStyle::Auto, "auto",
                          "a bar on a terminal, plain lines otherwise"),
               clEnumValN(aoa::ProgressStyle::Bar, "bar", "a redrawn bar"),
               clEnumValN(aoa::ProgressStyle::Lines, "lines",
                          "a line every 10% (and every 30 s)"),
               clEnumValN(aoa::ProgressStyle::None, "none", "nothing")),
    cl::init(aoa::ProgressStyle::Auto), cl::cat(category));

static int usageError(const std::string &message, const std::string &hint) {
  std::cerr << "aoa-convert: error: " << message << "\nhint: " << hint << "\n";
  return 1;
}

int main(int argc, char **argv) {
  std::signal(SIGXFSZ, SIG_IGN);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) { os << "aoa-convert 0.1.0\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-convert: convert a checkpoint directory in one command\n\n"
      "  aoa-convert SRC_DIR DST_DIR [--config STATEMENTS]\n"
      "              (--layout SPEC | --to-hf [--max-shard-size SIZE])\n"
      "              [--reverse] [--threads N] [--verify]\n\n"
      "  Scans SRC_DIR (headers only), compiles the statements against the\n"
      "  destination layout, and runs the plan with the local backend, with\n"
      "  aoa-run's atomic staging, hashes and progress. The plan and the\n"
      "  source metadata stay in DST_DIR/.aoa/. Running the same command\n"
      "  after an interruption resumes. The exit code is 0 on success and 1\n"
      "  on any error.\n");

  aoa::ConvertCommand command;
  command.sourceDirectory = sourceDirectory;
  command.destinationDirectory = destinationDirectory;
  command.configPath = configPath;
  command.layoutSpecPath = layoutSpec;
  command.toHuggingFace = toHuggingFace;
  command.reverse = reverseFlag;
  command.progress = progress;
  command.color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  if (threads > aoa::runtime::ThreadPool::kMaxThreads) {
    std::cerr << "aoa-convert: error: --threads=" << threads
              << " is more than " << aoa::runtime::ThreadPool::kMaxThreads
              << "\nhint: reads, copies and writes gain nothing past the "
                 "cores and disks; 0 means one thread per core\n";
    return 1;
  }
  command.run.threads = threads;
  command.run.verify = verify;
  command.run.overwrite = overwrite;
  command.run.restart = restart;
  command.run.stopAfterFiles = stopAfterFiles;
  if (!maxShardSize.empty()) {
    if (!toHuggingFace)
      return usageError("--max-shard-size applies only with --to-hf",
                        "add --to-hf, or drop --max-shard-size");
    aoa::runtime::Expected<uint64_t> size =
        aoa::formats::parseShardSize(maxShardSize);
    if (!size || *size == 0)
      return usageError("--max-shard-size=" +
                            (size ? std::string(maxShardSize) + " is zero"
                                  : size.error().message),
                        "write a size as Hugging Face does, e.g. 5GB "
                        "(5*10^9 bytes), 5GiB, 100MB or 40KB");
    command.maxShardSize = *size;
  }
  if (!memoryBudget.empty()) {
    std::optional<int64_t> budget = aoa::parseByteSize(memoryBudget);
    if (!budget)
      return usageError("--memory-budget=" + memoryBudget + " is not a size",
                        "write digits with an optional K, M, G or T suffix, "
                        "e.g. 512M");
    command.memoryBudget = *budget;
  }
  return aoa::runConvertCommand(command, std::cout, std::cerr);
}
