//===- aoa-shard.cpp - Write a checkpoint in a given layout ---------------===//
//
// Parses flags, loads the layout (MetadataLoader), picks the data source
// (TensorSupplier.h: a checkpoint directory of any kind, opened with
// CheckpointDirectory.h; a file of whole tensors; a synthetic fill) and
// writes the checkpoint (ShardedCheckpointWriter.h).
//
//===----------------------------------------------------------------------===//
#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/checkpoint/ShardedCheckpointWriter.h"
#include "aoa/checkpoint/TensorSupplier.h"
#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/metadata/MetadataLoader.h"

#include "llvm/Support/CommandLine.h"

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <optional>
#include <unistd.h>

namespace cl = llvm::cl;
using aoa::runtime::Error;

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

static int fail(const Error &error) {
  std::cerr << "aoa-shard: error: " << error.message << "\n";
  if (!error.hint.empty())
    std::cerr << "hint: " << error.hint << "\n";
  return 1;
}

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

  if (fromPath.empty() == fillSpec.empty())
    return fail(Error{"give the data's source: either --from or --fill",
                      "--from=DIR (a checkpoint), --from=FILE.safetensors "
                      "(whole tensors), --fill=random[:SEED] or --fill=iota"});

  aoa::SourceManager sources;
  aoa::DiagnosticEngine diags(sources);
  bool color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  aoa::TextDiagnosticPrinter printer(std::cerr, sources, color);
  diags.setHandler(printer.handler());
  auto loadMetadata = [&](const std::string &path) {
    std::optional<aoa::ShardMetadata> metadata =
        aoa::loadShardMetadata(path, sources, diags);
    if (!metadata)
      std::cerr << diags.errorCount()
                << (diags.errorCount() == 1 ? " error" : " errors")
                << " generated.\n";
    return metadata;
  };

  std::optional<aoa::ShardMetadata> layout = loadMetadata(layoutPath);
  if (!layout)
    return 1;

  std::optional<aoa::checkpoint::CheckpointReader> source;
  std::unique_ptr<aoa::checkpoint::TensorSupplier> supplier;
  namespace fs = std::filesystem;
  std::error_code ignored;
  if (!fillSpec.empty()) {
    aoa::runtime::Expected<aoa::checkpoint::SyntheticFill> fill =
        aoa::checkpoint::parseSyntheticFill(fillSpec);
    if (!fill)
      return fail(fill.error());
    supplier = aoa::checkpoint::makeSyntheticSupplier(*fill);
  } else if (fs::is_directory(fromPath.getValue())) {
    if (fs::equivalent(fromPath.getValue(), outputDirectory.getValue(),
                       ignored))
      return fail(Error{"the output directory " + outputDirectory +
                            " is the source checkpoint's directory",
                        "write the new checkpoint into another directory"});
    // The files are checked below, with the reader's messages.
    aoa::formats::OpenCheckpointOptions open;
    open.checkFiles = false;
    aoa::runtime::Expected<aoa::formats::CheckpointDirectory> checkpoint =
        aoa::formats::openCheckpointDirectory(fromPath, sources, diags, open);
    if (!checkpoint) {
      if (!diags.hadErrors())
        return fail(checkpoint.error());
      std::cerr << diags.errorCount()
                << (diags.errorCount() == 1 ? " error" : " errors")
                << " generated.\n";
      return 1;
    }
    source.emplace(fromPath, std::move(checkpoint->metadata));
    std::vector<Error> problems = source->validate();
    for (size_t i = 0; i + 1 < problems.size(); ++i)
      (void)fail(problems[i]);
    if (!problems.empty())
      return fail(problems.back());
    supplier = aoa::checkpoint::makeCheckpointSupplier(*source);
  } else {
    aoa::runtime::Expected<std::unique_ptr<aoa::checkpoint::TensorSupplier>> file =
        aoa::checkpoint::openSafetensorsSupplier(fromPath);
    if (!file)
      return fail(file.error());
    supplier = std::move(*file);
  }

  aoa::checkpoint::ShardedCheckpointWriterOptions options;
  options.overwrite = overwrite;
  aoa::runtime::Expected<aoa::checkpoint::WrittenCheckpoint> written =
      aoa::checkpoint::writeShardedCheckpoint(*layout, *supplier, outputDirectory,
                                           options);
  if (!written)
    return fail(written.error());
  std::cout << "wrote " << written->fileCount
            << (written->fileCount == 1 ? " file" : " files") << " ("
            << written->metadata.shardCount() << " shards of "
            << written->metadata.tensorCount() << " keys, "
            << written->dataBytes << " bytes of tensor data) from "
            << supplier->description() << " to " << outputDirectory << "\n";
  return 0;
}
