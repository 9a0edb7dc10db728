//===- SourceFacts.cpp ----------------------------------------------------===//
#include "aoa/formats/SourceFacts.h"

#include "aoa/runtime/storage/SafetensorsReader.h"

#include <optional>
#include <vector>

namespace aoa::formats {

runtime::Status recordSourceFacts(plan::Plan &plan,
                                  const std::string &directory) {
  std::vector<std::optional<runtime::SafetensorsReader>> readers(
      plan.sourceFiles.size());
  for (size_t i = 0; i < plan.sourceFiles.size(); ++i) {
    runtime::Expected<runtime::SafetensorsReader> reader =
        runtime::SafetensorsReader::open(directory + "/" +
                                         plan.sourceFiles[i].path);
    if (!reader)
      return reader.error();
    plan.sourceFiles[i].size = reader->fileSize();
    readers[i].emplace(std::move(*reader));
  }
  for (plan::StoredTensor &tensor : plan.sourceTensors) {
    const runtime::SafetensorsReader &reader = *readers[tensor.file];
    const runtime::SafetensorsTensor *entry = reader.find(tensor.name);
    if (!entry)
      return runtime::Error{reader.path() + ": tensor '" + tensor.name +
                                "' is not in the file",
                            "the directory changed while it was compiled; "
                            "compile again"};
    tensor.data = plan::ByteRange{entry->dataBegin, entry->dataEnd};
  }
  return runtime::Status();
}

} // namespace aoa::formats
