// run_diff on files (lib/src/commands/diff_command.cc): outputs, outcomes and errors, on the
// in-memory file system.
#include "hpfreeze/commands/diff_command.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hpfreeze/commands/report_command.h"
#include "io/fake_file_system.h"
#include "support/documents.h"

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

// diff --model: a model of two parameters, and metas on tp=2 (parallel_dims) that split
// b.w (8 x 4 bfloat16, 64 bytes) or keep it whole, beside b.v (6 float32, 24 bytes).
class RunDiffMemory : public RunDiff {
 protected:
  RunDiffMemory() {
    write("model",
          test_support::model_json({{"b.w", "[8, 4]", "bfloat16"}, {"b.v", "[6]", "float32"}}));
  }
  std::string meta(const std::string& name, const std::string& w_placements,
                   const std::string& extra = "") {
    return write(name, R"j({"param_plan": {"b": {"params": {"w": )j" + w_placements +
                           R"j(, "v": {"tp": "R"}}}}, "parallel_dims": {"tp_size": 2})j" + extra +
                           "}");
  }
  DiffRequest request(const std::string& old_meta, const std::string& new_meta) {
    DiffRequest r{old_meta, new_meta, false, {}, false};
    r.memory.model_path = path("model");
    return r;
  }
  // report --json of one meta with the same settings.
  std::string report_json(const DiffRequest& diff, const std::string& meta_path) {
    ReportRequest r;
    r.meta_path = meta_path;
    r.model_path = *diff.memory.model_path;
    r.mesh = diff.memory.mesh;
    r.plan = diff.memory.plan;
    r.json = true;
    r.files = &disk_;
    return hpfreeze::run_report(r).output;
  }
};

TEST_F(RunDiffMemory, TheLinesCountWhatReportCounts) {
  // Old: w split on tp, 32 + 24 bytes on every rank; new: w whole, 64 + 24.
  DiffRequest r = request(meta("old", R"j({"tp": "S(0)"})j"), meta("new", R"j({"tp": "R"})j"));
  CommandResult result = run_diff(r);
  EXPECT_EQ(messages(result), std::vector<std::string>{});
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
  EXPECT_EQ(result.output,
            "~ /param_plan/b/params/w/tp: S(0) -> R\n"
            "\n"
            "worst rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)\n"
            "best rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)\n");
  for (const auto& [meta_path, bytes] : {std::pair{r.old_path, "56"}, {r.new_path, "88"}}) {
    const std::string report = report_json(r, meta_path);
    EXPECT_NE(report.find("\"max_rank_bytes\": " + std::string(bytes) + ",\n"), report.npos)
        << report;
  }
  r.json = true;
  EXPECT_EQ(
      run_diff(r).output,
      "{\"op\":\"change\",\"pointer\":\"/param_plan/b/params/w/tp\",\"old\":\"S(0)\","
      "\"new\":\"R\"}\n"
      "{\"memory\":{\"mesh\":{\"tp\":2},\"old\":{\"mesh\":{\"tp\":2},\"devices\":2,"
      "\"max_rank_bytes\":56,\"min_rank_bytes\":56,\"errors\":0},\"new\":{\"mesh\":{\"tp\":2},"
      "\"devices\":2,\"max_rank_bytes\":88,\"min_rank_bytes\":88,\"errors\":0}}}\n");
  // --stat and --group: the lines after them; --mesh and the accounting as report's (sgd:
  // bfloat16 weight, gradient and fp32 master copy, 8 bytes an element; float32 8 too).
  r.json = false;
  r.stat = true;
  r.group = true;
  r.memory.mesh = std::vector<AxisSize>{{"tp", 4}};
  r.memory.plan.accounting.optimizer = Optimizer::kSgd;
  result = run_diff(r);
  EXPECT_EQ(result.output,
            "~ /param_plan/b/params/w/tp: S(0) -> R\n"
            "\n"
            "param_plan  1  +0  -0  ~1\n"
            "1 difference in 1 group: 0 added, 0 removed, 1 changed\n"
            "\n"
            "worst rank on tp=4: 112 B -> 304 B (+192 B, +171.4 %)\n"
            "best rank on tp=4: 112 B -> 304 B (+192 B, +171.4 %)\n");
  const std::string report = report_json(r, r.old_path);
  EXPECT_NE(report.find("\"max_rank_bytes\": 112,\n"), report.npos) << report;
}

TEST_F(RunDiffMemory, EqualMetasStillGetTheLines) {
  const std::string old_meta = meta("old", R"j({"tp": "S(0)"})j");
  const CommandResult result = run_diff(request(old_meta, old_meta));
  EXPECT_EQ(result.outcome(), Outcome::kOk);
  EXPECT_EQ(result.output,
            "worst rank on tp=2: 56 B -> 56 B (no change)\n"
            "best rank on tp=2: 56 B -> 56 B (no change)\n");
}

TEST_F(RunDiffMemory, EachMetaOnItsOwnMeshWithoutMesh) {
  const CommandResult result = run_diff(request(
      meta("old", R"j({"tp": "S(0)"})j"),
      write("new", R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"}, "v": {"tp": "R"}}}},
                       "parallel_dims": {"tp_size": 4}})j")));
  EXPECT_EQ(messages(result), std::vector<std::string>{});
  EXPECT_EQ(result.output,
            "~ /parallel_dims/tp_size: 2 -> 4\n"
            "\n"
            "worst rank on tp=2 -> tp=4: 56 B -> 40 B (-16 B, -28.6 %)\n"
            "best rank on tp=2 -> tp=4: 56 B -> 40 B (-16 B, -28.6 %)\n"
            "devices: 2 -> 4\n");
}

TEST_F(RunDiffMemory, AnAxisOneMetaAddsHoldsReplicasInTheOther) {
  // Only the new plan names ep (folded: mesh_dim_names does not name it): --mesh may give
  // it, and in the old plan it holds replicas.
  DiffRequest r = request(meta("old", R"j({"tp": "S(0)"})j"), meta("new", R"j({"ep": "S(0)"})j"));
  r.memory.mesh = std::vector<AxisSize>{{"tp", 2}, {"ep", 2}};
  CommandResult result = run_diff(r);
  EXPECT_EQ(messages(result), std::vector<std::string>{});
  // The new meta's placement order names the mesh: no mesh_dim_names, so by name.
  EXPECT_EQ(result.output.substr(result.output.find("\n\n") + 2),
            "worst rank on ep=2 tp=2: 56 B -> 56 B (no change)\n"
            "best rank on ep=2 tp=2: 56 B -> 56 B (no change)\n");
  // An axis neither knows is report's usage error, once, and nothing is printed.
  r.memory.mesh = std::vector<AxisSize>{{"tq", 2}};
  result = run_diff(r);
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);
  EXPECT_EQ(result.output, "");
  EXPECT_EQ(messages(result),
            std::vector<std::string>{"--mesh: unknown axis 'tq'; did you mean 'tp'? (the inputs "
                                     "know cp, dp, ep, pp, tp; --replica-axis NAME adds an axis "
                                     "that only holds replicas)"});
  EXPECT_EQ(result.diagnostics[0].error_class, ErrorClass::kIo);
  // A sweep is report's alone.
  r.memory.mesh.reset();
  r.memory.plan.sweeps = {AxisSweep{"tp", {1, 2}}};
  EXPECT_EQ(messages(run_diff(r)),
            std::vector<std::string>{"diff --model counts one mesh: it takes no sweep"});
}

TEST_F(RunDiffMemory, AMetaWhoseReportHasErrorsIsNamed) {
  // The new meta plans a parameter the model lacks: report counts the rest, with an error.
  const CommandResult result =
      run_diff(request(meta("old", R"j({"tp": "S(0)"})j"),
                       write("new", R"j({"param_plan": {"b": {"params": {"w": {"tp": "S(0)"},
                       "v": {"tp": "R"}, "x": {"tp": "R"}}}}, "parallel_dims": {"tp_size": 2}})j")));
  EXPECT_EQ(result.outcome(), Outcome::kRejected);
  EXPECT_EQ(messages(result),
            std::vector<std::string>{"new.json: report finds 1 error in this meta with model.json "
                                     "(hpfreeze report lists them); the memory lines count as it "
                                     "does"});
  EXPECT_EQ(result.diagnostics[0].severity, Severity::kWarning);
  EXPECT_NE(result.output.find("worst rank on tp=2: 56 B -> 56 B (no change)\n"),
            result.output.npos);
}

TEST_F(RunDiffMemory, QuietPrintsNothingAndTheNoteHasTheLines) {
  DiffRequest r = request(meta("old", R"j({"tp": "S(0)"})j"), meta("new", R"j({"tp": "R"})j"));
  r.quiet = true;
  EXPECT_EQ(run_diff(r).output, "");
  EXPECT_EQ(run_diff(r).outcome(), Outcome::kRejected);
  r.memory.mesh = std::vector<AxisSize>{{"tq", 2}};  // errors are errors with quiet too
  EXPECT_EQ(run_diff(r).outcome(), Outcome::kTrouble);
  r.memory.mesh.reset();
  r.quiet = false;
  r.summary_note = true;
  const CommandResult result = run_diff(r);
  ASSERT_EQ(result.diagnostics.size(), 1u);
  EXPECT_EQ(result.diagnostics[0].message, "1 difference: 0 added, 0 removed, 1 changed");
  EXPECT_EQ(result.diagnostics[0].detail,
            (std::vector<std::string>{"param_plan  1  +0  -0  ~1",
                                      "worst rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)",
                                      "best rank on tp=2: 56 B -> 88 B (+32 B, +57.1 %)"}));
}

TEST_F(RunDiffMemory, TheModelIsAnInputLikeTheMetas) {
  DiffRequest r = request(meta("old", R"j({"tp": "S(0)"})j"), meta("new", R"j({"tp": "R"})j"));
  r.memory.model_path = write("bad", R"j({"modules": {"": "M"}})j");
  CommandResult result = run_diff(r);
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);
  EXPECT_EQ(result.output, "");
  EXPECT_EQ(messages(result),
            std::vector<std::string>{
                "bad.json: the model tree has no 'parameters'; diff --model needs their shapes"});
  r.old_path = "-";
  r.memory.model_path = "-";
  EXPECT_EQ(messages(run_diff(r)),
            std::vector<std::string>{"at most one of OLD, NEW and --model may be '-' (stdin)"});
}

}  // namespace
}  // namespace hpfreeze
