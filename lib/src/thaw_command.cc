#include "hpfreeze/thaw_command.h"

#include <algorithm>
#include <array>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hpfreeze/encode.h"
#include "hpfreeze/freeze.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"
#include "hpfreeze/spec_fields.h"

namespace hpfreeze {
namespace {

bool is_tag_key(std::string_view key) {
  return key == "$placement" || key == "$target" || key == "$callable";
}

std::string type_article(const Json& v) {
  struct Visitor {
    std::string operator()(std::nullptr_t) const { return "null"; }
    std::string operator()(bool) const { return "a boolean"; }
    std::string operator()(std::int64_t) const { return "an integer"; }
    std::string operator()(std::uint64_t) const { return "an integer"; }
    std::string operator()(double) const { return "a float"; }
    std::string operator()(std::string_view) const { return "a string"; }
    std::string operator()(const JsonArray&) const { return "an array"; }
    std::string operator()(const JsonObject&) const { return "an object"; }
  };
  return std::visit(Visitor{}, v.v);
}

// The keys freeze sets itself; every other top-level key is an identity field.
constexpr std::array<std::string_view, 7> kFreezeFields{
    "param_plan",       "injections",    "tied_pairs", "special_handlers", "frozen_sharded_params",
    "boundary_classes", "mesh_dim_names"};

bool is_freeze_field(std::string_view key) {
  return std::find(kFreezeFields.begin(), kFreezeFields.end(), key) != kFreezeFields.end();
}

// One plan-dump module being assembled: the fields by kSpecFields index.
struct ModuleDraft {
  std::string_view fqn;
  std::array<std::optional<Json>, kSpecFields.size()> fields;
  bool has_injection = false;
};

class Thawer {
 public:
  explicit Thawer(const std::string& file) : file_(file) {}

  void error(const std::string& pointer, std::string message) {
    ++error_count_;
    if (errors_.size() < kMaxReportedErrors) {
      errors_.push_back(make_error(file_, pointer, std::move(message)));
    }
  }
  void warning(const std::string& pointer, std::string message) {
    warnings_.push_back(make_warning(file_, pointer, std::move(message)));
  }
  [[nodiscard]] bool failed() const { return error_count_ > 0; }
  Diagnostics take_errors() {
    if (error_count_ > errors_.size()) {
      errors_.push_back(make_error(
          file_, {}, std::to_string(error_count_ - errors_.size()) + " more errors not shown"));
    }
    return std::move(errors_);
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

  void expect(bool ok, const Json& v, const std::string& pointer, std::string_view expected) {
    if (!ok) error(pointer, "expected " + std::string(expected) + ", got " + type_article(v));
  }

  // params: param -> axis -> placement string, each leaf parsed (freeze only writes valid
  // ones). Sharded params are collected as FQNs for the frozen_sharded_params check.
  Json params(std::string_view boundary, const Json& v, const std::string& pointer) {
    if (v.is_null()) return v;
    if (!v.is_object()) {
      expect(false, v, pointer, "an object");
      return v;
    }
    JsonObject out;
    out.reserve(v.as_object().size());
    for (const JsonMember& param : v.as_object()) {
      const std::string param_pointer = pointer_join(pointer, param.key);
      if (!param.value.is_object()) {
        expect(false, param.value, param_pointer, "an object of axis -> placement");
        continue;
      }
      JsonObject axes;
      bool sharded = false;
      for (const JsonMember& axis : param.value.as_object()) {
        const std::string axis_pointer = pointer_join(param_pointer, axis.key);
        if (!axis.value.is_string()) {
          expect(false, axis.value, axis_pointer, "a placement string");
          continue;
        }
        Expected<Placement> parsed = parse_placement(axis.value.as_string());
        if (!parsed) {
          error(axis_pointer, parsed.errors().front().message);
          continue;
        }
        sharded = sharded || parsed->is_sharded();
        axes.push_back({axis.key, placement_to_dump(*parsed)});
      }
      if (sharded) sharded_.push_back(join_fqn(boundary, param.key));
      out.push_back({param.key, Json(std::move(axes))});
    }
    return Json(std::move(out));
  }

  // Every other field: converted or copied, with the type rule the plan decoder applies
  // to a value it will write.
  Json field(FieldKind kind, const Json& v, const std::string& pointer) {
    switch (kind) {
      case FieldKind::kPlacementMap:
        return v;  // handled by params()
      case FieldKind::kNamedPlacements:
        if (v.truthy()) expect(v.is_object(), v, pointer, "an object");
        return thaw_value(v);
      case FieldKind::kValueToDict:
        return thaw_value(v);
      case FieldKind::kNameList:
      case FieldKind::kAttrList:
        if (kind == FieldKind::kNameList ? v.truthy() : !v.is_null()) {
          expect(v.is_array(), v, pointer, "an array");
          check_plain(v, pointer);
        }
        return v;
      case FieldKind::kDictCopy:
        if (v.truthy()) {
          expect(v.is_object(), v, pointer, "an object");
          check_plain(v, pointer);
        }
        return v;
      case FieldKind::kScalar:
      case FieldKind::kPlain:
      case FieldKind::kIntTruthy:
        check_plain(v, pointer);
        return v;
    }
    return v;
  }

  std::vector<std::string>& sharded() { return sharded_; }

 private:
  const std::string& file_;
  Diagnostics errors_;
  std::size_t error_count_ = 0;
  Diagnostics warnings_;
  std::vector<std::string> sharded_;
};

// tied_pairs must be null or an array of arrays of strings; mesh_dim_names null or an
// array of strings (what the plan decoder accepts).
void check_string_array(Thawer& t, const Json& v, const std::string& pointer) {
  if (!v.is_array()) {
    t.expect(false, v, pointer, "an array");
    return;
  }
  const JsonArray& a = v.as_array();
  for (std::size_t i = 0; i < a.size(); ++i) {
    t.expect(a[i].is_string(), a[i], pointer + "/" + std::to_string(i), "a string");
  }
}

void check_top_level_freeze_fields(Thawer& t, const Json& meta) {
  if (const Json* v = meta.find("tied_pairs"); v != nullptr && !v->is_null()) {
    if (!v->is_array()) {
      t.expect(false, *v, "/tied_pairs", "an array");
    } else {
      const JsonArray& pairs = v->as_array();
      for (std::size_t i = 0; i < pairs.size(); ++i) {
        check_string_array(t, pairs[i], "/tied_pairs/" + std::to_string(i));
      }
    }
  }
  if (const Json* v = meta.find("mesh_dim_names"); v != nullptr && !v->is_null()) {
    check_string_array(t, *v, "/mesh_dim_names");
  }
  if (const Json* v = meta.find("special_handlers"); v != nullptr && !v->is_null()) {
    t.expect(v->is_object(), *v, "/special_handlers", "an object");
  }
  if (const Json* v = meta.find("covered"); v != nullptr) {
    t.expect(v->is_object(), *v, "/covered", "an object");
  }
}

// Warns when the meta's frozen_sharded_params is not what freeze will recompute.
void check_frozen_sharded_params(Thawer& t, const Json& meta) {
  const Json* listed = meta.find("frozen_sharded_params");
  if (listed == nullptr) return;
  std::vector<std::string>& computed = t.sharded();
  std::sort(computed.begin(), computed.end());
  computed.erase(std::unique(computed.begin(), computed.end()), computed.end());
  std::vector<std::string> names;
  bool all_strings = listed->is_array();
  if (all_strings) {
    for (const Json& item : listed->as_array()) {
      if (!item.is_string()) {
        all_strings = false;
        break;
      }
      names.emplace_back(item.as_string());
    }
  }
  if (all_strings && names == computed) return;
  std::string detail;
  if (all_strings) {
    std::vector<std::string> listed_set = names;
    std::sort(listed_set.begin(), listed_set.end());
    listed_set.erase(std::unique(listed_set.begin(), listed_set.end()), listed_set.end());
    std::vector<std::string> missing;
    std::vector<std::string> extra;
    std::set_difference(computed.begin(), computed.end(), listed_set.begin(), listed_set.end(),
                        std::back_inserter(missing));
    std::set_difference(listed_set.begin(), listed_set.end(), computed.begin(), computed.end(),
                        std::back_inserter(extra));
    detail = missing.empty() && extra.empty() ? "order or duplicates differ"
                                              : std::to_string(missing.size()) + " missing, " +
                                                    std::to_string(extra.size()) + " extra";
  } else {
    detail = "not an array of strings";
  }
  t.warning("/frozen_sharded_params", "does not match the parameters sharded in param_plan (" +
                                          detail +
                                          "); freezing the thawed plan writes the recomputed list");
}

Json model_dump(Thawer& t, const Json& meta, const std::vector<ModuleDraft>& drafts) {
  JsonObject modules;
  const Json* classes = meta.find("boundary_classes");
  if (classes != nullptr && !classes->is_null()) {
    if (!classes->is_object()) {
      t.expect(false, *classes, "/boundary_classes", "an object");
    } else {
      for (const JsonMember& m : classes->as_object()) {
        t.expect(m.value.is_string(), m.value, pointer_join("/boundary_classes", m.key),
                 "a string");
        modules.push_back(m);
      }
    }
  }
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

}  // namespace

Json placement_to_dump(const Placement& p) {
  JsonObject out{{"$placement", Json(placement_type_name(p.kind))}};
  switch (p.kind) {
    case PlacementKind::kShard:
      out.push_back({"dim", Json(p.dim)});
      out.push_back({"uneven_shard", Json(p.uneven_shard)});
      break;
    case PlacementKind::kStridedShard:
      out.push_back({"dim", Json(p.dim)});
      out.push_back({"split_factor", Json(p.split_factor)});
      out.push_back({"uneven_shard", Json(p.uneven_shard)});
      break;
    case PlacementKind::kPartial:
      out.push_back({"reduce_op", Json(p.reduce_op)});
      break;
    case PlacementKind::kReplicate:
      break;
  }
  return Json(std::move(out));
}

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

Expected<ThawedPlan> thaw_meta(const Json& meta, const std::string& file,
                               const ThawOptions& options) {
  if (!meta.is_object()) {
    return make_error(file, {},
                      "expected a JSON object (a codegen_meta.json), got " + type_article(meta));
  }
  const Json* param_plan = meta.find("param_plan");
  if (param_plan == nullptr) return make_error(file, {}, "missing required key 'param_plan'");
  if (!param_plan->is_object()) {
    return make_error(file, "/param_plan", "expected an object, got " + type_article(*param_plan));
  }

  Thawer t(file);
  std::vector<ModuleDraft> drafts;
  std::unordered_map<std::string_view, std::size_t> index;
  drafts.reserve(param_plan->as_object().size());
  for (const JsonMember& boundary : param_plan->as_object()) {
    const std::string pointer = pointer_join("/param_plan", boundary.key);
    index.emplace(boundary.key, drafts.size());
    ModuleDraft& draft = drafts.emplace_back();
    draft.fqn = boundary.key;
    if (!boundary.value.is_object()) {
      t.expect(false, boundary.value, pointer, "an object");
      continue;
    }
    for (const JsonMember& m : boundary.value.as_object()) {
      const std::string field_pointer = pointer_join(pointer, m.key);
      const std::optional<std::size_t> i = find_spec_field_by_meta_key(m.key);
      if (!i) {
        t.error(field_pointer, "unknown param_plan field " + quote_for_diagnostic(m.key) +
                                   " (no module-spec attribute to thaw it to)");
      } else if (kSpecFields[*i].section != FieldSection::kParamPlan) {
        t.error(field_pointer, quote_for_diagnostic(m.key) +
                                   " is an injection field and cannot appear in param_plan");
      } else if (*i == kParamsField) {
        draft.fields[*i] = t.params(boundary.key, m.value, field_pointer);
      } else {
        draft.fields[*i] = t.field(kSpecFields[*i].kind, m.value, field_pointer);
      }
    }
  }

  // Freeze appends injections in plan order, so the modules that carry one must appear in
  // the order of the meta's injections.
  std::vector<std::size_t> injection_order;
  const Json* injections = meta.find("injections");
  if (injections != nullptr && !injections->is_null() && !injections->is_array()) {
    t.expect(false, *injections, "/injections", "an array");
  } else if (injections != nullptr && injections->is_array()) {
    const JsonArray& items = injections->as_array();
    for (std::size_t n = 0; n < items.size(); ++n) {
      const std::string pointer = "/injections/" + std::to_string(n);
      const Json& item = items[n];
      if (!item.is_object()) {
        t.expect(false, item, pointer, "an object");
        continue;
      }
      const Json* match = item.find("match");
      if (match == nullptr || !match->is_string()) {
        t.error(pointer, "an injection needs a string 'match'");
        continue;
      }
      const std::string_view fqn = match->as_string();
      auto [it, created] = index.emplace(fqn, drafts.size());
      if (created) {
        drafts.emplace_back().fqn = fqn;
        t.warning(pointer, "match " + quote_for_diagnostic(fqn) +
                               " has no param_plan entry: thawed as a module, so freezing "
                               "adds the entry {}");
      }
      ModuleDraft& draft = drafts[it->second];
      if (draft.has_injection) {
        t.warning(pointer, "match " + quote_for_diagnostic(fqn) +
                               " appears in more than one injection: merged into one, later "
                               "keys win");
      } else {
        draft.has_injection = true;
        injection_order.push_back(it->second);
      }
      for (const JsonMember& m : item.as_object()) {
        if (m.key == "match") continue;
        const std::string field_pointer = pointer_join(pointer, m.key);
        const std::optional<std::size_t> i = find_spec_field_by_meta_key(m.key);
        if (!i) {
          t.error(field_pointer, "unknown injection field " + quote_for_diagnostic(m.key) +
                                     " (no module-spec attribute to thaw it to)");
        } else if (kSpecFields[*i].section != FieldSection::kInjections) {
          t.error(field_pointer, quote_for_diagnostic(m.key) +
                                     " is a param_plan field and cannot appear in an injection");
        } else {
          draft.fields[*i] = t.field(kSpecFields[*i].kind, m.value, field_pointer);
        }
      }
    }
  }
  check_top_level_freeze_fields(t, meta);
  std::optional<Json> model;
  if (options.model) model = model_dump(t, meta, drafts);
  if (t.failed()) return t.take_errors();
  check_frozen_sharded_params(t, meta);

  // Injection-bearing modules keep the slots they have in param_plan order but are
  // refilled in injection order; the others stay where they are.
  std::vector<std::size_t> order(drafts.size());
  for (std::size_t i = 0; i < drafts.size(); ++i) order[i] = i;
  for (std::size_t slot = 0, k = 0; slot < order.size(); ++slot) {
    if (drafts[slot].has_injection) order[slot] = injection_order[k++];
  }
  JsonObject modules;
  modules.reserve(drafts.size());
  for (std::size_t i : order) {
    JsonObject spec;
    for (std::size_t f = 0; f < kSpecFields.size(); ++f) {
      if (drafts[i].fields[f]) spec.push_back({kSpecFields[f].attribute, *drafts[i].fields[f]});
    }
    modules.push_back({drafts[i].fqn, Json(std::move(spec))});
  }

  JsonObject identity;
  for (const JsonMember& m : meta.as_object()) {
    if (!is_freeze_field(m.key)) identity.push_back(m);
  }
  JsonObject plan{{"format", "hpfreeze.plan/v1"}};
  for (std::string_view key : {"mesh_dim_names", "tied_pairs", "special_handlers"}) {
    if (const Json* v = meta.find(key)) plan.push_back({key, *v});
  }
  plan.push_back({"meta", Json(std::move(identity))});
  plan.push_back({"modules", Json(std::move(modules))});

  ThawedPlan result;
  result.plan = Json(std::move(plan));
  result.model = std::move(model);
  result.warnings = t.take_warnings();
  return result;
}

CommandResult run_thaw(const ThawRequest& request) {
  CommandResult result;
  Expected<InputFile> input = read_input(request.meta_path);
  if (!input) {
    result.diagnostics = std::move(input.errors());
    return result;
  }
  Expected<JsonDocument> doc = parse_json_document(input->display_name, std::move(input->bytes));
  if (!doc) {
    result.diagnostics = std::move(doc.errors());
    return result;
  }
  const Json meta = json_from_dom(doc->root());
  ThawOptions options;
  options.model = request.model_path.has_value();
  Expected<ThawedPlan> thawed = thaw_meta(meta, doc->name(), options);
  if (!thawed) {
    result.diagnostics = std::move(thawed.errors());
    return result;
  }
  result.diagnostics = std::move(thawed->warnings);
  // Both outputs are rendered before either is written.
  const std::string plan_bytes = encode_plain_json(thawed->plan) + "\n";
  const std::string model_bytes = thawed->model ? encode_plain_json(*thawed->model) + "\n" : "";
  // Both outputs or neither (io.h), and never one file under two names.
  std::vector<OutputFile> outputs{{"-o", request.plan_path, plan_bytes, {}}};
  if (request.model_path) outputs.push_back({"--model-out", *request.model_path, model_bytes, {}});
  // -o may replace the meta it was read from (an in-place update), --model-out may not.
  const InputPath meta_input{"the input meta", request.meta_path, "-o"};
  Diagnostics clashes =
      check_distinct_paths(real_file_system(), outputs, std::span(&meta_input, 1));
  Expected<std::vector<WriteOutcome>> written =
      clashes.empty() ? write_outputs(outputs) : Expected<std::vector<WriteOutcome>>(clashes);
  if (!written) {
    result.diagnostics.insert(result.diagnostics.end(), written.errors().begin(),
                              written.errors().end());
  }
  return result;
}

}  // namespace hpfreeze
