// The walk of `check PATH...` for metas: order, skipped directories, links, errors.
#include "io/meta_tree.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <vector>

#include "io/io_test_support.h"

namespace hpfreeze {
namespace {

using io_testing::spit;
using io_testing::TempDirTest;

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
    const std::vector<std::string> paths = {path("locked")};
    if (describe(find_metas(paths)) !=
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
  const std::vector<std::string> paths = {path("venv")};
  EXPECT_EQ(describe(find_metas(paths)),
            (std::vector<std::string>{path("venv/codegen_meta.json")}));
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
