//===- Diagnostics.h - Located errors, notes and hints -----------*- C++ -*-===//
//
// Diagnostics follow the LLVM style:
//
//   file:line:col: error: message
//   <the source line>
//        ^
//   file:line:col: note: a related place
//   hint: what to do about it
//
// Producers report through a DiagnosticEngine; consumers (the text printer,
// or a vector in unit tests) receive finished diagnostics with their notes.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_IR_DIAGNOSTICS_H
#define AOA_IR_DIAGNOSTICS_H

#include "aoa/ir/SourceManager.h"

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace aoa {

enum class Severity { Error, Warning, Note, Remark };

const char *severityName(Severity severity);

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLocation location;
  std::string message;
  /// Attached notes (severity Note), printed after the main message.
  std::vector<Diagnostic> notes;
  /// Suggestions printed as `hint: …` lines after the notes.
  std::vector<std::string> hints;
};

class DiagnosticEngine;

/// A diagnostic being built; it is handed to the engine when it goes out of
/// scope, so notes and hints can be chained onto it.
class InFlightDiagnostic {
public:
  InFlightDiagnostic(DiagnosticEngine &engine, Diagnostic diagnostic)
      : engine_(&engine), diagnostic_(std::move(diagnostic)) {}
  InFlightDiagnostic(InFlightDiagnostic &&other) noexcept
      : engine_(other.engine_), diagnostic_(std::move(other.diagnostic_)) {
    other.engine_ = nullptr;
  }
  InFlightDiagnostic(const InFlightDiagnostic &) = delete;
  InFlightDiagnostic &operator=(const InFlightDiagnostic &) = delete;
  InFlightDiagnostic &operator=(InFlightDiagnostic &&) = delete;
  ~InFlightDiagnostic();

  InFlightDiagnostic &note(SourceLocation location, std::string message);
  InFlightDiagnostic &note(std::string message) {
    return note(SourceLocation{}, std::move(message));
  }
  InFlightDiagnostic &hint(std::string message);

private:
  DiagnosticEngine *engine_;
  Diagnostic diagnostic_;
};

class DiagnosticEngine {
public:
  using Handler = std::function<void(const Diagnostic &)>;

  explicit DiagnosticEngine(const SourceManager &sources) : sources_(sources) {}

  /// Replaces the consumer of finished diagnostics (default: none, they are
  /// only counted).
  void setHandler(Handler handler) { handler_ = std::move(handler); }

  InFlightDiagnostic error(SourceLocation location, std::string message) {
    return report(Severity::Error, location, std::move(message));
  }
  InFlightDiagnostic warning(SourceLocation location, std::string message) {
    return report(Severity::Warning, location, std::move(message));
  }
  InFlightDiagnostic report(Severity severity, SourceLocation location,
                            std::string message);

  void emit(Diagnostic diagnostic);

  unsigned errorCount() const { return errors_; }
  unsigned warningCount() const { return warnings_; }
  bool hadErrors() const { return errors_ != 0; }
  const SourceManager &sources() const { return sources_; }

private:
  const SourceManager &sources_;
  Handler handler_;
  unsigned errors_ = 0;
  unsigned warnings_ = 0;
};

/// Prints diagnostics in the LLVM style, with the source line and a caret.
class TextDiagnosticPrinter {
public:
  TextDiagnosticPrinter(std::ostream &os, const SourceManager &sources,
                        bool useColor = false)
      : os_(os), sources_(sources), useColor_(useColor) {}

  void print(const Diagnostic &diagnostic) const;
  /// Convenience: an engine handler that prints to this printer.
  DiagnosticEngine::Handler handler() const {
    return [this](const Diagnostic &d) { print(d); };
  }

private:
  void printOne(const Diagnostic &diagnostic) const;
  std::ostream &os_;
  const SourceManager &sources_;
  bool useColor_;
};

/// Renders one diagnostic (with its notes and hints) as text, without color.
std::string renderDiagnostic(const Diagnostic &diagnostic,
                             const SourceManager &sources);

/// The closest spelling to `word` among `candidates` (edit distance at most
/// max(2, a third of the word's length)), or an empty string.
std::string closestSpelling(const std::string &word,
                            const std::vector<std::string> &candidates);
std::string closestSpelling(const std::string &word,
                            const std::vector<std::string_view> &candidates);

} // namespace aoa

#endif // AOA_IR_DIAGNOSTICS_H
