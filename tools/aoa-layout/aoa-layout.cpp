//===- aoa-layout.cpp - Shard metadata from a mesh layout -----------------===//
//
// Parses flags, expands the layout spec (LayoutSpecLoader) and writes the
// metadata (MetadataWriter) atomically.
//
//===----------------------------------------------------------------------===//
#include "aoa/driver/OutputFile.h"
#include "aoa/frontend/LayoutSpecLoader.h"
#include "aoa/ir/MetadataWriter.h"

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

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(category);
  cl::SetVersionPrinter([](raw_ostream &os) { os << "aoa-layout 0.1.0\n"; });
  cl::ParseCommandLineOptions(
      argc, argv,
      "aoa-layout: shard metadata from a device mesh and tensor placements\n\n"
      "  Reads a layout spec ({\"format\": \"aoa-layout\", \"version\": 1,\n"
      "  \"mesh\": ..., \"tensors\": ...}; see docs/layouts.md), expands "
      "every\n"
      "  tensor's placement (Paddle dims_mapping or MindSpore tensor_map)\n"
      "  into one shard per process, and writes aoa-metadata v1. Errors are\n"
      "  reported as file:line:col diagnostics; the exit code is 1 if there\n"
      "  was any, and then nothing is written.\n");

  aoa::SourceManager sources;
  aoa::DiagnosticEngine diags(sources);
  bool color = ::isatty(STDERR_FILENO) && std::getenv("NO_COLOR") == nullptr;
  aoa::TextDiagnosticPrinter printer(std::cerr, sources, color);
  diags.setHandler(printer.handler());

  std::optional<aoa::ShardMetadata> metadata =
      aoa::loadLayoutSpec(specPath, sources, diags);
  if (metadata)
    if (std::optional<std::string> failure = aoa::writeOutput(
            outputPath, aoa::printShardMetadata(*metadata), std::cout))
      diags.error(aoa::SourceLocation{}, *failure);
  if (!diags.hadErrors())
    return 0;
  std::cerr << diags.errorCount()
            << (diags.errorCount() == 1 ? " error" : " errors")
            << " generated.\n";
  return 1;
}
