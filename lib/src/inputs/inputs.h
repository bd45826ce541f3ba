#pragma once
// The one loader: every command's inputs are read, parsed and decoded by load_inputs, with
// the memory hand-off between them (one document parsed at a time, its text, parser and
// tape handed on to the next: ParseScratch), the overlaps on a second CPU, the duplicate-key
// shortcut (load_steps.h), which kind of file each input is (the --model dispatch,
// model_input.h; the wrong-kind and swapped-inputs lines) and one order of errors
// (docs/reliability.md, "The order of errors"). A command then runs its pass on the decoded
// values. Only commands/ includes this layer.

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "dumps/dump_kind.h"
#include "dumps/plan.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/inputs/load_stage.h"
#include "io/io.h"
#include "json/json.h"
#include "json/json_document.h"
#include "meta/meta.h"

namespace hpfreeze {

// What an input is read as, and decoded into (LoadedInput::value).
enum class InputKind {
  kPlanDump,       // a plan dump: PlanDump (decode_plan_dump)
  kModelDump,      // a model tree dump: ModelTree (decode_model_tree), freeze's --model
  kModel,          // --model of report and check: ModelTree from a model tree dump, a safetensors
                   // file or a sharded checkpoint's index (model_input.h)
  kMeta,           // a codegen_meta.json: FrozenMeta (decode_meta)
  kMetaKeepGoing,  // check's META: FrozenMeta as far as it decodes; its decode errors are
                   // findings (LoadedInput::findings), not load errors; no value when the
                   // document is no meta at all
  kBaseMeta,       // freeze's base meta: Json, the plan's own `meta` (checked first, at /meta of
                   // the plan), replaced by the file when `path` is given (decode_base_meta);
                   // no value when neither is there. Needs a kPlanDump before it.
};

struct InputSpec {
  InputSpec(std::string flag_, std::string path_, InputKind kind_,
            std::optional<std::string_view> text_ = std::nullopt)
      : flag(std::move(flag_)), path(std::move(path_)), kind(kind_), text(text_) {}

  // As the command line names it ("--plan", "META", "OLD"): in a path clash, and in a dump's
  // wrong-kind line when it is an option (a positional argument's line names the command).
  std::string flag;
  std::string path;  // "-" for stdin; empty: no file (a kBaseMeta without --base)
  InputKind kind = InputKind::kMeta;
  // The input's text when it is in memory already (freeze --check's own meta; it must
  // outlive the load): nothing is read, and `path` is its display name.
  std::optional<std::string_view> text;
  // The input opened already (a meta the walk found, io/meta_tree.h; it must outlive the
  // load): read from there, never by `path`, which names it.
  OpenedFile* opened = nullptr;
};

// Which form of a meta its reader takes (MetaDecodeOptions).
enum class MetaReading {
  kDecodedParams,    // the decoded params only (check, thaw, report): the tree holds none
  kValuesOnly,       // the document's values only (diff, freeze --check): no decoded params
  kValuesAndParams,  // both (diff --model: the walk compares values, the report counts params)
};

// How the inputs' reads are placed beside the rest, in load order.
enum class Schedule {
  // Each input is read, parsed, decoded and released down to its strings before the next
  // is parsed; the next one's read goes on the second CPU beside the current decode, into
  // the text the current parse handed back (freeze, report, diff, thaw, expand).
  kOneAfterAnother,
  // Every later input is read at once, into memory of its own, beside the first one's read,
  // parse and decode; the first input's keys are checked by its parse, so that a model's
  // name index is built by the pass, after the last parse (check: docs/decisions.md).
  kReadAheadBesideFirst,
};

// Work of a pass that overlaps the decode of its model (freeze): `beside` runs on the second
// CPU, when there is one, with the decoded plan while the model is decoded; `with_model` on
// the loading thread once the model is decoded, while `beside` may still run. Neither runs
// unless the plan (and for `with_model` the model) decoded. Before load_inputs returns,
// `beside` has finished.
struct BesideModelDecode {
  std::function<void(const PlanDump&)> beside;
  std::function<void(const PlanDump&, const ModelTree&)> with_model;
};

struct LoadOptions {
  // The reader a meta's wrong-kind line names ("thaw wants a codegen_meta.json"), and a
  // dump's when its flag is no option ("expand wants a plan dump").
  std::string_view command;
  Concurrency concurrency;
  MetaReading meta = MetaReading::kDecodedParams;
  Schedule schedule = Schedule::kOneAfterAnother;
  // Checked before anything is read: with `outputs`, that no output is an input it may not
  // replace (check_distinct_paths; `replaceable_by` names the one output that may: "-o");
  // without, that stdout is no input (check_stdout_apart). Off for a command that checks its
  // paths when it writes (thaw) or writes nothing (freeze --check).
  bool check_paths = true;
  std::span<const OutputFile> outputs;
  std::string replaceable_by;
  // A --model without parameters is an error naming who needs them ("a report").
  std::string_view parameters_needed_by;
  const BesideModelDecode* beside_model_decode = nullptr;
  FileSystem* files = nullptr;  // the real disk when null
  // kMetaKeepGoing: finding codes the decode leaves out (check --silence; MetaDecodeOptions).
  std::span<const std::string> silenced;
};

struct LoadedInput {
  std::string path;  // as the spec gave it
  LoadStage stage;   // what its read, parse and decode did (freeze's -v)
  // The document's strings, which `value` views (its tape is released once decoded); none
  // for a checkpoint file, an input not read, or one that failed.
  std::optional<JsonDocument> document;
  std::variant<std::monostate, PlanDump, ModelTree, FrozenMeta, Json> value;
  Diagnostics findings;  // kMetaKeepGoing: the decode's errors, for the pass to list

  [[nodiscard]] bool has_value() const { return value.index() != 0; }
  PlanDump& plan() { return std::get<PlanDump>(value); }
  ModelTree& model() { return std::get<ModelTree>(value); }
  FrozenMeta& meta() { return std::get<FrozenMeta>(value); }
  Json& base() { return std::get<Json>(value); }
  // Gives the decoded value back, keeping the strings (what a result still views).
  void release_value() { value = std::monostate{}; }
  // Gives the value and the strings back.
  void release() {
    release_value();
    document.reset();
  }
};

struct LoadedInputs {
  // In the one order (docs/reliability.md, "The order of errors"); empty when every input
  // loaded.
  Diagnostics errors;
  std::vector<LoadedInput> inputs;  // one per spec, in spec order, also after errors
  explicit operator bool() const { return errors.empty(); }
};

// Loads `specs` (command-line order; the load order puts a kModel first, as its decoded form
// is smaller than a meta's parse). Every input is loaded whatever another's errors. Safe to
// call from several threads at once with their own specs: a run of several independent
// metas (check PATH...) loads each with a call of its own, in turn or concurrently.
LoadedInputs load_inputs(std::span<const InputSpec> specs, const LoadOptions& options);

// What a file given where a meta goes is, when it is a model in a form --model takes
// (kSafetensors, kModel, kCheckpointIndex), else kUnknown: for report's "META is a model"
// line. Reads it, through `files` (the real disk when null).
DumpKind model_kind_at(const std::string& path, FileSystem* files = nullptr);

}  // namespace hpfreeze
