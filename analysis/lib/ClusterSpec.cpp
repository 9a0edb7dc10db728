//===- ClusterSpec.cpp - Reading a cluster description --------------------===//
//
// The file is a handful of keys, so it is parsed into nlohmann's DOM
// (formats/json) and each key checked in a fixed order; a diagnostic finds
// its place by walking the text along the key (JsonLocator), as the layout
// spec loader does.
//
//===----------------------------------------------------------------------===//
#include "aoa/analysis/ClusterSpec.h"

#include "aoa/formats/json/JsonLocator.h"
#include "aoa/formats/json/JsonSupport.h"
#include "aoa/ir/FileText.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

namespace aoa {
namespace analysis {

namespace {

using Json = nlohmann::ordered_json;

constexpr const char *kSpecHint =
    "a cluster spec looks like {\"ranks_per_node\": 8, \"disk_read_GBps\": "
    "6.0, \"disk_write_GBps\": 4.0, \"nic_GBps\": 25.0, \"nvlink_GBps\": "
    "300.0, \"memory_per_rank_GiB\": 80, \"copy_GBps\": 20.0, "
    "\"shared_fs_read_GBps\": 40.0} "
    "(docs/aoa-plan.md)";

/// A key, whether it must be given, and what it means (for hints).
struct KeyInfo {
  const char *name;
  bool required;
  const char *meaning;
};

const std::vector<KeyInfo> &keyInfos() {
  static const std::vector<KeyInfo> infos = {
      {"ranks_per_node", true, "ranks (GPUs) per node, an integer"},
      {"disk_read_GBps", true,
       "a node's disk read bandwidth, decimal GB/s, shared by its ranks"},
      {"disk_write_GBps", true,
       "a node's disk write bandwidth, decimal GB/s, shared by its ranks"},
      {"nic_GBps", true,
       "a node's network bandwidth per direction, decimal GB/s"},
      {"nvlink_GBps", false,
       "a rank's bandwidth to ranks of its node, per direction, decimal GB/s "
       "(default 300)"},
      {"copy_GBps", false,
       "a rank's transform throughput, decimal GB/s (default 20)"},
      {"memory_per_rank_GiB", false,
       "the memory a round's buffers may take on a rank, GiB (default: not "
       "checked)"},
      {"shared_fs_read_GBps", false,
       "the read bandwidth of a file system all nodes see, all nodes "
       "together, decimal GB/s: where a --shared-src plan reads its sources "
       "(default: the node disks)"},
  };
  return infos;
}

std::vector<std::string> keyNames() {
  std::vector<std::string> names;
  for (const KeyInfo &info : keyInfos())
    names.push_back(info.name);
  return names;
}

class ClusterSpecParser {
public:
  ClusterSpecParser(uint32_t buffer, SourceManager &sources,
                    DiagnosticEngine &diags)
      : buffer_(buffer), sources_(sources), diags_(diags),
        locator_(sources.text(buffer)), errorsBefore_(diags.errorCount()) {}

  std::optional<ClusterSpec> parse();

private:
  SourceLocation valueLocation(const std::string &key) const {
    return sources_.locationForOffset(
        buffer_, locator_.valueOffset({JsonPathStep::member(key)}));
  }
  SourceLocation keyLocation(const std::string &key) const {
    return sources_.locationForOffset(
        buffer_, locator_.keyOffset({JsonPathStep::member(key)}));
  }
  SourceLocation rootLocation() const {
    return sources_.locationForOffset(buffer_, locator_.valueOffset({}));
  }
  /// A positive number (an integer when `integer`), or nullopt after an
  /// error at the value.
  std::optional<double> readPositive(const KeyInfo &info, const Json &value,
                                     bool integer);

  uint32_t buffer_;
  SourceManager &sources_;
  DiagnosticEngine &diags_;
  JsonLocator locator_;
  unsigned errorsBefore_;
};

std::optional<double> ClusterSpecParser::readPositive(const KeyInfo &info,
                                                      const Json &value,
                                                      bool integer) {
  std::string name = std::string("'") + info.name + "'";
  if (integer ? !value.is_number_integer() : !value.is_number()) {
    diags_
        .error(valueLocation(info.name),
               name + " must be " + (integer ? "an integer" : "a number") +
                   ", not " + describeJsonValue(value))
        .hint(std::string(info.name) + ": " + info.meaning);
    return std::nullopt;
  }
  double number = value.get<double>();
  if (!(number > 0) || !std::isfinite(number)) {
    diags_
        .error(valueLocation(info.name),
               name + " must be positive, not " + value.dump())
        .hint(std::string(info.name) + ": " + info.meaning);
    return std::nullopt;
  }
  if (integer && number > std::numeric_limits<uint32_t>::max()) {
    diags_
        .error(valueLocation(info.name),
               name + " is " + value.dump() + ", too large")
        .hint(std::string(info.name) + ": " + info.meaning);
    return std::nullopt;
  }
  return number;
}

std::optional<ClusterSpec> ClusterSpecParser::parse() {
  std::optional<Json> parsed =
      parseJsonBuffer(sources_, buffer_, diags_, "in cluster spec", kSpecHint);
  if (!parsed)
    return std::nullopt;
  if (std::optional<JsonLocator::DuplicateKey> duplicate =
          locator_.firstDuplicateKey()) {
    diags_
        .error(sources_.locationForOffset(buffer_, duplicate->offset),
               "key '" + duplicate->key + "' appears twice in one object")
        .note(sources_.locationForOffset(buffer_, duplicate->firstOffset),
              "first given here")
        .hint("give each key once");
    return std::nullopt;
  }
  const Json &root = *parsed;
  if (!root.is_object()) {
    diags_
        .error(rootLocation(), "a cluster spec must be a JSON object, not " +
                                   describeJsonValue(root))
        .hint(kSpecHint);
    return std::nullopt;
  }

  std::vector<std::string> known = keyNames();
  for (auto it = root.begin(); it != root.end(); ++it) {
    if (std::find(known.begin(), known.end(), it.key()) != known.end())
      continue;
    auto diag = diags_.error(keyLocation(it.key()),
                             "unknown key '" + it.key() + "' in cluster spec");
    std::string suggestion = closestSpelling(it.key(), known);
    if (!suggestion.empty())
      diag.hint("did you mean '" + suggestion + "'?");
    else
      diag.hint("the keys are " + llvm::join(known, ", "));
  }

  ClusterSpec spec;
  for (const KeyInfo &info : keyInfos()) {
    auto found = root.find(info.name);
    if (found == root.end()) {
      if (info.required)
        diags_
            .error(rootLocation(),
                   std::string("the cluster spec has no '") + info.name + "'")
            .hint(std::string("give \"") + info.name + "\": " + info.meaning);
      continue;
    }
    std::string name = info.name;
    std::optional<double> value =
        readPositive(info, *found, name == "ranks_per_node");
    if (!value)
      continue;
    if (name == "ranks_per_node")
      spec.ranksPerNode = static_cast<uint32_t>(*value);
    else if (name == "disk_read_GBps")
      spec.diskReadGBps = *value;
    else if (name == "disk_write_GBps")
      spec.diskWriteGBps = *value;
    else if (name == "nic_GBps")
      spec.nicGBps = *value;
    else if (name == "nvlink_GBps")
      spec.nvlinkGBps = *value;
    else if (name == "copy_GBps")
      spec.copyGBps = *value;
    else if (name == "memory_per_rank_GiB")
      spec.memoryPerRankGiB = *value;
    else if (name == "shared_fs_read_GBps")
      spec.sharedFsReadGBps = *value;
  }
  if (diags_.errorCount() != errorsBefore_)
    return std::nullopt;
  return spec;
}

} // namespace

std::optional<ClusterSpec> loadClusterSpecText(const std::string &path,
                                               std::string text,
                                               SourceManager &sources,
                                               DiagnosticEngine &diags) {
  uint32_t buffer = sources.addBuffer(path, std::move(text));
  return ClusterSpecParser(buffer, sources, diags).parse();
}

std::optional<ClusterSpec> loadClusterSpec(const std::string &path,
                                           SourceManager &sources,
                                           DiagnosticEngine &diags) {
  std::string text;
  if (std::optional<std::string> failure = readFileToString(path, text)) {
    diags
        .error(SourceLocation{},
               "cannot read cluster spec '" + path + "': " + *failure)
        .hint(std::string("pass the path of a cluster spec: ") + kSpecHint);
    return std::nullopt;
  }
  return loadClusterSpecText(path, std::move(text), sources, diags);
}

} // namespace analysis
} // namespace aoa
