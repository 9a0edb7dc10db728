//===- DiagnosticsTest.cpp - The diagnostics engine and printer -----------===//
#include "aoa/ir/Diagnostics.h"

#include <gtest/gtest.h>

using namespace aoa;

namespace {

struct Captured {
  SourceManager sources;
  DiagnosticEngine engine{sources};
  std::vector<Diagnostic> diagnostics;
  Captured() {
    engine.setHandler([this](const Diagnostic &d) { diagnostics.push_back(d); });
  }
};

TEST(Diagnostics, BuilderEmitsOnDestructionWithNotesAndHints) {
  Captured c;
  uint32_t buffer = c.sources.addBuffer("cfg.aoa", "a -> b\nc => d\n");
  {
    InFlightDiagnostic pending =
        c.engine.error(SourceLocation{buffer, 2, 3}, "unexpected character '='");
    pending.note(SourceLocation{buffer, 1, 3}, "an arrow is here")
        .hint("write '->'");
    EXPECT_TRUE(c.diagnostics.empty()) << "emitted before the builder ended";
  }
  ASSERT_EQ(c.diagnostics.size(), 1u);
  const Diagnostic &d = c.diagnostics[0];
  EXPECT_EQ(d.severity, Severity::Error);
  EXPECT_EQ(d.message, "unexpected character '='");
  ASSERT_EQ(d.notes.size(), 1u);
  EXPECT_EQ(d.notes[0].severity, Severity::Note);
  EXPECT_EQ(d.notes[0].location, (SourceLocation{buffer, 1, 3}));
  ASSERT_EQ(d.hints.size(), 1u);
  EXPECT_EQ(c.engine.errorCount(), 1u);
  EXPECT_TRUE(c.engine.hadErrors());
}

TEST(Diagnostics, WarningsDoNotCountAsErrors) {
  Captured c;
  c.engine.warning(SourceLocation{}, "careful");
  EXPECT_EQ(c.engine.errorCount(), 0u);
  EXPECT_EQ(c.engine.warningCount(), 1u);
  EXPECT_FALSE(c.engine.hadErrors());
}

TEST(Diagnostics, RendersLlvmStyleWithCaret) {
  SourceManager sources;
  uint32_t buffer = sources.addBuffer("cfg.aoa", "a -> b\nc => d\n");
  Diagnostic d;
  d.location = SourceLocation{buffer, 2, 3};
  d.message = "unexpected character '='";
  d.hints.push_back("write '->'");
  EXPECT_EQ(renderDiagnostic(d, sources),
            "cfg.aoa:2:3: error: unexpected character '='\n"
            "c => d\n"
            "  ^\n"
            "hint: write '->'\n");
}

TEST(Diagnostics, LongLinesShowAWindowAroundTheCaret) {
  // A one-line JSON file: only 160 bytes around the caret are echoed.
  std::string line = std::string(1000, 'x');
  line[600] = 'K';
  SourceManager sources;
  uint32_t buffer = sources.addBuffer("m.json", line + "\n");
  Diagnostic d;
  d.location = SourceLocation{buffer, 1, 601};
  d.message = "bad key";
  std::string shown = line.substr(520, 160);
  EXPECT_EQ(renderDiagnostic(d, sources),
            "m.json:1:601: error: bad key\n..." + shown + "...\n" +
                std::string(3 + 80, ' ') + "^\n");
  // Near the start of the line nothing is cut on the left.
  d.location = SourceLocation{buffer, 1, 2};
  EXPECT_EQ(renderDiagnostic(d, sources),
            "m.json:1:2: error: bad key\n" + line.substr(0, 160) + "...\n" +
                " ^\n");
}

TEST(Diagnostics, SubPathNamesTheJsonStatement) {
  SourceManager sources;
  uint32_t buffer = sources.addBuffer("cfg.json", "x -> y", "aoa_statements[4]");
  EXPECT_EQ(sources.describe(SourceLocation{buffer, 1, 6}),
            "cfg.json:aoa_statements[4]:1:6");
}

TEST(Diagnostics, CaretKeepsTabsAndCountsCodePoints) {
  SourceManager sources;
  // "\tä -> b": the tab is copied, the two-byte 'ä' counts as one column.
  uint32_t buffer = sources.addBuffer("t.aoa", "\t\xc3\xa4 @ b\n");
  Diagnostic d;
  d.location = SourceLocation{buffer, 1, 4};
  d.message = "x";
  EXPECT_EQ(renderDiagnostic(d, sources),
            "t.aoa:1:4: error: x\n\t\xc3\xa4 @ b\n\t  ^\n");
}

TEST(Diagnostics, LocationlessDiagnosticHasNoCaret) {
  SourceManager sources;
  Diagnostic d;
  d.message = "cannot read config 'x': No such file or directory";
  EXPECT_EQ(renderDiagnostic(d, sources),
            "error: cannot read config 'x': No such file or directory\n");
}

TEST(SourceManager, LocationForOffsetAndLines) {
  SourceManager sources;
  uint32_t buffer = sources.addBuffer("f", "ab\r\ncd\nef");
  EXPECT_EQ(sources.locationForOffset(buffer, 0), (SourceLocation{buffer, 1, 1}));
  EXPECT_EQ(sources.locationForOffset(buffer, 5), (SourceLocation{buffer, 2, 2}));
  EXPECT_EQ(sources.locationForOffset(buffer, 8), (SourceLocation{buffer, 3, 2}));
  EXPECT_EQ(sources.lineText(buffer, 1), "ab");
  EXPECT_EQ(sources.lineText(buffer, 3), "ef");
  EXPECT_EQ(sources.lineText(buffer, 4), "");
}

TEST(SourceManager, ColumnsOnLongLinesCountCodePoints) {
  // Columns on a line of several strides (the manager keeps code point
  // counts every 1024 bytes so that a column costs no walk of the whole
  // line: issue 20 H1), with 2-, 3- and 4-byte UTF-8 sequences crossing the
  // stride boundaries, agree with counting from the line's start.
  std::string text = "first line\n";
  const char *pieces[] = {"a", "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80", ";"};
  for (size_t i = 0; text.size() < 5000; ++i)
    text += pieces[(i * 7) % 5];
  text += "\nlast";
  SourceManager sources;
  uint32_t buffer = sources.addBuffer("f", text);
  size_t lineStart = text.find('\n') + 1;
  size_t lineEnd = text.rfind('\n');
  for (size_t offset = lineStart; offset <= lineEnd; ++offset) {
    if ((static_cast<unsigned char>(text[offset]) & 0xC0) == 0x80)
      continue; // inside a sequence
    uint32_t column = static_cast<uint32_t>(
        countCodePoints(std::string_view(text).substr(lineStart,
                                                      offset - lineStart)) +
        1);
    ASSERT_EQ(sources.locationForOffset(buffer, offset),
              (SourceLocation{buffer, 2, column}))
        << "offset " << offset;
  }
  EXPECT_EQ(sources.locationForOffset(buffer, text.size()),
            (SourceLocation{buffer, 3, 5}));
}

TEST(Diagnostics, ClosestSpelling) {
  std::vector<std::string> keys = {"axis", "permute", "dtype"};
  EXPECT_EQ(closestSpelling("axsi", keys), "axis");
  EXPECT_EQ(closestSpelling("permtue", keys), "permute");
  EXPECT_EQ(closestSpelling("completely_else", keys), "");
}

} // namespace
