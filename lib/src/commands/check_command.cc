// run_check: the metas found (io/meta_tree.h), each loaded (inputs/load_each.h) and checked
// (check.h, and with --bundle check/bundle_check.h) as if it were alone; their findings as
// diagnostics or, with --json, JSON Lines, in walk order.
#include "hpfreeze/commands/check_command.h"

#include <algorithm>
#include <iterator>
#include <span>
#include <utility>
#include <vector>

#include "check/bundle_check.h"
#include "check/check.h"
#include "inputs/load_each.h"
#include "io/io.h"
#include "io/meta_tree.h"
#include "json/diagnostic_json.h"
#include "spec/findings.h"

namespace hpfreeze {

namespace {

constexpr std::string_view kNoBundleOnStdin =
    "--bundle needs META as a path: a meta on stdin has no bundle";

// The usage errors found before anything is read, the first one only.
std::optional<Diagnostic> request_error(const CheckRequest& request, FileSystem& files) {
  const std::vector<std::string>& paths = request.paths;
  if (paths.empty()) return make_io_error({}, "no META given");
  const bool on_stdin = std::find(paths.begin(), paths.end(), "-") != paths.end();
  if (on_stdin && paths.size() > 1) {
    return make_io_error({}, "META '-' (stdin) must be the only META");
  }
  if (on_stdin && request.bundle) return make_io_error({}, std::string(kNoBundleOnStdin));
  if (std::optional<Diagnostic> unknown = unknown_finding_code(request.silenced)) return unknown;
  if (request.bundle) {
    // /dev/stdin is stdin, /dev/fd/3 another descriptor: no directory holds their bundle.
    for (const std::string& path : paths) {
      const int descriptor = files.descriptor_named(path);
      if (descriptor == 0) return make_io_error({}, std::string(kNoBundleOnStdin));
      if (descriptor > 0) {
        return make_io_error(path, "--bundle needs META as a path: this names descriptor " +
                                       std::to_string(descriptor) + ", which has no bundle");
      }
    }
  }
  return stdin_twice_error({&paths.front(), request.model_path ? &*request.model_path : nullptr},
                           "META and --model");
}

// The usage errors of a pipe, FIFO or socket named twice among the paths (and of stdout open
// on one of them): it can be read only once. A walk finds regular files only.
Diagnostics read_once_twice(FileSystem& files, const std::vector<std::string>& paths) {
  if (paths.size() < 2) return {};  // one path: its loader checks it with --model
  std::vector<InputPath> inputs;
  for (const std::string& path : paths) {
    inputs.push_back({"META " + std::to_string(inputs.size() + 1), path, {}});
  }
  return check_stdout_apart(files, inputs);
}

// What one meta of the run gave: its findings, or its read errors.
struct MetaOutcome {
  Diagnostics diagnostics;
  SeverityCounts counts;               // of the findings, also when they went to `json_lines`
  std::string json_lines;              // with --json, the findings when nothing failed to read
  bool meta = false;                   // a meta, not an error of the walk
  std::optional<BundleRecord> bundle;  // with --bundle, what a meta that decoded records
};

// The findings of the meta `each` loaded, as if it were the run's only one.
Diagnostics findings_of(const CheckRequest& request, FileSystem& files, EachMeta& each,
                        MetaOutcome& out) {
  LoadedInputs& loaded = *each.loaded;
  if (!loaded.errors.empty()) return std::move(loaded.errors);
  LoadedInput& meta = loaded.inputs.front();
  if (!meta.has_value()) return std::move(meta.findings);
  Diagnostics findings = std::move(meta.findings);
  if (request.bundle) {
    // A meta without a bundle that a walk of several found is counted in the closing note
    // rather than noted (a repository's root meta would be noted on every run).
    const bool counted = each.several && each.source.directory != nullptr;
    BundleFindings bundle = check_bundle(
        meta.meta(), {files, bundle_prefix(each.source.path), each.source.directory.get()},
        !counted);
    out.bundle = bundle.record;
    // Among the meta's own findings before check_meta sorts them: check's one order.
    std::move(bundle.findings.begin(), bundle.findings.end(), std::back_inserter(findings));
  }
  const ModelTree* model = request.model_path ? &loaded.inputs.back().model() : nullptr;
  return check_meta(meta.meta(), std::move(findings), model, request.allow_uncovered);
}

MetaOutcome check_each(const CheckRequest& request, FileSystem& files, EachMeta& each) {
  MetaOutcome out;
  if (each.source.error) {
    out.diagnostics.push_back(*each.source.error);
    out.counts.errors = 1;
    return out;
  }
  out.meta = true;
  CommandResult one;  // the meta's result, as if it were the run's only one
  one.diagnostics = findings_of(request, files, each, out);
  drop_silenced(one.diagnostics, request.silenced);  // as if their rules had not run
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

// The closing note of a run of several (docs/cli.md, "Several metas"): the findings, the
// metas, and with --bundle what was verified.
Diagnostic closing_note(const CheckRequest& request, const std::vector<MetaOutcome>& outcomes,
                        const SeverityCounts& counts, std::size_t metas) {
  std::string text = "check: " + counts.text() + " in " + plural(metas, "meta");
  if (request.bundle) {
    const auto recording = [&outcomes](BundleRecord record) {
      return static_cast<std::size_t>(
          std::count_if(outcomes.begin(), outcomes.end(),
                        [record](const MetaOutcome& o) { return o.bundle == record; }));
    };
    text += "; " + plural(recording(BundleRecord::kFiles), "bundle") + " verified";
    // The count stands for the HPF401 notes it replaces: silenced, it goes with them.
    if (const std::size_t none = recording(BundleRecord::kNone);
        none > 0 && !is_silenced("HPF401", request.silenced)) {
      text += ", " + plural(none, "meta") + " without a bundle";
    }
  }
  return make_note({}, {}, std::move(text));
}

}  // namespace

CommandResult run_check(const CheckRequest& request, CheckTally* tally) {
  CommandResult result;
  FileSystem& files = file_system_or_real(request.files);
  if (std::optional<Diagnostic> error = request_error(request, files)) {
    result.diagnostics.push_back(std::move(*error));
    return result;
  }
  // Each meta is loaded alone, so a pipe named twice in the run is seen only here.
  if (Diagnostics reused = read_once_twice(files, request.paths); !reused.empty()) {
    result.diagnostics = std::move(reused);
    return result;
  }
  if (request.bundle) {
    // Nothing can be verified: one error for the run, not one per generated file.
    if (std::optional<std::string> why = files.digest_unavailable()) {
      result.diagnostics.push_back(make_io_error({}, "--bundle cannot hash files: " + *why));
      return result;
    }
  }
  MetaFinder finder(files, request.paths);
  EachMetaLoad load{
      [&finder] { return finder.next(); }, {"META", {}, InputKind::kMetaKeepGoing}, {}, {}};
  // --model takes one meta: the walk is done first, to count them (holding one open).
  std::vector<MetaSource> found;
  std::vector<InputSpec> beside;
  if (request.model_path) {
    std::size_t metas = 0;
    while (std::optional<MetaSource> source = finder.next()) {
      if (!source->error && ++metas > 1) {
        source->file.reset();  // an error follows: no meta of this run is read
        source->directory.reset();
      }
      found.push_back(std::move(*source));
    }
    if (metas > 1) {
      result.diagnostics.push_back(make_io_error(
          {},
          "--model checks one meta against a model, and this run has " + plural(metas, "meta")));
      return result;
    }
    std::reverse(found.begin(), found.end());
    load.next = [&found]() -> std::optional<MetaSource> {
      if (found.empty()) return std::nullopt;
      MetaSource source = std::move(found.back());
      found.pop_back();
      return source;
    };
    beside.push_back({"--model", *request.model_path, InputKind::kModel});
    load.beside = beside;
  }
  load.options.command = "check";
  load.options.concurrency = request.concurrency;
  load.options.schedule = Schedule::kReadAheadBesideFirst;
  load.options.files = request.files;
  load.options.silenced = request.silenced;
  const std::vector<MetaOutcome> outcomes = load_each<MetaOutcome>(
      load, [&](EachMeta& each) { return check_each(request, files, each); });

  SeverityCounts counts;
  std::size_t metas = 0;
  for (const MetaOutcome& outcome : outcomes) {
    counts += outcome.counts;
    metas += outcome.meta ? 1 : 0;
    result.diagnostics.insert(result.diagnostics.end(), outcome.diagnostics.begin(),
                              outcome.diagnostics.end());
    result.output += outcome.json_lines;
    // An error of a meta rejects the run also when --json moved it to stdout.
    result.negative = result.negative || outcome.counts.errors > 0;
  }
  const bool summarized = outcomes.size() > 1;
  if (summarized) result.diagnostics.push_back(closing_note(request, outcomes, counts, metas));
  if (tally != nullptr) *tally = {counts, metas, summarized};
  return result;
}

}  // namespace hpfreeze
