//===- aoa-scan.cpp - Shard metadata for a checkpoint directory -----------===//
//
// Parses flags, opens the directory (CheckpointDirectory.h: metadata.json,
// or a scan of a Hugging Face or plain safetensors directory), writes its
// shard metadata (MetadataWriter) atomically and prints a summary.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/OutputFile.h"
#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/metadata/MetadataWriter.h"

#include "llvm/Support/CommandLine.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

namespace cl = llvm::cl;
using aoa::formats::Error;

static cl::OptionCategory category("aoa-scan options");

static cl::opt<std::string> directory(cl::Positional, cl::Required,
                                      cl::value_desc("DIR"),
                                      cl::desc("<DIR: checkpoint directory>"),
                                      cl::cat(category));
static cl::opt<std::string> outputPath(
    "o", cl::desc("Write the metadata to <file> (atomically); '-' is stdout"),
    cl::value_desc("file"), cl::init("-"), cl::cat(category));

static int fail(const Error &error) {
  std::cerr << "aoa-scan: error: " << error.message << "\n";
  if (!error.hint.empty())
    std::cerr << "hint: " << error.hint << "\n";
  return 1;
}

static std::string plural(size_t count, const char *one, const char *many) {
  return std::to_string(count) + " " + (count == 1 ? one : many);
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { os << "aoa-scan 0.1.0\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-scan: shard metadata for an existing checkpoint directory\n\n"
      "  DIR is aoa's output (its metadata.json is used), a Hugging Face\n"
      "  directory (model.safetensors.index.json and the files it names, or\n"
      "  model.safetensors) or a directory of *.safetensors files, in this\n"
      "  order of precedence. Only headers are read, and every one is\n"
      "  validated; an index must agree with its files. Writes aoa-metadata\n"
      "  v1 (every tensor one whole shard: rank 0, its file, its name) to\n"
      "  stdout or -o, and a summary line to stderr. The exit code is 0 on\n"
      "  success and 1 on any error.\n");

  aoa::SourceManager sources;
  aoa::DiagnosticEngine diags(sources);
  bool color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  aoa::TextDiagnosticPrinter printer(std::cerr, sources, color);
  diags.setHandler(printer.handler());

  aoa::runtime::Expected<aoa::formats::CheckpointDirectory> checkpoint =
      aoa::formats::openCheckpointDirectory(directory, sources, diags);
  if (!checkpoint) {
    if (!diags.hadErrors())
      return fail(checkpoint.error());
    std::cerr << diags.errorCount()
              << (diags.errorCount() == 1 ? " error" : " errors")
              << " generated.\n";
    return 1;
  }

  std::string error;
  std::optional<aoa::OutputFile> output =
      aoa::OutputFile::open(outputPath, std::cout, error);
  if (!output)
    return fail(Error{error, "check that the output's directory exists and "
                             "is writable"});
  aoa::writeShardMetadata(checkpoint->metadata, output->stream());
  if (std::optional<std::string> failure = output->commit())
    return fail(Error{*failure, "check the disk and the output path"});

  std::string summary =
      directory + ": " +
      std::string(aoa::formats::checkpointKindName(checkpoint->kind));
  if (!checkpoint->descriptionFile.empty())
    summary += " (" + checkpoint->descriptionFile + ")";
  summary += ", " + plural(checkpoint->tensorFiles.size(), "file", "files") +
             ", " +
             plural(checkpoint->metadata.tensorCount(), "tensor", "tensors");
  if (checkpoint->kind == aoa::formats::CheckpointKind::AoaMetadata)
    summary += " (" +
               plural(checkpoint->metadata.shardCount(), "shard", "shards") +
               ")";
  summary += ", " + std::to_string(checkpoint->tensorBytes) +
             " bytes of tensor data, " +
             plural(checkpoint->otherFiles.size(), "other file", "other files");
  if (!checkpoint->ignoredFiles.empty()) {
    summary += ", ignored:";
    for (const std::string &file : checkpoint->ignoredFiles)
      summary += " " + file;
  }
  std::cerr << summary << "\n";
  return 0;
}
