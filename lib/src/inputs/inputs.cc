// load_inputs (inputs.h): the one load sequence and the one order of errors.
#include "inputs/inputs.h"

#include <algorithm>
#include <utility>

#include "base/background_task.h"
#include "base/stage_clock.h"
#include "dumps/dump_kind.h"
#include "inputs/load_steps.h"
#include "inputs/model_input.h"

namespace hpfreeze {
namespace {

// One input while it loads.
struct LoadingInput {
  const InputSpec* spec = nullptr;
  LoadedInput* in = nullptr;
  std::optional<Expected<InputFile>> text;  // read, not parsed yet
  bool json = false;                        // read as JSON text (not a checkpoint file, a file)
  bool keys_left_to_decoder = false;        // parsed with decoder_checks_keys()
  bool decode_failed = false;
  Diagnostics load_errors;    // read and parse; every I/O error (a checkpoint's reads too)
  Diagnostics decode_errors;  // the decoder's first errors

  [[nodiscard]] InputKind kind() const { return spec->kind; }
  [[nodiscard]] bool loaded() const { return load_errors.empty(); }
};

MetaDecodeOptions meta_options(const LoadOptions& load) {
  MetaDecodeOptions options;
  if (load.meta == MetaReading::kDecodedParams) {
    options = MetaDecodeOptions::decoded_params_only();
  } else {
    options.keep_params = load.meta == MetaReading::kValuesAndParams;
  }
  options.silenced = load.silenced;
  return options;
}

// An input that failed to decode. An I/O error is a read error wherever it arises (a shard
// an index names).
void fail(LoadingInput& slot, Diagnostics errors) {
  slot.decode_failed = true;
  Diagnostics& to =
      errors.front().error_class == ErrorClass::kIo ? slot.load_errors : slot.decode_errors;
  to = std::move(errors);
}

class Loader {
 public:
  Loader(std::span<const InputSpec> specs, const LoadOptions& options, LoadedInputs& out)
      : options_(options), fs_(file_system_or_real(options.files)) {
    slots_.resize(specs.size());
    for (std::size_t i = 0; i < specs.size(); ++i) {
      LoadingInput& slot = slots_[i];
      slot.spec = &specs[i];
      slot.in = &out.inputs[i];
      slot.in->path = specs[i].path;
      slot.json = !specs[i].path.empty() || specs[i].text;
      // Only a base meta may be absent; any other input given as "" names no file.
      if (!slot.json && slot.kind() != InputKind::kBaseMeta && specs[i].opened == nullptr) {
        slot.load_errors.push_back(
            make_io_error({}, specs[i].flag + ": an empty path names no file"));
      }
    }
    // A model first: its decoded form is the smaller, so the other parses sit on less.
    for (LoadingInput& slot : slots_) {
      if (slot.kind() == InputKind::kModel) order_.push_back(&slot);
    }
    for (LoadingInput& slot : slots_) {
      if (slot.kind() != InputKind::kModel) order_.push_back(&slot);
    }
  }

  Diagnostics path_errors() const;
  void load();
  Diagnostics errors() const;

 private:
  void read(LoadingInput& slot, std::string buffer);
  void parse(LoadingInput& slot, TextAfterParse text = TextAfterParse::kToScratch);
  void decode(LoadingInput& slot);
  void decode_model(LoadingInput& slot);
  void decode_base(LoadingInput& slot);
  void load_one_after_another();
  void load_read_ahead();
  void prepare_scratch();
  [[nodiscard]] LoadingInput* slot_of(InputKind kind);
  [[nodiscard]] Diagnostics errors_alone(const LoadingInput& slot) const;
  [[nodiscard]] Diagnostics decode_errors_of(const LoadingInput& slot) const;
  [[nodiscard]] std::optional<Diagnostic> kind_error(const LoadingInput& slot) const;
  [[nodiscard]] std::optional<Diagnostic> unreported_repeat(const LoadingInput& slot) const;
  [[nodiscard]] bool is_last_parse(const LoadingInput& slot) const {
    return std::none_of(std::find(order_.begin(), order_.end(), &slot) + 1, order_.end(),
                        [](const LoadingInput* s) { return s->json; });
  }

  const LoadOptions& options_;
  FileSystem& fs_;
  std::vector<LoadingInput> slots_;   // spec order
  std::vector<LoadingInput*> order_;  // load order
  ParseScratch scratch_;
};

Diagnostics Loader::path_errors() const {
  std::vector<InputPath> inputs;
  std::vector<OpenedInputPath> opened;
  for (const LoadingInput& slot : slots_) {
    if (slot.spec->opened != nullptr) {
      opened.push_back({slot.spec->flag, slot.spec->path, slot.spec->opened->identity()});
    } else if (slot.json && !slot.spec->text) {
      inputs.push_back({slot.spec->flag, slot.spec->path, options_.replaceable_by});
    }
  }
  if (options_.outputs.empty()) return check_stdout_apart(fs_, inputs, opened);
  return check_distinct_paths(fs_, options_.outputs, inputs, opened);
}

void Loader::read(LoadingInput& slot, std::string buffer) {
  if (slot.spec->text) {
    slot.in->stage.name = slot.spec->path;
    slot.in->stage.bytes = slot.spec->text->size();
    slot.in->stage.read = true;
    slot.text = InputFile{slot.spec->path, slot.spec->path, std::string(*slot.spec->text)};
    return;
  }
  slot.text =
      read_stage(fs_, slot.spec->path, slot.in->stage, std::move(buffer), slot.spec->opened);
}

void Loader::parse(LoadingInput& slot, TextAfterParse text) {
  // The dumps' decoders check their keys as they walk (load_steps.h); check's first input
  // (its model) is parsed with the check, so that its name index is built after the last
  // parse (Schedule::kReadAheadBesideFirst).
  slot.keys_left_to_decoder =
      (slot.kind() == InputKind::kPlanDump || slot.kind() == InputKind::kModelDump ||
       slot.kind() == InputKind::kModel) &&
      !(options_.schedule == Schedule::kReadAheadBesideFirst && &slot == order_.front());
  ParseOptions parse_options = slot.keys_left_to_decoder ? decoder_checks_keys() : ParseOptions{};
  if (slot.kind() == InputKind::kModelDump) parse_options.not_json = not_json_model_dump_kind;
  Expected<JsonDocument> document = parse_stage(std::move(*slot.text), slot.in->stage, scratch_,
                                                is_last_parse(slot), parse_options, text);
  slot.text.reset();
  if (!document) {
    slot.load_errors = std::move(document.errors());
    return;
  }
  slot.in->document.emplace(std::move(*document));
}

// Decodes a loaded input and releases its tree down to the strings the value views.
void Loader::decode(LoadingInput& slot) {
  LoadedInput& in = *slot.in;
  if (slot.kind() == InputKind::kBaseMeta) return decode_base(slot);
  if (!in.document) {
    if (slot.kind() == InputKind::kModel) decode_model(slot);  // a checkpoint file
    return;
  }
  JsonDocument& document = *in.document;
  const StageClock::time_point start = StageClock::now();
  switch (slot.kind()) {
    case InputKind::kPlanDump: {
      Expected<PlanDump> plan = decode_plan_dump(document, options_.concurrency);
      in.stage.decode_ms = ms_since(start);
      if (!plan) return fail(slot, std::move(plan.errors()));
      in.value = std::move(*plan);
      break;
    }
    case InputKind::kModelDump:
    case InputKind::kModel:
      return decode_model(slot);
    case InputKind::kMeta: {
      Expected<FrozenMeta> meta = decode_meta(document, options_.command, meta_options(options_));
      in.stage.decode_ms = ms_since(start);
      if (!meta) return fail(slot, std::move(meta.errors()));
      in.value = std::move(*meta);
      break;
    }
    case InputKind::kMetaKeepGoing: {
      std::optional<FrozenMeta> meta =
          decode_meta_keep_going(document, options_.command, in.findings, meta_options(options_));
      in.stage.decode_ms = ms_since(start);
      if (meta) in.value = std::move(*meta);
      break;  // what did not decode is in the findings, and the tree is done with either way
    }
    case InputKind::kBaseMeta:
      break;
  }
  document.release_tree(scratch_);
}

void Loader::decode_model(LoadingInput& slot) {
  LoadedInput& in = *slot.in;
  if (in.document) {
    JsonDocument& document = *in.document;
    LoadingInput* plan = slot_of(InputKind::kPlanDump);
    const BesideModelDecode* pass = options_.beside_model_decode;
    const PlanDump* decoded_plan =
        plan != nullptr && plan->in->has_value() ? &plan->in->plan() : nullptr;
    const auto run_beside = [pass, decoded_plan] { pass->beside(*decoded_plan); };
    std::optional<BackgroundTask<decltype(run_beside)>> beside;
    if (pass != nullptr && pass->beside && decoded_plan != nullptr) {
      beside.emplace(options_.concurrency, run_beside);
    }
    const StageClock::time_point start = StageClock::now();
    Expected<ModelTree> model = slot.kind() == InputKind::kModel
                                    ? decode_model_document(fs_, document, slot.spec->path)
                                    : decode_model_tree(document);
    in.stage.decode_ms = ms_since(start);
    if (model) {
      document.release_tree(scratch_);  // the decoded tree views only the document's strings
      in.value = std::move(*model);
      if (pass != nullptr && pass->with_model && decoded_plan != nullptr) {
        pass->with_model(*decoded_plan, in.model());
      }
    }
    if (beside) beside->wait();
    if (!model) return fail(slot, std::move(model.errors()));
  }
  if (in.has_value() && !options_.parameters_needed_by.empty() && !in.model().has_parameters) {
    fail(slot,
         {make_error(in.model().file, "",
                     "the model tree has no 'parameters'; " +
                         std::string(options_.parameters_needed_by) + " needs their shapes")});
    in.release_value();
  }
}

void Loader::decode_base(LoadingInput& slot) {
  LoadedInput& in = *slot.in;
  // The plan's own meta is checked even when --base replaces it (docs/decisions.md).
  if (LoadingInput* plan = slot_of(InputKind::kPlanDump);
      plan != nullptr && plan->in->has_value()) {
    const PlanDump& dump = plan->in->plan();
    if (dump.meta) {
      Expected<Json> checked = decode_base_meta(*dump.meta, dump.file, "/meta");
      if (!checked) return fail(slot, std::move(checked.errors()));
      in.value = std::move(*checked);
    }
  }
  if (!in.document) return;
  const StageClock::time_point start = StageClock::now();
  Expected<Json> checked = decode_base_meta(*in.document);
  in.stage.decode_ms = ms_since(start);
  if (!checked) return fail(slot, std::move(checked.errors()));
  in.value = std::move(*checked);
}

LoadingInput* Loader::slot_of(InputKind kind) {
  for (LoadingInput& slot : slots_) {
    if (slot.kind() == kind) return &slot;
  }
  return nullptr;
}

void Loader::prepare_scratch() {
  // The first parse allocates for the largest input to come (a base meta, parsed last, is
  // smaller than the dumps), so that a larger second one needs no fresh memory.
  std::size_t largest = 0;
  std::size_t parses = 0;
  for (const LoadingInput& slot : slots_) {
    if (!slot.json) continue;
    ++parses;
    if (slot.spec->opened != nullptr) {
      largest = std::max(largest, static_cast<std::size_t>(slot.spec->opened->size()));
    } else if (slot.kind() != InputKind::kBaseMeta && !slot.spec->text) {
      largest = std::max(largest, fs_.regular_file_size(slot.spec->path));
    }
  }
  scratch_.expect_input(largest);
  // One parse has nothing to hand on: its read and parse take fresh memory, and its text
  // goes back as soon as it is parsed.
  if (parses <= 1) scratch_.close();
}

// A checkpoint file given as --model is read, header only, before any JSON.
void read_checkpoint(FileSystem& fs, LoadingInput& slot) {
  std::optional<Expected<ModelTree>> checkpoint = read_checkpoint_file(fs, slot.spec->path);
  if (!checkpoint) return;
  slot.json = false;
  slot.in->stage.name = slot.spec->path;
  if (*checkpoint) {
    slot.in->value = std::move(**checkpoint);
    return;
  }
  fail(slot, std::move(checkpoint->errors()));
}

void Loader::load_one_after_another() {
  for (LoadingInput* slot : order_) {
    if (slot->kind() == InputKind::kModel && !slot->spec->text) read_checkpoint(fs_, *slot);
  }
  prepare_scratch();
  for (std::size_t k = 0; k < order_.size(); ++k) {
    LoadingInput& slot = *order_[k];
    if (slot.json) {
      if (!slot.text) read(slot, scratch_.take_text());
      parse(slot);
    }
    // The next input's read beside this decode, into the text this parse handed back;
    // after it when the decode has second-CPU work of its own (freeze's, beside the model).
    auto next = std::find_if(order_.begin() + static_cast<std::ptrdiff_t>(k) + 1, order_.end(),
                             [](const LoadingInput* s) { return s->json; });
    const bool busy = slot.kind() == InputKind::kModelDump && options_.beside_model_decode;
    LoadingInput* ahead = next != order_.end() && !busy && slot.loaded() ? *next : nullptr;
    auto read_ahead = [this, ahead,
                       buffer = ahead ? scratch_.take_text() : std::string()]() mutable {
      read(*ahead, std::move(buffer));
    };
    std::optional<BackgroundTask<decltype(read_ahead)>> read_next;
    if (ahead != nullptr) read_next.emplace(options_.concurrency, std::move(read_ahead));
    if (slot.loaded()) decode(slot);
    if (read_next) read_next->wait();
  }
}

void Loader::load_read_ahead() {
  LoadingInput& first = *order_.front();
  const auto read_rest = [this] {
    for (std::size_t k = 1; k < order_.size(); ++k) {
      if (order_[k]->json) read(*order_[k], {});
    }
  };
  std::optional<BackgroundTask<decltype(read_rest)>> rest;
  if (order_.size() > 1) rest.emplace(options_.concurrency, read_rest);
  if (first.kind() == InputKind::kModel && !first.spec->text) read_checkpoint(fs_, first);
  if (first.json) read(first, {});
  prepare_scratch();
  if (first.json) parse(first, TextAfterParse::kToSystem);  // the rest was read already
  if (first.loaded()) decode(first);
  if (rest) rest->wait();
  for (std::size_t k = 1; k < order_.size(); ++k) {
    LoadingInput& slot = *order_[k];
    if (slot.json) parse(slot);
    if (slot.loaded()) decode(slot);
  }
}

void Loader::load() {
  if (order_.empty()) return;
  if (options_.schedule == Schedule::kReadAheadBesideFirst) {
    load_read_ahead();
  } else {
    load_one_after_another();
  }
}

// A repeated key of a document whose parse left it to a decoder that did not report it.
std::optional<Diagnostic> Loader::unreported_repeat(const LoadingInput& slot) const {
  if (!slot.keys_left_to_decoder || !slot.in->document) return std::nullopt;
  return repeated_key(*slot.in->document);
}

// The wrong-kind or swapped-inputs line of a dump that did not decode.
std::optional<Diagnostic> Loader::kind_error(const LoadingInput& slot) const {
  const bool plan = slot.kind() == InputKind::kPlanDump;
  if ((!plan && slot.kind() != InputKind::kModelDump) || !slot.in->document) return std::nullopt;
  const JsonDocument& rejected = *slot.in->document;
  const DumpKind kind = guess_dump_kind(rejected);
  const DumpKind wanted = plan ? DumpKind::kPlan : DumpKind::kModel;
  // freeze's other dump, whose tree is released when it decoded: then it is the kind its
  // flag asks for, which is not `wanted`.
  const LoadingInput* other = nullptr;
  for (const LoadingInput& s : slots_) {
    if (s.kind() == (plan ? InputKind::kModelDump : InputKind::kPlanDump)) other = &s;
  }
  if (kind != DumpKind::kMeta && kind != DumpKind::kUnknown && kind != wanted && other != nullptr &&
      other->in->document && !other->in->document->tree_released() &&
      guess_dump_kind(*other->in->document) == wanted) {
    const LoadingInput& plan_slot = plan ? slot : *other;
    const LoadingInput& model_slot = plan ? *other : slot;
    return make_error(rejected.name(), {},
                      plan_slot.spec->flag + " and " + model_slot.spec->flag + " look swapped: " +
                          plan_slot.spec->flag + " " + plan_slot.in->document->name() +
                          " is a model tree dump and " + model_slot.spec->flag + " " +
                          model_slot.in->document->name() + " is a plan dump");
  }
  const std::string_view who =
      slot.spec->flag.starts_with("--") ? std::string_view(slot.spec->flag) : options_.command;
  return wrong_kind_error(rejected, kind, wanted, who);
}

// A failed decode as it is reported: the wrong-kind line, else the decoder's errors.
Diagnostics Loader::decode_errors_of(const LoadingInput& slot) const {
  if (std::optional<Diagnostic> wrong = kind_error(slot)) return {std::move(*wrong)};
  return slot.decode_errors;
}

// An input's errors as if it were the only one.
Diagnostics Loader::errors_alone(const LoadingInput& slot) const {
  if (!slot.load_errors.empty()) return slot.load_errors;
  if (!slot.decode_failed) return {};
  if (std::optional<Diagnostic> repeat = unreported_repeat(slot)) return {std::move(*repeat)};
  return decode_errors_of(slot);
}

// The one order (docs/reliability.md, "The order of errors").
Diagnostics Loader::errors() const {
  Diagnostics errors;
  const auto add = [&errors](const Diagnostics& more) {
    errors.insert(errors.end(), more.begin(), more.end());
  };
  // Inputs of one kind (diff's OLD and NEW) are peers: each as if it were alone.
  const bool peers = slots_.size() > 1 && std::all_of(slots_.begin(), slots_.end(), [&](auto& s) {
                       return s.kind() == slots_.front().kind();
                     });
  if (peers) {
    for (const LoadingInput& slot : slots_) add(errors_alone(slot));
    return errors;
  }
  // Every read and parse error, in command-line order, and beside them the repeated key of
  // a parsed input whose decoder left it unreported, as its checked parse would have.
  if (std::any_of(slots_.begin(), slots_.end(),
                  [](const LoadingInput& s) { return !s.loaded(); })) {
    for (const LoadingInput& slot : slots_) {
      if (!slot.loaded()) {
        add(slot.load_errors);
      } else if (std::optional<Diagnostic> repeat = unreported_repeat(slot)) {
        errors.push_back(std::move(*repeat));
      }
    }
    // A run whose decode errors are findings (check) lists only the I/O errors when there
    // are any: nothing was checked.
    const bool findings = std::any_of(slots_.begin(), slots_.end(), [](const LoadingInput& s) {
      return s.kind() == InputKind::kMetaKeepGoing;
    });
    const auto io = [](const Diagnostic& d) { return d.error_class == ErrorClass::kIo; };
    if (findings && std::any_of(errors.begin(), errors.end(), io)) {
      errors.erase(std::remove_if(errors.begin(), errors.end(), std::not_fn(io)), errors.end());
    }
    return errors;
  }
  // Then the first repeated key a decoder left unreported, in command-line order.
  for (const LoadingInput& slot : slots_) {
    if (!slot.decode_failed) continue;
    if (std::optional<Diagnostic> repeat = unreported_repeat(slot)) return {std::move(*repeat)};
  }
  // Then the first input, in load order, that did not decode: its wrong-kind line, else
  // its errors.
  for (const LoadingInput* slot : order_) {
    if (slot->decode_failed) return decode_errors_of(*slot);
  }
  return errors;
}

}  // namespace

LoadedInputs load_inputs(std::span<const InputSpec> specs, const LoadOptions& options) {
  LoadedInputs out;
  out.inputs.resize(specs.size());
  Loader loader(specs, options, out);
  if (options.check_paths) {
    out.errors = loader.path_errors();
    if (!out.errors.empty()) return out;
  }
  loader.load();
  out.errors = loader.errors();
  return out;
}

DumpKind model_kind_at(const std::string& path, FileSystem* files) {
  return model_kind_at(file_system_or_real(files), path);
}

}  // namespace hpfreeze
