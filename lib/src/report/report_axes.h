#pragma once
// The mesh side of the report pass (build_report.cc): the layout, the axis sizes (--mesh or
// the meta's parallel_dims), the axes the placements name and the order they apply in, the
// axes the inputs know (every --mesh and --sweep axis must be one), and the error of sizes
// that make no mesh.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "capacity/capacity.h"
#include "hpfreeze/base/diagnostic.h"
#include "meta/meta.h"
#include "report/report.h"
#include "report/report_accounting.h"

namespace hpfreeze::report_detail {

// An axis some placement names. Meshes have a handful, so a table of them is scanned.
struct AxisInfo {
  std::string_view name;
  std::string first_use;  // pointer of its first placement
  std::size_t rank = 0;   // position in Report::axis_order
  std::uint64_t size = 1;
  bool shards = false;  // some placement on it is a Shard or StridedShard
};

// The axis named `name` among `axes`, nullptr when none is. Meshes have a handful of axes.
template <class Axis>
Axis* find_axis(std::span<Axis> axes, std::string_view name) {
  for (Axis& a : axes) {
    if (a.name == name) return &a;
  }
  return nullptr;
}

struct ParallelDims {
  bool present = false;  // the meta has a parallel_dims object
  bool named = false;    // the meta has parallel_dims, an object or null
  std::vector<std::pair<std::string, std::uint64_t>> sizes;  // the usable <axis>_size keys
  Diagnostics findings;                                      // what was ignored, and why
};

// Reads parallel_dims: every key `<axis>_size` with an integer from 1 to 2^63-1 is a
// size; any other value of such a key is ignored with a warning, a parallel_dims that is
// not an object (nor null) is an error.
ParallelDims read_parallel_dims(const FrozenMeta& meta);

// named_axes (report.h) of `meta` whose placements name `placement_axes` (each once).
std::vector<std::string> named_axes(const FrozenMeta& meta,
                                    std::span<const std::string_view> placement_axes);

// The axes the inputs know, by name: `named` (named_axes), the ZeRO axes and the
// --replica-axis names.
std::vector<std::string> known_axes(std::vector<std::string> named, const ReportPlanOptions& plan);

// One usage error per --replica-axis that some placement shards (`axes`: every axis a
// placement names): a replica axis holds whole copies.
Diagnostics sharded_replica_axes(const std::vector<AxisInfo>& axes, const ReportPlanOptions& plan,
                                 const std::string& meta_file);

// One usage error per --mesh or --sweep axis not in `known` (sorted): it lists them and
// suggests the nearest (equal ignoring case first, else by edit distance); `without_meta`,
// an axis no known one equals ignoring case is said to shard nothing without a META.
Diagnostics unknown_axes(const std::vector<std::string>& known,
                         const std::optional<std::vector<AxisSize>>& mesh,
                         const std::vector<AxisSweep>& sweeps, bool without_meta);

// Sizes that make no mesh (enumerate_meshes failed with `problem`): a usage error naming
// the flags that gave sizes (and the sizes parallel_dims gave to a mesh too large), or,
// with parallel_dims alone, the meta's error at /parallel_dims. `usage` says which.
Diagnostic mesh_sizes_error(Diagnostic error, MeshesProblem problem, bool mesh_flag,
                            const std::vector<AxisSweep>& sweeps,
                            const std::vector<AxisSize>& from_parallel_dims,
                            const std::string& meta_file, bool& usage);

// The mesh of one report, read in the builder's order: read(), then use() for each
// placement of the param_plan, then known(), and order() when it holds.
class ReportMesh {
 public:
  ReportMesh(const FrozenMeta& meta, const ReportPlanOptions& plan);

  // The layout (folded unless mesh_dim_names names ep, or --expert-parallel says which)
  // and the sizes: `mesh` (--mesh), else the meta's parallel_dims, whose findings go to
  // `report`; a swept axis takes its sizes from --sweep and counts as size 1 here.
  void read(const std::optional<std::vector<AxisSize>>& mesh, Report& report);

  // The axis a placement names, nullptr before one names it.
  [[nodiscard]] const AxisInfo* find(std::string_view name) const {
    return find_axis(std::span(axes_), name);
  }

  // A placement on `name`: `pointer()` gives its pointer, asked only for the axis's first
  // placement; `shards` whether the placement has a dim.
  template <class Pointer>
  void use(std::string_view name, bool shards, Pointer pointer) {
    if (AxisInfo* a = find_axis(std::span(axes_), name)) {
      a->shards = a->shards || shards;
      return;
    }
    axes_.push_back(AxisInfo{name, pointer()});
    axes_.back().shards = shards;
  }

  // Every --mesh and --sweep axis is one the inputs know, and no --replica-axis is one the
  // plan shards; false, with the usage errors in `report`, otherwise. Once only.
  bool known(const std::optional<std::vector<AxisSize>>& mesh, Report& report);

  // report.axis_order (mesh_dim_names first, in their order, then the other axes of a
  // placement by name), each axis's rank and size, and a note on each axis that changes
  // nothing (not in the mesh, or of size 1).
  void order(Report& report);

  [[nodiscard]] const AxisSizes& sizes() const { return sizes_; }
  // Every axis a placement names, in first-use order.
  [[nodiscard]] const std::vector<AxisInfo>& axes() const { return axes_; }

 private:
  void choose_layout(Report& report) const;
  [[nodiscard]] bool swept(std::string_view axis) const;

  const FrozenMeta& meta_;
  const ReportPlanOptions& plan_;
  std::vector<std::string_view> mesh_dim_names_;
  AxisSizes sizes_;
  std::vector<AxisInfo> axes_;
};

}  // namespace hpfreeze::report_detail
