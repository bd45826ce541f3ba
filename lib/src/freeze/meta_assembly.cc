// The meta assembly (freeze.h; reference.h's assemble_meta): the CodegenMeta's defaults, the
// base's members over them, and the frozen fields in their places (docs/formats.md, "The
// meta").
#include <string_view>
#include <utility>

#include "freeze/freeze.h"
#include "freeze/reference.h"

namespace hpfreeze {

namespace {

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
  for (std::string_view key :
       {"injections", "skipped_overrides", "frozen_sharded_params", "tied_pairs",
        "module_overrides", "external_state_classes", "remote_siblings"}) {
    meta.push_back({key, JsonArray{}});
  }
  meta.push_back({"entrypoints", JsonObject{{"parallelize", "hp_parallelize"}}});
  meta.push_back(
      {"covered",
       JsonObject{{"sharding_plan", false}, {"module_overrides", false}, {"axes", JsonArray{}}}});
  meta.push_back(
      {"not_covered", JsonArray{"mesh", "fsdp2", "pp", "activation_checkpoint", "compile"}});
  meta.push_back({"mesh_dim_names", nullptr});
  return meta;
}

// The param_plan tables as a Json object (assemble_meta's; encode_meta writes them as they
// are).
Json param_plan_json(const FrozenParamPlan& plan) {
  const auto& [boundaries, params, axes] = plan;
  JsonObject out;
  out.reserve(boundaries.size());
  for (const FrozenBoundary& boundary : boundaries) {
    JsonObject entry;
    entry.reserve(boundary.fields.size() + 1);
    if (boundary.has_params) {
      JsonObject members;
      members.reserve(boundary.param_count);
      for (std::size_t p = boundary.first_param; p < boundary.first_param + boundary.param_count;
           ++p) {
        JsonObject placements;
        for (std::size_t a = params[p].first_axis; a < params[p].first_axis + params[p].axis_count;
             ++a) {
          placements.push_back({axes[a].axis, Json(axes[a].placement)});
        }
        members.push_back({params[p].name, Json(std::move(placements))});
      }
      entry.push_back({"params", Json(std::move(members))});
    }
    entry.insert(entry.end(), boundary.fields.begin(), boundary.fields.end());
    out.push_back({boundary.fqn, Json(std::move(entry))});
  }
  return Json(std::move(out));
}

}  // namespace

JsonObject meta_defaults_and_base(const Json* base) {
  JsonObject meta = default_meta();
  if (base != nullptr && base->is_object()) {
    for (const JsonMember& m : base->as_object()) set_member(meta, m.key, m.value);
  }
  for (JsonMember& m : meta) {
    if (m.key == "covered" && m.value.is_object()) {
      set_member(m.value.as_object(), "sharding_plan", true);
    }
  }
  return meta;
}

Json assemble_meta(FrozenPlan& frozen, const Json* base) {
  JsonObject meta = meta_defaults_and_base(base);
  set_member(meta, "param_plan", param_plan_json(frozen.param_plan));
  set_member(meta, "injections", std::move(frozen.injections));
  set_member(meta, "tied_pairs", std::move(frozen.tied_pairs));
  set_member(meta, "special_handlers", std::move(frozen.special_handlers));
  set_member(
      meta, "frozen_sharded_params",
      Json(JsonArray(frozen.frozen_sharded_params.begin(), frozen.frozen_sharded_params.end())));
  set_member(meta, "boundary_classes", std::move(frozen.boundary_classes));
  set_member(meta, "mesh_dim_names", std::move(frozen.mesh_dim_names));
  return Json(std::move(meta));
}

}  // namespace hpfreeze
