//===- ConfigLoader.cpp ----------------------------------------------------===//
#include "aoa/frontend/ConfigLoader.h"

#include "aoa/formats/json/JsonSupport.h"
#include "aoa/ir/FileText.h"

namespace aoa {

namespace {

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

bool looksLikeJson(const std::string &path, const std::string &text) {
  if (endsWith(path, ".json"))
    return true;
  if (endsWith(path, ".aoa"))
    return false;
  size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

const std::vector<std::string> &knownConfigKeys() {
  static const std::vector<std::string> keys = {
      "aoa_statements", "aoa_config_reverse", "enable_traceback"};
  return keys;
}

const char *jsonTypeName(const nlohmann::ordered_json &value) {
  return value.type_name();
}

std::optional<ConfigFile> loadJsonConfig(ConfigFile config,
                                         SourceManager &sources,
                                         DiagnosticEngine &diags) {
  std::optional<nlohmann::ordered_json> parsed = parseJsonBuffer(
      sources, config.fileBuffer, diags, "config",
      "a JSON config looks like {\"aoa_statements\": [\"a -> b\"]}");
  if (!parsed)
    return std::nullopt;
  const nlohmann::ordered_json &root = *parsed;
  SourceLocation fileStart{config.fileBuffer, 1, 1};
  if (!root.is_object()) {
    diags
        .error(fileStart, std::string("JSON config must be an object, not ") +
                              jsonTypeName(root))
        .hint("a JSON config looks like {\"aoa_statements\": [\"a -> b\"]}");
    return std::nullopt;
  }

  bool ok = true;
  for (auto it = root.begin(); it != root.end(); ++it) {
    const std::string &key = it.key();
    const nlohmann::ordered_json &value = it.value();
    SourceLocation keyLoc = locateKey(sources, config.fileBuffer, key);
    if (key == "aoa_statements") {
      if (!value.is_array()) {
        diags.error(keyLoc, std::string("'aoa_statements' must be a list of "
                                        "strings, not ") +
                                jsonTypeName(value));
        ok = false;
        continue;
      }
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].is_string()) {
          diags.error(keyLoc, "aoa_statements[" + std::to_string(i) +
                                  "] must be a string, not " +
                                  jsonTypeName(value[i]));
          ok = false;
          continue;
        }
        config.statementBuffers.push_back(sources.addBuffer(
            config.path, value[i].get<std::string>(),
            "aoa_statements[" + std::to_string(i) + "]"));
      }
    } else if (key == "aoa_config_reverse" || key == "enable_traceback") {
      if (!value.is_boolean()) {
        diags.error(keyLoc, "'" + key + "' must be true or false, not " +
                                jsonTypeName(value));
        ok = false;
        continue;
      }
      (key == "aoa_config_reverse" ? config.reverse : config.enableTraceback) =
          value.get<bool>();
    } else {
      auto d = diags.error(keyLoc, "unknown config key '" + key + "'");
      std::string suggestion = closestSpelling(key, knownConfigKeys());
      if (!suggestion.empty())
        d.hint("did you mean '" + suggestion + "'?");
      else
        d.hint("known keys: aoa_statements, aoa_config_reverse, "
               "enable_traceback");
      ok = false;
    }
  }
  if (!ok)
    return std::nullopt;
  return config;
}

} // namespace

std::optional<ConfigFile> loadConfigText(const std::string &path,
                                         std::string text,
                                         SourceManager &sources,
                                         DiagnosticEngine &diags) {
  ConfigFile config;
  config.path = path;
  config.isJson = looksLikeJson(path, text);
  config.fileBuffer = sources.addBuffer(path, std::move(text));
  if (config.isJson)
    return loadJsonConfig(std::move(config), sources, diags);
  config.statementBuffers.push_back(config.fileBuffer);
  return config;
}

std::optional<ConfigFile> loadConfigFile(const std::string &path,
                                         SourceManager &sources,
                                         DiagnosticEngine &diags) {
  std::string text;
  if (std::optional<std::string> failure = readFileToString(path, text)) {
    diags.error(SourceLocation{}, "cannot read config '" + path + "': " + *failure)
        .hint("pass the path of a Paddle JSON config or of a .aoa file");
    return std::nullopt;
  }
  return loadConfigText(path, std::move(text), sources, diags);
}

} // namespace aoa
