// The JSON of a capacity result (capacity_json.h), through the --json stream writer.
#include "capacity/capacity_json.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "capacity/settings_render.h"

namespace hpfreeze {
namespace {

// {"axis": size, ...} of `mesh`, or of the coordinates `at` (one per axis) when given.
void write_coordinates(JsonStream& w, const Mesh& mesh, const std::vector<std::uint64_t>* at) {
  w.start_object();
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    w.key(mesh.axes[i].axis).number(at == nullptr ? mesh.axes[i].size : (*at)[i]);
  }
  w.end_object();
}

// The dense coordinates of a folded layout's rank: every mesh axis but ep.
void write_dense_coordinates(JsonStream& w, const Mesh& mesh,
                             const std::vector<std::uint64_t>& at) {
  w.start_object();
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    if (mesh.axes[i].axis != kExpertAxis) w.key(mesh.axes[i].axis).number(at[i]);
  }
  w.end_object();
}

void write_expert_coordinates(JsonStream& w, const std::uint64_t (&at)[2]) {
  w.start_object();
  w.key(kExpertDataAxis).number(at[0]);
  w.key(kExpertAxis).number(at[1]);
  w.end_object();
}

// A rank's coordinates as the mesh entry writes them: folded, the dense ones.
void write_rank(JsonStream& w, const Mesh& mesh, const std::vector<std::uint64_t>& at,
                bool folded) {
  if (folded) {
    write_dense_coordinates(w, mesh, at);
  } else {
    write_coordinates(w, mesh, &at);
  }
}

// [{"stage", "layers", "max_rank_bytes", "min_rank_bytes", "max_rank", "min_rank"}, ...].
void write_stages(JsonStream& w, const MeshCapacity& m, bool folded) {
  w.start_array();
  for (std::size_t s = 0; s < m.stages.size(); ++s) {
    const StageCapacity& stage = m.stages[s];
    w.start_object();
    w.key("stage").number(s);
    w.key("layers");
    if (stage.layers) {
      const std::uint64_t layers[] = {stage.layers->first, stage.layers->second};
      w.numbers(layers);
    } else {
      w.null();
    }
    w.key("max_rank_bytes").number(stage.max_rank_bytes);
    w.key("min_rank_bytes").number(stage.min_rank_bytes);
    w.key("max_rank");
    write_rank(w, m.mesh, stage.max_rank, folded);
    w.key("min_rank");
    write_rank(w, m.mesh, stage.min_rank, folded);
    w.end_object();
  }
  w.end_array();
}

void write_indivisible(JsonStream& w, const Indivisible& x) {
  const bool param = !x.no_ranks();
  w.start_object();
  w.key("param");
  if (param) {
    w.string(x.fqn);
    w.key("dim").number(x.dim);
  } else {
    w.null();
    w.key("dim").null();
  }
  w.key("size").number(x.size);
  w.key("axis").string(x.axis);
  w.key("axis_size").number(x.axis_size);
  w.key("split_factor").number(x.split_factor);
  if (x.dense_region()) {
    w.key("dense_axes").start_array();
    for (const std::string& a : x.dense_axes) w.string(a);
    w.end_array();
  }
  if (x.stack) {
    w.key("stack");
    if (x.stack->empty()) {
      w.null();
    } else {
      w.string(*x.stack);
    }
  }
  w.end_object();
}

// `folded`: the folded layout, in a run some of whose meshes or placements name ep.
void write_mesh(JsonStream& w, const MeshCapacity& m, bool folded) {
  // A mesh that cannot be laid out, or was not counted, has no rank: its bytes and ranks
  // are null.
  const bool ranks = m.laid_out();
  w.start_object();
  w.key("mesh");
  write_coordinates(w, m.mesh, nullptr);
  w.key("devices").number(m.mesh.devices);
  if (folded) {
    w.key("expert_mesh");
    if (m.expert) {
      w.start_object();
      w.key(kExpertDataAxis).number(m.expert->edp);
      w.key(kExpertAxis).number(m.expert->ep);
      w.end_object();
    } else {
      w.null();
    }
  }
  w.key("max_rank_bytes").optional_number(ranks ? std::optional(m.max_rank_bytes) : std::nullopt);
  w.key("min_rank_bytes").optional_number(ranks ? std::optional(m.min_rank_bytes) : std::nullopt);
  for (const auto& [key, at, expert] :
       {std::tuple{"max_rank", &m.max_rank, m.expert ? &m.expert->max_rank : nullptr},
        std::tuple{"min_rank", &m.min_rank, m.expert ? &m.expert->min_rank : nullptr}}) {
    w.key(key);
    if (!ranks) {
      w.null();
    } else {
      write_rank(w, m.mesh, *at, folded);
    }
    if (!folded) continue;
    w.key(std::string(key) + "_expert");
    if (expert != nullptr && ranks) {
      write_expert_coordinates(w, *expert);
    } else {
      w.null();
    }
  }
  w.key("stages");
  if (ranks) {
    write_stages(w, m, folded);
  } else {
    w.null();
  }
  w.key("divisible").boolean(m.divisible());
  w.key("indivisible");
  if (m.indivisible) {
    write_indivisible(w, *m.indivisible);
  } else {
    w.null();
  }
  w.key("refused").optional_string(m.refused);
  w.key("fits").optional_boolean(m.fits);
  w.key("over_by_bytes").optional_number(m.fits ? std::optional(m.over_by) : std::nullopt);
  w.end_object();
}

// {"mesh", "devices", "max_rank_bytes", "ties"} of the answer, or null without one.
void write_answer(JsonStream& w, const CapacityResult& result) {
  const MeshCapacity* answer = capacity_answer(result);
  if (answer == nullptr) {
    w.null();
    return;
  }
  w.start_object();
  w.key("mesh");
  write_coordinates(w, answer->mesh, nullptr);
  w.key("devices").number(answer->mesh.devices);
  w.key("max_rank_bytes").number(answer->max_rank_bytes);
  w.key("ties").number(capacity_ties(result));
  w.end_object();
}

}  // namespace

void write_mesh_json(JsonStream& w, const Mesh& mesh) { write_coordinates(w, mesh, nullptr); }

void write_capacity_json(JsonStream& w, const CapacityResult& result) {
  write_settings_json(w, result);
  w.key("swept").boolean(result.swept);
  w.key("answer");
  write_answer(w, result);
  w.key("meshes").start_array();
  for (const MeshCapacity& m : result.meshes) {
    if (capacity_shown(result, m)) write_mesh(w, m, expert_view(result));
  }
  w.end_array();
}

}  // namespace hpfreeze
