//===- FuzzMetadata.cpp - Fuzz target: shard metadata ---------------------===//
//
// The input is an aoa-metadata v1 file (--src / --dst of aoa-compile, a
// checkpoint's metadata.json), loaded by the metadata loader.
//
//===----------------------------------------------------------------------===//
#include "FuzzSupport.h"

#include "aoa/formats/metadata/MetadataLoader.h"

#include <cstddef>
#include <cstdint>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  aoa::fuzz::RenderedDiagnostics r;
  aoa::loadShardMetadataText(
      "fuzz-metadata.json",
      std::string_view(reinterpret_cast<const char *>(data), size), r.sources,
      r.diags);
  return 0;
}
