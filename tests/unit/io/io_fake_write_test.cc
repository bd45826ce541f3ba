// write_output_file against an in-memory file system that fails on demand: the order of
// the steps, modes and owners, and what every failure leaves behind.
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

TEST(FakeWriteTest, SuccessfulWriteFollowsTheSafeOrder) {
  FakeFileSystem fake;
  fake.add_dir("out");
  fake.add_file("out/meta.json", "old");
  auto result = write_output_file(fake, "out/meta.json", "new!", {});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  const std::vector<std::string> expected_log = {
      "resolve out/meta.json",
      "create beside out/meta.json",
      "created out/.meta.json.tmp.1",
      "write 4 to out/.meta.json.tmp.1",
      "attributes 420",  // the old file's 0644, not the 0640 of a new one
      "close",
      "rename out/.meta.json.tmp.1 -> out/meta.json",
      "release out",
  };
  EXPECT_EQ(fake.log, expected_log);
  EXPECT_EQ(fake.nodes.at("out/meta.json").bytes, "new!");
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeWriteTest, NewFileGetsTheNewFileMode) {
  FakeFileSystem fake;
  ASSERT_TRUE(write_output_file(fake, "meta.json", "x", {}).ok());
  EXPECT_EQ(fake.log[2], "created .meta.json.tmp.1");
  EXPECT_EQ(with_prefix(fake.log, "attributes"), std::vector<std::string>{"attributes 416"});
  EXPECT_EQ(fake.nodes.at("meta.json").mode, 0640u);
  EXPECT_TRUE(fake.extra_files().empty());
}

TEST(FakeWriteTest, ReplacedFileKeepsModeOwnerAndGroup) {
  FakeFileSystem fake;
  FakeFileSystem::Node& old = fake.add_file("meta.json", "old");
  old.mode = 0600;
  old.uid = 1000;
  old.gid = 2000;
  ASSERT_TRUE(write_output_file(fake, "meta.json", "new", {}).ok());
  EXPECT_EQ(with_prefix(fake.log, "attributes"),
            std::vector<std::string>{"attributes 384 owner 1000:2000"});
  const FakeFileSystem::Node& now = fake.nodes.at("meta.json");
  EXPECT_EQ(now.bytes, "new");
  EXPECT_EQ((std::tuple{now.mode, now.uid, now.gid}), (std::tuple{0600u, 1000u, 2000u}));
}

TEST(FakeWriteTest, FileTheCallerCannotWriteIsRefused) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "old").write_error = EACCES;
  auto result = write_output_file(fake, "meta.json", "new", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "meta.json", "cannot write: Permission denied");
  EXPECT_EQ(fake.nodes.at("meta.json").bytes, "old");
  EXPECT_EQ(fake.nodes.at("meta.json").version, 0);
  EXPECT_TRUE(with_prefix(fake.log, "create").empty());
}

TEST(FakeWriteTest, IfChangedNeedsNoWriteAccessWhenTheBytesAreThere) {
  for (const int reason : {EACCES, EROFS}) {
    FakeFileSystem fake;
    fake.add_file("meta.json", "same").write_error = reason;
    auto same = write_output_file(fake, "meta.json", "same", {.if_changed = true});
    ASSERT_TRUE(same.ok()) << same.errors()[0].message;
    EXPECT_EQ(*same, WriteOutcome::kUnchanged);
    // Other bytes, or no --if-changed: refused for the real reason, before any temporary file.
    for (const bool if_changed : {true, false}) {
      auto refused = write_output_file(fake, "meta.json", if_changed ? "other" : "same",
                                       {.if_changed = if_changed});
      ASSERT_FALSE(refused.ok());
      expect_one_io_error(refused.errors(), "meta.json", "cannot write: " + describe_errno(reason));
    }
    EXPECT_EQ(fake.nodes.at("meta.json").version, 0);
    EXPECT_TRUE(with_prefix(fake.log, "create").empty());
  }
}

struct Fault {
  const char* name;
  int FakeFileSystem::*step;
  int err;
  const char* message;
};

class FakeFaultTest : public testing::TestWithParam<Fault> {};

TEST_P(FakeFaultTest, FailureLeavesOldFileAndNoTempFile) {
  const Fault& fault = GetParam();
  FakeFileSystem fake;
  fake.add_dir("out");
  fake.add_file("out/meta.json", "old contents");
  fake.*(fault.step) = fault.err;

  auto result = write_output_file(fake, "out/meta.json", "new contents, longer", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "out/meta.json", fault.message);
  const FakeFileSystem::Node& node = fake.nodes.at("out/meta.json");
  EXPECT_EQ(node.bytes, "old contents");
  EXPECT_EQ(node.version, 0);
  EXPECT_EQ(node.mode, 0644u);
  EXPECT_TRUE(fake.extra_files().empty());
  EXPECT_EQ(fake.nodes.size(), 2u);
  EXPECT_EQ(fake.log.back(), "release out");
}

INSTANTIATE_TEST_SUITE_P(EachStep, FakeFaultTest,
                         testing::Values(Fault{"CreateReadOnlyFs", &FakeFileSystem::fail_create,
                                               EROFS, "cannot write: Read-only file system"},
                                         Fault{"CreatePermission", &FakeFileSystem::fail_create,
                                               EACCES, "cannot write: Permission denied"},
                                         Fault{"WriteDiskFull", &FakeFileSystem::fail_write, ENOSPC,
                                               "cannot write: No space left on device"},
                                         Fault{"WriteQuota", &FakeFileSystem::fail_write, EDQUOT,
                                               "cannot write: Disk quota exceeded"},
                                         Fault{"Close", &FakeFileSystem::fail_close, EIO,
                                               "cannot write: Input/output error"},
                                         Fault{"Attributes", &FakeFileSystem::fail_attributes,
                                               EPERM, "cannot set mode: Operation not permitted"},
                                         Fault{
                                             "Rename", &FakeFileSystem::fail_commit, EBUSY,
                                             "cannot rename into place: Device or resource busy"}),
                         [](const testing::TestParamInfo<Fault>& param_info) {
                           return std::string(param_info.param.name);
                         });

TEST(FakeWriteTest, FailedWriteClosesBeforeRemoving) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "old");
  fake.fail_write = ENOSPC;
  ASSERT_FALSE(write_output_file(fake, "meta.json", "new", {}).ok());
  const std::vector<std::string> tail(fake.log.end() - 4, fake.log.end() - 1);
  EXPECT_EQ(tail, (std::vector<std::string>{"write 3 to .meta.json.tmp.1", "close",
                                            "remove .meta.json.tmp.1"}));
}

TEST(FakeWriteTest, IfChangedWithSameBytesTouchesNothing) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "same");
  auto result = write_output_file(fake, "meta.json", "same", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kUnchanged);
  EXPECT_EQ(fake.log,
            (std::vector<std::string>{"resolve meta.json", "read meta.json", "release ."}));
  EXPECT_EQ(fake.nodes.at("meta.json").version, 0);
}

TEST(FakeWriteTest, IfChangedWithOtherSizeSkipsTheRead) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "old");
  auto result = write_output_file(fake, "meta.json", "longer", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_TRUE(with_prefix(fake.log, "read ").empty());
  EXPECT_EQ(fake.nodes.at("meta.json").bytes, "longer");
}

TEST(FakeWriteTest, IfChangedWithSameSizeOtherBytesRewrites) {
  FakeFileSystem fake;
  fake.add_file("meta.json", "abc");
  auto result = write_output_file(fake, "meta.json", "abd", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, WriteOutcome::kWritten);
  EXPECT_EQ(fake.nodes.at("meta.json").bytes, "abd");
}

TEST(FakeWriteTest, SymlinkTempFileGoesNextToTheLinkedFile) {
  FakeFileSystem fake;
  fake.add_dir("a");
  fake.add_dir("b");
  fake.add_file("b/real.json", "old");
  fake.add_symlink("a/link.json", "../b/real.json");
  ASSERT_TRUE(write_output_file(fake, "a/link.json", "new", {}).ok());
  EXPECT_EQ(with_prefix(fake.log, "created"),
            std::vector<std::string>{"created b/.real.json.tmp.1"});
  EXPECT_EQ(fake.nodes.at("b/real.json").bytes, "new");
  EXPECT_TRUE(fake.nodes.at("a/link.json").symlink);
  EXPECT_EQ(fake.nodes.at("a/link.json").link, "../b/real.json");
}

TEST(FakeWriteTest, DeviceIsWrittenInPlace) {
  FakeFileSystem fake;
  fake.add_dir("/dev");
  fake.add_device("/dev/sink");
  auto result = write_output_file(fake, "/dev/sink", "data", {.if_changed = true});
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(fake.log, (std::vector<std::string>{"resolve /dev/sink", "open /dev/sink",
                                                "write 4 to /dev/sink", "close", "release /dev"}));
  EXPECT_EQ(fake.nodes.at("/dev/sink").kind, FileKind::kOther);
  EXPECT_EQ(fake.nodes.at("/dev/sink").bytes, "data");
}

TEST(FakeWriteTest, DeviceWriteFailureIsReported) {
  FakeFileSystem fake;
  fake.add_device("sink");
  fake.fail_write = ENOSPC;
  auto result = write_output_file(fake, "sink", "data", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "sink", "cannot write: No space left on device");
  EXPECT_EQ(fake.log[fake.log.size() - 2], "close");
}

TEST(FakeWriteTest, DeviceOpenFailureIsReported) {
  FakeFileSystem fake;
  fake.add_device("sink");
  fake.fail_open = EACCES;
  auto result = write_output_file(fake, "sink", "data", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "sink", "cannot write: Permission denied");
}

TEST(FakeWriteTest, MissingDirectoryIsReportedFromResolve) {
  FakeFileSystem fake;
  auto result = write_output_file(fake, "gone/meta.json", "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "gone/meta.json", "cannot write: No such file or directory");
  EXPECT_TRUE(fake.nodes.empty());
}

TEST(FakeWriteTest, LinkToADirectoryIsADirectoryError) {
  FakeFileSystem fake;
  fake.add_dir("out");
  fake.add_symlink("link", "out");
  auto result = write_output_file(fake, "link", "x", {});
  ASSERT_FALSE(result.ok());
  expect_one_io_error(result.errors(), "link", "is a directory");
}

}  // namespace
}  // namespace hpfreeze
