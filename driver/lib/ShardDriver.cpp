//===- ShardDriver.cpp ----------------------------------------------------===//
#include "aoa/driver/ShardDriver.h"

#include "aoa/checkpoint/CheckpointReader.h"
#include "aoa/checkpoint/ShardedCheckpointWriter.h"
#include "aoa/checkpoint/TensorSupplier.h"
#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/ir/Diagnostics.h"

#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>

namespace aoa {
namespace {

using runtime::Error;

/// The data's source, and what it reads from (a checkpoint reader outlives
/// the supplier that reads through it).
struct DataSource {
  std::optional<checkpoint::CheckpointReader> checkpoint;
  std::unique_ptr<checkpoint::TensorSupplier> supplier;
};

class ShardRun {
public:
  ShardRun(const ShardCommand &command, std::ostream &err)
      : command_(command), err_(err), diags_(sources_),
        printer_(err, sources_, command.color) {
    diags_.setHandler(printer_.handler());
  }

  int run(std::ostream &out);

private:
  int fail(const Error &error) {
    err_ << "aoa-shard: error: " << error.message << "\n";
    if (!error.hint.empty())
      err_ << "hint: " << error.hint << "\n";
    return 1;
  }
  int failWithDiagnostics() {
    err_ << diags_.errorCount()
         << (diags_.errorCount() == 1 ? " error" : " errors")
         << " generated.\n";
    return 1;
  }
  /// Opens --fill, a checkpoint directory or a file of whole tensors;
  /// returns 0, or the exit code of a failure it reported.
  int openSource(DataSource &source);
  int openCheckpoint(DataSource &source);

  const ShardCommand &command_;
  std::ostream &err_;
  SourceManager sources_;
  DiagnosticEngine diags_;
  TextDiagnosticPrinter printer_;
};

int ShardRun::openCheckpoint(DataSource &source) {
  namespace fs = std::filesystem;
  std::error_code ignored;
  if (fs::equivalent(command_.fromPath, command_.outputDirectory, ignored))
    return fail(Error{"the output directory " + command_.outputDirectory +
                          " is the source checkpoint's directory",
                      "write the new checkpoint into another directory"});
  // The files are checked below, with the reader's messages.
  formats::OpenCheckpointOptions open;
  open.checkFiles = false;
  runtime::Expected<formats::CheckpointDirectory> checkpoint =
      formats::openCheckpointDirectory(command_.fromPath, sources_, diags_,
                                       open);
  if (!checkpoint)
    return diags_.hadErrors() ? failWithDiagnostics()
                              : fail(checkpoint.error());
  source.checkpoint.emplace(command_.fromPath,
                            std::move(checkpoint->metadata));
  std::vector<Error> problems = source.checkpoint->validate();
  for (size_t i = 0; i + 1 < problems.size(); ++i)
    (void)fail(problems[i]);
  if (!problems.empty())
    return fail(problems.back());
  source.supplier = checkpoint::makeCheckpointSupplier(*source.checkpoint);
  return 0;
}

int ShardRun::openSource(DataSource &source) {
  if (!command_.fillSpec.empty()) {
    runtime::Expected<checkpoint::SyntheticFill> fill =
        checkpoint::parseSyntheticFill(command_.fillSpec);
    if (!fill)
      return fail(fill.error());
    source.supplier = checkpoint::makeSyntheticSupplier(*fill);
    return 0;
  }
  if (std::filesystem::is_directory(command_.fromPath))
    return openCheckpoint(source);
  runtime::Expected<std::unique_ptr<checkpoint::TensorSupplier>> file =
      checkpoint::openSafetensorsSupplier(command_.fromPath);
  if (!file)
    return fail(file.error());
  source.supplier = std::move(*file);
  return 0;
}

int ShardRun::run(std::ostream &out) {
  if (command_.fromPath.empty() == command_.fillSpec.empty())
    return fail(Error{"give the data's source: either --from or --fill",
                      "--from=DIR (a checkpoint), --from=FILE.safetensors "
                      "(whole tensors), --fill=random[:SEED] or --fill=iota"});
  std::optional<ShardMetadata> layout =
      loadShardMetadata(command_.layoutPath, sources_, diags_);
  if (!layout)
    return failWithDiagnostics();
  DataSource source;
  if (int status = openSource(source))
    return status;

  checkpoint::ShardedCheckpointWriterOptions options;
  options.overwrite = command_.overwrite;
  runtime::Expected<checkpoint::WrittenCheckpoint> written =
      checkpoint::writeShardedCheckpoint(*layout, *source.supplier,
                                         command_.outputDirectory, options);
  if (!written)
    return fail(written.error());
  out << "wrote " << written->fileCount
      << (written->fileCount == 1 ? " file" : " files") << " ("
      << written->metadata.shardCount() << " shards of "
      << written->metadata.tensorCount() << " keys, " << written->dataBytes
      << " bytes of tensor data) from " << source.supplier->description()
      << " to " << command_.outputDirectory << "\n";
  return 0;
}

} // namespace

int runShard(const ShardCommand &command, std::ostream &out,
             std::ostream &err) {
  return ShardRun(command, err).run(out);
}

} // namespace aoa
