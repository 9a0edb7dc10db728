//===- Mapping.cpp - The mappings document ---------------------------------===//
#include "aoa/ir/Mapping.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <ostream>

namespace aoa {

namespace {

void appendIntegers(std::string &out, const std::vector<int64_t> &values) {
  out += '[';
  char digits[24];
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ", ";
    char *end = std::to_chars(digits, digits + sizeof digits, values[i]).ptr;
    out.append(digits, end);
  }
  out += ']';
}

} // namespace

void TensorDesc::assign(std::string_view newKey, const Box &region,
                        llvm::ArrayRef<int64_t> newGlobalShape,
                        DType newDType) {
  key.assign(newKey.data(), newKey.size());
  globalOffset.resize(region.rank());
  localShape.resize(region.rank());
  for (size_t i = 0; i < region.rank(); ++i) {
    globalOffset[i] = region.dim(i).begin;
    localShape[i] = region.dim(i).size();
  }
  globalShape.assign(newGlobalShape.begin(), newGlobalShape.end());
  dtype = newDType;
}

void appendTensorDescJson(std::string &out, const TensorDesc &desc) {
  out += "{\"key\": ";
  appendJsonString(out, desc.key);
  out += ", \"global_offset\": ";
  appendIntegers(out, desc.globalOffset);
  out += ", \"local_shape\": ";
  appendIntegers(out, desc.localShape);
  out += ", \"global_shape\": ";
  appendIntegers(out, desc.globalShape);
  out += ", \"dtype\": \"";
  out += dtypeName(desc.dtype);
  out += "\"}";
}

MappingsJsonWriter::MappingsJsonWriter(std::ostream &os) : os_(os) {
  os_ << "{\"mappings\": [";
}

void MappingsJsonWriter::write(const TensorDesc &query,
                               llvm::ArrayRef<MappingEntry> entries) {
  buffer_.clear();
  buffer_ += first_ ? "\n" : ",\n";
  first_ = false;
  buffer_ += " {\"query\": ";
  appendTensorDescJson(buffer_, query);
  buffer_ += ",\n  \"entries\": [";
  for (size_t i = 0; i < entries.size(); ++i) {
    const MappingEntry &entry = entries[i];
    buffer_ += i ? ",\n   " : "\n   ";
    buffer_ += "{\"target\": ";
    appendTensorDescJson(buffer_, entry.target);
    buffer_ += ", \"source\": ";
    appendTensorDescJson(buffer_, entry.source);
    buffer_ += ", \"postprocess\": ";
    const std::vector<std::string> &postprocess = entry.postprocessAsWritten;
    if (postprocess.empty()) {
      buffer_ += "null";
    } else {
      buffer_ += '[';
      for (size_t p = 0; p < postprocess.size(); ++p) {
        if (p)
          buffer_ += ", ";
        appendJsonString(buffer_, postprocess[p]);
      }
      buffer_ += ']';
    }
    buffer_ += '}';
  }
  buffer_ += "]}";
  os_.write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
}

void MappingsJsonWriter::finish() {
  if (finished_)
    return;
  finished_ = true;
  os_ << (first_ ? "]}\n" : "\n]}\n");
}

MappingsJsonWriter::~MappingsJsonWriter() { finish(); }

} // namespace aoa
