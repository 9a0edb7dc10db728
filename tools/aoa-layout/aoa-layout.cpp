//===- aoa-layout.cpp - Shard metadata from a mesh layout -----------------===//
//
// Parses flags, loads the key list (--src, or the outputs of --config's
// statements over it), expands the layout spec (LayoutSpecLoader) and writes
// the metadata (MetadataWriter) atomically.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/MetadataArgument.h"
#include "aoa/driver/OutputFile.h"
#include "aoa/driver/StatementOutputs.h"
#include "aoa/formats/metadata/LayoutSpecLoader.h"
#include "aoa/formats/metadata/MetadataLoader.h"
#include "aoa/formats/metadata/MetadataWriter.h"

#include "llvm/Support/CommandLine.h"

#include <cstdlib>
#include <iostream>
#include <unistd.h>

using namespace llvm;

static cl::OptionCategory category("aoa-layout options");

static cl::opt<std::string> specPath(cl::Positional, cl::Required,
                                     cl::value_desc("SPEC"),
                                     cl::desc("<SPEC: layout spec (JSON)>"),
                                     cl::cat(category));

static cl::opt<std::string> outputPath(
    "o", cl::desc("Write the metadata to <file> (atomically); '-' is stdout"),
    cl::value_desc("file"), cl::init("-"), cl::cat(category));

static cl::opt<std::string> sourcePath(
    "src",
    cl::desc("The keys to place (with dtypes and shapes): shard metadata "
             "(aoa-metadata v1) of a checkpoint, or its directory (a Hugging "
             "Face directory, *.safetensors files, aoa's output)"),
    cl::value_desc("file|dir"), cl::cat(category));

static cl::opt<std::string> configPath(
    "config",
    cl::desc("Place the keys these statements write from --src instead "
             "(what aoa-compile CONFIG --src writes without --dst)"),
    cl::value_desc("statements"), cl::cat(category));

/// The key list --src and --config describe; nullopt after errors.
static std::optional<aoa::LayoutKeyList>
loadKeyList(aoa::SourceManager &sources, aoa::DiagnosticEngine &diags) {
  std::string locatePath;
  std::optional<aoa::ShardMetadata> source =
      aoa::loadMetadataArgument(sourcePath, sources, diags, locatePath);
  if (!source)
    return std::nullopt;
  if (configPath.empty())
    return aoa::layoutKeysOf(*source, "the source '" + sourcePath + "'");
  std::optional<aoa::ShardMetadata> outputs = aoa::deriveStatementOutputs(
      configPath, *source, sourcePath, sources, diags);
  if (!outputs)
    return std::nullopt;
  return aoa::layoutKeysOf(*outputs, "the outputs of '" + configPath + "'");
}

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) { os << "aoa-layout 0.1.0\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-layout: shard metadata from a device mesh and tensor placements\n\n"
      "  aoa-layout SPEC [-o OUT]\n"
      "  aoa-layout SPEC --src METADATA|DIR [--config STATEMENTS] [-o OUT]\n\n"
      "  Reads a layout spec ({\"format\": \"aoa-layout\", \"version\": 1,\n"
      "  \"mesh\": ..., \"tensors\": ..., \"rules\": ...}; see "
      "docs/layouts.md),\n"
      "  expands every tensor's placement (Paddle dims_mapping or MindSpore\n"
      "  tensor_map, replicate, or flat) into one shard per process, and\n"
      "  writes aoa-metadata v1.\n\n"
      "  With --src, the spec places the checkpoint's keys, in its order,\n"
      "  taking dtypes and shapes from it: ordered rules over key patterns\n"
      "  (\"match\": glob or \"regex\", first match wins, a \"default\"),\n"
      "  layers on pipeline stages (\"stages\") and experts on\n"
      "  expert-parallel ranks (\"experts\") by the $LAYER_ID / $EXPERT_ID a\n"
      "  rule captures. With --config too, it places the keys the\n"
      "  statements write from that checkpoint instead.\n\n"
      "  Globs match whole keys: * any run of characters (dots included),\n"
      "  ? one character, [a-z] / [!a-z] a class, {a,b} alternatives,\n"
      "  \\c the character c, $LAYER_ID / $EXPERT_ID a run of digits.\n"
      "  Regexes are ECMAScript, also matching whole keys.\n\n"
      "  Errors are reported as file:line:col diagnostics; the exit code is\n"
      "  1 if there was any, and then nothing is written.\n");

  aoa::SourceManager sources;
  aoa::DiagnosticEngine diags(sources);
  bool color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  aoa::TextDiagnosticPrinter printer(std::cerr, sources, color);
  diags.setHandler(printer.handler());

  std::optional<aoa::LayoutKeyList> keys;
  if (!configPath.empty() && sourcePath.empty())
    diags.error(aoa::SourceLocation{}, "--config needs --src")
        .hint("the statements' outputs are derived from a source checkpoint: "
              "pass --src METADATA");
  else if (!sourcePath.empty())
    keys = loadKeyList(sources, diags);
  if (!diags.hadErrors()) {
    std::optional<aoa::ShardMetadata> metadata =
        aoa::loadLayoutSpec(specPath, sources, diags, keys ? &*keys : nullptr);
    if (metadata)
      if (std::optional<std::string> failure = aoa::writeOutput(
              outputPath, aoa::printShardMetadata(*metadata), std::cout))
        diags.error(aoa::SourceLocation{}, *failure);
  }
  if (!diags.hadErrors())
    return 0;
  std::cerr << diags.errorCount()
            << (diags.errorCount() == 1 ? " error" : " errors")
            << " generated.\n";
  return 1;
}
