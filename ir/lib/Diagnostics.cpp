//===- Diagnostics.cpp -----------------------------------------------------===//
#include "aoa/ir/Diagnostics.h"

#include <algorithm>
#include <ostream>
#include <sstream>

namespace aoa {

const char *severityName(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "error";
  case Severity::Warning:
    return "warning";
  case Severity::Note:
    return "note";
  case Severity::Remark:
    return "remark";
  }
  return "error";
}

InFlightDiagnostic::~InFlightDiagnostic() {
  if (engine_)
    engine_->emit(std::move(diagnostic_));
}

InFlightDiagnostic &InFlightDiagnostic::note(SourceLocation location,
                                             std::string message) {
  Diagnostic note;
  note.severity = Severity::Note;
  note.location = location;
  note.message = std::move(message);
  diagnostic_.notes.push_back(std::move(note));
  return *this;
}

InFlightDiagnostic &InFlightDiagnostic::hint(std::string message) {
  diagnostic_.hints.push_back(std::move(message));
  return *this;
}

InFlightDiagnostic DiagnosticEngine::report(Severity severity,
                                            SourceLocation location,
                                            std::string message) {
  Diagnostic d;
  d.severity = severity;
  d.location = location;
  d.message = std::move(message);
  return InFlightDiagnostic(*this, std::move(d));
}

void DiagnosticEngine::emit(Diagnostic diagnostic) {
  if (diagnostic.severity == Severity::Error)
    ++errors_;
  else if (diagnostic.severity == Severity::Warning)
    ++warnings_;
  if (handler_)
    handler_(diagnostic);
}

namespace {

const char *severityColor(Severity severity) {
  switch (severity) {
  case Severity::Error:
    return "\033[1;31m";
  case Severity::Warning:
    return "\033[1;35m";
  case Severity::Note:
    return "\033[1;36m";
  case Severity::Remark:
    return "\033[1;34m";
  }
  return "";
}

/// Lines longer than this are shown as a window around the caret (a
/// one-line JSON file can be hundreds of megabytes long).
constexpr size_t kMaxShownLine = 160;

/// The source line and a caret under the location's column; tabs in the
/// line are repeated in the caret line so the caret stays aligned.
void printCaret(std::ostream &os, const SourceManager &sources,
                SourceLocation loc) {
  std::string_view line = sources.lineText(loc.buffer, loc.line);
  if (line.empty() && loc.column <= 1)
    return;
  auto isContinuation = [&](size_t i) {
    return i < line.size() &&
           (static_cast<unsigned char>(line[i]) & 0xC0) == 0x80;
  };
  // The byte where the caret goes.
  size_t caretByte = 0;
  for (uint32_t column = 1; caretByte < line.size() && column < loc.column;
       ++column) {
    ++caretByte;
    while (isContinuation(caretByte))
      ++caretByte;
  }
  std::string_view shown = line;
  std::string prefix, suffix;
  if (line.size() > kMaxShownLine) {
    size_t begin = caretByte > kMaxShownLine / 2 ? caretByte - kMaxShownLine / 2 : 0;
    while (isContinuation(begin))
      ++begin;
    size_t end = std::min(line.size(), begin + kMaxShownLine);
    while (isContinuation(end))
      ++end;
    shown = line.substr(begin, end - begin);
    prefix = begin > 0 ? "..." : "";
    suffix = end < line.size() ? "..." : "";
    caretByte -= begin;
  }
  os << prefix << shown << suffix << '\n';
  std::string caret(prefix.size(), ' ');
  size_t i = 0;
  for (; i < shown.size() && i < caretByte; ++i) {
    if (isContinuation(i + (shown.data() - line.data())))
      continue; // continuation byte of a multi-byte code point
    caret += (shown[i] == '\t') ? '\t' : ' ';
  }
  // A column past the end of the line points just after it.
  if (caretByte >= shown.size()) {
    uint32_t column = 1;
    for (size_t j = 0; j < line.size(); ++j)
      if (!isContinuation(j))
        ++column;
    for (; column < loc.column; ++column)
      caret += ' ';
  }
  os << caret << "^\n";
}

void printHeader(std::ostream &os, const SourceManager &sources,
                 const Diagnostic &d, bool useColor) {
  if (useColor)
    os << "\033[1m";
  if (d.location.isValid())
    os << sources.describe(d.location) << ": ";
  if (useColor)
    os << severityColor(d.severity);
  os << severityName(d.severity) << ": ";
  if (useColor)
    os << "\033[0m\033[1m";
  os << d.message;
  if (useColor)
    os << "\033[0m";
  os << '\n';
}

} // namespace

void TextDiagnosticPrinter::printOne(const Diagnostic &d) const {
  printHeader(os_, sources_, d, useColor_);
  if (d.location.isValid())
    printCaret(os_, sources_, d.location);
}

void TextDiagnosticPrinter::print(const Diagnostic &d) const {
  printOne(d);
  for (const Diagnostic &note : d.notes)
    printOne(note);
  for (const std::string &hint : d.hints)
    os_ << (useColor_ ? "\033[1;32mhint:\033[0m " : "hint: ") << hint << '\n';
  os_.flush();
}

std::string renderDiagnostic(const Diagnostic &diagnostic,
                             const SourceManager &sources) {
  std::ostringstream os;
  TextDiagnosticPrinter(os, sources).print(diagnostic);
  return os.str();
}

namespace {
size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j)
    row[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    size_t diagonal = row[0];
    row[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1,
                         diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

template <typename Text>
std::string closestAmong(std::string_view word,
                         const std::vector<Text> &candidates) {
  std::string_view best;
  size_t bestDistance = std::max<size_t>(2, word.size() / 3) + 1;
  for (std::string_view candidate : candidates) {
    size_t distance = editDistance(word, candidate);
    if (distance < bestDistance && distance < word.size()) {
      bestDistance = distance;
      best = candidate;
    }
  }
  return std::string(best);
}
} // namespace

std::string closestSpelling(const std::string &word,
                            const std::vector<std::string> &candidates) {
  return closestAmong(word, candidates);
}

std::string closestSpelling(const std::string &word,
                            const std::vector<std::string_view> &candidates) {
  return closestAmong(word, candidates);
}

} // namespace aoa
