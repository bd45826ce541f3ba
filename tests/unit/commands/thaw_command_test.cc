// run_thaw on the in-memory file system: reading the meta, writing both outputs or neither,
// the rules between the two outputs.
#include "hpfreeze/commands/thaw_command.h"

#include <gtest/gtest.h>

#include <string>

#include "hpfreeze/base/concurrency.h"
#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

using io_testing::FakeFileSystem;

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

class RunThaw : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    disk_.add_file(name, text);
    return name;
  }
  std::string read(const std::string& name) const { return disk_.nodes.at(name).bytes; }
  bool exists(const std::string& name) const { return disk_.nodes.count(name) != 0; }
  ThawRequest request(const std::string& meta_path, const std::string& plan_path) {
    ThawRequest r;
    r.concurrency = kTwoCpus;
    r.meta_path = meta_path;
    r.plan_path = plan_path;
    r.files = &disk_;
    return r;
  }

  FakeFileSystem disk_;
};

TEST_F(RunThaw, WritesPlanAndModelWithFinalNewline) {
  ThawRequest r =
      request(write("meta.json", R"j({"param_plan": {"b": {}}, "boundary_classes": {"b": "B"}})j"),
              "plan.json");
  r.model_path = "model.json";
  const CommandResult result = run_thaw(r);
  EXPECT_TRUE(result.diagnostics.empty());
  EXPECT_EQ(
      read("model.json"),
      "{\n  \"format\": \"hpfreeze.model/v1\",\n  \"modules\": {\n    \"b\": \"B\"\n  }\n}\n");
  EXPECT_EQ(read("plan.json"),
            "{\n  \"format\": \"hpfreeze.plan/v1\",\n  \"meta\": {},\n  \"modules\": {\n"
            "    \"b\": {}\n  }\n}\n");
  EXPECT_TRUE(disk_.extra_files().empty());
}

TEST_F(RunThaw, NothingIsWrittenOnError) {
  const ThawRequest r =
      request(write("meta.json", R"j({"param_plan": {"b": 1}})j"), write("plan.json", "old"));
  const CommandResult result = run_thaw(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.failed());
  EXPECT_FALSE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            "meta.json: /param_plan/b: expected an object, got an integer");
  EXPECT_EQ(read("plan.json"), "old");
}

TEST_F(RunThaw, UnreadableAndInvalidMetas) {
  ThawRequest r = request("missing.json", "plan.json");
  CommandResult result = run_thaw(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.io_failed());
  r.meta_path = write("bad.json", "{\"param_plan\": ");
  result = run_thaw(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_FALSE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].line, 1u);
  EXPECT_FALSE(exists("plan.json"));
}

// The rules between the two outputs, checked before the meta is read: a usage error (exit 2),
// nothing written, even when the meta could not be read. They are compared by what they lead
// to: a second name of one file is the same file, a device named twice is fine.
TEST_F(RunThaw, TheTwoOutputsAreComparedByWhatTheyLeadTo) {
  ThawRequest r = request("missing.json", write("out.json", "old"));
  r.model_path = "out.json";
  CommandResult result = run_thaw(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            "out.json: -o and --model-out name the same file");
  disk_.add_symlink("link.json", "out.json");
  r.model_path = "link.json";
  result = run_thaw(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            "link.json: -o and --model-out name the same file");
  EXPECT_EQ(read("out.json"), "old");
  r.plan_path = "-";
  r.model_path = "-";
  result = run_thaw(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_TRUE(result.io_failed());
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            "-o and --model-out cannot both be '-' (stdout)");
}

// A character device may be named any number of times: thaw -o /dev/null --model-out
// /dev/null checks a meta and writes nothing anywhere (the strings were compared once, and
// "/dev//null" passed where "/dev/null" did not).
TEST_F(RunThaw, ADeviceMayBeBothOutputs) {
  disk_.add_dir("/dev");
  disk_.add_device("/dev/null");
  for (const std::string second : {"/dev/null", "/dev//null"}) {
    ThawRequest r = request(
        write("meta.json", R"j({"param_plan": {"b": {}}, "boundary_classes": {"b": "B"}})j"),
        "/dev/null");
    r.model_path = second;
    const CommandResult result = run_thaw(r);
    EXPECT_TRUE(result.diagnostics.empty())
        << second << ": " << result.diagnostics.front().location_and_message();
    EXPECT_EQ(io_testing::with_prefix(disk_.log, "open /dev/null").size(), 2u) << second;
    disk_.log.clear();
  }
}

}  // namespace
}  // namespace hpfreeze
