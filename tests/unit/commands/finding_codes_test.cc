// Every row of the findings table (spec/findings.h) is emitted by a command: one case per
// code below runs check, check --bundle, report or freeze in memory on inputs made to break
// that rule, and expects a finding of that code with the row's severity. A row without a
// case fails EveryRowHasACase, so a finding cannot be added without a test that emits it
// (docs/development.md, "Where a change goes").
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/commands/check_command.h"
#include "hpfreeze/commands/freeze_command.h"
#include "hpfreeze/commands/report_command.h"
#include "io/fake_file_system.h"
#include "json/diagnostic_json.h"
#include "spec/findings.h"

namespace hpfreeze {
namespace {

using io_testing::FakeFileSystem;

const std::string kEmptySha256 = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

// A model tree dump of module "b" and the parameters given as JSON members ("" for none).
std::string model(std::string_view parameters) {
  return R"({"format": "hpfreeze.model/v1", "modules": {"": "Net", "b": "Linear"},
            "parameters": {)" +
         std::string(parameters) + "}}";
}

// A meta whose boundary "b" plans parameter "w" with `axes` (its JSON object), and `members`.
std::string plan_of(std::string_view axes, std::string_view members = "") {
  return R"j({"param_plan": {"b": {"params": {"w": )j" + std::string(axes) + "}}}" +
         std::string(members.empty() ? "" : ", ") + std::string(members) + "}";
}
// What makes plan_of's sharded "b.w" no finding of frozen_sharded_params.
constexpr std::string_view kListed = R"j("frozen_sharded_params": ["b.w"])j";

// A model parameter of `shape` (JSON) in bfloat16, as a member of model()'s parameters.
std::string bf16(std::string_view fqn, std::string_view shape) {
  return "\"" + std::string(fqn) + R"j(": {"shape": )j" + std::string(shape) +
         R"j(, "dtype": "bfloat16"})j";
}

// `outputs` recording one file `name` with `sha256` (JSON).
std::string outputs_of(std::string_view name, const std::string& sha256) {
  return R"j("outputs": {")j" + std::string(name) + R"j(": {"sha256": )j" + sha256 + "}}";
}

std::vector<AxisSize> mesh_of(std::string axis, std::uint64_t size) {
  return {{std::move(axis), size}};
}

// A meta of boundary "b" with the given members after param_plan.
std::string meta_with(std::string_view members) {
  return R"({"param_plan": {"b": {}})" + std::string(members.empty() ? "" : ", ") +
         std::string(members) + "}";
}

// The files of one case and the command lines that run on them, in memory.
class Runs {
 public:
  std::string file(const std::string& name, const std::string& bytes) {
    disk_.add_file(name, bytes);
    return name;
  }

  Diagnostics check(const std::string& meta, std::optional<std::string> model_text = {},
                    bool bundle = false) {
    CheckRequest request;
    request.paths = {file("gen/meta.json", meta)};
    if (model_text) request.model_path = file("model.json", *model_text);
    request.bundle = bundle;
    request.files = &disk_;
    return run_check(request).diagnostics;
  }
  Diagnostics check_bundle(const std::string& meta) { return check(meta, std::nullopt, true); }

  // report META --model MODEL, with `plan` and `mesh` (nullopt: the meta's parallel_dims).
  Diagnostics report(const std::string& meta, const std::string& model_text,
                     std::optional<std::vector<AxisSize>> mesh = std::vector<AxisSize>{{"tp", 1}},
                     ReportPlanOptions plan = {}) {
    ReportRequest request;
    request.meta_path = file("meta.json", meta);
    request.model_path = file("model.json", model_text);
    request.mesh = std::move(mesh);
    request.plan = std::move(plan);
    request.top = 0;
    request.files = &disk_;
    return run_report(request).diagnostics;
  }

  Diagnostics freeze(const std::string& plan, const std::string& model_text) {
    FreezeRequest request;
    request.plan_path = file("plan.json", plan);
    request.model_path = file("model.json", model_text);
    request.output_path = "out.json";
    request.files = &disk_;
    return run_freeze(request).diagnostics;
  }

 private:
  FakeFileSystem disk_;
};

ReportPlanOptions with_budget(std::uint64_t bytes) {
  ReportPlanOptions plan;
  plan.filter.budget = bytes;
  plan.filter.budget_text = std::to_string(bytes);
  return plan;
}

// A safetensors file of one tensor b.w, [2] bfloat16.
std::string checkpoint() {
  const std::string header = R"({"b.w":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]}})";
  std::string bytes(8, '\0');
  bytes[0] = static_cast<char>(header.size());
  return bytes + header + std::string(4, '\0');
}

struct Case {
  std::string_view code;
  std::function<Diagnostics(Runs&)> run;
  // The severity a command lowers the row's to: freeze warns of HPF305 (--strict refuses).
  std::optional<Severity> lowered = std::nullopt;
};

// Raw strings are R"j(...)j": a placement's "S(0)" holds the )" that would end R"(...)".
const std::vector<Case>& cases() {
  static const std::vector<Case> kCases = {
      // 1xx: the meta's schema.
      {"HPF101", [](Runs& r) { return r.check(meta_with(R"j("signature": 3)j")); }},
      {"HPF102", [](Runs& r) { return r.check("{}"); }},
      {"HPF103", [](Runs& r) { return r.check(R"j({"param_plan": {"b": 3}})j"); }},
      {"HPF104", [](Runs& r) { return r.check(meta_with(R"j("mesh_dim_names": 3)j")); }},
      {"HPF105", [](Runs& r) { return r.check(meta_with(R"j("frozen_sharded_params": 3)j")); }},
      {"HPF106", [](Runs& r) { return r.check(meta_with(R"j("injections": [{}])j")); }},
      {"HPF107", [](Runs& r) { return r.check(meta_with(R"j("boundary_classes": 3)j")); }},
      {"HPF108", [](Runs& r) { return r.check(meta_with(R"j("tied_pairs": 3)j")); }},
      {"HPF109", [](Runs& r) { return r.check(meta_with(R"j("special_handlers": 3)j")); }},
      // 2xx: the plan.
      {"HPF201", [](Runs& r) { return r.check(plan_of(R"j({"tp": "S"})j")); }},
      {"HPF202", [](Runs& r) { return r.check(plan_of(R"j({"tp": "S( 0 )"})j", kListed)); }},
      {"HPF203", [](Runs& r) { return r.check(plan_of(R"j({"tp": "S(-1)"})j", kListed)); }},
      {"HPF204",
       [](Runs& r) {
         return r.check(plan_of(R"j({"cp": "R"})j", R"j("mesh_dim_names": ["tp"])j"));
       }},
      {"HPF205", [](Runs& r) { return r.check(meta_with(R"j("mesh_dim_names": ["tp", "tp"])j")); }},
      {"HPF206", [](Runs& r) { return r.check(plan_of(R"j({"tp": "S(0)"})j")); }},
      {"HPF207",
       [](Runs& r) { return r.check(meta_with(R"j("injections": [{"match": "ghost"}])j")); }},
      {"HPF208",
       [](Runs& r) {
         return r.check(meta_with(R"j("skipped_overrides": [{"match": "x", "reason": "r"}])j"));
       }},
      // 3xx: against the model.
      {"HPF301",
       [](Runs& r) {
         return r.check(
             meta_with(""),
             R"j({"format": "hpfreeze.model/v1", "modules": {"": "N"}, "parameters": {}})j");
       }},
      {"HPF302",
       [](Runs& r) {
         return r.check(meta_with(R"j("boundary_classes": {"b": "Conv"})j"), model(""));
       }},
      {"HPF303", [](Runs& r) { return r.check(plan_of(R"j({"tp": "R"})j"), model("")); }},
      {"HPF304",
       [](Runs& r) {
         return r.check(plan_of(R"j({"tp": "S(1)"})j", kListed),
                        model(R"j("b.w": {"shape": [4]})j"));
       }},
      {"HPF305", [](Runs& r) { return r.check(meta_with(""), model(R"j("x": {"shape": [2]})j")); }},
      // Freeze counts the same parameters in one warning.
      {"HPF305",
       [](Runs& r) {
         return r.freeze(R"j({"format": "hpfreeze.plan/v1", "modules": {"b": {"params": {}}}})j",
                         model(R"j("x": {"shape": [2]})j"));
       },
       Severity::kWarning},
      {"HPF306", [](Runs& r) { return r.check(plan_of(R"j({"tp": "R"})j"), checkpoint()); }},
      {"HPF307",
       [](Runs& r) {
         return r.check(meta_with(""),
                        R"j({"format": "hpfreeze.model/v1", "modules": {"": "N", "b": "L"}})j");
       }},
      // 4xx: the generated bundle.
      {"HPF401", [](Runs& r) { return r.check_bundle(meta_with("")); }},
      {"HPF402",
       [](Runs& r) { return r.check_bundle(meta_with(R"j("model_name": 3, "outputs": {})j")); }},
      {"HPF403",
       [](Runs& r) {
         r.file("gen/x.py", "");
         return r.check_bundle(meta_with(outputs_of("x.py", "\"" + kEmptySha256 + "\"")));
       }},
      {"HPF404", [](Runs& r) { return r.check_bundle(meta_with(outputs_of("x.py", "3"))); }},
      {"HPF405",
       [](Runs& r) {
         return r.check_bundle(meta_with(outputs_of("gone.py", "\"" + kEmptySha256 + "\"")));
       }},
      {"HPF406",
       [](Runs& r) {
         r.file("gen/x.py", "edited");
         return r.check_bundle(meta_with(outputs_of("x.py", "\"" + kEmptySha256 + "\"")));
       }},
      // 5xx: the mesh and the memory.
      {"HPF501",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "S(0)"})j"), model(bf16("b.w", "[3]")),
                         mesh_of("tp", 2));
       }},
      {"HPF502",
       [](Runs& r) {
         std::vector<AxisSize> ep_tp{{"ep", 2}, {"tp", 2}};
         return r.report(plan_of(R"j({"ep": "S(0)", "tp": "S(1)"})j"), model(bf16("b.w", "[4, 4]")),
                         ep_tp);
       }},
      {"HPF503",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "R", "cp": "S(0)"})j"), model(bf16("b.w", "[4]")));
       }},
      {"HPF504",
       [](Runs& r) {
         ReportPlanOptions plan;
         plan.sweeps = {{"dp", {1, 2}}};
         return r.report(plan_of(R"j({"tp": "R"})j"), model(bf16("b.w", "[4]")), mesh_of("tp", 1),
                         plan);
       }},
      {"HPF505",
       [](Runs& r) {
         return r.report(R"j({"param_plan": {"a": {"params": {"b.w": {"tp": "R"}}},
                                             "a.b": {"params": {"w": {"tp": "R"}}}}})j",
                         model(bf16("a.b.w", "[4]")));
       }},
      {"HPF506",
       [](Runs& r) {
         return r.report(meta_with(R"j("parallel_dims": 3)j"), model(bf16("b.w", "[4]")),
                         std::nullopt);
       }},
      {"HPF507",
       [](Runs& r) {
         return r.report(meta_with(R"j("parallel_dims": {"tp_size": 0})j"),
                         model(bf16("b.w", "[4]")), std::nullopt);
       }},
      {"HPF508",
       [](Runs& r) { return r.report(meta_with(""), model(bf16("b.w", "[4]")), std::nullopt); }},
      {"HPF509",
       [](Runs& r) {
         return r.report(
             meta_with(R"j("parallel_dims": {"tp_size": 4, "cp_size": 9223372036854775807})j"),
             model(bf16("b.w", "[4]")), std::nullopt);
       }},
      {"HPF510",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "R"})j"),
                         model(R"j("b.w": {"shape": [4], "dtype": "fp32"})j"));
       }},
      {"HPF511",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "R"})j"), model(R"j("b.w": {"shape": [4]})j"));
       }},
      {"HPF512",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "R"})j"),
                         model(bf16("b.w", "[4611686018427387904, 4]")));
       }},
      {"HPF513",
       [](Runs& r) {
         // 2^63 bytes each, together past 2^64-1: the planner cannot add them up.
         return r.report(
             R"j({"param_plan": {"b": {"params": {"w": {"tp": "R"}, "v": {"tp": "R"}}}}})j",
             model(bf16("b.w", "[4611686018427387904]") + ", " +
                   bf16("b.v", "[4611686018427387904]")));
       }},
      {"HPF514",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "R"})j"), model(bf16("b.w", "[4]")), mesh_of("tp", 1),
                         with_budget(1));
       }},
      {"HPF515",
       [](Runs& r) {
         return r.report(plan_of(R"j({"tp": "R"})j"), model(bf16("b.w", "[4]")), mesh_of("tp", 1),
                         with_budget(64));
       }},
      {"HPF516",
       [](Runs& r) {
         return r.report(plan_of(R"j({"pp": "S(0)"})j"), model(bf16("b.w", "[4]")),
                         mesh_of("pp", 2));
       }},
      {"HPF517",
       [](Runs& r) {
         // No modules b.0 .. b.N: no layer stack for pp to split.
         return r.report(plan_of(R"j({"tp": "R"})j"), model(bf16("b.w", "[4]")), mesh_of("pp", 2));
       }},
      {"HPF518",
       [](Runs& r) {
         ReportPlanOptions plan;
         plan.filter.budget = std::uint64_t{80'000'000'000};
         plan.filter.budget_text = "80GB";
         return r.report(plan_of(R"j({"tp": "R"})j"), model(bf16("b.w", "[4]")), mesh_of("tp", 1),
                         plan);
       }},
      {"HPF519",
       [](Runs& r) {
         // The answer's 8 B are all of an 8 B budget.
         return r.report(plan_of(R"j({"tp": "R"})j"), model(bf16("b.w", "[4]")), mesh_of("tp", 1),
                         with_budget(8));
       }},
      {"HPF520",
       [](Runs& r) {
         // Folded, dp=4 by ep=2: edp is 2, and the expert's local dim 0 holds 1 row.
         ReportPlanOptions plan;
         plan.accounting.optimizer = Optimizer::kAdam;
         plan.accounting.zero.stage = 1;
         plan.accounting.layout = ExpertLayout::kFolded;
         plan.accounting.layout_source = LayoutSource::kFlag;
         const std::vector<AxisSize> ep_dp{{"ep", 2}, {"dp", 4}};
         return r.report(plan_of(R"j({"ep": "S(0)"})j"), model(bf16("b.w", "[2, 4]")), ep_dp, plan);
       }},
  };
  return kCases;
}

std::string lines_of(const Diagnostics& diagnostics) {
  std::string out;
  for (const Diagnostic& d : diagnostics) {
    out += std::string(severity_name(d.severity)) + " [" + std::string(d.code) +
           "]: " + d.location_and_message() + "\n";
  }
  return out;
}

TEST(FindingCodes, EveryRowHasACase) {
  for (const FindingRule& rule : kFindingRules) {
    EXPECT_TRUE(std::any_of(cases().begin(), cases().end(),
                            [&rule](const Case& c) { return c.code == rule.code; }))
        << rule.code << " (" << rule.name << ") has no case in finding_codes_test.cc";
  }
}

class EmittedCode : public ::testing::TestWithParam<std::size_t> {};

// The case's command gives a finding of its code, with the severity of the code's row (or the
// one the command lowers it to).
TEST_P(EmittedCode, ByItsCase) {
  const Case& c = cases()[GetParam()];
  const FindingRule* rule = find_finding_rule(c.code);
  ASSERT_NE(rule, nullptr) << c.code << " is no row of kFindingRules";
  Runs runs;
  const Diagnostics found = c.run(runs);
  const auto it = std::find_if(found.begin(), found.end(),
                               [&c](const Diagnostic& d) { return d.code == c.code; });
  ASSERT_NE(it, found.end()) << c.code << " was not emitted; the findings were:\n"
                             << lines_of(found);
  EXPECT_EQ(it->severity, c.lowered.value_or(rule->severity)) << lines_of(found);
  EXPECT_EQ(it->error_class, ErrorClass::kRejected);
}

INSTANTIATE_TEST_SUITE_P(Cases, EmittedCode, ::testing::Range<std::size_t>(0, cases().size()),
                         [](const ::testing::TestParamInfo<std::size_t>& param) {
                           return std::string(cases()[param.param].code) + "_" +
                                  std::to_string(param.param);
                         });

}  // namespace
}  // namespace hpfreeze
