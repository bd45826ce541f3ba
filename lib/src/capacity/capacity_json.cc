// The JSON of a capacity result (capacity_json.h), through the --json stream writer.
#include "capacity/capacity_json.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

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

void write_mesh(JsonStream& w, const MeshCapacity& m) {
  w.start_object();
  w.key("mesh");
  write_coordinates(w, m.mesh, nullptr);
  w.key("devices").number(m.mesh.devices);
  w.key("max_rank_bytes").number(m.max_rank_bytes);
  w.key("min_rank_bytes").number(m.min_rank_bytes);
  w.key("max_rank");
  write_coordinates(w, m.mesh, &m.max_rank);
  w.key("min_rank");
  write_coordinates(w, m.mesh, &m.min_rank);
  w.key("divisible").boolean(m.divisible());
  w.key("indivisible");
  if (m.indivisible) {
    const Indivisible& x = *m.indivisible;
    w.start_object();
    w.key("param").string(x.fqn);
    w.key("dim").number(x.dim);
    w.key("size").number(x.size);
    w.key("axis").string(x.axis);
    w.key("axis_size").number(x.axis_size);
    w.key("split_factor").number(x.split_factor);
    w.end_object();
  } else {
    w.null();
  }
  w.key("fits").optional_boolean(m.fits);
  w.key("over_by_bytes").optional_number(m.fits ? std::optional(m.over_by) : std::nullopt);
  w.end_object();
}

}  // namespace

void write_capacity_answer(JsonStream& w, const MeshCapacity* answer) {
  if (answer == nullptr) {
    w.null();
    return;
  }
  w.start_object();
  w.key("mesh");
  write_coordinates(w, answer->mesh, nullptr);
  w.key("devices").number(answer->mesh.devices);
  w.key("max_rank_bytes").number(answer->max_rank_bytes);
  w.end_object();
}

void write_capacity_meshes(JsonStream& w, const CapacityResult* result) {
  w.start_array();
  if (result != nullptr) {
    for (const MeshCapacity& m : result->meshes) {
      if (!result->fits_only || m.usable()) write_mesh(w, m);
    }
  }
  w.end_array();
}

std::string render_capacity_json(const CapacityResult& result) {
  std::string out;
  {
    JsonStream w(out, JsonLayout::kOneLine);
    w.start_object();
    w.key("optimizer").string(optimizer_name(result.optimizer));
    w.key("zero").start_object();
    w.key("stage").integer(result.zero.stage);
    w.key("axis").string(result.zero.axis);
    w.end_object();
    w.key("budget_bytes").optional_number(result.budget);
    w.key("axis_order").start_array();
    for (const std::string& a : result.axis_order) w.string(a);
    w.end_array();
    w.key("params").number(result.params);
    w.key("full_bytes").number(result.full_bytes);
    w.key("answer");
    write_capacity_answer(w, capacity_answer(result));
    w.key("meshes");
    write_capacity_meshes(w, &result);
    w.end_object();
    w.end_line();
  }
  return out;
}

}  // namespace hpfreeze
