//===- HuggingFaceIndex.h - model.safetensors.index.json --------*- C++ -*-===//
//
// The index of a Hugging Face directory whose tensors are split over several
// safetensors files: which file holds each tensor, and the tensors' total
// size. In ir because the compiler's tools and the runtime both write it.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_HUGGINGFACEINDEX_H
#define AOA_IR_HUGGINGFACEINDEX_H

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace aoa {

/// The index text exactly as transformers' save_pretrained writes it
/// (`json.dumps(index, indent=2, sort_keys=True) + "\n"`): `metadata` with
/// `total_size` (the sum of the tensors' data bytes), then `weight_map`
/// (tensor name -> file name) sorted by name, non-ASCII characters as
/// \uXXXX escapes. `weightMap` may be in any order; names must be unique.
std::string
formatHuggingFaceIndex(std::vector<std::pair<std::string, std::string>> weightMap,
                       uint64_t totalSize);

/// Appends `text` (UTF-8) as Python's json.dumps writes a str with
/// ensure_ascii: short escapes for \" \\ \b \f \n \r \t, everything
/// outside ' ' .. '~' as \uXXXX (UTF-16 units: characters past U+FFFF as
/// surrogate pairs); a malformed UTF-8 byte is written as U+FFFD.
void appendPythonJsonString(std::string &out, std::string_view text);

} // namespace aoa

#endif // AOA_IR_HUGGINGFACEINDEX_H
