//===- PlanWriter.cpp
//------------------------------------------------------===//
//
// The text is built in a string and handed to the stream in large blocks: a
// DeepSeek-sized plan has millions of short lines, and an ostream call per
// token would dominate.
//
//===----------------------------------------------------------------------===//
#include "aoa/formats/plan/PlanWriter.h"

#include "PlanTextSyntax.h"

#include <charconv>
#include <ostream>
#include <sstream>

namespace aoa {

namespace {

using namespace plantext;

class PlanTextEmitter {
public:
  PlanTextEmitter(const plan::Plan &plan, std::ostream &os)
      : plan_(plan), os_(os) {
    out_.reserve(kFlushBytes + 4096);
  }

  void emit() {
    line(kHeader);
    space();
    integer(plan::kFormatVersion);
    line(kRanks);
    space();
    integer(plan_.ranks);
    line(kMemoryBudget);
    space();
    integer(plan_.memoryBudget);
    // Only a non-default format is written, so earlier plans keep their text.
    if (plan_.destinationFormat == plan::DestinationFormat::HuggingFace) {
      line(kDestinationFormat);
      space();
      out_ += kFormatHuggingFace;
    }
    // Likewise only shared access (aoa-compile --shared-src).
    if (plan_.sourceAccess == plan::SourceAccess::Shared) {
      line(kSourceAccess);
      space();
      out_ += kAccessShared;
    }
    files(kSourceFile, plan_.sourceFiles);
    files(kDestinationFile, plan_.destinationFiles);
    tensors(kSourceTensor, plan_.sourceTensors);
    tensors(kDestinationTensor, plan_.destinationTensors);
    for (const std::string &key : plan_.addedKeys) {
      line(kAddedKey);
      space();
      appendQuoted(out_, key);
    }
    for (const std::string &path : plan_.copiedFiles) {
      line(kCopyFile);
      space();
      appendQuoted(out_, path);
    }
    for (size_t r = 0; r < plan_.programs.size(); ++r) {
      line(kRank);
      space();
      integer(r);
      const plan::RankProgram &program = plan_.programs[r];
      for (size_t k = 0; k < program.rounds.size(); ++k) {
        line("  ");
        out_ += kRound;
        space();
        integer(k);
        for (const plan::Instruction &in : program.rounds[k].instructions)
          instruction(program.rounds[k], in);
      }
    }
    out_ += '\n';
    flush();
  }

private:
  static constexpr size_t kFlushBytes = 1 << 20;

  /// Ends the previous line and starts one with `word`.
  void line(std::string_view word) {
    if (started_)
      out_ += '\n';
    started_ = true;
    if (out_.size() >= kFlushBytes)
      flush();
    out_ += word;
  }
  void space() { out_ += ' '; }
  void word(std::string_view text) {
    out_ += ' ';
    out_ += text;
  }
  template <typename Int> void integer(Int value) {
    char digits[24];
    auto result = std::to_chars(digits, digits + sizeof(digits), value);
    out_.append(digits, result.ptr);
  }
  void shape(llvm::ArrayRef<int64_t> extents) {
    out_ += '[';
    for (size_t i = 0; i < extents.size(); ++i) {
      if (i)
        out_ += ", ";
      integer(extents[i]);
    }
    out_ += ']';
  }
  void type(DType dtype, llvm::ArrayRef<int64_t> extents) {
    out_ += dtypeName(dtype);
    shape(extents);
  }
  void box(const Box &region) { out_ += region.toString(); }
  void buffer(uint32_t id) {
    out_ += '%';
    integer(id);
  }
  /// A buffer's declared type, or `<undeclared>` (see PlanWriter.h).
  void bufferType(const plan::Round &round, uint32_t id) {
    if (id < round.buffers.size())
      type(round.buffers[id].dtype, round.buffers[id].shape);
    else
      out_ += "<undeclared>";
  }

  void files(std::string_view keyword, const std::vector<plan::File> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      line(keyword);
      space();
      integer(i);
      word(kFieldRank);
      space();
      integer(list[i].rank);
      space();
      appendQuoted(out_, list[i].path);
      if (list[i].size) {
        word(kFieldSize);
        space();
        integer(*list[i].size);
      }
    }
  }

  void tensors(std::string_view keyword,
               const std::vector<plan::StoredTensor> &list) {
    for (size_t i = 0; i < list.size(); ++i) {
      const plan::StoredTensor &t = list[i];
      line(keyword);
      space();
      integer(i);
      word(kFieldFile);
      space();
      integer(t.file);
      word(kFieldName);
      space();
      appendQuoted(out_, t.name);
      word(kFieldKey);
      space();
      appendQuoted(out_, t.key);
      space();
      type(t.dtype, t.globalShape);
      word(kFieldBox);
      space();
      box(t.box);
      if (t.flat) {
        word(kFieldFlat);
        out_ += " [";
        integer(t.flat->begin);
        out_ += ':';
        integer(t.flat->end);
        out_ += ']';
      }
      if (t.data) {
        word(kFieldData);
        out_ += " [";
        integer(t.data->begin);
        out_ += ':';
        integer(t.data->end);
        out_ += ']';
      }
    }
  }

  void instruction(const plan::Round &round, const plan::Instruction &in) {
    line("    ");
    switch (in.opcode) {
    case plan::Opcode::Read:
      buffer(in.buffer);
      out_ += " = ";
      out_ += opcodeName(in.opcode);
      word(kSourceTensorRef);
      space();
      integer(in.tensor);
      space();
      box(in.region);
      out_ += " : ";
      bufferType(round, in.buffer);
      return;
    case plan::Opcode::Send:
      out_ += opcodeName(in.opcode);
      space();
      integer(in.peer);
      bufferList(in.buffers, " ");
      return;
    case plan::Opcode::Recv:
      bufferList(in.buffers, "");
      out_ += in.buffers.empty() ? "" : " = ";
      out_ += opcodeName(in.opcode);
      space();
      integer(in.peer);
      out_ += " :";
      for (size_t i = 0; i < in.buffers.size(); ++i) {
        out_ += i ? ", " : " ";
        bufferType(round, in.buffers[i]);
      }
      return;
    case plan::Opcode::Copy: {
      buffer(in.buffer);
      out_ += " = ";
      out_ += opcodeName(in.opcode);
      space();
      buffer(in.input);
      out_ += " [";
      const std::vector<plan::TransformStep> &steps = plan_.steps(in);
      for (size_t i = 0; i < steps.size(); ++i) {
        if (i)
          out_ += ", ";
        appendQuoted(out_, steps[i].text());
      }
      out_ += "] : ";
      bufferType(round, in.buffer);
      return;
    }
    case plan::Opcode::Write:
      out_ += opcodeName(in.opcode);
      word(kDestinationTensorRef);
      space();
      integer(in.tensor);
      space();
      box(in.region);
      space();
      buffer(in.buffer);
      return;
    }
  }

  /// `%0, %1` after `lead`.
  void bufferList(llvm::ArrayRef<uint32_t> ids, std::string_view lead) {
    for (size_t i = 0; i < ids.size(); ++i) {
      out_ += i ? ", " : lead;
      buffer(ids[i]);
    }
  }

  void flush() {
    os_.write(out_.data(), static_cast<std::streamsize>(out_.size()));
    out_.clear();
  }

  const plan::Plan &plan_;
  std::ostream &os_;
  std::string out_;
  bool started_ = false;
};

} // namespace

void writePlanText(const plan::Plan &plan, std::ostream &os) {
  PlanTextEmitter(plan, os).emit();
}

std::string printPlanText(const plan::Plan &plan) {
  std::ostringstream os;
  writePlanText(plan, os);
  return os.str();
}

} // namespace aoa
