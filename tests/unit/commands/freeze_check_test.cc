// run_freeze with check, on the in-memory file system: the file -o names is compared, never
// written; the error lists the differences diff finds, from the file to the new meta.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>

#include "commands/freeze_steps.h"
#include "hpfreeze/commands/freeze_command.h"
#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

using io_testing::FakeFileSystem;

const std::string kTiny = "cases/tiny";

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const std::size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

class FreezeCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"plan.json", "model.json", "expected.json"}) {
      disk_.add_copy(kTiny + "/" + name,
                     std::string(HPFREEZE_TESTDATA_DIR) + "/" + kTiny + "/" + name);
    }
    expected_ = disk_.nodes.at(kTiny + "/expected.json").bytes;
    disk_.add_dir("out");
    request_.plan_path = kTiny + "/plan.json";
    request_.model_path = kTiny + "/model.json";
    request_.output_path = path("meta.json");
    request_.check = true;
    request_.files = &disk_;
  }

  static std::string path(const std::string& name) { return "out/" + name; }
  void write(const std::string& text) { disk_.add_file(request_.output_path, text); }
  // Runs the check and asserts that nothing on the disk changed: every file's bytes and
  // version (a replacing or writing check would bump it), and no file more or less.
  CommandResult run() {
    std::map<std::string, std::pair<std::string, int>> before;
    for (const auto& [name, node] : disk_.nodes) before[name] = {node.bytes, node.version};
    CommandResult result = run_freeze(request_);
    std::map<std::string, std::pair<std::string, int>> after;
    for (const auto& [name, node] : disk_.nodes) after[name] = {node.bytes, node.version};
    EXPECT_EQ(after, before);
    // Nothing was opened for writing: no temporary file, no rename, no write in place.
    EXPECT_TRUE(io_testing::with_prefix(disk_.log, "create").empty());
    EXPECT_TRUE(io_testing::with_prefix(disk_.log, "rename").empty());
    EXPECT_TRUE(io_testing::with_prefix(disk_.log, "open out/").empty());
    return result;
  }

  FakeFileSystem disk_;
  FreezeRequest request_;
  std::string expected_;
};

TEST_F(FreezeCheck, TheSameBytesPass) {
  write(expected_);
  const CommandResult result = run();
  EXPECT_TRUE(result.diagnostics.empty());
  EXPECT_EQ(result.outcome(), Outcome::kOk);
  EXPECT_EQ(result.output, "");
  request_.if_changed = true;  // accepted, and changes nothing
  EXPECT_EQ(run().outcome(), Outcome::kOk);
}

TEST_F(FreezeCheck, ADifferenceIsListedAsDiffShowsIt) {
  write(replaced(expected_, R"j("tp": "S(0)")j", R"j("tp": "R")j"));
  const CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  const Diagnostic& d = result.diagnostics[0];
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.file, request_.output_path);
  EXPECT_EQ(d.pointer, "");
  EXPECT_EQ(d.message,
            "differs from what freeze would write: 1 difference (hpfreeze diff's lines, the file "
            "being OLD)");
  ASSERT_EQ(d.detail.size(), 2u);  // the differences, then the command that rewrites it
  EXPECT_EQ(d.detail[0], "~ /param_plan/lin/params/weight/tp: R -> S(0)");
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

TEST_F(FreezeCheck, ManyDifferencesAreCut) {
  std::string extra;
  for (int i = 1; i <= 12; ++i)
    extra += "  \"x" + std::string(i < 10 ? "0" : "") + std::to_string(i) + "\": 1,\n";
  write(replaced(expected_, "{\n", "{\n" + extra));
  const CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  const Diagnostic& d = result.diagnostics[0];
  EXPECT_EQ(d.message,
            "differs from what freeze would write: 12 differences (hpfreeze diff's lines, the "
            "file being OLD)");
  ASSERT_EQ(d.detail.size(), kMaxCheckDifferences + 2);
  EXPECT_EQ(d.detail[0], "- /x01: 1");
  EXPECT_EQ(d.detail[9], "- /x10: 1");
  EXPECT_EQ(d.detail[10], "... and 2 more");
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

TEST_F(FreezeCheck, OtherBytesOfTheSameMetaAreADifferenceToo) {
  write(replaced(expected_, "{\n  \"boundary_classes\"", "{\"boundary_classes\""));
  const CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].message,
            "differs from what freeze would write in its bytes only (key order, spacing): diff "
            "finds no difference");
  EXPECT_EQ(result.diagnostics[0].detail.size(), 1u);  // the command that rewrites it
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

TEST_F(FreezeCheck, AFileThatIsNoMetaSaysWhy) {
  write("[1]\n");
  const CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  const Diagnostic& d = result.diagnostics[0];
  EXPECT_EQ(d.message, "differs from what freeze would write, and is no meta to compare it with");
  ASSERT_EQ(d.detail.size(), 2u);
  EXPECT_EQ(d.detail[0].rfind(request_.output_path + ": ", 0), 0u) << d.detail[0];
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

TEST_F(FreezeCheck, AMissingFileFailsAndStaysMissing) {
  const CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            request_.output_path + ": does not exist; freeze would write it");
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

TEST_F(FreezeCheck, BadInputsAreReportedAsByFreeze) {
  write(expected_);
  request_.plan_path = path("absent.json");
  const CommandResult result = run();
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);
  ASSERT_FALSE(result.diagnostics.empty());
  EXPECT_EQ(result.diagnostics[0].file, request_.plan_path);
}

TEST_F(FreezeCheck, UsageErrors) {
  request_.output_path = "-";
  CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].message,
            "--check needs -o FILE: it compares FILE with what freeze would write there");
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);

  request_.output_path = path("meta.json");
  write(expected_);
  request_.depfile_path = path("meta.d");
  result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            path("meta.d") + ": --check writes nothing: leave out --depfile");
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);
}

TEST_F(FreezeCheck, AFileOf4GiBOrMoreIsComparedNotRefused) {
  // A sparse committed meta of 5 GiB: compared from its size, nothing read whole; it differs
  // (exit 1, as any other difference), too large for the differences to be listed.
  write(expected_);
  disk_.nodes.at(request_.output_path).sparse_size = std::uint64_t{5} << 30;
  CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            request_.output_path +
                ": differs from what freeze would write (5368709120 bytes "
                "where freeze writes " +
                std::to_string(expected_.size()) +
                " bytes); too large to list the differences: diff reads files below 4 GiB");
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
}

TEST_F(FreezeCheck, TheSameSizeDifferingAnywhereIsADifference) {
  // Byte for byte in pieces: a change in the last byte, and one in the first, of a file of
  // the same size.
  for (const std::size_t at : {expected_.size() - 1, std::size_t{0}}) {
    std::string bytes = expected_;
    bytes[at] = at == 0 ? '[' : ' ';
    write(bytes);
    const CommandResult result = run();
    ASSERT_EQ(result.diagnostics.size(), 1u) << at;
    EXPECT_EQ(result.outcome(), Outcome::kRejected) << at;
    EXPECT_THAT(result.diagnostics[0].message, ::testing::StartsWith("differs from what freeze "
                                                                     "would write"));
  }
}

TEST_F(FreezeCheck, OnlyARegularFileIsCompared) {
  request_.output_path = "out";
  CommandResult result = run();
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(), "out: is a directory");
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);

  const std::string fifo = path("fifo");
  disk_.add_fifo(fifo);
  request_.output_path = fifo;
  disk_.log.clear();
  result = run();  // would block, were the FIFO opened
  EXPECT_TRUE(io_testing::with_prefix(disk_.log, "open regular").empty());
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].message, "is not a regular file: --check compares with a file");
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
