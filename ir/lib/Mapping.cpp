//===- Mapping.cpp - The mappings document ---------------------------------===//
#include "aoa/ir/Mapping.h"

#include <cstdio>
#include <ostream>

namespace aoa {

void appendJsonString(std::string &out, const std::string &s) {
  out += '"';
  for (char c : s) {
    switch (c) {
    case '"':
      out += "\\\"";
      break;
    case '\\':
      out += "\\\\";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\t':
      out += "\\t";
      break;
    default:
      if (static_cast<unsigned char>(c) < 0x20) {
        char escaped[8];
        std::snprintf(escaped, sizeof escaped, "\\u%04x", c);
        out += escaped;
      } else {
        out += c;
      }
    }
  }
  out += '"';
}

namespace {

void appendIntegers(std::string &out, const std::vector<int64_t> &values) {
  out += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i)
      out += ", ";
    out += std::to_string(values[i]);
  }
  out += ']';
}

} // namespace

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

void MappingsJsonWriter::write(const Mapping &mapping) {
  buffer_.clear();
  buffer_ += first_ ? "\n" : ",\n";
  first_ = false;
  buffer_ += " {\"query\": ";
  appendTensorDescJson(buffer_, mapping.query);
  buffer_ += ",\n  \"entries\": [";
  for (size_t i = 0; i < mapping.entries.size(); ++i) {
    const MappingEntry &entry = mapping.entries[i];
    buffer_ += i ? ",\n   " : "\n   ";
    buffer_ += "{\"target\": ";
    appendTensorDescJson(buffer_, entry.target);
    buffer_ += ", \"source\": ";
    appendTensorDescJson(buffer_, entry.source);
    buffer_ += ", \"postprocess\": ";
    if (entry.postprocess.empty()) {
      buffer_ += "null";
    } else {
      buffer_ += '[';
      for (size_t p = 0; p < entry.postprocess.size(); ++p) {
        if (p)
          buffer_ += ", ";
        appendJsonString(buffer_, entry.postprocess[p]);
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
