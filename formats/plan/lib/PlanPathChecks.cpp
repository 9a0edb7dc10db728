//===- PlanPathChecks.cpp - File names and paths --------------------------===//
//
// The paths of source, destination and copied files: non-empty UTF-8 without
// control characters, inside their directory, not one of the names aoa-run
// writes itself, each listed once (`a//b` and `./a/b` are `a/b`), and no
// path that needs a directory where another is a file.
//
//===----------------------------------------------------------------------===//
#include "PlanChecker.h"

#include "aoa/ir/Utf8.h"

#include <cstdio>
#include <unordered_map>

namespace aoa {
namespace plancheck {

namespace {

/// `path` with empty and `.` components dropped (`a//./b` is `a/b`).
std::string lexicallyNormal(std::string_view path) {
  std::string normal;
  if (!path.empty() && path.front() == '/')
    normal = "/";
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos)
      end = path.size();
    std::string_view part = path.substr(start, end - start);
    if (!part.empty() && part != ".") {
      if (!normal.empty() && normal.back() != '/')
        normal += '/';
      normal += part;
    }
    start = end + 1;
  }
  return normal;
}

/// Names of the files aoa-run writes or stages itself.
bool isReservedName(std::string_view path) {
  std::string normal = lexicallyNormal(path);
  std::string_view name = normal;
  size_t slash = name.rfind('/');
  std::string_view last =
      slash == std::string_view::npos ? name : name.substr(slash + 1);
  auto under = [&](std::string_view directory) {
    return name == directory ||
           (name.size() > directory.size() &&
            name.substr(0, directory.size()) == directory &&
            name[directory.size()] == '/');
  };
  return name == "metadata.json" || name == plan::kHuggingFaceIndexName ||
         under(".aoa-run") || under(".aoa") ||
         (last.size() > 1 && last[0] == '.' &&
          last.find(".tmp.") != std::string_view::npos);
}

bool escapesDirectory(std::string_view path) {
  if (path.front() == '/')
    return true;
  size_t start = 0;
  while (start <= path.size()) {
    size_t end = path.find('/', start);
    if (end == std::string_view::npos)
      end = path.size();
    if (path.substr(start, end - start) == "..")
      return true;
    start = end + 1;
  }
  return false;
}

} // namespace

std::string unusableText(std::string_view text, bool path) {
  if (!isValidUtf8(text))
    return "is not valid UTF-8";
  if (path)
    for (char c : text)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        char code[8];
        std::snprintf(code, sizeof code, "0x%02x",
                      unsigned(static_cast<unsigned char>(c)));
        return std::string("contains the control character ") + code;
      }
  return "";
}

void PlanChecker::checkFiles(bool destination) {
  const std::vector<plan::File> &files =
      destination ? plan_.destinationFiles : plan_.sourceFiles;
  Kind kind = destination ? Kind::DestinationFile : Kind::SourceFile;
  const char *side = destination ? "destination" : "source";
  std::unordered_map<std::string, uint32_t> byPath;
  for (uint32_t i = 0; i < files.size() && !errors_.stopped(); ++i) {
    const plan::File &f = files[i];
    if (f.rank >= plan_.ranks)
      error(site(kind, i, Field::Rank),
            std::string(side) + " file " + quote(f.path) + " belongs to rank " +
                std::to_string(f.rank) + ", but the plan has " +
                plural(plan_.ranks, "rank"))
          .hint("ranks count from 0 to ranks - 1");
    if (f.path.empty()) {
      error(site(kind, i, Field::Path), std::string(side) + " file " +
                                            std::to_string(i) +
                                            " has an empty path")
          .hint("give the file's path relative to the " + std::string(side) +
                " directory");
      continue;
    }
    if (std::string why = unusableText(f.path, true); !why.empty())
      error(site(kind, i, Field::Path),
            std::string(side) + " file " + quote(f.path) + " " + why)
          .hint("file paths are UTF-8 without control characters");
    else if (escapesDirectory(f.path))
      error(site(kind, i, Field::Path),
            std::string(side) + " file " + quote(f.path) +
                " is not inside the " + side + " directory")
          .hint(std::string(side) +
                " paths are relative and have no '..' components (a "
                "source file may be a symbolic link that points "
                "elsewhere; its name may not)");
    else if (destination && isReservedName(f.path))
      error(site(kind, i, Field::Path),
            "destination file " + quote(f.path) +
                " has a name that aoa-run uses for its own files")
          .hint("metadata.json, model.safetensors.index.json, .aoa-run/, "
                ".aoa/ and temporary names (.NAME.tmp.*) are reserved");
    if (destination && f.size)
      error(site(kind, i, Field::Size),
            "destination file " + quote(f.path) +
                " records a size; only source files do")
          .hint("a source file's size is what aoa-run expects to find; "
                "remove 'size' from destination files");
    // `a//b` and `./a/b` name the file `a/b` too.
    auto [it, inserted] = byPath.emplace(lexicallyNormal(f.path), i);
    if (!inserted) {
      auto diag = error(site(kind, i, Field::Path),
                        std::string(side) + " file " + quote(f.path) +
                            " is listed twice");
      note(diag, site(kind, it->second, Field::Path), "first listed here");
      diag.hint("list each file once and refer to it by its id");
    }
  }
}

/// Copied files land beside the destination files: they must stay inside
/// the destination, and must not be one of its files or metadata.json.
void PlanChecker::checkCopiedFiles() {
  std::unordered_map<std::string, uint32_t> seen;
  std::unordered_map<std::string, uint32_t> written;
  for (uint32_t f = 0; f < plan_.destinationFiles.size(); ++f)
    written.emplace(lexicallyNormal(plan_.destinationFiles[f].path), f);
  for (uint32_t i = 0; i < plan_.copiedFiles.size() && !errors_.stopped();
       ++i) {
    const std::string &path = plan_.copiedFiles[i];
    PlanSite where = site(Kind::CopyFile, i, Field::Path);
    if (std::string why = unusableText(path, true); !why.empty()) {
      error(where, "copied file " + quote(path) + " " + why)
          .hint("file paths are UTF-8 without control characters");
      continue;
    }
    if (path.empty() || escapesDirectory(path)) {
      error(where, "copied file " + quote(path) +
                       " is not a path inside the source and destination "
                       "directories")
          .hint("copied paths are relative, non-empty and have no '..' "
                "components");
      continue;
    }
    if (isReservedName(path)) {
      error(where, "copied file " + quote(path) +
                       " would replace a file that aoa-run writes itself")
          .hint("metadata.json, model.safetensors.index.json, .aoa-run/, "
                ".aoa/ and temporary names (.NAME.tmp.*) are reserved");
      continue;
    }
    std::string normal = lexicallyNormal(path);
    if (auto it = written.find(normal); it != written.end()) {
      auto diag = error(where, "copied file " + quote(path) +
                                   " is also a destination file");
      note(diag, site(Kind::DestinationFile, it->second, Field::Path),
           "the destination file");
      diag.hint("a destination file is written by the plan; do not copy "
                "it as well");
      continue;
    }
    auto [it, inserted] = seen.emplace(normal, i);
    if (!inserted) {
      auto diag =
          error(where, "copied file " + quote(path) + " is listed twice");
      note(diag, site(Kind::CopyFile, it->second, Field::Path),
           "first listed here");
      diag.hint("list each copied file once");
    }
  }
}

/// Destination and copied files share one directory tree: a path cannot
/// be a file and a directory at once (`x` and `x/y`), and no directory may
/// take the name of a file aoa-run writes itself (`metadata.json/x`).
/// Caught here, not by the file system halfway through a run.
void PlanChecker::checkDestinationPathConflicts() {
  struct Placed {
    Kind kind;
    uint32_t index;
    std::string path;
  };
  std::vector<Placed> placed;
  for (uint32_t f = 0; f < plan_.destinationFiles.size(); ++f)
    placed.push_back(
        {Kind::DestinationFile, f, plan_.destinationFiles[f].path});
  for (uint32_t i = 0; i < plan_.copiedFiles.size(); ++i)
    placed.push_back({Kind::CopyFile, i, plan_.copiedFiles[i]});
  std::unordered_map<std::string, size_t> fileAt;
  for (size_t p = 0; p < placed.size(); ++p)
    fileAt.emplace(lexicallyNormal(placed[p].path), p);
  auto describe = [](const Placed &p) {
    return std::string(p.kind == Kind::DestinationFile ? "destination file "
                                                       : "copied file ") +
           quote(p.path);
  };
  for (const Placed &p : placed) {
    if (errors_.stopped())
      return;
    std::string normal = lexicallyNormal(p.path);
    for (size_t slash = normal.find('/', 1); slash != std::string::npos;
         slash = normal.find('/', slash + 1)) {
      std::string directory = normal.substr(0, slash);
      PlanSite where = site(p.kind, p.index, Field::Path);
      if (directory == "metadata.json" ||
          directory == plan::kHuggingFaceIndexName) {
        error(where, describe(p) + " needs a directory " + quote(directory) +
                         ", a name aoa-run writes a file to")
            .hint("metadata.json and model.safetensors.index.json are "
                  "reserved; rename the directory");
        break;
      }
      auto other = fileAt.find(directory);
      if (other == fileAt.end())
        continue;
      const Placed &file = placed[other->second];
      auto diag =
          error(where, describe(p) + " needs a directory " + quote(directory) +
                           ", but " + describe(file) + " is a file there");
      note(diag, site(file.kind, file.index, Field::Path), "the file");
      diag.hint("a path cannot be both a file and a directory; rename one "
                "of them");
      break;
    }
  }
}

} // namespace plancheck
} // namespace aoa
