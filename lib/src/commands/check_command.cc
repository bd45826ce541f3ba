// run_check: the metas found (io/meta_tree.h), each loaded (inputs/inputs.h) and checked
// (check.h, and with --bundle check/bundle_check.h) as if it were alone, on up to the
// request's CPUs; their findings as diagnostics or, with --json, JSON Lines, in walk order.
#include "hpfreeze/commands/check_command.h"

#include <algorithm>
#include <atomic>
#include <iterator>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "base/background_task.h"
#include "check/bundle_check.h"
#include "check/check.h"
#include "inputs/inputs.h"
#include "io/io.h"
#include "io/meta_tree.h"
#include "json/diagnostic_json.h"

namespace hpfreeze {

namespace {

// The usage errors found before anything is read, the first one only.
std::optional<Diagnostic> request_error(const CheckRequest& request) {
  const std::vector<std::string>& paths = request.paths;
  if (paths.empty()) return make_io_error({}, "no META given");
  const bool on_stdin = std::find(paths.begin(), paths.end(), "-") != paths.end();
  if (on_stdin && paths.size() > 1) {
    return make_io_error({}, "META '-' (stdin) must be the only META");
  }
  if (on_stdin && request.bundle) {
    return make_io_error({}, "--bundle needs META as a path: a meta on stdin has no bundle");
  }
  return stdin_twice_error({&paths.front(), request.model_path ? &*request.model_path : nullptr},
                           "META and --model");
}

// What one meta of the run gave: its findings, or its read errors.
struct MetaOutcome {
  Diagnostics diagnostics;
  SeverityCounts counts;   // of the findings, also when they went to `json_lines`
  std::string json_lines;  // with --json, the findings when nothing failed to read
};

// Loads and checks the meta at `path` as if it were the run's only one.
Diagnostics check_one(const CheckRequest& request, const std::string& path,
                      Concurrency concurrency) {
  // Every decode error of the meta is a finding: check lists them all in one run.
  std::vector<InputSpec> inputs{{"META", path, InputKind::kMetaKeepGoing}};
  if (request.model_path) inputs.push_back({"--model", *request.model_path, InputKind::kModel});
  LoadOptions load;
  load.command = "check";
  load.concurrency = concurrency;
  load.schedule = Schedule::kReadAheadBesideFirst;
  LoadedInputs loaded = load_inputs(inputs, load);
  if (!loaded.errors.empty()) return std::move(loaded.errors);
  LoadedInput& meta = loaded.inputs.front();
  if (!meta.has_value()) return std::move(meta.findings);
  Diagnostics findings = std::move(meta.findings);
  if (request.bundle) {
    // Among the meta's own findings before check_meta sorts them: check's one order.
    Diagnostics bundle = check_bundle(meta.meta(), bundle_prefix(path));
    std::move(bundle.begin(), bundle.end(), std::back_inserter(findings));
  }
  const ModelTree* model = request.model_path ? &loaded.inputs.back().model() : nullptr;
  return check_meta(meta.meta(), std::move(findings), model, request.allow_uncovered);
}

MetaOutcome check_source(const CheckRequest& request, const MetaSource& source,
                         Concurrency concurrency) {
  MetaOutcome out;
  if (source.error) {
    out.diagnostics.push_back(*source.error);
    out.counts.errors = 1;
    return out;
  }
  CommandResult one;  // the meta's result, as if it were the run's only one
  one.diagnostics = check_one(request, source.path, concurrency);
  out.counts = count_severities(one.diagnostics);
  if (request.json && !one.io_failed()) {
    // The findings go to stdout as JSON Lines instead of to stderr (an error among them
    // still rejects the meta: run_check counts it).
    out.json_lines = render_findings_json_lines(one.diagnostics);
    one.diagnostics.clear();
  }
  out.diagnostics = std::move(one.diagnostics);
  return out;
}

// Each source checked, on up to `request.concurrency.cpus` threads (one meta at a time on
// each: loaded, checked, released), the outcomes in the order of `sources`.
std::vector<MetaOutcome> check_sources(const CheckRequest& request,
                                       const std::vector<MetaSource>& sources) {
  std::vector<MetaOutcome> outcomes(sources.size());
  // One meta alone keeps today's overlap of its read with the model's; several use the CPUs
  // for the metas themselves.
  const Concurrency each = sources.size() == 1 ? request.concurrency : Concurrency{};
  std::atomic<std::size_t> next{0};
  const auto work = [&] {
    for (std::size_t i = next++; i < sources.size(); i = next++) {
      outcomes[i] = check_source(request, sources[i], each);
    }
  };
  using Helper = BackgroundTask<decltype(work)>;
  const std::size_t threads = std::min(request.concurrency.cpus, sources.size());
  std::vector<std::unique_ptr<Helper>> helpers;
  for (std::size_t t = 1; t < threads; ++t) {
    helpers.push_back(std::make_unique<Helper>(request.concurrency, work));
  }
  work();
  for (const std::unique_ptr<Helper>& helper : helpers) helper->wait();
  return outcomes;
}

// The usage errors of a pipe, FIFO or socket named twice among the metas and --model: it can
// be read only once (io.h's check_stdout_apart, over the whole run).
Diagnostics read_once_twice(const std::vector<MetaSource>& sources) {
  std::vector<InputPath> inputs;
  for (const MetaSource& source : sources) {
    if (!source.error)
      inputs.push_back({"META " + std::to_string(inputs.size() + 1), source.path, {}});
  }
  if (inputs.size() < 2) return {};  // one meta: its loader checks it with --model
  return check_stdout_apart(real_file_system(), inputs);
}

}  // namespace

CommandResult run_check(const CheckRequest& request, CheckTally* tally) {
  CommandResult result;
  if (std::optional<Diagnostic> error = request_error(request)) {
    result.diagnostics.push_back(std::move(*error));
    return result;
  }
  const std::vector<MetaSource> sources = find_metas(request.paths);
  const auto metas = static_cast<std::size_t>(
      std::count_if(sources.begin(), sources.end(), [](const MetaSource& s) { return !s.error; }));
  if (request.model_path && metas > 1) {
    result.diagnostics.push_back(make_io_error(
        {}, "--model checks one meta against a model, and this run has " + plural(metas, "meta")));
    return result;
  }
  // Each meta is loaded alone, so a pipe named twice in the run is seen only here.
  if (Diagnostics reused = read_once_twice(sources); !reused.empty()) {
    result.diagnostics = std::move(reused);
    return result;
  }
  SeverityCounts counts;
  for (MetaOutcome& outcome : check_sources(request, sources)) {
    counts += outcome.counts;
    std::move(outcome.diagnostics.begin(), outcome.diagnostics.end(),
              std::back_inserter(result.diagnostics));
    result.output += outcome.json_lines;
    // An error of a meta rejects the run also when --json moved it to stdout.
    result.negative = result.negative || outcome.counts.errors > 0;
  }
  const bool summarized = sources.size() > 1;
  if (summarized) {
    // The closing line of a run of several (docs/cli.md, "Several metas"), shown as notes are.
    result.diagnostics.push_back(
        make_note({}, {}, "check: " + counts.text() + " in " + plural(metas, "meta")));
  }
  if (tally != nullptr) *tally = {counts, metas, summarized};
  return result;
}

}  // namespace hpfreeze
