// run_diff on files (lib/src/commands/diff_command.cc): outputs, outcomes and errors, on the
// in-memory file system.
#include "hpfreeze/commands/diff_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

class RunDiff : public ::testing::Test {
 protected:
  std::string path(const std::string& name) const { return name + ".json"; }
  std::string write(const std::string& name, const std::string& text) {
    disk_.add_file(path(name), text);
    return path(name);
  }
  static std::vector<std::string> messages(const CommandResult& r) {
    std::vector<std::string> out;
    for (const Diagnostic& d : r.diagnostics) out.push_back(d.location_and_message());
    return out;
  }
  // run_diff on the in-memory disk of the test.
  CommandResult run_diff(DiffRequest request) {
    request.files = &disk_;
    return hpfreeze::run_diff(request);
  }
  io_testing::FakeFileSystem disk_;
};

TEST_F(RunDiff, TextAndJsonOutput) {
  DiffRequest request{write("a", R"j({"param_plan": {}, "signature": "a", "n": 1})j"),
                      write("b", R"j({"param_plan": {}, "signature": "b", "n": 2})j"),
                      false,
                      {},
                      false};
  CommandResult report = run_diff(request);
  EXPECT_EQ(messages(report), std::vector<std::string>{});
  EXPECT_TRUE(report.negative);
  EXPECT_EQ(report.outcome(), Outcome::kRejected);  // "different": exit status 1
  EXPECT_EQ(report.output, "~ /n: 1 -> 2\n~ /signature: \"a\" -> \"b\"\n");
  request.json = true;
  request.options.ignored_fields = {"signature"};
  report = run_diff(request);
  EXPECT_EQ(messages(report), std::vector<std::string>{});
  EXPECT_EQ(report.output, "{\"op\":\"change\",\"pointer\":\"/n\",\"old\":1,\"new\":2}\n");
  request.options.ignored_fields = {"signature", "n"};
  report = run_diff(request);
  EXPECT_EQ(messages(report), std::vector<std::string>{});
  EXPECT_FALSE(report.negative);
  EXPECT_EQ(report.outcome(), Outcome::kOk);
  EXPECT_EQ(report.output, "");
}

TEST_F(RunDiff, QuietPrintsNothingAndKeepsTheOutcome) {
  DiffRequest request{write("a", R"j({"param_plan": {}, "n": 1})j"),
                      write("b", R"j({"param_plan": {}, "n": 2})j"),
                      false,
                      {},
                      true};
  for (const bool json : {false, true}) {
    request.json = json;
    const CommandResult report = run_diff(request);
    EXPECT_EQ(report.output, "");
    EXPECT_EQ(report.outcome(), Outcome::kRejected);
  }
  request.new_path = request.old_path;
  EXPECT_EQ(run_diff(request).outcome(), Outcome::kOk);
  request.new_path = write("c", "[1]");
  const CommandResult bad = run_diff(request);
  EXPECT_EQ(bad.outcome(), Outcome::kTrouble);  // errors are still reported
  EXPECT_FALSE(bad.diagnostics.empty());
}

TEST_F(RunDiff, IgnoredItemsThatMatchNothingAreRefused) {
  DiffRequest request{
      write("a", R"j({"param_plan": {"b": {}}, "n": [1, 2], "tied_pairs": [["x", "y"]],
                      "injections": [{"match": "m", "ep_size": 1}]})j"),
      write("b", R"j({"param_plan": {}, "n": [1], "only_new": {"k": 1}, "injections": []})j"),
      false,
      {},
      false};
  // Each of these names something in one of the files.
  request.options.ignored_fields = {"n,/n/1,only_new", "/only_new/k", "/param_plan/b",
                                    "/injections/m/ep_size", "tied_pairs"};
  CommandResult report = run_diff(request);
  EXPECT_EQ(messages(report), std::vector<std::string>{});
  EXPECT_EQ(report.output, "- /injections/m: injection removed\n");
  request.options.ignored_fields = {"absent,/n/2",          "/n/01",         "/injections/0",
                                    "/param_plan/b/params", "/tied_pairs/0", "/a~2"};
  report = run_diff(request);
  // Malformed items are found before the files are read.
  EXPECT_EQ(messages(report),
            std::vector<std::string>{
                "--ignore '/a~2': not a JSON Pointer ('~' must be followed by 0 or 1)"});
  EXPECT_EQ(report.outcome(), Outcome::kTrouble);
  EXPECT_EQ(report.output, "");
  request.options.ignored_fields.pop_back();
  report = run_diff(request);
  for (const Diagnostic& d : report.diagnostics) EXPECT_EQ(d.error_class, ErrorClass::kIo);
  EXPECT_EQ(report.outcome(), Outcome::kTrouble);
  EXPECT_EQ(messages(report),
            (std::vector<std::string>{
                "--ignore 'absent': matches nothing in either input",
                "--ignore '/n/2': matches nothing in either input",
                "--ignore '/n/01': matches nothing in either input",
                "--ignore '/injections/0': matches nothing in either input",
                "--ignore '/param_plan/b/params': matches nothing in either input",
                "--ignore '/tied_pairs/0': the members of /tied_pairs compare as a multiset; "
                "ignore the whole /tied_pairs"}));
}

TEST_F(RunDiff, ErrorsNameEveryBadFile) {
  const std::string missing = path("missing");
  DiffRequest request{write("a", "[1]"), write("b", "{\"a\": }"), false, {}, false};
  CommandResult report = run_diff(request);
  ASSERT_EQ(report.diagnostics.size(), 2u);
  EXPECT_EQ(report.diagnostics[0].location_and_message(),
            path("a") + ": expected a JSON object (a codegen_meta.json), got an array");
  EXPECT_EQ(report.diagnostics[0].error_class, ErrorClass::kRejected);
  EXPECT_EQ(report.diagnostics[1].file, path("b"));
  EXPECT_EQ(report.diagnostics[1].line, 1u);
  // Exit status 1 means "different", so an invalid input is trouble (2).
  EXPECT_EQ(report.outcome(), Outcome::kTrouble);
  EXPECT_EQ(report.output, "");

  request = DiffRequest{missing, write("b", R"j({"param_plan": {}})j"), false, {}, false};
  report = run_diff(request);
  ASSERT_EQ(report.diagnostics.size(), 1u);
  EXPECT_EQ(report.diagnostics[0].error_class, ErrorClass::kIo);
  EXPECT_EQ(report.diagnostics[0].file, missing);
  EXPECT_EQ(report.outcome(), Outcome::kTrouble);
}

}  // namespace
}  // namespace hpfreeze
