//===- TextPlanLocator.cpp ------------------------------------------------===//
#include "TextPlanLocator.h"

#include <algorithm>

namespace aoa {
namespace plantext {

/// The line at byte `offset` of `text`, without its terminator.
std::string_view lineAt(std::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  size_t end = text.find('\n', offset);
  if (end == std::string_view::npos)
    end = text.size();
  if (end > offset && text[end - 1] == '\r')
    --end;
  return text.substr(offset, end - offset);
}

SourceLocation TextPlanLocator::locate(const PlanSite &site) const {
  std::optional<size_t> line = lineOf(site);
  if (!line)
    return SourceLocation{};
  std::string_view text = sources_.text(buffer_);
  ParsedLine parsed;
  LineError error;
  size_t field = 0;
  if (parsePlanLine(lineAt(text, *line), parsed, error))
    field = fieldOffset(parsed.sites, site);
  else
    field = parsed.sites.keyword;
  return sources_.locationForOffset(buffer_, *line + field);
}

std::optional<size_t> TextPlanLocator::lineOf(const PlanSite &site) const {
  auto at = [](const std::vector<size_t> &v,
               uint32_t i) -> std::optional<size_t> {
    if (i < v.size())
      return v[i];
    return std::nullopt;
  };
  using Kind = PlanSite::Kind;
  switch (site.kind) {
  case Kind::Empty:
    return std::nullopt;
  case Kind::Header:
    return lines_.header;
  case Kind::Ranks:
    return lines_.ranks;
  case Kind::MemoryBudget:
    return lines_.memoryBudget;
  case Kind::DestinationFormat:
    return lines_.destinationFormat;
  case Kind::SourceAccess:
    return lines_.sourceAccess;
  case Kind::SourceFile:
    return at(lines_.sourceFiles, site.index);
  case Kind::DestinationFile:
    return at(lines_.destinationFiles, site.index);
  case Kind::SourceTensor:
    return at(lines_.sourceTensors, site.index);
  case Kind::DestinationTensor:
    return at(lines_.destinationTensors, site.index);
  case Kind::AddedKey:
    return at(lines_.addedKeys, site.index);
  case Kind::CopyFile:
    return at(lines_.copiedFiles, site.index);
  case Kind::Rank:
    return at(lines_.rankBlocks, site.index);
  case Kind::Round:
  case Kind::Instruction:
    if (site.index >= lines_.rounds.size() ||
        site.round >= lines_.rounds[site.index].size())
      return std::nullopt;
    return at(lines_.rounds[site.index][site.round],
              site.kind == Kind::Round ? 0 : site.instruction + 1);
  }
  return std::nullopt;
}

size_t TextPlanLocator::fieldOffset(const LineSites &s, const PlanSite &site) {
  auto item = [&](const std::vector<size_t> &v) {
    return site.item < v.size() ? v[site.item] : s.keyword;
  };
  using Field = PlanSite::Field;
  switch (site.field) {
  case Field::Whole:
    return s.keyword;
  case Field::Rank:
    return s.rank;
  case Field::Path:
    return s.path;
  case Field::File:
    return s.file;
  case Field::Name:
    return s.name;
  case Field::Type:
    return s.type;
  case Field::Box:
    return s.box;
  case Field::Size:
    return s.size;
  case Field::Data:
    return s.data;
  case Field::Flat:
    return s.flat;
  case Field::Tensor:
    return s.tensor;
  case Field::Region:
    return s.region;
  case Field::Peer:
    return s.peer;
  case Field::Operand:
    return item(s.operands);
  case Field::Result:
    return item(s.results);
  case Field::ResultType:
    return item(s.resultTypes);
  case Field::Step:
    return item(s.steps);
  }
  return s.keyword;
}

} // namespace plantext
} // namespace aoa
