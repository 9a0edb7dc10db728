//===- SourceLayoutCheck.cpp ----------------------------------------------===//
#include "aoa/driver/SourceLayoutCheck.h"

#include "aoa/formats/CheckpointDirectory.h"
#include "aoa/formats/plan/LayoutHash.h"
#include "aoa/ir/Diagnostics.h"

#include <cinttypes>
#include <cstdio>
#include <filesystem>

namespace aoa {

namespace {

std::string hex(uint64_t v) {
  char text[19];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, v);
  return text;
}

} // namespace

runtime::Status checkSourceLayout(const std::string &planPath,
                                  const binplan::PlanOrigin &origin,
                                  const std::string &sourceDirectory) {
  if (!origin.sourceLayoutHash)
    return runtime::Status();
  // Only a directory described by metadata.json: a scanned one (Hugging Face,
  // plain safetensors) stores every key whole under its own name, so its
  // layout is its files' headers, which the run checks file by file against
  // what the plan records of them; scanning them here too would only read
  // every header twice.
  std::error_code ignored;
  if (!std::filesystem::is_regular_file(
          std::filesystem::path(sourceDirectory) / formats::kAoaMetadataFile,
          ignored))
    return runtime::Status();
  // Problems opening the directory are not this check's to report: the run
  // checks every source file it reads.
  SourceManager sources;
  DiagnosticEngine quiet(sources);
  formats::OpenCheckpointOptions options;
  options.checkFiles = false;
  runtime::Expected<formats::CheckpointDirectory> checkpoint =
      formats::openCheckpointDirectory(sourceDirectory, sources, quiet,
                                       options);
  if (!checkpoint)
    return runtime::Status();
  uint64_t found = binplan::layoutHash(checkpoint->metadata);
  if (found == *origin.sourceLayoutHash)
    return runtime::Status();
  std::string described = "its " + checkpoint->descriptionFile;
  return runtime::Error{
      "the plan '" + planPath +
          "' was compiled for another source layout: it records layout hash " +
          hex(*origin.sourceLayoutHash) + ", the source directory '" +
          sourceDirectory + "' (" + described + ") has " + hex(found),
      "compile the plan against this source (aoa-compile CONFIG --src " +
          sourceDirectory +
          " ...), or run it on the checkpoint it was compiled for"};
}

} // namespace aoa
