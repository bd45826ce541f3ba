// MetaFinder (io/meta_tree.h) on the in-memory file system: the walk's rules, each meta opened
// at its turn from its directory, directories held by what they are (inode), not by name.
// The real disk's side (FIFOs, sockets, descriptors, renames) is meta_tree_test.cc.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "io/fake_file_system.h"
#include "io/meta_tree.h"

namespace hpfreeze {
namespace {

using io_testing::FakeFileSystem;

// "path" for a meta (read: "path = bytes"), "path: message" for an error.
std::string describe(MetaSource& source) {
  if (source.error) {
    EXPECT_EQ(source.error->file, source.path);
    EXPECT_EQ(source.error->error_class, ErrorClass::kIo);
    return source.path + ": " + source.error->message;
  }
  if (!source.file) return source.path;  // a path given: read by name
  Expected<InputFile> read = source.file->read(source.path, {});
  return source.path + " = " + (read ? read->bytes : read.errors().front().message);
}

std::vector<std::string> find(FakeFileSystem& disk, std::vector<std::string> paths) {
  MetaFinder finder(disk, std::move(paths));
  std::vector<std::string> lines;
  while (std::optional<MetaSource> source = finder.next()) lines.push_back(describe(*source));
  return lines;
}

TEST(MetaFinder, DepthFirstInByteOrderSkippingWhatHoldsNoBundleOfOurs) {
  FakeFileSystem disk;
  disk.add_tree({{"t/codegen_meta.json", "1"},
                 {"t/a/codegen_meta.json", "2"},
                 {"t/a/b/codegen_meta.json", "3"},
                 {"t/a.b/codegen_meta.json", "4"},  // "a" < "a.b": a's tree comes first
                 {"t/B/codegen_meta.json", "5"},
                 {"t/a/Codegen_meta.json", "x"},
                 {"t/a/codegen_meta.json.bak", "x"},
                 {"t/.git/codegen_meta.json", "x"},
                 {"t/venv/codegen_meta.json", "x"},
                 {"t/z/.codegen_tmp_1/codegen_meta.json", "x"},
                 {"t/z/__pycache__/codegen_meta.json", "x"}});
  EXPECT_EQ(find(disk, {"t"}),
            (std::vector<std::string>{"t/B/codegen_meta.json = 5", "t/a/b/codegen_meta.json = 3",
                                      "t/a/codegen_meta.json = 2", "t/a.b/codegen_meta.json = 4",
                                      "t/codegen_meta.json = 1"}));
  // "." names nothing in front; a skipped name given as a PATH is walked.
  disk.add_tree({{"codegen_meta.json", "0"}});
  EXPECT_EQ(find(disk, {"t/venv"}), std::vector<std::string>{"t/venv/codegen_meta.json = x"});
  EXPECT_EQ(find(disk, {"."}).front(), "codegen_meta.json = 0");
}

TEST(MetaFinder, PathsInTheirOrderAndWhereNoneWasFound) {
  FakeFileSystem disk;
  disk.add_tree({{"one/codegen_meta.json", "1"},
                 {"only_skipped/.venv/codegen_meta.json", "x"},
                 {"plain.json", "p"}});
  disk.add_dir("empty");
  EXPECT_EQ(find(disk, {"plain.json", "one", "-", "empty", "missing", "only_skipped", "one"}),
            (std::vector<std::string>{
                "plain.json",  // a file is a meta whatever its name, read by its loader
                "one/codegen_meta.json = 1", "-",
                "empty: no codegen_meta.json in this directory or below",
                "missing",  // its loader says that nothing is there
                "only_skipped: no codegen_meta.json in this directory or below",
                "one/codegen_meta.json = 1"}));  // named twice, checked twice
}

TEST(MetaFinder, LinksToDirectoriesAreNotFollowedLinksToMetasAreMetas) {
  FakeFileSystem disk;
  disk.add_tree({{"t/real/codegen_meta.json", "real"}});
  disk.add_symlink("t/linked_dir", "real");
  disk.add_dir("t/via_link");
  disk.add_symlink("t/via_link/codegen_meta.json", "../real/codegen_meta.json");
  disk.add_dir("t/dangling");
  disk.add_symlink("t/dangling/codegen_meta.json", "nothing");
  disk.add_dir("t/to_dir");
  disk.add_symlink("t/to_dir/codegen_meta.json", "../real");
  disk.add_dir("t/fifo");
  disk.add_fifo("t/fifo/codegen_meta.json");
  disk.add_dir("t/sock");
  disk.add_socket("t/sock/codegen_meta.json");
  disk.add_dir("t/to_fifo");
  disk.add_symlink("t/to_fifo/codegen_meta.json", "../fifo/codegen_meta.json");
  EXPECT_EQ(find(disk, {"t"}),
            (std::vector<std::string>{
                "t/dangling/codegen_meta.json: cannot open: No such file or directory",
                "t/fifo/codegen_meta.json: is a FIFO, not a regular file",
                "t/real/codegen_meta.json = real",
                "t/sock/codegen_meta.json: is a socket, not a regular file",
                "t/to_fifo/codegen_meta.json: is a FIFO, not a regular file",
                "t/via_link/codegen_meta.json = real"}));
  // The directory a walk starts from may be a link: the user named it.
  EXPECT_EQ(find(disk, {"t/linked_dir"}),
            std::vector<std::string>{"t/linked_dir/codegen_meta.json = real"});
}

// Each meta is opened when the walk reaches it, and each directory when the walk enters it:
// nothing is opened ahead, and nothing by a path from the root.
TEST(MetaFinder, EachMetaIsOpenedAtItsTurnFromItsDirectory) {
  FakeFileSystem disk;
  disk.add_tree({{"t/a/codegen_meta.json", "a"}, {"t/b/codegen_meta.json", "b"}});
  MetaFinder finder(disk, {"t"});
  disk.log.clear();
  std::optional<MetaSource> a = finder.next();
  ASSERT_TRUE(a && a->file);
  EXPECT_EQ(disk.log, (std::vector<std::string>{"open directory t", "list t", "list t/a",
                                                "open t/a/codegen_meta.json"}));
  // b's meta, replaced before its turn: what is there at its turn is what is read.
  disk.add_file("t/b/codegen_meta.json", "b, rewritten");
  std::optional<MetaSource> b = finder.next();
  ASSERT_TRUE(b && b->file);
  EXPECT_EQ(describe(*b), "t/b/codegen_meta.json = b, rewritten");
  // Once opened, what replaces it is not what is read.
  disk.add_file("t/a/codegen_meta.json", "a, rewritten");
  EXPECT_EQ(describe(*a), "t/a/codegen_meta.json = a");
  EXPECT_FALSE(finder.next());
}

// A directory the walk holds is walked where it is, whatever takes its name; one replaced by
// a link before the walk enters it is not entered; one that vanished is passed over.
TEST(MetaFinder, DirectoriesAreHeldByWhatTheyAreNotByName) {
  FakeFileSystem disk;
  disk.add_tree({{"t/a/b/codegen_meta.json", "ab"},
                 {"t/a/z/codegen_meta.json", "az"},
                 {"t/c/codegen_meta.json", "c"},
                 {"t/d/codegen_meta.json", "d"},
                 {"outside/z/codegen_meta.json", "outside"},
                 {"outside/c/codegen_meta.json", "outside"}});
  MetaFinder finder(disk, {"t"});
  std::optional<MetaSource> first = finder.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(describe(*first), "t/a/b/codegen_meta.json = ab");
  disk.rename_tree("t/a", "t_moved_a");
  disk.add_symlink("t/a", "../outside");
  disk.rename_tree("t/c", "t_moved_c");
  disk.add_symlink("t/c", "../outside/c");
  disk.rename_tree("t/d", "gone");
  std::vector<std::string> rest;
  while (std::optional<MetaSource> source = finder.next()) rest.push_back(describe(*source));
  EXPECT_EQ(rest, std::vector<std::string>{"t/a/z/codegen_meta.json = az"});
}

// A deep walk lets go of the directories far above it and opens them again on its way back
// (".."); one that moved meanwhile ends the walk of that path with an error naming it.
TEST(MetaFinder, FarAboveTheWalkDirectoriesAreOpenedAgainAndMustBeWhereTheyWere) {
  FakeFileSystem disk;
  std::string deep = "t";
  for (int i = 0; i < 50; ++i) deep += "/d";
  disk.add_tree({{deep + "/codegen_meta.json", "deep"},
                 {"t/d/zz/codegen_meta.json", "zz"},
                 {"t/zz/codegen_meta.json", "tzz"}});
  EXPECT_EQ(find(disk, {"t"}), (std::vector<std::string>{deep + "/codegen_meta.json = deep",
                                                         "t/d/zz/codegen_meta.json = zz",
                                                         "t/zz/codegen_meta.json = tzz"}));
  MetaFinder finder(disk, {"t"});
  ASSERT_TRUE(finder.next());
  disk.add_dir("elsewhere");
  disk.rename_tree("t/d/d", "elsewhere/d");
  std::optional<MetaSource> moved = finder.next();
  ASSERT_TRUE(moved && moved->error);
  EXPECT_EQ(describe(*moved), "t/d: moved while it was walked: the rest of its walk is left out");
  EXPECT_FALSE(finder.next());
}

TEST(MetaFinder, AnUnlistableDirectoryIsAnErrorAndTheWalkGoesOn) {
  FakeFileSystem disk;
  disk.add_tree({{"t/a/codegen_meta.json", "a"}, {"t/z/codegen_meta.json", "z"}});
  disk.add_dir("t/m");
  MetaFinder finder(disk, {"t"});
  ASSERT_TRUE(finder.next());
  disk.nodes.erase("t/m");  // listed, gone before it is entered: passed over
  std::optional<MetaSource> z = finder.next();
  ASSERT_TRUE(z);
  EXPECT_EQ(describe(*z), "t/z/codegen_meta.json = z");
}

}  // namespace
}  // namespace hpfreeze
