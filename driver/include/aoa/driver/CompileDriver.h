//===- CompileDriver.h - The aoa-compile pipeline ---------------*- C++ -*-===//
//
// Runs the stages of aoa-compile for options already parsed by the tool's
// main: load the config and the metadata, parse, run the passes, and stop at
// the requested emission.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_DRIVER_COMPILEDRIVER_H
#define AOA_DRIVER_COMPILEDRIVER_H

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <set>
#include <string>

namespace aoa {

/// Plan is the binary container (formats/plan), PlanText the text form.
enum class EmitKind {
  Default,
  Tokens,
  Ast,
  Expanded,
  Ir,
  Mappings,
  MappingsCount,
  Plan,
  PlanText
};

struct CompileOptions {
  /// JSON or .aoa statements; empty: no statements (with --src, every key
  /// is kept: a pure re-layout).
  std::string configPath;
  /// Default: the plan when source metadata is given, else the AST.
  EmitKind emit = EmitKind::Default;
  /// Where emitted text goes; "-" is standard output.
  std::string outputPath = "-";
  /// Forces Paddle's aoa_config_reverse on, whatever the config says.
  bool reverse = false;
  /// Print diagnostics with ANSI colors.
  bool color = false;
  /// Shard metadata of the source checkpoint (aoa-metadata v1), or the
  /// checkpoint's directory (its metadata.json, or a Hugging Face or plain
  /// safetensors directory, scanned: formats/CheckpointDirectory.h).
  std::string sourceMetadataPath;
  /// Shard metadata of the destination layout, or a directory as above;
  /// optional.
  std::string destinationMetadataPath;
  /// Instead of --dst: a layout spec whose rules place the statements'
  /// outputs (docs/layouts.md) ...
  std::string layoutSpecPath;
  /// ... or a Hugging Face directory (plan format "huggingface"): the
  /// outputs packed into files of at most maxShardSize bytes.
  bool toHuggingFace = false;
  uint64_t maxShardSize = 5000000000ULL;
  /// Where to write the source metadata as loaded or scanned (aoa-metadata
  /// v1), when set; aoa-convert keeps it beside the plan.
  std::ostream *sourceMetadataOutput = nullptr;
  /// Targets for --emit=mappings (`{"queries": [...]}`); empty: every
  /// destination shard.
  std::string queriesPath;
  /// Buffer bytes each rank may use in one round of the plan.
  int64_t memoryBudget = int64_t(1) << 30;
  /// --shared-src: every rank of the run will see every source file (a
  /// shared file system, or one host), so each rank reads the pieces it
  /// writes itself and no bytes travel between ranks. The plan records it
  /// (plan::SourceAccess::Shared); aoa-run --node-local refuses such plans.
  bool sharedSource = false;
  /// Pass instrumentation: --print-after=NAME, --print-after-all,
  /// --time-passes (printed to `err`).
  std::set<std::string> printAfter;
  bool printAfterAll = false;
  bool timePasses = false;
  /// --verify-plan: also check every rank's rounds, the messages' pairing
  /// and the destination's coverage before writing the plan (aoa-run checks
  /// them when it reads the plan); by default only the plan's tables.
  bool verifyPrograms = false;
  /// Threads that build and write the plan (at least 1); the plan's bytes
  /// do not depend on it.
  unsigned threads = 1;
};

/// What a compile built and needs no more: the loaded metadata, the passes'
/// state and the plan. Freeing its millions of objects takes seconds, so a
/// process that ends right after compiling may take it over and exit
/// without freeing it (aoa-compile does, as clang does with -disable-free).
struct CompileWorkspace;
struct CompileWorkspaceDeleter {
  void operator()(CompileWorkspace *workspace) const;
};
using CompileWorkspacePtr =
    std::unique_ptr<CompileWorkspace, CompileWorkspaceDeleter>;

/// Runs the pipeline; diagnostics go to `err`, emitted text to `out` (or the
/// output file). Returns the process exit code: 0 on success, 1 on errors.
/// With `keep`, the workspace is handed over there instead of being freed.
int runCompile(const CompileOptions &options, std::ostream &out,
               std::ostream &err, CompileWorkspacePtr *keep = nullptr);

} // namespace aoa

#endif // AOA_DRIVER_COMPILEDRIVER_H
