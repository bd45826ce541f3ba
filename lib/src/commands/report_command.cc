// run_report: the two inputs loaded (inputs/inputs.h), then the report pass (report.h),
// rendered, and its findings for stderr. The pass is report/build_report.cc, the rendering
// report/report_render.cc.
#include "hpfreeze/commands/report_command.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "capacity/accounting.h"
#include "dumps/dump_kind.h"
#include "hpfreeze/base/command_result.h"
#include "inputs/inputs.h"
#include "report/report.h"
#include "spec/findings.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kDefaultTextTop = 10;

// The usage errors of the request itself, the first one only: an axis swept twice or in
// both --mesh and --sweep (for each sweep in turn), then both inputs on stdin.
std::optional<Diagnostic> request_error(const ReportRequest& request) {
  const std::vector<AxisSweep>& sweeps = request.plan.sweeps;
  for (auto sweep = sweeps.begin(); sweep != sweeps.end(); ++sweep) {
    if (std::any_of(sweeps.begin(), sweep,
                    [&](const AxisSweep& earlier) { return earlier.axis == sweep->axis; })) {
      return make_io_error({}, "--sweep: axis '" + sweep->axis + "' is swept twice");
    }
    if (request.mesh && std::any_of(request.mesh->begin(), request.mesh->end(),
                                    [&](const AxisSize& a) { return a.axis == sweep->axis; })) {
      return make_io_error(
          {}, "axis '" + sweep->axis + "' is in both --mesh and --sweep; give it in one of them");
    }
  }
  if (std::optional<std::string> why = accounting_error(request.plan.accounting)) {
    return make_io_error({}, std::move(*why));
  }
  const MeshFilter& filter = request.plan.filter;
  if (request.reserve_given && !filter.budget) {
    return make_io_error({}, "--reserve: it is kept from --budget, which is not given");
  }
  if (filter.budget && filter.reserve >= *filter.budget) {
    return make_io_error({}, "--reserve: " + format_byte_size(filter.reserve) +
                                 " leaves nothing of the " + format_byte_size(*filter.budget) +
                                 " --budget for model states");
  }
  // Without --model too, the missing --model is what to say (run_report's model_missing).
  if (request.meta_path.empty() && !request.model_path.empty() && !request.mesh && sweeps.empty()) {
    return make_io_error({},
                         "without META every parameter is replicated, and --mesh or --sweep "
                         "must give the data-parallel sizes (as --sweep dp=1,2,4,8)");
  }
  if (std::optional<Diagnostic> unknown = unknown_finding_code(request.plan.silenced)) {
    return unknown;
  }
  return stdin_twice_error({&request.meta_path, &request.model_path}, "META and --model");
}

// META without --model: a model (a dump or a checkpoint) given where the meta goes is said
// to be one; else --model is missing.
Diagnostic model_missing(const std::string& meta_path, FileSystem* files) {
  const DumpKind kind = model_kind_at(meta_path, files);
  if (kind == DumpKind::kUnknown) {
    return make_io_error({}, "--model is required (see 'hpfreeze report --help')");
  }
  return make_io_error({}, "META " + meta_path + " is " + std::string(dump_kind_name(kind)) +
                               ", not a codegen_meta.json: give it as --model " + meta_path +
                               " (without META, report counts every parameter replicated and "
                               "needs --mesh or --sweep)");
}

// The findings for stderr: at most kMaxReportedErrors, then a line counting the rest (the
// full list is in --json), then the summary.
Diagnostics findings_for_stderr(Diagnostics findings) {
  const SeverityCounts counts = count_severities(findings);  // of them all, before the cut
  const bool summarize = !findings.empty();
  if (findings.size() > kMaxReportedErrors) {
    const std::size_t rest = findings.size() - kMaxReportedErrors;
    Diagnostic more = findings[kMaxReportedErrors];
    more.file.clear();
    more.pointer.clear();
    more.code = {};  // a count, no finding
    more.message = plural(rest, "more finding") + " not shown (--json lists them all)";
    findings.resize(kMaxReportedErrors);
    findings.push_back(std::move(more));
  }
  if (summarize) findings.push_back(make_note({}, {}, "report: " + counts.text()));
  return findings;
}

// The table, or with `json` the JSON object. -q: the text leaves out its findings line,
// which counts findings -q does not show.
std::string render_report(const ReportRequest& request, Report& report) {
  if (request.json) return render_report_json(report, request.top);
  Diagnostics findings;
  if (request.quiet) findings.swap(report.findings);
  std::string out = render_report_text(report, request.top.value_or(kDefaultTextTop));
  if (request.quiet) findings.swap(report.findings);
  return out;
}

}  // namespace

CommandResult run_report(const ReportRequest& request) {
  CommandResult result;
  if (std::optional<Diagnostic> error = request_error(request)) {
    result.diagnostics.push_back(std::move(*error));
    return result;
  }
  if (request.model_path.empty()) {
    result.diagnostics.push_back(model_missing(request.meta_path, request.files));
    return result;
  }
  const bool with_meta = !request.meta_path.empty();
  std::vector<InputSpec> inputs;
  if (with_meta) inputs.push_back({"META", request.meta_path, InputKind::kMeta});
  inputs.push_back({"--model", request.model_path, InputKind::kModel});
  LoadOptions load;
  load.command = "report";
  load.parameters_needed_by = "a report";
  load.files = request.files;
  LoadedInputs loaded = load_inputs(inputs, load);
  result.diagnostics = std::move(loaded.errors);
  if (!result.diagnostics.empty()) return result;
  // The text shows the top `top` params, --json all of them unless --top is given.
  const std::optional<std::size_t> shown =
      request.json ? request.top : request.top.value_or(kDefaultTextTop);
  Report report = build_report(with_meta ? &loaded.inputs.front().meta() : nullptr,
                               loaded.inputs.back().model(), request.mesh, request.plan, shown);
  // A command-line mistake the inputs reveal leaves no report to print.
  if (!report.usage_errors.empty()) {
    result.diagnostics = std::move(report.usage_errors);
    return result;
  }
  result.output = render_report(request, report);
  // An error finding fails the run, no usable mesh among them (HPF514, or the one mesh's
  // HPF501, says why); silenced, it fails nothing, as every silenced finding.
  result.diagnostics = findings_for_stderr(std::move(report.findings));
  return result;
}

}  // namespace hpfreeze
