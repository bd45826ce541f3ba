// The rules of a request that hold between its values, checked by the command before any
// input is read (the front end only maps options to requests): two inputs on stdin for
// freeze, report and diff; a sweep twice or beside --mesh for report. Each is one usage
// error (kIo, exit 2) with the message the front end printed, and nothing else.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/commands/diff_command.h"
#include "hpfreeze/commands/freeze_command.h"
#include "hpfreeze/commands/report_command.h"

namespace hpfreeze {
namespace {

// Paths that exist nowhere: a rule that did not stop the command would show as a read error.
const std::string kMissing = "/nonexistent/hpfreeze-request-rules/in.json";

void expect_one_usage_error(const CommandResult& result, const std::string& message) {
  ASSERT_EQ(result.diagnostics.size(), 1u) << result.diagnostics.front().message;
  const Diagnostic& d = result.diagnostics.front();
  EXPECT_EQ(d.message, message);
  EXPECT_EQ(d.severity, Severity::kError);
  EXPECT_EQ(d.error_class, ErrorClass::kIo);
  EXPECT_EQ(d.file, "");
  EXPECT_EQ(d.pointer, "");
  EXPECT_EQ(result.output, "");
  EXPECT_EQ(result.outcome(), Outcome::kTrouble);
}

TEST(RequestRules, FreezeTakesStdinOnce) {
  const std::string message = "at most one of --plan, --model and --base may be '-' (stdin)";
  FreezeRequest request;
  request.plan_path = "-";
  request.model_path = "-";
  expect_one_usage_error(run_freeze(request), message);
  request.model_path = kMissing;
  request.base_path = "-";
  expect_one_usage_error(run_freeze(request), message);
  // Before --check's and --depfile's own usage errors.
  request.check = true;
  request.depfile_path = "out.d";
  expect_one_usage_error(run_freeze(request), message);
}

TEST(RequestRules, DiffTakesStdinOnce) {
  DiffRequest request;
  request.old_path = "-";
  request.new_path = "-";
  // Before a malformed --ignore.
  request.options.ignored_fields = {"not a pointer"};
  expect_one_usage_error(run_diff(request), "at most one of the two metas may be '-' (stdin)");
}

ReportRequest report_request() {
  ReportRequest request;
  request.meta_path = kMissing;
  request.model_path = kMissing;
  return request;
}

TEST(RequestRules, ReportTakesStdinOnce) {
  ReportRequest request = report_request();
  request.meta_path = "-";
  request.model_path = "-";
  expect_one_usage_error(run_report(request), "at most one of META and --model may be '-' (stdin)");
}

TEST(RequestRules, ReportSweepsEachAxisOnce) {
  ReportRequest request = report_request();
  request.plan.sweeps = {*parse_sweep_arg("tp=1,2"), *parse_sweep_arg("dp=2"),
                         *parse_sweep_arg("tp=4")};
  expect_one_usage_error(run_report(request), "--sweep: axis 'tp' is swept twice");
}

TEST(RequestRules, ReportAxisInMeshOrSweep) {
  ReportRequest request = report_request();
  request.mesh = *parse_mesh_arg("dp=2,ep=4");
  request.plan.sweeps = {*parse_sweep_arg("tp=1,2"), *parse_sweep_arg("ep=2")};
  expect_one_usage_error(run_report(request),
                         "axis 'ep' is in both --mesh and --sweep; give it in one of them");
}

TEST(RequestRules, ReportSaysTheFirstRuleBroken) {
  // Sweep by sweep, each against the earlier sweeps and then --mesh; stdin last.
  ReportRequest request = report_request();
  request.meta_path = "-";
  request.model_path = "-";
  request.mesh = *parse_mesh_arg("tp=2");
  request.plan.sweeps = {*parse_sweep_arg("dp=2"), *parse_sweep_arg("dp=4"),
                         *parse_sweep_arg("tp=4")};
  expect_one_usage_error(run_report(request), "--sweep: axis 'dp' is swept twice");
  request.plan.sweeps = {*parse_sweep_arg("tp=4"), *parse_sweep_arg("tp=8")};
  expect_one_usage_error(run_report(request),
                         "axis 'tp' is in both --mesh and --sweep; give it in one of them");
  request.plan.sweeps.clear();
  expect_one_usage_error(run_report(request), "at most one of META and --model may be '-' (stdin)");
}

}  // namespace
}  // namespace hpfreeze
