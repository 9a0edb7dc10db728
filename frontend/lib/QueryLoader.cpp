//===- QueryLoader.cpp -----------------------------------------------------===//
#include "aoa/frontend/QueryLoader.h"

#include "aoa/formats/json/JsonLocator.h"
#include "aoa/formats/json/JsonSupport.h"
#include "aoa/frontend/ConfigLoader.h"
#include "aoa/ir/FileText.h"
#include "aoa/ir/ShardMetadata.h"

#include <algorithm>
#include <memory>

namespace aoa {

namespace {

constexpr const char *kExample =
    "a query file looks like {\"queries\": [{\"key\": \"w\", "
    "\"global_offset\": [0, 0], \"local_shape\": [4, 2], \"global_shape\": "
    "[8, 2], \"dtype\": \"float32\"}]}";

/// Finds where queries are written, for diagnostics. The offsets of all
/// queries are found in one walk of the file, the first time one is asked
/// for: a walk per query would make a long query file quadratic.
class QueryIndex {
public:
  QueryIndex(const SourceManager &sources, uint32_t buffer)
      : sources_(sources), buffer_(buffer) {}

  /// The query `index` (its opening brace), or its member `field`.
  SourceLocation locate(size_t index, const std::string &field) {
    JsonLocator locator(sources_.text(buffer_));
    if (!offsets_)
      offsets_ = locator.elementOffsets({JsonPathStep::member("queries")});
    if (index >= offsets_->size())
      return SourceLocation{buffer_, 1, 1};
    size_t at = (*offsets_)[index];
    if (!field.empty())
      at = locator.keyOffsetFrom(at, {JsonPathStep::member(field)});
    return sources_.locationForOffset(buffer_, at);
  }

private:
  const SourceManager &sources_;
  uint32_t buffer_;
  std::optional<std::vector<size_t>> offsets_;
};

class QueryParser {
public:
  QueryParser(const SourceManager &sources, uint32_t buffer,
              DiagnosticEngine &diags)
      : sources_(sources), buffer_(buffer), diags_(diags),
        index_(std::make_shared<QueryIndex>(sources, buffer)) {}

  /// Where a query of the file is written, found when asked.
  QueryLocator locator() const {
    return [index = index_](size_t i) { return index->locate(i, ""); };
  }

  std::optional<std::vector<TensorDesc>> parse() {
    unsigned errorsBefore = diags_.errorCount();
    std::optional<nlohmann::ordered_json> root =
        parseJsonBuffer(sources_, buffer_, diags_, "query file", kExample);
    if (!root)
      return std::nullopt;
    SourceLocation start{buffer_, 1, 1};
    if (!root->is_object() || !root->contains("queries") ||
        !(*root)["queries"].is_array()) {
      diags_.error(start, "a query file is an object with a list 'queries'")
          .hint(kExample);
      return std::nullopt;
    }
    for (auto it = root->begin(); it != root->end(); ++it)
      if (it.key() != "queries")
        diags_.error(locateKey(sources_, buffer_, it.key()),
                     "unknown key '" + it.key() + "' in a query file")
            .hint(kExample);
    std::vector<TensorDesc> queries;
    const nlohmann::ordered_json &list = (*root)["queries"];
    for (size_t i = 0; i < list.size(); ++i)
      if (std::optional<TensorDesc> q = parseQuery(list[i], i))
        queries.push_back(std::move(*q));
    if (diags_.errorCount() != errorsBefore)
      return std::nullopt;
    return queries;
  }

private:
  InFlightDiagnostic error(size_t index, const std::string &field,
                           std::string message) {
    return diags_.error(index_->locate(index, field), "queries[" + std::to_string(index) + "]" +
                                (field.empty() ? "" : "." + field) + ": " +
                                std::move(message));
  }

  std::optional<std::vector<int64_t>>
  integers(const nlohmann::ordered_json &q, size_t index, const char *field) {
    const nlohmann::ordered_json &value = q[field];
    std::vector<int64_t> out;
    bool ok = value.is_array();
    for (size_t i = 0; ok && i < value.size(); ++i) {
      ok = value[i].is_number_integer() && value[i].get<int64_t>() >= 0;
      if (ok)
        out.push_back(value[i].get<int64_t>());
    }
    if (!ok) {
      error(index, field, "must be a list of non-negative integers");
      return std::nullopt;
    }
    return out;
  }

  std::optional<TensorDesc> parseQuery(const nlohmann::ordered_json &q,
                                       size_t index) {
    static const char *const kFields[] = {"key", "global_offset", "local_shape",
                                          "global_shape", "dtype"};
    if (!q.is_object()) {
      error(index, "", "must be an object").hint(kExample);
      return std::nullopt;
    }
    bool ok = true;
    for (const char *field : kFields)
      if (!q.contains(field)) {
        error(index, "", std::string("lacks '") + field + "'").hint(kExample);
        ok = false;
      }
    for (auto it = q.begin(); it != q.end(); ++it)
      if (std::find_if(std::begin(kFields), std::end(kFields),
                       [&](const char *f) { return it.key() == f; }) ==
          std::end(kFields)) {
        error(index, it.key(), "unknown field").hint(kExample);
        ok = false;
      }
    if (!ok)
      return std::nullopt;
    TensorDesc desc;
    if (!q["key"].is_string() || !q["dtype"].is_string()) {
      error(index, q["key"].is_string() ? "dtype" : "key", "must be a string");
      return std::nullopt;
    }
    desc.key = q["key"].get<std::string>();
    std::optional<DType> dtype = parseDTypeName(q["dtype"].get<std::string>());
    if (!dtype) {
      error(index, "dtype", "unknown dtype '" + q["dtype"].get<std::string>() + "'")
          .hint("dtypes: " + std::string(allDTypeNames()));
      return std::nullopt;
    }
    desc.dtype = *dtype;
    auto offset = integers(q, index, "global_offset");
    auto local = integers(q, index, "local_shape");
    auto global = integers(q, index, "global_shape");
    if (!offset || !local || !global)
      return std::nullopt;
    if (offset->size() != local->size() || local->size() != global->size()) {
      error(index, "", "global_offset, local_shape and global_shape of '" +
                           desc.key + "' have different lengths");
      return std::nullopt;
    }
    for (size_t d = 0; d < offset->size(); ++d)
      if ((*offset)[d] + (*local)[d] > (*global)[d]) {
        error(index, "", "the box " + formatElementRange(*offset, *local) +
                             " of '" + desc.key + "' is outside its global "
                             "shape " + formatShape(*global));
        return std::nullopt;
      }
    desc.globalOffset = std::move(*offset);
    desc.localShape = std::move(*local);
    desc.globalShape = std::move(*global);
    return desc;
  }

  const SourceManager &sources_;
  uint32_t buffer_;
  DiagnosticEngine &diags_;
  std::shared_ptr<QueryIndex> index_;
};

} // namespace

std::optional<std::vector<TensorDesc>>
loadQueriesText(const std::string &path, std::string text,
                SourceManager &sources, DiagnosticEngine &diags,
                QueryLocator *locate) {
  uint32_t buffer = sources.addBuffer(path, std::move(text));
  QueryParser parser(sources, buffer, diags);
  std::optional<std::vector<TensorDesc>> queries = parser.parse();
  if (queries && locate)
    *locate = parser.locator();
  return queries;
}

std::optional<std::vector<TensorDesc>>
loadQueries(const std::string &path, SourceManager &sources,
            DiagnosticEngine &diags, QueryLocator *locate) {
  std::string text;
  if (std::optional<std::string> failure = readFileToString(path, text)) {
    diags.error(SourceLocation{}, "cannot read query file '" + path + "': " +
                                      *failure);
    return std::nullopt;
  }
  return loadQueriesText(path, std::move(text), sources, diags, locate);
}

} // namespace aoa
