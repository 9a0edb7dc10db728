//===- aoa-shard.cpp - Write a checkpoint in a given layout ---------------===//
//
// Parses flags and calls runShard (aoa/driver/ShardDriver.h): load the
// layout, pick the data's source, write the checkpoint.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/ShardDriver.h"

#include "llvm/Support/CommandLine.h"

#include <csignal>
#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace cl = llvm::cl;

static cl::OptionCategory category("aoa-shard options");

static cl::opt<std::string>
    layoutPath(cl::Positional, cl::Required, cl::value_desc("LAYOUT"),
               cl::desc("<LAYOUT: shard metadata (aoa-metadata JSON)>"),
               cl::cat(category));
static cl::opt<std::string> fromPath(
    "from",
    cl::desc("Take the data from a checkpoint directory (aoa's output with "
             "its metadata.json, a Hugging Face directory or a directory of "
             "*.safetensors files) or from a safetensors file of whole "
             "tensors named by their keys"),
    cl::value_desc("dir|file"), cl::cat(category));
static cl::opt<std::string>
    fillSpec("fill",
             cl::desc("Take synthetic data instead: random, random:SEED or "
                      "iota"),
             cl::value_desc("spec"), cl::cat(category));
static cl::opt<std::string> outputDirectory(
    "o", cl::Required,
    cl::desc("Write the checkpoint into <dir> (created when missing)"),
    cl::value_desc("dir"), cl::cat(category));
static cl::opt<bool> overwrite(
    "overwrite",
    cl::desc("Replace files and a metadata.json that already exist in the "
             "output directory"),
    cl::cat(category));

int main(int argc, char **argv) {
  // A file-size limit (ulimit -f) must be an error message, not a signal.
  std::signal(SIGXFSZ, SIG_IGN);
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "aoa-shard 0.1.0\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-shard: write a sharded checkpoint in a layout\n\n"
      "  Writes one safetensors file per file of LAYOUT (e.g. from\n"
      "  aoa-layout) holding its shards, then <dir>/metadata.json: the\n"
      "  layout with the xxh3-64 hash of every shard. The data comes from\n"
      "  --from (a checkpoint with the same keys, dtypes and shapes in any\n"
      "  layout, or one safetensors file of whole tensors) or --fill\n"
      "  (values that depend only on the key and the element, so every\n"
      "  layout of a key holds the same values). Everything is checked\n"
      "  before the first file is written; each file appears atomically and\n"
      "  metadata.json last. The exit code is 0 on success and 1 on any\n"
      "  error; a failed run removes the files it wrote and writes no\n"
      "  metadata.json.\n");

  aoa::ShardCommand command;
  command.layoutPath = layoutPath;
  command.fromPath = fromPath;
  command.fillSpec = fillSpec;
  command.outputDirectory = outputDirectory;
  command.overwrite = overwrite;
  command.color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  return aoa::runShard(command, std::cout, std::cerr);
}
