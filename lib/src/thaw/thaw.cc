#include "thaw/thaw.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "base/background_task.h"
#include "hpfreeze/base/command_result.h"
#include "json/encode.h"
#include "meta/meta.h"
#include "spec/spec_fields.h"
#include "thaw/thaw_draft.h"

namespace hpfreeze {
namespace {

bool is_tag_key(std::string_view key) {
  return key == "$placement" || key == "$target" || key == "$callable";
}

class Thawer {
 public:
  explicit Thawer(const std::string& file) : file_(file) {}

  void error(const std::string& pointer, std::string message) {
    errors_.add(make_error(file_, pointer, std::move(message)));
  }
  void warning(const std::string& pointer, std::string message) {
    warnings_.push_back(make_warning(file_, pointer, std::move(message)));
  }
  [[nodiscard]] bool failed() const { return !errors_.empty(); }
  Diagnostics take_errors() { return errors_.take(file_); }

  // Keys no field-table row names: other readers keep them, no plan dump can hold them.
  void unknown_fields(const std::vector<const JsonMember*>& keys, const std::string& pointer,
                      std::string_view where) {
    for (const JsonMember* m : keys) {
      error(pointer_join(pointer, m->key), "unknown " + std::string(where) + " field " +
                                               quote_for_diagnostic(m->key) +
                                               " (no module-spec attribute to thaw it to)");
    }
  }
  Diagnostics take_warnings() { return std::move(warnings_); }

  // Plain fields must not hold objects a plan dump would read as typed values.
  void check_plain(const Json& v, const std::string& pointer) {
    if (v.is_object()) {
      for (const JsonMember& m : v.as_object()) {
        if (is_tag_key(m.key)) {
          error(pointer, "key " + quote_for_diagnostic(m.key) +
                             " cannot be expressed in a plan dump (it would read as a typed "
                             "value)");
          return;
        }
      }
      for (const JsonMember& m : v.as_object()) check_plain(m.value, pointer_join(pointer, m.key));
    } else if (v.is_array()) {
      const JsonArray& a = v.as_array();
      for (std::size_t i = 0; i < a.size(); ++i) {
        check_plain(a[i], pointer + "/" + std::to_string(i));
      }
    }
  }

  // The inverse of one field's freeze (docs/formats.md, the field table); decode_meta has
  // already checked the types.
  Json field(FieldKind kind, const Json& v, const std::string& pointer) {
    switch (kind) {
      case FieldKind::kPlacementMap:
        return v;  // only a null params comes here: an object is written from the decoded params
      case FieldKind::kNamedPlacements:
      case FieldKind::kValueToDict:
        return thaw_value(v);
      case FieldKind::kNameList:
      case FieldKind::kAttrList:
      case FieldKind::kDictCopy:
      case FieldKind::kScalar:
      case FieldKind::kPlain:
      case FieldKind::kIntTruthy:
        check_plain(v, pointer);
        return v;
    }
    return v;
  }

 private:
  const std::string& file_;
  ErrorList errors_;
  Diagnostics warnings_;
};

// The warning when the meta's frozen_sharded_params is not what freeze will recompute.
std::optional<std::string> frozen_sharded_params_mismatch(const FrozenMeta& meta) {
  if (meta.members.frozen_sharded_params == nullptr) return std::nullopt;
  const std::vector<std::string_view> computed = meta.sharded_params();
  const std::vector<std::string_view>& names = meta.frozen_sharded_params;
  if (names == computed) return std::nullopt;
  std::vector<std::string_view> listed_set = names;
  std::sort(listed_set.begin(), listed_set.end());
  listed_set.erase(std::unique(listed_set.begin(), listed_set.end()), listed_set.end());
  std::vector<std::string_view> missing;
  std::vector<std::string_view> extra;
  std::set_difference(computed.begin(), computed.end(), listed_set.begin(), listed_set.end(),
                      std::back_inserter(missing));
  std::set_difference(listed_set.begin(), listed_set.end(), computed.begin(), computed.end(),
                      std::back_inserter(extra));
  const std::string detail =
      missing.empty() && extra.empty()
          ? "order or duplicates differ"
          : std::to_string(missing.size()) + " missing, " + std::to_string(extra.size()) + " extra";
  return "does not match the parameters sharded in param_plan (" + detail +
         "); freezing the thawed plan writes the recomputed list";
}

Json model_dump(Thawer& t, const FrozenMeta& meta, const std::vector<ModuleDraft>& drafts) {
  JsonObject modules;
  for (const auto& [fqn, cls] : meta.boundary_classes) modules.push_back({fqn, Json(cls)});
  // freeze needs a class for every boundary; one without gets the empty name, which no
  // Python class can have, rather than an invented one.
  std::size_t missing = 0;
  std::string_view first_missing;
  std::unordered_set<std::string_view> known;
  for (const JsonMember& m : modules) known.insert(m.key);
  for (const ModuleDraft& d : drafts) {
    if (known.count(d.fqn) != 0) continue;
    if (missing++ == 0) first_missing = d.fqn;
    modules.push_back({d.fqn, Json("")});
  }
  if (missing > 0) {
    t.warning("/boundary_classes", std::to_string(missing) + " boundar" +
                                       (missing == 1 ? "y has" : "ies have") +
                                       " no class (first: " + quote_for_diagnostic(first_missing) +
                                       "); the model tree gives " + (missing == 1 ? "it" : "them") +
                                       " the class '' so that freeze accepts the plan");
  }
  return Json(JsonObject{{"format", "hpfreeze.model/v1"}, {"modules", Json(std::move(modules))}});
}

// Below this many names (listed or planned), the check of frozen_sharded_params runs
// where it is needed rather than on a second thread beside the drafting.
constexpr std::size_t kCheckBesideFrom = 10000;

// The plan dump (tree-free where params are concerned), the model tree and the warnings.
struct Thawed {
  ThawDraft draft;
  std::optional<Json> model;
  Diagnostics warnings;
};

Expected<Thawed> thaw_to_draft(const FrozenMeta& meta, const ThawOptions& options);

}  // namespace

Json thaw_value(const Json& value) {
  if (value.is_string()) {
    // Only canonical spellings become placements: freeze writes a placement back in
    // canonical form, so any other spelling must stay the string it was.
    Expected<Placement> parsed = parse_placement(value.as_string());
    if (parsed && to_canonical(*parsed) == value.as_string()) return placement_to_dump(*parsed);
    return value;
  }
  if (value.is_array()) {
    JsonArray out;
    out.reserve(value.as_array().size());
    for (const Json& item : value.as_array()) out.push_back(thaw_value(item));
    return Json(std::move(out));
  }
  if (value.is_object()) {
    const JsonObject& object = value.as_object();
    const bool target = std::any_of(object.begin(), object.end(), [](const JsonMember& m) {
      return m.key == "_target_" || is_tag_key(m.key);
    });
    if (target) return Json(JsonObject{{"$target", value}});
    JsonObject out;
    out.reserve(object.size());
    for (const JsonMember& m : object) out.push_back({m.key, thaw_value(m.value)});
    return Json(std::move(out));
  }
  return value;
}

namespace {

Expected<Thawed> thaw_to_draft(const FrozenMeta& meta, const ThawOptions& options) {
  // The check sorts every sharded name (and the listed ones): on a large meta it runs
  // beside the drafting, which does not need it.
  std::optional<std::string> mismatch;
  auto check_sharded = [&mismatch, &meta] { mismatch = frozen_sharded_params_mismatch(meta); };
  std::optional<BackgroundTask<decltype(check_sharded)>> beside;
  std::size_t names = meta.frozen_sharded_params.size();
  for (const MetaBoundary& b : meta.boundaries) names += b.params.size();
  if (names >= kCheckBesideFrom) beside.emplace(options.concurrency, check_sharded);

  Thawer t(meta.file);
  std::vector<ModuleDraft> drafts;
  std::unordered_map<std::string_view, std::size_t> index;
  drafts.reserve(meta.boundaries.size());
  for (const MetaBoundary& b : meta.boundaries) {
    const std::string pointer = pointer_join("/param_plan", b.fqn);
    index.emplace(b.fqn, drafts.size());
    ModuleDraft& draft = drafts.emplace_back();
    draft.fqn = b.fqn;
    t.unknown_fields(b.unknown, pointer, "param_plan");
    for (std::size_t i = 0; i < kSpecFields.size(); ++i) {
      if (b.fields[i] == nullptr) continue;
      if (i == kParamsField && !b.fields[i]->is_null()) {
        draft.params = &b;  // from the decoded params, not the tree
      } else {
        draft.fields[i] = t.field(kSpecFields[i].kind, *b.fields[i],
                                  pointer_join(pointer, kSpecFields[i].meta_key));
      }
    }
  }

  // Freeze appends injections in plan order, so the modules that carry one must appear in
  // the order of the meta's injections.
  std::vector<std::size_t> injection_order;
  for (const MetaInjection& injection : meta.injections) {
    const std::string pointer = "/injections/" + std::to_string(injection.index);
    auto [it, created] = index.emplace(injection.match, drafts.size());
    if (created) {
      drafts.emplace_back().fqn = injection.match;
      t.warning(pointer, "match " + quote_for_diagnostic(injection.match) +
                             " has no param_plan entry: thawed as a module, so freezing "
                             "adds the entry {}");
    }
    ModuleDraft& draft = drafts[it->second];
    if (draft.has_injection) {
      t.warning(pointer, "match " + quote_for_diagnostic(injection.match) +
                             " appears in more than one injection: merged into one, later "
                             "keys win");
    } else {
      draft.has_injection = true;
      injection_order.push_back(it->second);
    }
    t.unknown_fields(injection.unknown, pointer, "injection");
    for (std::size_t i = 0; i < kSpecFields.size(); ++i) {
      if (injection.fields[i] == nullptr) continue;
      draft.fields[i] = t.field(kSpecFields[i].kind, *injection.fields[i],
                                pointer_join(pointer, kSpecFields[i].meta_key));
    }
  }
  // freeze reads the plan's meta as the base, whose `covered` must be an object.
  if (!meta.covered.valid()) {
    t.error("/covered", expected_got("an object", meta.covered.type));
  }
  std::optional<Json> model;
  if (options.model) model = model_dump(t, meta, drafts);
  if (t.failed()) return t.take_errors();
  if (beside) {
    beside->wait();
  } else {
    check_sharded();
  }
  if (mismatch) t.warning("/frozen_sharded_params", std::move(*mismatch));

  // Injection-bearing modules keep the slots they have in param_plan order but are
  // refilled in injection order; the others stay where they are.
  std::vector<std::size_t> order(drafts.size());
  for (std::size_t i = 0; i < drafts.size(); ++i) order[i] = i;
  for (std::size_t slot = 0, k = 0; slot < order.size(); ++slot) {
    if (drafts[slot].has_injection) order[slot] = injection_order[k++];
  }
  Thawed result;
  // `order` names every draft once: each moves instead of being copied again.
  result.draft.modules.reserve(drafts.size());
  for (std::size_t i : order) result.draft.modules.push_back(std::move(drafts[i]));

  JsonObject identity;
  for (const JsonMember* m : meta.identity) identity.push_back(*m);
  JsonObject& head = result.draft.head;
  head.push_back({"format", "hpfreeze.plan/v1"});
  const std::pair<std::string_view, const Json*> copied[] = {
      {"mesh_dim_names", meta.members.mesh_dim_names},
      {"tied_pairs", meta.members.tied_pairs},
      {"special_handlers", meta.members.special_handlers}};
  for (const auto& [key, v] : copied) {
    if (v != nullptr) head.push_back({key, *v});
  }
  head.push_back({"meta", Json(std::move(identity))});
  result.model = std::move(model);
  result.warnings = t.take_warnings();
  return result;
}

}  // namespace

Expected<ThawedPlan> thaw_meta(const FrozenMeta& meta, const ThawOptions& options) {
  Expected<Thawed> thawed = thaw_to_draft(meta, options);
  if (!thawed) return std::move(thawed.errors());
  ThawDraft& draft = thawed->draft;
  JsonObject modules;
  modules.reserve(draft.modules.size());
  for (ModuleDraft& m : draft.modules) {
    JsonObject spec;
    for (std::size_t f = 0; f < kSpecFields.size(); ++f) {
      if (f == kParamsField && m.params != nullptr) {
        spec.push_back({kSpecFields[f].attribute, thawed_params(*m.params)});
      } else if (m.fields[f]) {
        spec.push_back({kSpecFields[f].attribute, std::move(*m.fields[f])});
      }
    }
    modules.push_back({m.fqn, Json(std::move(spec))});
  }
  JsonObject plan = std::move(draft.head);
  plan.push_back({"modules", Json(std::move(modules))});
  ThawedPlan result;
  result.plan = Json(std::move(plan));
  result.model = std::move(thawed->model);
  result.warnings = std::move(thawed->warnings);
  return result;
}

Expected<ThawedBytes> thaw_meta_to_bytes(const FrozenMeta& meta, const ThawOptions& options) {
  Expected<Thawed> thawed = thaw_to_draft(meta, options);
  if (!thawed) return std::move(thawed.errors());
  ThawedBytes result;
  result.plan = encode_thawed_plan(thawed->draft, options.concurrency);
  result.plan += '\n';          // the encoder reserves room beyond the last token
  thawed->draft = ThawDraft();  // not held while the model is encoded
  if (thawed->model) {
    result.model = encode_plain_json(*thawed->model);
    *result.model += '\n';
  }
  result.warnings = std::move(thawed->warnings);
  return result;
}

}  // namespace hpfreeze
