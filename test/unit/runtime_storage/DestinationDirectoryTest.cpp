//===- DestinationDirectoryTest.cpp - Paths beneath DST, by handle --------===//
//
// Issue 20 S1/S2: aoa-run never follows a symbolic link inside the
// destination directory. Opening a path beneath DST refuses a link on the
// way; removing a tree removes links, never what they point to.
//
//===----------------------------------------------------------------------===//
#include "ScratchDirectory.h"

#include "../../../runtime/storage/lib/DestinationDirectory.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

namespace aoa {
namespace {

namespace fs = std::filesystem;
using namespace runtime;

class DestinationDirectoryTest : public ::testing::Test {
protected:
  void SetUp() override {
    fs::create_directories(scratch.file("dst"));
    fs::create_directories(scratch.file("outside/inner"));
    std::ofstream(scratch.file("outside/kept")) << "kept";
    std::ofstream(scratch.file("outside/inner/kept")) << "kept";
    Expected<FileDescriptor> opened = openDirectory(scratch.file("dst"));
    ASSERT_TRUE(opened.ok()) << opened.error().toString();
    root = std::move(*opened);
  }

  bool outsideIsIntact() const {
    return fs::exists(scratch.file("outside/kept")) &&
           fs::exists(scratch.file("outside/inner/kept"));
  }

  test::ScratchDirectory scratch;
  FileDescriptor root;
};

TEST_F(DestinationDirectoryTest, CreatesAndOpensDirectoriesBeneath) {
  Expected<FileDescriptor> missing =
      openDirectoryBeneath(root.get(), "dst", "a/b", false);
  ASSERT_TRUE(missing.ok());
  EXPECT_FALSE(missing->isOpen());
  EXPECT_FALSE(fs::exists(scratch.file("dst/a")));
  Expected<FileDescriptor> created =
      openDirectoryBeneath(root.get(), "dst", "./a//b/", true);
  ASSERT_TRUE(created.ok()) << created.error().toString();
  EXPECT_TRUE(created->isOpen());
  EXPECT_TRUE(fs::is_directory(scratch.file("dst/a/b")));
  EXPECT_EQ(entryKind(root.get(), "a"), EntryKind::Directory);
}

TEST_F(DestinationDirectoryTest, RefusesALinkOrAFileOnTheWay) {
  fs::create_directory_symlink(scratch.file("outside"), scratch.file("dst/a"));
  for (bool create : {false, true}) {
    Expected<FileDescriptor> opened =
        openDirectoryBeneath(root.get(), "dst", "a/inner/new", create);
    ASSERT_FALSE(opened.ok());
    EXPECT_EQ(opened.error().message, "'dst/a' is a symbolic link");
  }
  EXPECT_FALSE(fs::exists(scratch.file("outside/inner/new")));
  std::ofstream(scratch.file("dst/f")) << "x";
  Expected<FileDescriptor> file =
      openDirectoryBeneath(root.get(), "dst", "f/g", true);
  ASSERT_FALSE(file.ok());
  EXPECT_EQ(file.error().message,
            "'dst/f' is a file, but aoa-run needs a directory there");
}

TEST_F(DestinationDirectoryTest, RemovingATreeNeverFollowsLinks) {
  fs::create_directories(scratch.file("dst/.aoa-run/files/sub"));
  fs::create_directory_symlink(scratch.file("outside"),
                               scratch.file("dst/.aoa-run/files/sub/link"));
  fs::create_symlink(scratch.file("outside/kept"),
                     scratch.file("dst/.aoa-run/journal"));
  std::ofstream(scratch.file("dst/.aoa-run/files/sub/staged")) << "x";
  ASSERT_TRUE(removeTree(root.get(), "dst", ".aoa-run").ok());
  EXPECT_FALSE(fs::exists(scratch.file("dst/.aoa-run")));
  EXPECT_TRUE(outsideIsIntact());
  // The tree itself a link: the link goes, its target stays.
  fs::create_directory_symlink(scratch.file("outside"),
                               scratch.file("dst/.aoa-run"));
  ASSERT_TRUE(removeTree(root.get(), "dst", ".aoa-run").ok());
  EXPECT_FALSE(fs::is_symlink(scratch.file("dst/.aoa-run")));
  EXPECT_TRUE(outsideIsIntact());
  EXPECT_TRUE(removeTree(root.get(), "dst", "missing").ok());
}

TEST_F(DestinationDirectoryTest, ListsWithoutFollowing) {
  fs::create_directory_symlink(scratch.file("outside"), scratch.file("dst/l"));
  fs::create_directory(scratch.file("dst/d"));
  std::ofstream(scratch.file("dst/f")) << "x";
  Expected<std::vector<std::pair<std::string, EntryKind>>> entries =
      listDirectory(root.get(), "dst");
  ASSERT_TRUE(entries.ok());
  EXPECT_EQ(*entries, (std::vector<std::pair<std::string, EntryKind>>{
                          {"d", EntryKind::Directory},
                          {"f", EntryKind::File},
                          {"l", EntryKind::SymbolicLink}}));
}

} // namespace
} // namespace aoa
