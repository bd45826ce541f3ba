#pragma once
// The codegen_meta.json model (docs/formats.md, "codegen_meta.json"): the mirror of plan.h
// for the file freeze writes. Every command that reads a meta (check, thaw, report, diff)
// goes through decode_meta, so one defect gets one pointer and one message everywhere.

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dumps/coverage.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"
#include "json/json_document.h"
#include "spec/placement.h"
#include "spec/spec_fields.h"

namespace hpfreeze {

struct MetaAxisPlacement {
  std::string_view axis;
  std::string_view text;  // as the meta spells it (maybe not canonical)
  Placement placement;
};

struct MetaParam {
  std::string_view name;  // key in the boundary's params
  std::string_view fqn;   // boundary + "." + name, as freeze joins them (in the meta's arena)
  // Meta order; a slice of the FrozenMeta's one axis array (no allocation per param).
  std::span<const MetaAxisPlacement> axes;
  bool complete = true;  // false when some axis did not decode (decode_meta_keep_going)
  [[nodiscard]] bool sharded() const;  // some Shard, StridedShard or Partial
};

// The fields of one param_plan entry or one injection, by kSpecFields index; nullptr
// when the key is absent. Values view into the decoded document.
using MetaFields = std::array<const Json*, kSpecFields.size()>;

struct MetaBoundary {
  std::string_view fqn;
  const JsonObject* entry = nullptr;  // the param_plan value itself, for document order
  std::vector<MetaParam> params;      // `params` decoded (empty when absent, null or {})
  MetaFields fields{};                // every param_plan-section field, params included
  // Keys no table row names (a newer upstream's?): kept for diff, refused by thaw.
  std::vector<const JsonMember*> unknown;
};

struct MetaInjection {
  std::string_view match;
  const Json* entry = nullptr;             // the injection itself, for a reader of its values
  std::size_t index = 0;                   // position in /injections
  MetaFields fields{};                     // injection-section fields
  std::vector<const JsonMember*> unknown;  // keys no table row names
};

// How a top-level member is there: absent, null, an object, or any other value.
enum class MetaMemberState { kAbsent, kNull, kObject, kOther };

// `covered`, upstream's record of what the meta covers. freeze reads a plan's meta, or a
// --base file, as the base of the meta it writes, and there `covered` must be an object
// (or absent): valid() says whether it is.
struct MetaCovered {
  MetaMemberState state = MetaMemberState::kAbsent;
  const JsonObject* object = nullptr;  // when it is an object
  std::string_view type;               // json_type_article of the value ("" when absent)
  [[nodiscard]] bool valid() const {
    return state == MetaMemberState::kAbsent || state == MetaMemberState::kObject;
  }
};

// One `<axis>_size` member of parallel_dims (a longer key than the suffix alone).
struct MetaAxisSize {
  std::string_view key;                    // "<axis>_size"
  std::string_view axis;                   // the key without "_size"
  std::optional<std::uint64_t> size;       // an integer from 1 to 2^63-1
  std::optional<std::uint64_t> above_max;  // an integer from 2^63 up, which no axis can be
};

// parallel_dims, the axis sizes of the mesh the meta was written for.
struct MetaParallelDims {
  MetaMemberState state = MetaMemberState::kAbsent;
  std::vector<MetaAxisSize> axes;  // the <axis>_size members in document order (an object)
};

// One member of `outputs`: what the meta records for one file of its generated bundle.
struct MetaOutput {
  std::string_view key;            // a role (modeling, diff, init) or a file name
  const Json* recorded = nullptr;  // the value as the document holds it
  // The recorded hash: set when `recorded` is an object whose "sha256" is 64 lowercase hex
  // digits; otherwise check --bundle reports the entry.
  std::optional<std::string_view> sha256;
  std::optional<std::uint64_t> lines;  // "lines" when it is an integer of 0 or more
};

// What check --bundle reads: the members that name the files of the bundle beside the meta
// and record their hashes. Identity members (they stay in FrozenMeta::identity): judged by
// check, never when decoded.
struct MetaBundle {
  const Json* model_name = nullptr;  // as the document holds it; nullptr when absent
  MetaMemberState outputs_state = MetaMemberState::kAbsent;
  std::vector<MetaOutput> outputs;  // document order, when `outputs` is an object
  // The entries of remote_siblings that are strings, with their index (the others are the
  // schema rule's errors).
  std::vector<std::pair<std::size_t, std::string_view>> remote_siblings;

  // The name the modeling file is made from (bundle/output_names.h): model_name, "" when it
  // is absent or null (upstream's `model_name or "model"` then applies); nullopt when it is
  // neither a string nor null.
  [[nodiscard]] std::optional<std::string_view> modeling_name() const;
  // The output recorded under `key`; nullptr when there is none.
  [[nodiscard]] const MetaOutput* find_output(std::string_view key) const;
};

// One entry of skipped_overrides: a plan_overrides entry generation left out (upstream
// records {"match": [patterns], "reason": "no_match"}).
struct MetaSkippedOverride {
  std::size_t index = 0;         // position in /skipped_overrides
  const Json* entry = nullptr;   // as the document holds it
  const Json* match = nullptr;   // its "match" when it is an object holding one
  const Json* reason = nullptr;  // its "reason" likewise
};

struct MetaSkippedOverrides {
  const Json* value = nullptr;               // as the document holds it; nullptr when absent
  std::vector<MetaSkippedOverride> entries;  // when it is an array, in its order
};

// The decoded top-level members as the document holds them (null included), for a
// reader that copies one whole (thaw's plan head) or needs to tell absent from empty;
// nullptr when absent.
struct MetaMembers {
  const Json* param_plan = nullptr;
  const Json* injections = nullptr;
  const Json* frozen_sharded_params = nullptr;
  const Json* mesh_dim_names = nullptr;
  const Json* tied_pairs = nullptr;
  const Json* special_handlers = nullptr;
};

// A decoded meta. Strings and values view into the JsonDocument it was decoded from,
// which must outlive it.
struct FrozenMeta {
  std::string file;
  StringArena strings;                                  // the joined parameter FQNs
  std::vector<MetaBoundary> boundaries;                 // param_plan order
  std::vector<MetaInjection> injections;                // /injections order
  std::vector<std::string_view> frozen_sharded_params;  // as listed; absent reads as []
  std::vector<std::pair<std::string_view, std::string_view>> boundary_classes;
  std::optional<std::vector<std::string_view>> mesh_dim_names;  // nullopt: null or absent
  std::vector<std::vector<std::string_view>> tied_pairs;
  const Json* special_handlers = nullptr;   // nullptr when absent or null
  std::vector<const JsonMember*> identity;  // every other top-level member, in order
  // Identity members, decoded (they stay in `identity` as well).
  MetaCovered covered;
  MetaParallelDims parallel_dims;
  MetaBundle bundle;  // model_name, outputs, remote_siblings (identity members, decoded)
  MetaSkippedOverrides skipped_overrides;
  MetaMembers members;

  // nullptr when param_plan has no such boundary.
  [[nodiscard]] const MetaBoundary* find_boundary(std::string_view fqn) const;
  // The identity member `key` as the document holds it; nullptr when absent.
  [[nodiscard]] const Json* identity_member(std::string_view key) const;
  // Every top-level member as the document holds it, in document order: for a reader that
  // compares the values themselves rather than what they mean (diff, whose --ignore
  // pointers name any value). Every other reader goes by the decoded fields above.
  [[nodiscard]] const JsonObject& top_level() const;
  // What freeze recomputes as frozen_sharded_params: sharded param FQNs, de-duplicated,
  // sorted by code point.
  [[nodiscard]] std::vector<std::string_view> sharded_params() const;

 private:
  friend class MetaDecoder;
  // The document as a Json tree (an object: no FrozenMeta is made of anything else),
  // without the params objects under MetaDecodeOptions::params_in_tree = false.
  Json root_;
  std::unordered_map<std::string_view, std::size_t> boundary_index_;
  // Every param's axes, in document order; reserved once, so the params' spans stay valid
  // (moves included).
  std::vector<MetaAxisPlacement> axes_;
};

struct MetaDecodeOptions {
  // false: every params leaf is checked as usual, but MetaBoundary::params stays empty (and
  // so does sharded_params()): for a reader that compares the document's values instead
  // (diff), which then holds no second copy of every param.
  bool keep_params = true;
  // false: each param_plan entry's `params` is decoded straight from the document, one
  // entry at a time, and FrozenMeta::top_level() holds an empty object in place of a params
  // object (null and other values stay as they are; MetaBoundary::fields points at what it
  // holds): for readers of the decoded params only (check, thaw, report), so that the tree
  // never holds every param a second time. Errors are the same either way.
  bool params_in_tree = true;
  // Finding codes whose errors are left out, as if their rules had not run (check
  // --silence): not kept, and not counted in the line about those past the cap.
  std::span<const std::string> silenced;

  // The options of a reader of the decoded params only: params_in_tree off.
  static MetaDecodeOptions decoded_params_only() {
    MetaDecodeOptions options;
    options.params_in_tree = false;
    return options;
  }
};

// Decodes `document` as a codegen_meta.json. `command` names the reader in the message
// for the wrong kind of file ("this looks like a plan dump (hpfreeze.plan/v1); thaw wants
// a codegen_meta.json").
// Errors (kRejected, at most kMaxReportedErrors and a count) carry the JSON Pointer of
// the offending value. Identity fields are kept as they are: freeze copies them from a
// base file without judging them, so only `check` does.
Expected<FrozenMeta> decode_meta(const JsonDocument& document, std::string_view command,
                                 MetaDecodeOptions options = {});

// The keep-going form, for `check`, which lists every finding in one run: the errors are
// appended to `errors` and the meta holds every part that did decode. nullopt when the
// document is no meta at all (not an object, or another kind of file).
std::optional<FrozenMeta> decode_meta_keep_going(const JsonDocument& document,
                                                 std::string_view command, Diagnostics& errors,
                                                 MetaDecodeOptions options = {});

// A base meta (freeze's --base file or the plan dump's `meta`), whose members freeze
// copies into the meta it writes without judging them: an object whose `covered`, if
// present, is an object. `pointer` locates it inside `file` ("" for a whole file, "/meta"
// in a plan).
Expected<Json> decode_base_meta(const Json& base, const std::string& file,
                                const std::string& pointer);
// The same for a whole document (--base), as a Json tree; a document of another kind is
// refused first ("this looks like a plan dump (hpfreeze.plan/v1); --base wants a
// codegen_meta.json", base_meta_lookalike_kind in dump_kind.h).
Expected<Json> decode_base_meta(const JsonDocument& base);

// The coverage of the meta's param_plan (dumps/coverage.h): every planned FQN a key.
CoverageIndex coverage_of(const FrozenMeta& meta);

}  // namespace hpfreeze
