// run_report: reading and decoding the two inputs, then the report pass (report.h), rendered,
// and its findings for stderr. The pass is report/build_report.cc, the rendering
// report/report_render.cc.
#include <algorithm>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include "io/inputs.h"
#include "hpfreeze/checkpoint.h"
#include "hpfreeze/command_result.h"
#include "hpfreeze/dump_kind.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/report_command.h"

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
      return make_io_error({}, "axis '" + sweep->axis +
                                   "' is in both --mesh and --sweep; give it in one of them");
    }
  }
  if (request.meta_path.empty() && !request.mesh && sweeps.empty()) {
    return make_io_error({},
                         "without META every parameter is replicated, and --mesh or --sweep "
                         "must give the data-parallel sizes (as --sweep dp=1,2,4,8)");
  }
  return stdin_twice_error({&request.meta_path, &request.model_path}, "META and --model");
}

// META without --model: a model (a dump or a checkpoint) given where the meta goes is said
// to be one; else --model is missing.
Diagnostic model_missing(const std::string& meta_path) {
  DumpKind kind = DumpKind::kUnknown;
  if (read_safetensors(meta_path)) {
    kind = DumpKind::kSafetensors;
  } else {
    ParseScratch scratch;
    LoadStage stage;
    if (Expected<JsonDocument> doc = load_document(meta_path, stage, scratch, true)) {
      const DumpKind guess = guess_dump_kind(*doc);
      if (guess == DumpKind::kModel || guess == DumpKind::kCheckpointIndex) kind = guess;
    }
  }
  if (kind == DumpKind::kUnknown) {
    return make_io_error({}, "--model is required (see 'hpfreeze report --help')");
  }
  return make_io_error({}, "META " + meta_path + " is " + std::string(dump_kind_name(kind)) +
                               ", not a codegen_meta.json: give it as --model " + meta_path +
                               " (without META, report counts every parameter replicated and "
                               "needs --mesh or --sweep)");
}

}  // namespace

CommandResult run_report(const ReportRequest& request) {
  CommandResult result;
  if (std::optional<Diagnostic> error = request_error(request)) {
    result.diagnostics.push_back(std::move(*error));
    return result;
  }
  if (request.model_path.empty()) {
    result.diagnostics.push_back(model_missing(request.meta_path));
    return result;
  }
  const bool with_meta = !request.meta_path.empty();
  const InputPath inputs[] = {{"META", request.meta_path, {}}, {"--model", request.model_path, {}}};
  result.diagnostics =
      check_stdout_apart(std::span<const InputPath>(inputs).subspan(with_meta ? 0 : 1));
  if (!result.diagnostics.empty()) return result;
  // A safetensors checkpoint as --model is read header only, before anything is parsed.
  std::optional<Expected<ModelTree>> checkpoint = read_safetensors(request.model_path);
  // The model's text, parser and tape go on to the meta's read and parse (ParseScratch).
  ParseScratch scratch;
  scratch.expect_input(std::max(checkpoint ? 0 : regular_file_size(request.model_path),
                                regular_file_size(request.meta_path)));
  LoadStage stage;  // report shows no stages
  auto load = [&scratch, &stage](const std::string& path, ParseOptions options, bool last,
                                 Diagnostics& errors) -> std::optional<JsonDocument> {
    Expected<JsonDocument> doc = load_document(path, stage, scratch, last, options);
    if (!doc) {
      errors = std::move(doc.errors());
      return std::nullopt;
    }
    return std::move(*doc);
  };
  // One input at a time, each decoded and its tree released before the next is read, so
  // that two parses are never held at once: the model first, whose decoded form is the
  // smaller, then the meta. The diagnostics keep the order of the command line: every
  // unreadable file (meta, then model), else the model's errors, then the meta's.
  //
  // The model's parse leaves the duplicate-key check to its decoder (inputs.h): a repeat is
  // then reported by the decoder, or below with an unreadable meta, as the parse would have.
  const ParseOptions model_options = decoder_checks_keys();
  Diagnostics model_unread;
  std::optional<JsonDocument> model_doc;
  std::optional<Expected<ModelTree>> model;
  if (checkpoint && !*checkpoint && checkpoint->errors().front().error_class == ErrorClass::kIo) {
    model_unread = std::move(checkpoint->errors());
  } else if (checkpoint) {
    model = std::move(*checkpoint);
  } else {
    model_doc = load(request.model_path, model_options, false, model_unread);
  }
  if (model_doc) {
    model = decode_model_input(*model_doc, request.model_path);
    // The decoded tree views only the document's strings.
    if (*model) model_doc->release_tree(scratch);
  }
  Diagnostics meta_unread;
  std::optional<JsonDocument> meta_doc;
  if (with_meta) meta_doc = load(request.meta_path, {}, true, meta_unread);
  if (!meta_unread.empty() || !model_unread.empty()) {
    result.diagnostics = std::move(meta_unread);
    result.diagnostics.insert(result.diagnostics.end(), model_unread.begin(), model_unread.end());
    if (model && !*model && model_doc) {
      if (std::optional<Diagnostic> repeated = repeated_key(*model_doc)) {
        result.diagnostics.push_back(std::move(*repeated));
      }
    }
    return result;
  }
  if (!*model) {
    result.diagnostics = std::move(model->errors());
    return result;
  }
  if (!(*model)->has_parameters) {
    result.diagnostics.push_back(make_error(
        (*model)->file, "", "the model tree has no 'parameters'; a report needs their shapes"));
    return result;
  }
  // The report reads the decoded params only: the tree does not hold them too.
  std::optional<Expected<FrozenMeta>> meta;
  if (with_meta) {
    meta = decode_meta(*meta_doc, "report", MetaDecodeOptions::decoded_params_only());
    if (!*meta) {
      result.diagnostics = std::move(meta->errors());
      return result;
    }
    meta_doc->release_tree();  // the decoded meta views only the document's strings
  }
  // The text shows the top `top` params, --json all of them unless --top is given.
  const std::optional<std::size_t> shown =
      request.json ? request.top : request.top.value_or(kDefaultTextTop);
  Report report =
      build_report(meta ? &**meta : nullptr, **model, request.mesh, request.plan, shown);
  // A command-line mistake the inputs reveal leaves no report to print.
  if (!report.usage_errors.empty()) {
    result.diagnostics = std::move(report.usage_errors);
    return result;
  }
  // -q: the text leaves out its findings line, which counts findings -q does not show.
  Diagnostics findings;
  if (request.quiet && !request.json) findings.swap(report.findings);
  result.output = request.json ? render_report_json(report, request.top)
                               : render_report_text(report, request.top.value_or(kDefaultTextTop));
  if (request.quiet && !request.json) findings.swap(report.findings);
  // An error finding fails the run, no usable mesh among them (it says why).
  result.negative = report.capacity && capacity_exit_code(*report.capacity) != 0;
  // The summary after the per-parameter findings (the full list is in --json).
  std::size_t counts[3] = {0, 0, 0};
  for (const Diagnostic& d : report.findings) ++counts[static_cast<int>(d.severity)];
  const bool summarize = !report.findings.empty();
  if (report.findings.size() > kMaxReportedErrors) {
    const std::size_t rest = report.findings.size() - kMaxReportedErrors;
    Diagnostic more = report.findings[kMaxReportedErrors];
    more.file.clear();
    more.pointer.clear();
    more.message = std::to_string(rest) + " more finding" + (rest == 1 ? "" : "s") +
                   " not shown (--json lists them all)";
    report.findings.resize(kMaxReportedErrors);
    report.findings.push_back(std::move(more));
  }
  if (summarize) {
    Diagnostic& summary = report.findings.emplace_back(
        make_warning({}, {},
                     "report: " + plural(counts[0], "error") + ", " + plural(counts[1], "warning") +
                         ", " + plural(counts[2], "note")));
    summary.severity = Severity::kNote;
  }
  result.diagnostics = std::move(report.findings);
  return result;
}

}  // namespace hpfreeze
