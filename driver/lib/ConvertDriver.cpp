//===- ConvertDriver.cpp ---------------------------------------------------===//
#include "aoa/driver/ConvertDriver.h"

#include "aoa/driver/CompileDriver.h"
#include "aoa/runtime/storage/AtomicFile.h"
#include "aoa/runtime/support/Error.h"

#include <filesystem>
#include <ostream>
#include <sstream>

namespace aoa {

namespace fs = std::filesystem;

namespace {

void printError(std::ostream &err, const runtime::Error &error) {
  err << "aoa-convert: error: " << error.message << "\n";
  if (!error.hint.empty())
    err << "hint: " << error.hint << "\n";
  err.flush();
}

/// The refusals that need no compilation.
runtime::Status checkCommand(const ConvertCommand &command) {
  std::error_code error;
  if (!fs::is_directory(command.sourceDirectory, error))
    return runtime::Error{"the source '" + command.sourceDirectory +
                              "' is not a directory",
                          "give a checkpoint directory: a Hugging Face model "
                          "directory, a directory of safetensors files, or "
                          "one that aoa-run or aoa-shard wrote"};
  if (command.toHuggingFace == !command.layoutSpecPath.empty())
    return runtime::Error{
        command.toHuggingFace ? "--layout and --to-hf both give the "
                                "destination's layout"
                              : "no destination layout",
        "pass --layout SPEC (a layout spec with rules, docs/layouts.md) or "
        "--to-hf for a Hugging Face directory"};
  if (fs::exists(command.destinationDirectory, error) &&
      fs::equivalent(command.sourceDirectory, command.destinationDirectory,
                     error))
    return runtime::Error{"the destination directory '" +
                              command.destinationDirectory +
                              "' is the source directory",
                          "write the converted checkpoint to another "
                          "directory; aoa-convert never modifies its source"};
  return runtime::Status();
}

} // namespace

int runConvertCommand(const ConvertCommand &command, std::ostream &out,
                      std::ostream &err) {
  if (runtime::Status checked = checkCommand(command); !checked.ok()) {
    printError(err, checked.error());
    return 1;
  }
  const std::string &dst = command.destinationDirectory;
  std::string planName = dst + "/.aoa/plan";

  // Compile: the plan (binary) stays in memory until the run has succeeded.
  CompileOptions compile;
  compile.configPath = command.configPath;
  compile.reverse = command.reverse;
  compile.color = command.color;
  compile.sourceMetadataPath = command.sourceDirectory;
  compile.layoutSpecPath = command.layoutSpecPath;
  compile.toHuggingFace = command.toHuggingFace;
  compile.maxShardSize = command.maxShardSize;
  compile.memoryBudget = command.memoryBudget;
  // One process on one host sees every source file: each rank reads the
  // pieces it writes, so the local backend copies every untransformed piece
  // file to file and counts no buffer for it (a plan whose pieces pass
  // between ranks would count each rank's buffers, ranks x the budget).
  compile.sharedSource = true;
  compile.emit = EmitKind::Plan;
  std::ostringstream planText, sourceMetadata, summary;
  compile.sourceMetadataOutput = &sourceMetadata;
  out << "aoa-convert: compiling "
      << (command.configPath.empty() ? std::string("(no statements: every key "
                                                   "kept)")
                                     : command.configPath)
      << (command.reverse ? " reversed" : "") << " for '"
      << command.sourceDirectory << "' -> "
      << (command.toHuggingFace ? "a Hugging Face directory"
                                : "layout " + command.layoutSpecPath)
      << "\n";
  out.flush();
  if (runCompile(compile, planText, summary) != 0) {
    err << summary.str();
    err << "aoa-convert: nothing was written\n";
    return 1;
  }
  out << summary.str();

  RunCommand run;
  run.planPath = planName;
  run.planText = planText.str();
  run.progress = command.progress;
  run.color = command.color;
  run.options = command.run;
  run.options.sourceDirectory = command.sourceDirectory;
  run.options.destinationDirectory = dst;
  if (int status = runPlanCommand(run, err); status != 0)
    return status;

  // What the conversion was made from, for inspection (and for a user who
  // wants to run the plan with another backend: aoa-run DST/.aoa/plan).
  std::error_code error;
  fs::create_directories(dst + "/.aoa", error);
  runtime::Status kept =
      error ? runtime::Status(runtime::Error{
                  "cannot create '" + dst + "/.aoa': " + error.message(), ""})
            : runtime::writeFileAtomically(planName, *run.planText);
  if (kept.ok())
    kept = runtime::writeFileAtomically(dst + "/.aoa/source-metadata.json",
                                        sourceMetadata.str());
  if (!kept.ok()) {
    err << "aoa-convert: warning: the checkpoint is complete, but keeping its "
           "plan failed: "
        << kept.error().message << "\n";
  }
  out << "aoa-convert: wrote '" << dst << "'"
      << (command.toHuggingFace ? " (a Hugging Face directory)" : "")
      << "; its plan and source metadata are in '" << dst << "/.aoa'\n";
  return 0;
}

} // namespace aoa
