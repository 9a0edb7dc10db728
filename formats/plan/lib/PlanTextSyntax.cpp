//===- PlanTextSyntax.cpp -------------------------------------------------===//
#include "PlanTextSyntax.h"

namespace aoa {
namespace plantext {

std::string_view opcodeName(plan::Opcode opcode) {
  switch (opcode) {
  case plan::Opcode::Read:
    return "read";
  case plan::Opcode::Send:
    return "send";
  case plan::Opcode::Recv:
    return "recv";
  case plan::Opcode::Copy:
    return "copy";
  case plan::Opcode::Write:
    return "write";
  }
  return "read";
}

void appendQuoted(std::string &out, std::string_view text) {
  out += '"';
  for (char c : text) {
    unsigned char u = static_cast<unsigned char>(c);
    switch (c) {
    case '"':
      out += "\\\"";
      continue;
    case '\\':
      out += "\\\\";
      continue;
    case '\n':
      out += "\\n";
      continue;
    case '\t':
      out += "\\t";
      continue;
    case '\r':
      out += "\\r";
      continue;
    case '\b':
      out += "\\b";
      continue;
    case '\f':
      out += "\\f";
      continue;
    default:
      break;
    }
    if (u < 0x20 || u == 0x7f) {
      static const char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 15];
    } else {
      out += c;
    }
  }
  out += '"';
}

} // namespace plantext
} // namespace aoa
