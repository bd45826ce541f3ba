// write_outputs and check_distinct_paths against the in-memory file system: several
// outputs are written all or none, and one file named twice is refused.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "fake_file_system.h"
#include "io/io.h"
#include "io_test_support.h"

namespace hpfreeze {
namespace {

using namespace io_testing;

// -- several outputs: all or none ---------------------------------------------------------

std::vector<OutputFile> two_outputs(std::string first, std::string second) {
  return {OutputFile{"-o", std::move(first), "plan bytes", {}},
          OutputFile{"--model-out", std::move(second), "model bytes", {}}};
}

TEST(FakeOutputsTest, BothAreWrittenAndNoBackupStays) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  fake.add_file("model.json", "old model");
  const auto outs = two_outputs("plan.json", "model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, (std::vector<WriteOutcome>{WriteOutcome::kWritten, WriteOutcome::kWritten}));
  EXPECT_EQ(fake.nodes.at("plan.json").bytes, "plan bytes");
  EXPECT_EQ(fake.nodes.at("model.json").bytes, "model bytes");
  EXPECT_TRUE(fake.extra_files().empty());
  // Both temporary files are complete before the first rename.
  const auto& log = fake.log;
  const auto first_rename = std::find_if(
      log.begin(), log.end(), [](const std::string& e) { return e.starts_with("rename"); });
  EXPECT_EQ(std::count_if(first_rename, log.end(),
                          [](const std::string& e) { return e.starts_with("write"); }),
            0);
}

TEST(FakeOutputsTest, SecondRenameFailingPutsTheFirstBack) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  fake.add_file("model.json", "old model");
  fake.fail_commit = EIO;
  fake.fail_commit_of = "model.json";
  const auto outs = two_outputs("plan.json", "model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "model.json",
                      "cannot rename into place: Input/output error");
  EXPECT_EQ(fake.nodes.at("plan.json").bytes, "old plan");
  EXPECT_EQ(fake.nodes.at("model.json").bytes, "old model");
  EXPECT_TRUE(fake.extra_files().empty());
  EXPECT_EQ(with_prefix(fake.log, "restore"), std::vector<std::string>{"restore plan.json"});
}

TEST(FakeOutputsTest, SecondRenameFailingRemovesAFirstThatDidNotExist) {
  FakeFileSystem fake;
  fake.fail_commit = EIO;
  fake.fail_commit_of = "model.json";
  const auto outs = two_outputs("plan.json", "model.json");
  ASSERT_FALSE(write_outputs(fake, outs).ok());
  EXPECT_TRUE(fake.nodes.empty());
}

TEST(FakeOutputsTest, SecondFailingBeforeAnyRenameChangesNothing) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  const auto outs = two_outputs("plan.json", "missing-dir/model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "missing-dir/model.json",
                      "cannot write: No such file or directory");
  EXPECT_EQ(fake.nodes.at("plan.json").version, 0);
  EXPECT_TRUE(with_prefix(fake.log, "create").empty());
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeOutputsTest, NoBackupPossibleMeansNothingIsRenamed) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "old plan");
  fake.fail_backup = EPERM;
  const auto outs = two_outputs("plan.json", "model.json");
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "plan.json",
                      "cannot keep the old file until every output is written: Operation not "
                      "permitted");
  EXPECT_EQ(fake.nodes.at("plan.json").bytes, "old plan");
  EXPECT_FALSE(fake.nodes.count("model.json"));
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeOutputsTest, StdoutAndDevicesComeAfterTheRenames) {
  FakeFileSystem fake;
  fake.add_device("sink");
  const std::vector<OutputFile> outs = {OutputFile{"-o", "-", "to stdout", {}},
                                        OutputFile{"--a", "sink", "to sink", {}},
                                        OutputFile{"--b", "file.json", "to file", {}}};
  ASSERT_TRUE(write_outputs(fake, outs).ok());
  EXPECT_EQ(fake.stdout_bytes, "to stdout");
  const std::vector<std::string> writes = with_prefix(fake.log, "write");
  EXPECT_EQ(writes, (std::vector<std::string>{"write 7 to .file.json.tmp.1", "write 7 to sink",
                                              "write 9 to stdout"}));
  EXPECT_EQ(fake.nodes.at("file.json").bytes, "to file");
}

TEST(FakeOutputsTest, FailedStdoutPutsTheRenamedFileBack) {
  FakeFileSystem fake;
  fake.add_file("file.json", "old");
  fake.fail_stdout = EPIPE;
  const std::vector<OutputFile> outs = {OutputFile{"-o", "file.json", "new", {}},
                                        OutputFile{"--model-out", "-", "x", {}}};
  auto result = write_outputs(fake, outs);
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "", "cannot write to stdout: Broken pipe");
  EXPECT_EQ(fake.nodes.at("file.json").bytes, "old");
  EXPECT_TRUE(fake.extra_files().empty());
}

// -- same file ------------------------------------------------------------------------------

TEST(FakeDistinctPathsTest, SameFileByAnotherNameIsRefused) {
  FakeFileSystem fake;
  fake.add_dir("d");
  fake.add_file("d/p.json", "old");
  fake.add_symlink("link.json", "d/p.json");
  for (const std::string& other : {std::string("d/p.json"), std::string("./d/p.json"),
                                   std::string("d/../d/p.json"), std::string("link.json")}) {
    const auto outs = two_outputs("d/p.json", other);
    auto result = write_outputs(fake, outs);
    ASSERT_FALSE(result.ok()) << other;
    expect_one_io_error(result.errors(), other, "-o and --model-out name the same file");
    EXPECT_EQ(fake.nodes.at("d/p.json").bytes, "old");
  }
}

TEST(FakeDistinctPathsTest, SameNewFileIsRefused) {
  FakeFileSystem fake;
  const auto outs = two_outputs("new.json", "./new.json");
  const Diagnostics errors = check_distinct_paths(fake, outs, {});
  expect_one_io_error(errors, "./new.json", "-o and --model-out name the same file");
  EXPECT_TRUE(check_distinct_paths(fake, two_outputs("a.json", "b.json"), {}).empty());
}

TEST(FakeDistinctPathsTest, TwoStdoutsAreTheSame) {
  FakeFileSystem fake;
  const Diagnostics errors = check_distinct_paths(fake, two_outputs("-", "-"), {});
  expect_one_io_error(errors, "<stdout>", "-o and --model-out name the same file");
}

TEST(FakeDistinctPathsTest, DevicesMayBeNamedTwice) {
  FakeFileSystem fake;
  fake.add_device("null");
  EXPECT_TRUE(check_distinct_paths(fake, two_outputs("null", "./null"), {}).empty());
}

TEST(FakeDistinctPathsTest, TwoInputsOnOneFifoAreRefusedOneRegularFileTwiceIsNot) {
  FakeFileSystem fake;
  fake.add_fifo("p.fifo");
  fake.add_file("model.json", "{}");
  const std::vector<InputPath> twice = {InputPath{"--plan", "p.fifo", {}},
                                        InputPath{"--model", "model.json", {}},
                                        InputPath{"--base", "./p.fifo", {}}};
  expect_one_io_error(check_distinct_paths(fake, {}, twice), "./p.fifo",
                      "--plan and --base name the same pipe or socket, which can be read "
                      "only once");
  const std::vector<InputPath> once = {InputPath{"--plan", "p.fifo", {}},
                                       InputPath{"--model", "model.json", {}},
                                       InputPath{"--base", "./model.json", {}}};
  EXPECT_TRUE(check_distinct_paths(fake, {}, once).empty());
}

TEST(FakeDistinctPathsTest, AnOutputMayReplaceOnlyTheInputsItIsAllowedTo) {
  FakeFileSystem fake;
  fake.add_file("plan.json", "{}");
  fake.add_file("meta.json", "{}");
  const std::vector<OutputFile> outs = {OutputFile{"-o", "./meta.json", "", {}},
                                        OutputFile{"--depfile", "plan.json", "", {}}};
  const std::vector<InputPath> ins = {InputPath{"--plan", "plan.json", "-o"},
                                      InputPath{"--base", "meta.json", "-o"}};
  const Diagnostics errors = check_distinct_paths(fake, outs, ins);
  expect_one_io_error(errors, "plan.json", "--depfile and --plan name the same file");
}

TEST(FakeDistinctPathsTest, StdoutOnAnInputIsRefusedEvenToTheOutputThatMayReplaceIt) {
  // `freeze --plan p.json -o - 1<>p.json`: the meta would be written into the plan itself.
  FakeFileSystem fake;
  fake.add_file("p.json", "{}");
  fake.descriptor_files[1] = "p.json";
  const std::vector<OutputFile> outs = {OutputFile{"-o", "-", "", {}}};
  const std::vector<InputPath> ins = {InputPath{"--plan", "./p.json", "-o"}};
  expect_one_io_error(check_distinct_paths(fake, outs, ins), "<stdout>",
                      "-o and --plan name the same file");
  // The same input replaced by a new file under its name is the in-place update it was.
  const std::vector<OutputFile> replaced = {OutputFile{"-o", "p.json", "", {}}};
  EXPECT_TRUE(check_distinct_paths(fake, replaced, ins).empty());
}

TEST(FakeDistinctPathsTest, StdoutOnAnotherOutputIsRefusedAndNothingIsWritten) {
  // `thaw META -o - --model-out m.json > m.json`.
  FakeFileSystem fake;
  fake.add_file("m.json", "old");
  fake.descriptor_files[1] = "m.json";
  auto result = write_outputs(fake, two_outputs("-", "m.json"));
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "m.json", "-o and --model-out name the same file");
  EXPECT_EQ(fake.nodes.at("m.json").version, 0);
  EXPECT_EQ(fake.stdout_bytes, "");
  // Stdout on a device is shared harmlessly.
  fake.add_device("tty");
  fake.descriptor_files[1] = "tty";
  EXPECT_TRUE(check_distinct_paths(fake, two_outputs("-", "tty"), {}).empty());
}

}  // namespace
}  // namespace hpfreeze
