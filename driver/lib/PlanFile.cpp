//===- PlanFile.cpp -------------------------------------------------------===//
#include "aoa/driver/PlanFile.h"

#include "aoa/formats/plan/PlanReader.h"
#include "aoa/formats/plan/PlanVerifier.h"

#include <fstream>
#include <sstream>

namespace aoa {

std::optional<plan::Plan> readPlanBytes(const std::string &path,
                                        std::string_view bytes,
                                        SourceManager &sources,
                                        DiagnosticEngine &diags,
                                        binplan::PlanOrigin *origin) {
  if (origin)
    *origin = binplan::PlanOrigin();
  if (!binplan::isBinaryPlan(bytes)) {
    // A text plan never holds a NUL byte; a binary plan whose magic was
    // damaged does, and would only make the text reader quote binary.
    if (bytes.substr(0, 4096).find('\0') != std::string_view::npos) {
      diags
          .error(SourceLocation{},
                 "'" + path + "' is no plan: it holds binary data but does "
                 "not start with the binary plan's magic \"AOAPLAN\\0\"")
          .hint("the file is damaged or is not a plan; compile the plan "
                "again (aoa-compile writes the binary form, --emit=plan-text "
                "the text)");
      return std::nullopt;
    }
    return readPlanText(path, bytes, sources, diags);
  }
  std::optional<plan::Plan> plan =
      binplan::readBinaryPlanBytes(path, bytes, diags, origin);
  // The text reader verifies what it read; the binary reader checks only
  // the container, so the same rules are applied here.
  if (plan && !verifyPlan(*plan, diags))
    return std::nullopt;
  return plan;
}

bool isBinaryPlanFile(const std::string &path) {
  char magic[sizeof(binplan::kMagic)] = {};
  std::ifstream file(path, std::ios::binary);
  file.read(magic, sizeof(magic));
  return binplan::isBinaryPlan(std::string_view(magic, size_t(file.gcount())));
}

std::optional<plan::Plan> readPlanFileAnyForm(const std::string &path,
                                              std::string &bytes,
                                              SourceManager &sources,
                                              DiagnosticEngine &diags,
                                              binplan::PlanOrigin *origin) {
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    diags.error(SourceLocation{}, "cannot open the plan '" + path + "'")
        .hint("write one with aoa-compile CONFIG --src SRC_META --dst "
              "DST_META -o PLAN");
    return std::nullopt;
  }
  std::ostringstream buffer;
  buffer << file.rdbuf();
  bytes = buffer.str();
  return readPlanBytes(path, bytes, sources, diags, origin);
}

} // namespace aoa
