// The walk of `check PATH...` for metas on the real disk: order, skipped directories, links,
// errors, and what only a real disk shows: entries replaced while the walk runs (a FIFO for a
// meta, a link for a directory, a directory moved), metas read from what was opened, and the
// descriptors a tree of any size or depth holds. tests/unit/io/meta_finder_test.cc has the
// walk on the in-memory file system.
#include "io/meta_tree.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "io/file_digest.h"
#include "io/io_test_support.h"

namespace hpfreeze {
namespace {

using io_testing::slurp;
using io_testing::spit;
using io_testing::TempDirTest;

std::vector<MetaSource> find_metas(const std::vector<std::string>& paths) {
  static RealFileSystem disk;
  MetaFinder finder(disk, paths);
  std::vector<MetaSource> found;
  while (std::optional<MetaSource> source = finder.next()) {
    // A meta the walk found is open, and its directory with it; a path given is not.
    EXPECT_EQ(source->file != nullptr, source->directory != nullptr) << source->path;
    source->file.reset();  // hold nothing
    source->directory.reset();
    found.push_back(std::move(*source));
  }
  return found;
}

std::vector<MetaSource> walk_for_metas(const std::string& dir) { return find_metas({dir}); }

// "path" for a meta, "path: message" for an error (always class kIo, file = path).
std::vector<std::string> describe(const std::vector<MetaSource>& sources) {
  std::vector<std::string> lines;
  for (const MetaSource& source : sources) {
    if (!source.error) {
      lines.push_back(source.path);
      continue;
    }
    EXPECT_EQ(source.error->file, source.path);
    EXPECT_EQ(source.error->error_class, ErrorClass::kIo);
    EXPECT_EQ(source.error->severity, Severity::kError);
    lines.push_back(source.path + ": " + source.error->message);
  }
  return lines;
}

class MetaTree : public TempDirTest {
 protected:
  void meta(const std::string& relative) {
    std::filesystem::create_directories(std::filesystem::path(path(relative)).parent_path());
    spit(path(relative), "{}");
  }
  void mkdir(const std::string& relative) { std::filesystem::create_directories(path(relative)); }
};

TEST_F(MetaTree, DepthFirstInByteOrderSkippingWhatHoldsNoBundleOfOurs) {
  meta("codegen_meta.json");
  meta("a/codegen_meta.json");
  meta("a/b/codegen_meta.json");
  meta("a/b/c/codegen_meta.json");
  meta("B/codegen_meta.json");  // 'B' sorts before '_' and 'a'
  meta("_/codegen_meta.json");
  meta("\xc3\xa9/codegen_meta.json");  // é: after every ASCII name
  meta("z/gen/codegen_meta.json");
  spit(path("a/other.json"), "{}");
  spit(path("a/codegen_meta.json.bak"), "{}");
  spit(path("a/Codegen_meta.json"), "{}");
  for (const char* skipped : {".git", "venv", ".venv", "__pycache__", ".codegen_tmp_x1",
                              ".codegen_old_", "a/.git", "z/venv/deep"}) {
    meta(std::string(skipped) + "/codegen_meta.json");
  }
  // Names that only look like the skipped ones are walked.
  for (const char* walked : {"venvs", ".gitx", ".codegen_tmp", "x.venv", "_pycache__"}) {
    meta(std::string(walked) + "/codegen_meta.json");
  }
  EXPECT_EQ(describe(walk_for_metas(dir_)), (std::vector<std::string>{
                                                path(".codegen_tmp/codegen_meta.json"),
                                                path(".gitx/codegen_meta.json"),
                                                path("B/codegen_meta.json"),
                                                path("_/codegen_meta.json"),
                                                path("_pycache__/codegen_meta.json"),
                                                path("a/b/c/codegen_meta.json"),
                                                path("a/b/codegen_meta.json"),
                                                path("a/codegen_meta.json"),
                                                path("codegen_meta.json"),
                                                path("venvs/codegen_meta.json"),
                                                path("x.venv/codegen_meta.json"),
                                                path("z/gen/codegen_meta.json"),
                                                path("\xc3\xa9/codegen_meta.json"),
                                            }));
}

TEST_F(MetaTree, LinkedDirectoriesAreNotFollowedLinkedMetasAreMetas) {
  meta("real/codegen_meta.json");
  ASSERT_EQ(::symlink("real", path("linked_dir").c_str()), 0);
  mkdir("via_link");
  ASSERT_EQ(::symlink("../real/codegen_meta.json", path("via_link/codegen_meta.json").c_str()), 0);
  mkdir("dangling");
  ASSERT_EQ(::symlink("nothing", path("dangling/codegen_meta.json").c_str()), 0);
  mkdir("to_dir");
  ASSERT_EQ(::symlink("../real", path("to_dir/codegen_meta.json").c_str()), 0);
  mkdir("fifo");
  ASSERT_EQ(::mkfifo(path("fifo/codegen_meta.json").c_str(), 0600), 0);
  mkdir("to_fifo");
  ASSERT_EQ(::symlink("../fifo/codegen_meta.json", path("to_fifo/codegen_meta.json").c_str()), 0);
  meta("as_dir/codegen_meta.json/codegen_meta.json");  // a directory of that name is walked
  EXPECT_EQ(describe(walk_for_metas(dir_)),
            (std::vector<std::string>{
                path("as_dir/codegen_meta.json/codegen_meta.json"),
                path("dangling/codegen_meta.json") + ": cannot open: No such file or directory",
                path("fifo/codegen_meta.json") + ": is a FIFO, not a regular file",
                path("real/codegen_meta.json"),
                path("to_fifo/codegen_meta.json") + ": is a FIFO, not a regular file",
                path("via_link/codegen_meta.json"),
            }));
  // The directory the walk starts from may be a link: the user named it.
  EXPECT_EQ(describe(walk_for_metas(path("linked_dir"))),
            (std::vector<std::string>{path("linked_dir/codegen_meta.json")}));
}

TEST_F(MetaTree, PathsAreTheDirectoryAsGivenJoinedWithSlashes) {
  meta("gen/codegen_meta.json");
  EXPECT_EQ(describe(walk_for_metas(dir_ + "/")),
            (std::vector<std::string>{dir_ + "/gen/codegen_meta.json"}));
  EXPECT_EQ(describe(walk_for_metas(dir_ + "/gen/..")),
            (std::vector<std::string>{dir_ + "/gen/../gen/codegen_meta.json"}));
  // "." adds nothing in front: "gen/codegen_meta.json", as a path relative to it.
  io_testing::expect_child_succeeds([&]() -> std::string {
    if (::chdir(dir_.c_str()) != 0) return "chdir";
    for (const std::string dot : {".", "./"}) {
      const std::vector<std::string> found = describe(walk_for_metas(dot));
      if (found != std::vector<std::string>{"gen/codegen_meta.json"}) {
        return dot + ": " + (found.empty() ? "nothing" : found[0]);
      }
    }
    return {};
  });
}

TEST_F(MetaTree, ADeepTreeIsWalkedWithoutRecursion) {
  std::string deep;
  for (int i = 0; i < 200; ++i) deep += "d/";
  meta(deep + "codegen_meta.json");
  EXPECT_EQ(describe(walk_for_metas(dir_)),
            (std::vector<std::string>{path(deep + "codegen_meta.json")}));
}

TEST_F(MetaTree, AnUnreadableDirectoryIsAnErrorInWalkOrderAndTheWalkGoesOn) {
  meta("a/codegen_meta.json");
  meta("locked/codegen_meta.json");
  meta("z/codegen_meta.json");
  ASSERT_EQ(::chmod(path("locked").c_str(), 0), 0);
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const auto body = [&]() -> std::string {
    const std::vector<std::string> expected = {
        path("a/codegen_meta.json"),
        path("locked") + ": cannot open directory: Permission denied",
        path("z/codegen_meta.json"),
    };
    if (describe(walk_for_metas(dir_)) != expected) return "walk of the tree";
    // Unreadable where the walk starts: that error alone, no "no codegen_meta.json".
    if (describe(find_metas({path("locked")})) !=
        std::vector<std::string>{path("locked") + ": cannot open directory: Permission denied"}) {
      return "find_metas of the locked directory";
    }
    return testing::Test::HasFailure() ? "failed expectation" : "";
  };
  if (::geteuid() == 0) {
    io_testing::as_nobody(body);  // modes do not bind root
  } else {
    io_testing::expect_child_succeeds(body);
  }
}

TEST_F(MetaTree, FindMetasKeepsTheOrderOfThePathsAndSaysWhereNoneWasFound) {
  meta("one/codegen_meta.json");
  meta("one/sub/codegen_meta.json");
  meta("only_skipped/.venv/codegen_meta.json");
  mkdir("empty");
  spit(path("plain.json"), "{}");
  const std::vector<std::string> paths = {
      path("plain.json"), path("one"),          "-",         path("empty"),
      path("missing"),    path("only_skipped"), path("one"),
  };
  constexpr const char* kNone = ": no codegen_meta.json in this directory or below";
  EXPECT_EQ(describe(find_metas(paths)),
            (std::vector<std::string>{
                path("plain.json"),  // a file is a meta whatever its name
                path("one/codegen_meta.json"),
                path("one/sub/codegen_meta.json"),
                "-",
                path("empty") + kNone,
                path("missing"),  // its loader reports that nothing is there
                path("only_skipped") + kNone,
                path("one/codegen_meta.json"),  // named twice, checked twice
                path("one/sub/codegen_meta.json"),
            }));
}

TEST_F(MetaTree, APathNamedByTheUserIsWalkedEvenWhenTheWalkWouldSkipIt) {
  meta("venv/codegen_meta.json");
  EXPECT_EQ(describe(find_metas({path("venv")})),
            (std::vector<std::string>{path("venv/codegen_meta.json")}));
}

// A meta is opened at its turn, from its directory: an entry listed as a file and replaced by
// a FIFO before its turn is refused at once, never waited on.
TEST_F(MetaTree, AMetaReplacedByAFifoBeforeItsTurnIsRefusedAtOnce) {
  meta("a/codegen_meta.json");
  meta("codegen_meta.json");  // listed as a file with the top directory, opened after a/
  MetaFinder finder(real_file_system(), {dir_});
  std::optional<MetaSource> first = finder.next();
  ASSERT_TRUE(first && !first->error);
  EXPECT_EQ(first->path, path("a/codegen_meta.json"));
  ASSERT_EQ(::unlink(path("codegen_meta.json").c_str()), 0);
  ASSERT_EQ(::mkfifo(path("codegen_meta.json").c_str(), 0600), 0);
  std::optional<MetaSource> second = finder.next();
  ASSERT_TRUE(second && second->error);
  EXPECT_EQ(second->error->message, "is a FIFO, not a regular file");
  EXPECT_FALSE(finder.next());
}

// What the walk found is what is read: the meta is read from what was opened, whatever
// takes its name afterwards.
TEST_F(MetaTree, AMetaIsReadFromWhatWasOpened) {
  spit(path("codegen_meta.json"), "{\"first\": 1}");
  MetaFinder finder(real_file_system(), {dir_});
  std::optional<MetaSource> found = finder.next();
  ASSERT_TRUE(found && found->file);
  spit(path("other.json"), "{\"second\": 2}");
  ASSERT_EQ(::rename(path("other.json").c_str(), path("codegen_meta.json").c_str()), 0);
  Expected<InputFile> read = found->file->read(found->path, {});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->bytes, "{\"first\": 1}");
  EXPECT_EQ(read->display_name, path("codegen_meta.json"));
}

// A directory the walk is in, replaced by a link to a directory elsewhere, is walked on where
// it is (by its descriptor): nothing outside the tree is found under the in-tree name. One
// replaced by a link before the walk enters it is not entered.
TEST_F(MetaTree, ADirectoryReplacedByALinkLeadsNowhereNew) {
  meta("a/b/codegen_meta.json");
  std::filesystem::create_directories(path("a/z"));
  spit(path("a/z/codegen_meta.json"), "in the tree");
  meta("c/codegen_meta.json");
  const std::string outside = dir_ + "_outside";
  std::filesystem::create_directories(outside + "/z");
  std::filesystem::create_directories(outside + "/c");
  spit(outside + "/z/codegen_meta.json", "outside");
  spit(outside + "/c/codegen_meta.json", "outside");
  MetaFinder finder(real_file_system(), {dir_});
  std::optional<MetaSource> first = finder.next();
  ASSERT_TRUE(first && first->file);
  EXPECT_EQ(first->path, path("a/b/codegen_meta.json"));
  ASSERT_EQ(::rename(path("a").c_str(), path("a_moved").c_str()), 0);
  ASSERT_EQ(::symlink(outside.c_str(), path("a").c_str()), 0);
  ASSERT_EQ(::rename(path("c").c_str(), path("c_moved").c_str()), 0);
  ASSERT_EQ(::symlink((outside + "/c").c_str(), path("c").c_str()), 0);
  std::optional<MetaSource> second = finder.next();
  ASSERT_TRUE(second && second->file);
  EXPECT_EQ(second->path, path("a/z/codegen_meta.json"));
  Expected<InputFile> read = second->file->read(second->path, {});
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->bytes, "in the tree");
  // The bundle beside it is read from the same directory.
  spit(path("a_moved/z/f.py"), "");
  Expected<FileDigest> digest = second->directory->digest("f.py", path("a/z/f.py"), 64);
  EXPECT_TRUE(digest.ok());
  EXPECT_FALSE(finder.next());  // c is a link now: not entered
  std::filesystem::remove_all(outside);
}

// Only the directories being walked (the deepest few) and the metas handed on are open: a
// tree of 500 metas and one 300 directories deep are walked with 64 descriptors allowed
// (tests/e2e/test_check_races.py runs 10,000 and 2,000 through the binary).
TEST_F(MetaTree, ATreeOfAnySizeOrDepthHoldsFewDescriptors) {
  for (int i = 0; i < 500; ++i) {
    const std::string d = path("wide/" + std::to_string(i));
    ASSERT_EQ(::mkdir(path("wide").c_str(), 0755) == 0 || errno == EEXIST, true);
    ASSERT_EQ(::mkdir(d.c_str(), 0755), 0);
    spit(d + "/codegen_meta.json", "{}");
  }
  std::string deep = path("deep");
  ASSERT_EQ(::mkdir(deep.c_str(), 0755), 0);
  const int at = ::open(deep.c_str(), O_RDONLY | O_DIRECTORY);
  int fd = at;
  for (int i = 0; i < 300; ++i) {  // relative to a descriptor, as a deeper tree needs
    ASSERT_EQ(::mkdirat(fd, "d", 0755), 0);
    const int inner = ::openat(fd, "d", O_RDONLY | O_DIRECTORY);
    if (fd != at) ::close(fd);
    fd = inner;
    if (i % 100 == 0 || i == 299) {
      const int meta_fd = ::openat(fd, "codegen_meta.json", O_WRONLY | O_CREAT, 0644);
      ::close(meta_fd);
    }
  }
  ::close(fd);
  ::close(at);
  io_testing::expect_child_succeeds([&]() -> std::string {
    const rlimit limit{64, 64};
    if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) return "setrlimit";
    for (const char* tree : {"wide", "deep"}) {
      MetaFinder finder(real_file_system(), {path(tree)});
      std::size_t metas = 0;
      while (std::optional<MetaSource> found = finder.next()) {
        if (found->error) return std::string(tree) + ": " + found->error->message;
        if (!found->file) return std::string(tree) + ": not opened";
        if (!found->file->read(found->path, {}).ok()) return std::string(tree) + ": not read";
        ++metas;
      }
      if (metas != (std::string(tree) == "wide" ? 500u : 4u)) {
        return std::string(tree) + ": " + std::to_string(metas) + " metas";
      }
    }
    return {};
  });
}

// A directory the walk let go of (far above the deepest one) that moved meanwhile ends the
// walk of that path with an error naming it: nothing is walked where it no longer is.
TEST_F(MetaTree, ADirectoryMovedFarAboveTheWalkEndsIt) {
  std::string chain = "top";
  for (int i = 0; i < 40; ++i) chain += "/l";
  meta(chain + "/codegen_meta.json");
  meta("top/zz/codegen_meta.json");
  std::filesystem::create_directories(path("elsewhere"));
  MetaFinder finder(real_file_system(), {path("top")});
  std::optional<MetaSource> deepest = finder.next();
  ASSERT_TRUE(deepest && deepest->file)
      << (deepest && deepest->error ? deepest->error->message : "");
  ASSERT_EQ(::rename(path("top/l").c_str(), path("elsewhere/l").c_str()), 0);
  std::optional<MetaSource> next = finder.next();
  ASSERT_TRUE(next && next->error);
  EXPECT_EQ(next->path, path("top"));
  EXPECT_EQ(next->error->message, "moved while it was walked: the rest of its walk is left out");
  EXPECT_FALSE(finder.next());
}

// A socket named codegen_meta.json is named for what it is.
TEST_F(MetaTree, ASocketIsNamedForWhatItIs) {
  mkdir("s");
  const int fd = io_testing::bound_socket(path("s/codegen_meta.json"));
  ASSERT_GE(fd, 0);
  mkdir("l");
  ASSERT_EQ(::symlink("../s/codegen_meta.json", path("l/codegen_meta.json").c_str()), 0);
  EXPECT_EQ(describe(walk_for_metas(dir_)),
            (std::vector<std::string>{
                path("l/codegen_meta.json") + ": is a socket, not a regular file",
                path("s/codegen_meta.json") + ": is a socket, not a regular file"}));
  ::close(fd);
}

TEST(SkippedDirectory, Names) {
  for (const char* name : {".git", "venv", ".venv", "__pycache__", ".codegen_tmp_",
                           ".codegen_tmp_a1", ".codegen_old_", ".codegen_old_zz"}) {
    EXPECT_TRUE(is_skipped_directory(name)) << name;
  }
  for (const char* name : {"git", ".GIT", "Venv", "venv2", "_pycache_", ".codegen_tmp",
                           "codegen_tmp_x", ".codegen_new_x", ""}) {
    EXPECT_FALSE(is_skipped_directory(name)) << name;
  }
}

}  // namespace
}  // namespace hpfreeze
