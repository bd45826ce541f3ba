#include "hpfreeze/freeze.h"

#include <algorithm>
#include <unordered_map>

namespace hpfreeze {
namespace {

// Canonical strings repeat endlessly (S(0), R): each distinct one is stored once.
class CanonicalStrings {
 public:
  explicit CanonicalStrings(StringArena& arena) : arena_(arena) {}

  std::string_view get(const Placement& p) {
    scratch_.clear();
    append_canonical(scratch_, p);
    auto it = cache_.find(scratch_);
    if (it != cache_.end()) return it->second;
    std::string_view stored = arena_.store(scratch_);
    cache_.emplace(stored, stored);
    return stored;
  }

 private:
  StringArena& arena_;
  std::string scratch_;
  std::unordered_map<std::string_view, std::string_view> cache_;
};

Json value_to_dict(const SpecValue& value, CanonicalStrings& canonical) {
  struct Visitor {
    CanonicalStrings& canonical;
    Json operator()(const Json& j) const { return j; }
    Json operator()(const Placement& p) const { return Json(canonical.get(p)); }
    Json operator()(const Target& t) const { return t.object; }
    Json operator()(const Callable& c) const { return Json(c.name); }
    Json operator()(const SpecArray& a) const {
      JsonArray out;
      out.reserve(a.size());
      for (const SpecValue& item : a) out.push_back(value_to_dict(item, canonical));
      return Json(std::move(out));
    }
    Json operator()(const SpecObject& o) const {
      JsonObject out;
      out.reserve(o.size());
      for (const SpecMember& m : o) out.push_back({m.key, value_to_dict(m.value, canonical)});
      return Json(std::move(out));
    }
  };
  return std::visit(Visitor{canonical}, value.v);
}

Json freeze_params(const std::vector<ParamPlacements>& params, CanonicalStrings& canonical) {
  JsonObject out;
  out.reserve(params.size());
  for (const ParamPlacements& param : params) {
    JsonObject axes;
    axes.reserve(param.axes.size());
    for (const AxisPlacement& a : param.axes) {
      axes.push_back({a.axis, Json(canonical.get(a.placement))});
    }
    out.push_back({param.name, Json(std::move(axes))});
  }
  return Json(std::move(out));
}

bool is_sharded(const ParamPlacements& param) {
  return std::any_of(param.axes.begin(), param.axes.end(),
                     [](const AxisPlacement& a) { return a.placement.is_sharded(); });
}

std::string module_pointer(std::string_view fqn) { return pointer_join("/modules", fqn); }

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

class ErrorList {
 public:
  void add(Diagnostic d) {
    ++total_;
    if (errors_.size() < kMaxReportedErrors) errors_.push_back(std::move(d));
  }
  [[nodiscard]] bool empty() const { return total_ == 0; }
  Diagnostics take(const std::string& file) {
    if (total_ > errors_.size()) {
      errors_.push_back(make_error(file, {}, std::to_string(total_ - errors_.size()) +
                                                 " more errors not shown"));
    }
    return std::move(errors_);
  }

 private:
  Diagnostics errors_;
  std::size_t total_ = 0;
};

void verify_against_model(const PlanDump& plan, const ModelTree& model, ErrorList& errors) {
  for (const ModuleSpec& spec : plan.modules) {
    if (!spec.params) continue;
    const std::string params_pointer = pointer_join(module_pointer(spec.fqn), "params");
    for (const ParamPlacements& param : *spec.params) {
      const std::string fqn = join_fqn(spec.fqn, param.name);
      const ModelParameter* info = model.find_parameter(fqn);
      const std::string param_pointer = pointer_join(params_pointer, param.name);
      if (info == nullptr) {
        errors.add(make_error(plan.file, param_pointer,
                              "parameter " + quote_for_diagnostic(fqn) + " is not in the model (" +
                                  model.file + ")"));
        continue;
      }
      const auto rank = static_cast<std::int64_t>(info->shape.size());
      for (const AxisPlacement& a : param.axes) {
        if (!a.placement.has_dim()) continue;
        if (a.placement.dim < -rank || a.placement.dim >= rank) {
          errors.add(make_error(plan.file, pointer_join(param_pointer, a.axis),
                                "dim " + std::to_string(a.placement.dim) +
                                    " out of range for parameter " + quote_for_diagnostic(fqn) +
                                    " of shape " + shape_text(info->shape) + " (rank " +
                                    std::to_string(rank) + ")"));
        }
      }
    }
  }
  for (std::size_t i = 0; i < plan.tied_pairs.size(); ++i) {
    for (std::size_t j = 0; j < plan.tied_pairs[i].size(); ++j) {
      const std::string_view name = plan.tied_pairs[i][j];
      if (model.find_parameter(name) == nullptr) {
        errors.add(make_error(plan.file,
                              "/tied_pairs/" + std::to_string(i) + "/" + std::to_string(j),
                              "tied parameter " + quote_for_diagnostic(name) +
                                  " is not in the model (" + model.file + ")"));
      }
    }
  }
}

void set_member(JsonObject& object, std::string_view key, Json value) {
  for (JsonMember& m : object) {
    if (m.key == key) {
      m.value = std::move(value);
      return;
    }
  }
  object.push_back({key, std::move(value)});
}

JsonObject default_meta() {
  JsonObject meta;
  meta.reserve(24);
  meta.push_back({"codegen_version", "0.1.1"});
  meta.push_back({"signature", ""});
  meta.push_back({"yaml_path", ""});
  meta.push_back({"yaml_sha256", ""});
  meta.push_back({"source", JsonObject{}});
  meta.push_back({"parallel_dims", JsonObject{}});
  meta.push_back({"outputs", JsonObject{}});
  meta.push_back({"special_handlers", JsonObject{}});
  meta.push_back({"boundary_classes", JsonObject{}});
  meta.push_back({"param_plan", JsonObject{}});
  meta.push_back({"model_name", nullptr});
  meta.push_back({"model_class", nullptr});
  for (std::string_view key : {"injections", "skipped_overrides", "frozen_sharded_params",
                               "tied_pairs", "module_overrides", "external_state_classes",
                               "remote_siblings"}) {
    meta.push_back({key, JsonArray{}});
  }
  meta.push_back({"entrypoints", JsonObject{{"parallelize", "hp_parallelize"}}});
  meta.push_back({"covered", JsonObject{{"sharding_plan", false},
                                        {"module_overrides", false},
                                        {"axes", JsonArray{}}}});
  meta.push_back({"not_covered",
                  JsonArray{"mesh", "fsdp2", "pp", "activation_checkpoint", "compile"}});
  meta.push_back({"mesh_dim_names", nullptr});
  return meta;
}

}  // namespace

Expected<FreezeResult> freeze_plan(const PlanDump& plan, const ModelTree& model,
                                   const FreezeOptions& options) {
  if (plan.modules.empty() && !options.allow_empty) {
    return make_error(plan.file, "/modules",
                      "the plan has no modules (use --allow-empty to accept an empty plan)");
  }
  FreezeResult result;
  FrozenPlan& frozen = result.frozen;
  ErrorList errors;

  if (plan.negative_dims.count > 0) {
    const std::string message =
        std::to_string(plan.negative_dims.count) +
        " placement(s) with a negative dim, first here: S(-k) reads back as an uneven shard of "
        "dim k-1; written verbatim as upstream does";
    if (options.strict) {
      errors.add(make_error(plan.file, plan.negative_dims.first_pointer,
                            message + " (--strict makes this an error)"));
    } else {
      result.warnings.push_back(
          make_warning(plan.file, plan.negative_dims.first_pointer, message));
    }
  }

  CanonicalStrings canonical(frozen.strings);
  JsonObject param_plan;
  JsonArray injections;
  JsonObject boundary_classes;
  param_plan.reserve(plan.modules.size());
  boundary_classes.reserve(plan.modules.size());
  for (const ModuleSpec& spec : plan.modules) {
    JsonObject entry;
    JsonObject injection;
    if (spec.params) entry.push_back({"params", freeze_params(*spec.params, canonical)});
    for (std::size_t i = 0; i < kSpecFields.size(); ++i) {
      if (!spec.fields[i]) continue;
      const SpecField& field = kSpecFields[i];
      JsonObject& target = field.section == FieldSection::kParamPlan ? entry : injection;
      target.push_back({field.meta_key, value_to_dict(*spec.fields[i], canonical)});
    }
    param_plan.push_back({spec.fqn, Json(std::move(entry))});
    if (!injection.empty()) {
      injection.insert(injection.begin(), JsonMember{"match", Json(spec.fqn)});
      injections.push_back(Json(std::move(injection)));
    }
    if (const std::string_view* cls = model.find_class(spec.fqn)) {
      boundary_classes.push_back({spec.fqn, Json(*cls)});
    } else {
      errors.add(make_error(plan.file, module_pointer(spec.fqn),
                            "boundary module " + quote_for_diagnostic(spec.fqn) +
                                " is not in the model tree (" + model.file + ")"));
    }
  }
  if (options.verify && model.has_parameters) verify_against_model(plan, model, errors);
  if (!errors.empty()) return errors.take(plan.file);

  frozen.param_plan = Json(std::move(param_plan));
  frozen.injections = Json(std::move(injections));
  frozen.boundary_classes = Json(std::move(boundary_classes));

  JsonArray sharded;
  std::vector<std::string> fqns = expand_sharded_params(plan);
  sharded.reserve(fqns.size());
  for (std::string& fqn : fqns) sharded.push_back(Json(frozen.strings.store(std::move(fqn))));
  frozen.frozen_sharded_params = Json(std::move(sharded));

  JsonArray pairs;
  pairs.reserve(plan.tied_pairs.size());
  for (const auto& pair : plan.tied_pairs) {
    JsonArray names(pair.begin(), pair.end());
    pairs.push_back(Json(std::move(names)));
  }
  frozen.tied_pairs = Json(std::move(pairs));
  frozen.special_handlers = plan.special_handlers;
  if (!plan.mesh_dim_names.empty()) {
    frozen.mesh_dim_names =
        Json(JsonArray(plan.mesh_dim_names.begin(), plan.mesh_dim_names.end()));
  }
  return result;
}

std::vector<std::string> expand_sharded_params(const PlanDump& plan) {
  std::vector<std::string> fqns;
  for (const ModuleSpec& spec : plan.modules) {
    if (!spec.params) continue;
    for (const ParamPlacements& param : *spec.params) {
      if (is_sharded(param)) fqns.push_back(join_fqn(spec.fqn, param.name));
    }
  }
  std::sort(fqns.begin(), fqns.end());
  fqns.erase(std::unique(fqns.begin(), fqns.end()), fqns.end());
  return fqns;
}

Json assemble_meta(FrozenPlan& frozen, const Json* base) {
  JsonObject meta = default_meta();
  if (base != nullptr && base->is_object()) {
    for (const JsonMember& m : base->as_object()) set_member(meta, m.key, m.value);
  }
  set_member(meta, "param_plan", std::move(frozen.param_plan));
  set_member(meta, "injections", std::move(frozen.injections));
  set_member(meta, "tied_pairs", std::move(frozen.tied_pairs));
  set_member(meta, "special_handlers", std::move(frozen.special_handlers));
  set_member(meta, "frozen_sharded_params", std::move(frozen.frozen_sharded_params));
  set_member(meta, "boundary_classes", std::move(frozen.boundary_classes));
  set_member(meta, "mesh_dim_names", std::move(frozen.mesh_dim_names));
  for (JsonMember& m : meta) {
    if (m.key == "covered" && m.value.is_object()) {
      set_member(m.value.as_object(), "sharding_plan", true);
    }
  }
  return Json(std::move(meta));
}

}  // namespace hpfreeze
