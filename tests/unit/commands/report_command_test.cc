// run_report (report_command.h): loading the two inputs from files, the order their errors
// come in, the request's rules, and what the command adds to the pass (the exit outcome,
// findings cut on stderr, the summary line). The pass itself is tested in
// tests/unit/report/build_report_test.cc.
#include "hpfreeze/commands/report_command.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/fake_file_system.h"
#include "report/report_of.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using test_support::diagnostic_lines;
using test_support::mesh;
using test_support::model_json;
using test_support::ModelParam;
using test_support::plan_b;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Property;

class RunReportTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    disk_.add_file(name, text);
    return name;
  }
  // run_report on the in-memory disk of the test.
  CommandResult run_report(ReportRequest request) {
    request.files = &disk_;
    return hpfreeze::run_report(request);
  }
  io_testing::FakeFileSystem disk_;
};

TEST_F(RunReportTest, ReadFailureIsAnIoError) {
  ReportRequest request;
  request.meta_path = "missing.json";
  request.model_path = write("model.json", model_json({{"w", "[2]", "bfloat16"}}));
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  EXPECT_EQ(out.output, "");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kIo);
}

TEST_F(RunReportTest, ModelWithoutParameters) {
  ReportRequest request;
  request.meta_path = write("meta.json", R"j({"param_plan": {}})j");
  request.model_path = write("model.json", R"j({"modules": {"": "M"}})j");
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_EQ(out.output, "");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(
      out.diagnostics[0].location_and_message(),
      request.model_path + ": the model tree has no 'parameters'; a report needs their shapes");
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kRejected);
}

// The model is parsed without the duplicate-key walk (its decoder checks keys): a repeat
// still gets the parse's diagnostic, alone or beside the other unreadable input.
TEST_F(RunReportTest, RepeatedKeyInTheModel) {
  const std::string model = R"j({"modules": {"": "M"}, "parameters": {)j"
                            R"j("b.w": {"shape": [4]}, "b.w": {"shape": [2]}}})j";
  const std::string repeated_field =
      R"j({"modules": {"": "M"}, "parameters": {"b.w": {"shape": [4], "shape": [2]}}})j";
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model);
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_EQ(out.output, "");
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].location_and_message(),
            request.model_path + ": /parameters/b.w: duplicate key 'b.w'");
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kRejected);

  request.model_path = write("field.json", repeated_field);
  out = run_report(request);
  ASSERT_EQ(out.diagnostics.size(), 1u);
  EXPECT_EQ(out.diagnostics[0].location_and_message(),
            request.model_path + ": /parameters/b.w/shape: duplicate key 'shape'");

  request.meta_path = "missing.json";
  request.model_path = write("model.json", model);
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  ASSERT_EQ(out.diagnostics.size(), 2u);
  EXPECT_EQ(out.diagnostics[0].error_class, ErrorClass::kIo);
  EXPECT_EQ(out.diagnostics[1].location_and_message(),
            request.model_path + ": /parameters/b.w: duplicate key 'b.w'");
}

TEST_F(RunReportTest, ManyFindingsAreCutOnStderrButNotInJson) {
  std::string params = "{";
  std::vector<ModelParam> model;
  for (int i = 0; i < 150; ++i) {
    params += (i == 0 ? "\"p" : ", \"p") + std::to_string(i) + "\": {\"tp\": \"S(0)\"}";
    model.push_back({"b.p" + std::to_string(i), "[3]", "bfloat16"});
  }
  params += "}";
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(params));
  request.model_path = write("model.json", model_json(model));
  request.mesh = mesh({{"tp", 2}});
  request.json = true;
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  ASSERT_EQ(out.diagnostics.size(), 102u);
  EXPECT_EQ(out.diagnostics[100].message, "50 more findings not shown (--json lists them all)");
  EXPECT_EQ(out.diagnostics[100].severity, Severity::kError);
  // Then the summary of every finding, shown or not.
  EXPECT_EQ(out.diagnostics[101].message, "report: 150 errors, 0 warnings, 0 notes");
  EXPECT_EQ(out.diagnostics[101].severity, Severity::kNote);
  std::size_t in_json = 0;
  for (std::size_t at = 0;
       (at = out.output.find("\"severity\": \"error\"", at)) != std::string::npos; ++at) {
    ++in_json;
  }
  EXPECT_EQ(in_json, 150u);
}

TEST_F(RunReportTest, CleanReportDoesNotFail) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 2}});
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kOk);
  EXPECT_THAT(out.diagnostics, IsEmpty());
  EXPECT_EQ(out.output.substr(0, 25), "mesh: tp=2 (from --mesh)\n");
}

// Sizes that make no mesh are the command line's problem when a flag gave one of them: a
// usage error naming the flags (and the sizes parallel_dims gave), no report; with
// parallel_dims alone, the meta's.
TEST_F(RunReportTest, MeshesTheSizesCannotMake) {
  constexpr std::uint64_t kBig = 9223372036854775807u;  // 2^63-1
  const std::string plain = write(
      "meta.json",
      R"j({"mesh_dim_names": ["tp", "cp"], "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j");
  const std::string dims = write(
      "dims.json",
      R"j({"mesh_dim_names": ["tp", "cp", "dp"], "parallel_dims": {"dp_size": 4, "tp_size": 9223372036854775807}, "param_plan": {"b": {"params": {"w": {"tp": "R"}}}}})j");
  std::string many;
  for (int i = 1; i <= 300; ++i) many += (i == 1 ? "" : ",") + std::to_string(i);
  struct Case {
    std::string meta;
    std::optional<std::vector<AxisSize>> mesh;
    std::vector<AxisSweep> sweeps;
    std::string error;
  };
  const Case cases[] = {
      {plain,
       std::nullopt,
       {{"tp", {kBig, 2}}, {"cp", {4}}},
       "--sweep: mesh tp=9223372036854775807 cp=4 has more than 2^64-1 devices"},
      {plain,
       mesh({{"tp", kBig}}),
       {{"cp", {1, 3}}},
       "--mesh and --sweep: mesh tp=9223372036854775807 cp=3 has more than 2^64-1 devices"},
      {plain,
       mesh({{"cp", 4}, {"tp", kBig}}),
       {},
       "--mesh: mesh tp=9223372036854775807 cp=4 has more than 2^64-1 devices"},
      {dims,
       std::nullopt,
       {{"cp", {2}}},
       "--sweep: mesh tp=9223372036854775807 cp=2 dp=4 has more than 2^64-1 devices (dp=4 "
       "tp=9223372036854775807 from parallel_dims in " +
           dims + ")"},
      {plain,
       std::nullopt,
       {*parse_sweep_arg("a=" + many), *parse_sweep_arg("b=" + many)},
       "--sweep: the sweeps make more than 65536 meshes"},
  };
  for (const Case& c : cases) {
    ReportRequest request;
    request.meta_path = c.meta;
    request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
    request.mesh = c.mesh;
    request.plan.sweeps = c.sweeps;
    request.plan.replica_axes = {"a", "b"};
    const CommandResult out = run_report(request);
    EXPECT_EQ(out.outcome(), Outcome::kTrouble) << c.error;
    EXPECT_EQ(out.output, "");
    ASSERT_EQ(out.diagnostics.size(), 1u) << c.error;
    EXPECT_EQ(out.diagnostics[0].location_and_message(), c.error);
  }
  ReportRequest request;
  request.meta_path = dims;
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_NE(out.output, "");
  ASSERT_FALSE(out.diagnostics.empty());
  EXPECT_EQ(
      out.diagnostics[0].location_and_message(),
      dims + ": /parallel_dims: mesh tp=9223372036854775807 dp=4 has more than 2^64-1 devices");
}

// No usable mesh is an error that says why (the report is still printed): the closest mesh
// and by how much, or the first mesh's first parameter that does not divide.
TEST_F(RunReportTest, NoUsableMeshSaysWhyInOneErrorLine) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[6]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 2}});
  request.plan.filter.budget = 5;  // bytes: rank 0 holds 3 elements, 6 bytes
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_NE(out.output, "");
  EXPECT_THAT(
      out.diagnostics,
      Contains(Property(&Diagnostic::location_and_message,
                        request.meta_path + ": no mesh fits the 5 B budget; closest: "
                                            "tp=2 (2 devices, worst rank 6 B, over by 1 B)")));
  // A sweep none of whose meshes divides: the first mesh's first offender. tp=4: 6 by 4.
  request.mesh.reset();
  request.plan.filter.budget.reset();
  request.plan.sweeps = {{"tp", {4, 5}}};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_THAT(out.diagnostics,
              Contains(Property(&Diagnostic::location_and_message,
                                request.meta_path + ": no mesh divides; the first, tp=4, fails on "
                                                    "b.w dim 0 (size 6) by tp=4")));
}

// ---- known axes ----

// Every --mesh and --sweep axis must be one the inputs know; an unknown one is a usage
// error listing them and suggesting the nearest (equal ignoring case first), and it wins
// over the findings (here a dim that does not divide and an uncovered parameter).
TEST_F(RunReportTest, UnknownAxesAreUsageErrorsWithTheNearest) {
  ReportRequest request;
  request.meta_path =
      write("meta.json",
            R"j({"mesh_dim_names": ["tp", "ep"], "parallel_dims": {"cp_size": 1, "ep_size": 2},)j"
            R"j( "param_plan": {"b": {"params": {"w": {"tp": "S(0)"}}}}})j");
  request.model_path =
      write("model.json", model_json({{"b.w", "[5]", "bfloat16"}, {"c.u", "[3]", "int8"}}));
  const std::string known =
      " (the inputs know cp, dp, ep, pp, tp; --replica-axis NAME adds an axis that only holds "
      "replicas)";
  request.mesh = mesh({{"TP", 4}, {"EP", 8}});
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  EXPECT_EQ(out.output, "");
  EXPECT_THAT(diagnostic_lines(out.diagnostics),
              ElementsAre("--mesh: unknown axis 'TP'; did you mean 'tp'?" + known,
                          "--mesh: unknown axis 'EP'; did you mean 'ep'?" + known));
  // A typo by edit distance in a sweep; a name near nothing gets no suggestion.
  request.mesh = mesh({{"ep", 8}});
  request.plan.sweeps = {{"tq", {1, 2}}, {"pipeline", {2}}};
  out = run_report(request);
  EXPECT_THAT(diagnostic_lines(out.diagnostics),
              ElementsAre("--sweep: unknown axis 'tq'; did you mean 'tp'?" + known,
                          "--sweep: unknown axis 'pipeline'" + known));
  // Known: parallel_dims's axes (cp, even with --mesh), the ZeRO axis, --replica-axis, pp.
  request.plan.sweeps = {{"pp", {1}}, {"rep", {1, 4}}};
  request.plan.replica_axes = {"rep"};
  request.plan.accounting.zero.axes = {"fsdp"};
  request.mesh = mesh({{"cp", 1}, {"fsdp", 2}, {"tp", 1}});
  out = run_report(request);
  EXPECT_NE(out.outcome(), Outcome::kTrouble);
  EXPECT_NE(out.output, "");
}

// One verdict per mesh: a dim the planner calls divisible is no finding (a zero-sized
// parameter, a composed uneven shard), and one it does not is, at the size it names; the
// exit status is the same from --mesh and from a sweep of that one mesh.
TEST_F(RunReportTest, FindingsAgreeWithThePlannersVerdict) {
  struct Case {
    std::string params;
    std::string shape;
    std::vector<AxisSize> mesh;
    bool divides;
  };
  const Case cases[] = {
      // [0, 7] S(1) on tp=2: holds nothing, divides.
      {R"j({"w": {"tp": "S(1)"}})j", "[0, 7]", {{"tp", 2}}, true},
      // [10] uneven on ep=4 (3, 3, 3, 1), then S(0) on tp=3: rank 0's 3 divides, ep 3's 1
      // does not.
      {R"j({"w": {"ep": "S(-1)", "tp": "S(0)"}})j", "[10]", {{"ep", 4}, {"tp", 3}}, false},
      // [6] uneven SS with a split factor that does not divide it: uneven, divides.
      {R"j({"w": {"tp": "SS(-1,4)"}})j", "[6]", {{"tp", 2}}, true},
  };
  for (const Case& c : cases) {
    const std::string meta =
        write("meta.json", R"j({"mesh_dim_names": ["ep", "tp"], "param_plan": {"b": {"params": )j" +
                               c.params + "}}}");
    ReportRequest request;
    request.meta_path = meta;
    request.model_path = write("model.json", model_json({{"b.w", c.shape, "bfloat16"}}));
    request.mesh = c.mesh;
    const CommandResult from_mesh = run_report(request);
    request.mesh.reset();
    request.plan.sweeps.clear();
    for (const AxisSize& a : c.mesh) request.plan.sweeps.push_back({a.axis, {a.size}});
    const CommandResult from_sweep = run_report(request);
    EXPECT_EQ(from_mesh.outcome(), c.divides ? Outcome::kOk : Outcome::kRejected) << c.params;
    EXPECT_EQ(from_sweep.outcome(), from_mesh.outcome()) << c.params;
    bool divisibility_finding = false;
    for (const Diagnostic& d : from_mesh.diagnostics) {
      divisibility_finding =
          divisibility_finding || d.message.find("divisible") != std::string::npos;
    }
    EXPECT_EQ(divisibility_finding, !c.divides) << c.params;
  }
  // The composed case names the size the planner names: ep rank 3's 1 element.
  ReportRequest request;
  request.meta_path =
      write("meta.json", R"j({"mesh_dim_names": ["ep", "tp"], "param_plan": {"b": {"params": )j"
                         R"j({"w": {"ep": "S(-1)", "tp": "S(0)"}}}}})j");
  request.model_path = write("model.json", model_json({{"b.w", "[10]", "bfloat16"}}));
  request.mesh = mesh({{"ep", 4}, {"tp", 3}});
  EXPECT_THAT(run_report(request).diagnostics,
              Contains(::testing::Field(&Diagnostic::message,
                                        std::string("parameter 'b.w' dim 0 (local size 1 of 10) "
                                                    "is not divisible by 3: S(0) on axis 'tp' "
                                                    "of size 3"))));
}

// --silence: a silenced finding is not listed on stderr or in the JSON, not counted, fails
// nothing, and holds back no answer (an error finding otherwise does: its numbers may miss
// what the error left out).
TEST_F(RunReportTest, SilencedFindingsCountNowhere) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "R"}})j"));
  request.model_path =
      write("model.json", model_json({{"b.w", "[4]", "bfloat16"}, {"x", "[2]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 1}});
  request.json = true;
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_THAT(diagnostic_lines(out.diagnostics),
              Contains(::testing::HasSubstr("1 model parameter is not covered")));
  EXPECT_NE(out.output.find("\"answer\": null"), std::string::npos);

  request.plan.silenced = {"HPF305", "HPF503"};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kOk);
  EXPECT_THAT(out.diagnostics, IsEmpty());  // no finding, so no summary line either
  EXPECT_NE(out.output.find("\"findings\": []"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("\"answer\": null"), std::string::npos) << out.output;

  request.json = false;
  out = run_report(request);
  EXPECT_EQ(out.output.find("findings:"), std::string::npos) << out.output;
}

// The error of pp > 1 without a layer stack (HPF517) is made while the plan is concluded,
// after the answer is chosen: silenced, it holds back the answer (pp=1) no more.
TEST_F(RunReportTest, ASilencedStageErrorHoldsBackNoAnswer) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "R"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 1}});
  request.plan.sweeps = {{"pp", {1, 2}}};
  request.json = true;
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_NE(out.output.find("\"code\": \"HPF517\""), std::string::npos) << out.output;
  EXPECT_NE(out.output.find("\"answer\": null"), std::string::npos) << out.output;

  request.plan.silenced = {"HPF517"};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kOk);
  EXPECT_EQ(out.output.find("HPF517"), std::string::npos) << out.output;
  EXPECT_EQ(out.output.find("\"answer\": null"), std::string::npos) << out.output;
}

// No usable mesh fails the run through the finding that says why; silenced, it fails nothing
// (no exit status 1 without an error line). The one mesh that does not divide says why with
// its HPF501 lines; those silenced, HPF514 says it.
TEST_F(RunReportTest, ASilencedVerdictFailsNothing) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S(0)"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[6]", "bfloat16"}}));
  request.mesh = mesh({{"tp", 2}});
  request.plan.filter.budget = 5;  // bytes: rank 0 holds 3 elements, 6 bytes
  request.plan.silenced = {"HPF514"};
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kOk);
  EXPECT_THAT(diagnostic_lines(out.diagnostics),  // the budget's note only
              ElementsAre(::testing::HasSubstr("did you mean 5GiB?"),
                          "report: 0 errors, 0 warnings, 1 note"));

  request.plan.filter.budget.reset();
  request.mesh = mesh({{"tp", 4}});  // 6 by 4: HPF501
  request.plan.silenced = {"HPF501"};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_THAT(out.diagnostics,
              Contains(::testing::Field(&Diagnostic::code, std::string_view("HPF514"))));
  request.plan.silenced = {"HPF501", "HPF514"};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kOk);
  EXPECT_THAT(diagnostic_lines(out.diagnostics), IsEmpty());
}

// The answer held back for an error names the error shown: a silenced missing parameter
// (HPF303) is not the reason given while another error (an unknown dtype) holds it back.
TEST_F(RunReportTest, TheHeldBackAnswerNamesNoSilencedFinding) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "R"}, "gone": {"tp": "R"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "fp32"}}));
  request.mesh = mesh({{"tp", 1}});
  CommandResult out = run_report(request);
  EXPECT_NE(out.output.find("no answer: 1 planned parameter is not in the model"),
            std::string::npos)
      << out.output;
  request.plan.silenced = {"HPF303"};
  out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  EXPECT_NE(out.output.find("no answer: the inputs have 1 error (on stderr)"), std::string::npos)
      << out.output;
}

TEST_F(RunReportTest, AnUnknownSilencedCodeIsAUsageError) {
  ReportRequest request;
  request.meta_path = "missing.json";
  request.model_path = "missing_too.json";
  request.plan.silenced = {"HPF5O1"};
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  EXPECT_THAT(diagnostic_lines(out.diagnostics),
              ElementsAre("--silence: unknown finding code 'HPF5O1'; did you mean 'HPF501'?"));
}

// A meta report cannot decode is refused whatever --silence says: there is no report to
// keep going with (its errors keep their codes).
TEST_F(RunReportTest, SilenceDoesNotMakeAMetaDecode) {
  ReportRequest request;
  request.meta_path = write("meta.json", plan_b(R"j({"w": {"tp": "S"}})j"));
  request.model_path = write("model.json", model_json({{"b.w", "[4]", "bfloat16"}}));
  request.plan.silenced = {"HPF201"};
  const CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kRejected);
  ASSERT_EQ(out.diagnostics.size(), 1U);
  EXPECT_EQ(out.diagnostics[0].code, "HPF201");
  EXPECT_EQ(out.output, "");
}

// --reserve is kept from --budget: without one, or as large, it is a usage error before
// anything is read (the paths below do not exist).
TEST_F(RunReportTest, ReserveNeedsABudgetAboveIt) {
  ReportRequest request;
  request.meta_path = "missing.json";
  request.model_path = "missing.model.json";
  request.mesh = mesh({{"dp", 2}});
  request.reserve_given = true;
  CommandResult out = run_report(request);
  EXPECT_EQ(out.outcome(), Outcome::kTrouble);
  EXPECT_THAT(diagnostic_lines(out.diagnostics),
              ElementsAre("--reserve: it is kept from --budget, which is not given"));
  request.plan.filter.budget = std::uint64_t{8} << 30;
  request.plan.filter.reserve = std::uint64_t{8} << 30;
  out = run_report(request);
  EXPECT_THAT(diagnostic_lines(out.diagnostics),
              ElementsAre("--reserve: 8.0 GiB leaves nothing of the 8.0 GiB --budget for model "
                          "states"));
}

}  // namespace
}  // namespace hpfreeze
