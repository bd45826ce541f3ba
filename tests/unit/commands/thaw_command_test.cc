// run_thaw: reading the meta, writing both outputs or neither.
#include "hpfreeze/commands/thaw_command.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "hpfreeze/base/concurrency.h"

namespace hpfreeze {
namespace {

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class RunThaw : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const {
    return ::testing::TempDir() + "thaw_command_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" + name;
  }
  std::string write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name), std::ios::binary) << text;
    return path(name);
  }
};

TEST_F(RunThaw, WritesPlanAndModelWithFinalNewline) {
  ThawRequest request;
  request.concurrency = kTwoCpus;
  request.meta_path =
      write("meta.json", R"j({"param_plan": {"b": {}}, "boundary_classes": {"b": "B"}})j");
  request.plan_path = path("plan.json");
  request.model_path = path("model.json");
  const CommandResult result = run_thaw(request);
  EXPECT_TRUE(result.diagnostics.empty());
  EXPECT_EQ(
      read_file(*request.model_path),
      "{\n  \"format\": \"hpfreeze.model/v1\",\n  \"modules\": {\n    \"b\": \"B\"\n  }\n}\n");
  EXPECT_EQ(read_file(request.plan_path),
            "{\n  \"format\": \"hpfreeze.plan/v1\",\n  \"meta\": {},\n  \"modules\": {\n"
            "    \"b\": {}\n  }\n}\n");
}

TEST_F(RunThaw, NothingIsWrittenOnError) {
  ThawRequest request;
  request.concurrency = kTwoCpus;
  request.meta_path = write("meta.json", R"j({"param_plan": {"b": 1}})j");
  request.plan_path = write("plan.json", "old");
  const CommandResult result = run_thaw(request);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.failed());
  EXPECT_FALSE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            request.meta_path + ": /param_plan/b: expected an object, got an integer");
  EXPECT_EQ(read_file(request.plan_path), "old");
}

TEST_F(RunThaw, UnreadableAndInvalidMetas) {
  ThawRequest request;
  request.concurrency = kTwoCpus;
  request.meta_path = path("missing.json");
  request.plan_path = path("plan.json");
  CommandResult result = run_thaw(request);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.io_failed());
  request.meta_path = write("bad.json", "{\"param_plan\": ");
  result = run_thaw(request);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_FALSE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].line, 1u);
  EXPECT_FALSE(std::filesystem::exists(request.plan_path));
}

// The request's rule that the two outputs differ, checked by run_thaw before the meta is
// read: a usage error (exit 2), nothing written, even when the meta could not be read.
TEST_F(RunThaw, TheTwoOutputsMustDifferBeforeTheMetaIsRead) {
  ThawRequest request;
  request.concurrency = kTwoCpus;
  request.meta_path = path("missing.json");
  request.plan_path = write("out.json", "old");
  request.model_path = request.plan_path;
  CommandResult result = run_thaw(request);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].location_and_message(), "-o and --model-out name the same file");
  EXPECT_EQ(read_file(request.plan_path), "old");
  request.plan_path = "-";
  request.model_path = "-";
  result = run_thaw(request);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            "-o and --model-out cannot both be '-' (stdout)");
}

}  // namespace
}  // namespace hpfreeze
