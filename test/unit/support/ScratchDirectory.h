//===- ScratchDirectory.h - A temporary directory for tests -----*- C++ -*-===//
//
// Storage tests create their files in a fresh directory under /tmp that is
// removed, with everything in it, when the test ends.
//
//===----------------------------------------------------------------------===//
#ifndef AOA_TEST_UNIT_SCRATCHDIRECTORY_H
#define AOA_TEST_UNIT_SCRATCHDIRECTORY_H

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace aoa::test {

class ScratchDirectory {
public:
  ScratchDirectory() {
    char pattern[] = "/tmp/aoa-runtime-test-XXXXXX";
    const char *made = mkdtemp(pattern);
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    path_ = made ? made : "/tmp";
    owned_ = made != nullptr;
  }
  ScratchDirectory(const ScratchDirectory &) = delete;
  ScratchDirectory &operator=(const ScratchDirectory &) = delete;
  ~ScratchDirectory() {
    std::error_code ignored;
    if (owned_)
      std::filesystem::remove_all(path_, ignored);
  }

  const std::string &path() const { return path_; }
  /// The path of `name` inside the directory.
  std::string file(const std::string &name) const { return path_ + "/" + name; }

  /// The names in the directory, sorted.
  std::vector<std::string> list() const {
    std::vector<std::string> names;
    for (const auto &entry : std::filesystem::directory_iterator(path_))
      names.push_back(entry.path().filename().string());
    std::sort(names.begin(), names.end());
    return names;
  }

private:
  std::string path_;
  bool owned_ = false;
};

inline void writeWholeFile(const std::string &path, const std::string &bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  EXPECT_TRUE(out.good()) << path;
}

inline std::string readWholeFile(const std::string &path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  return std::string(std::istreambuf_iterator<char>(in),
                     std::istreambuf_iterator<char>());
}

inline bool fileExists(const std::string &path) {
  return std::filesystem::exists(path);
}

} // namespace aoa::test

#endif // AOA_TEST_UNIT_SCRATCHDIRECTORY_H
