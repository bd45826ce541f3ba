#pragma once
// Pieces of `report` kept apart from the builder (build_report.cc): the mesh side in
// report_axes.cc (the sizes a meta's parallel_dims gives, the axes the inputs know, as
// every --mesh and --sweep axis must be one, the error of sizes that make no mesh), and
// the orders of a report's lists.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hpfreeze/capacity.h"
#include "hpfreeze/diagnostic.h"
#include "hpfreeze/meta.h"
#include "hpfreeze/report.h"

namespace hpfreeze::report_detail {

// An axis some placement names. Meshes have a handful, so a table of them is scanned.
struct AxisInfo {
  std::string_view name;
  std::string first_use;  // pointer of its first placement
  std::size_t rank = 0;   // position in Report::axis_order
  std::uint64_t size = 1;
  bool shards = false;  // some placement on it is a Shard or StridedShard
};

struct ParallelDims {
  bool present = false;  // the meta has a parallel_dims object
  bool named = false;    // the meta has parallel_dims, an object or null
  std::vector<std::pair<std::string, std::uint64_t>> sizes;  // the usable <axis>_size keys
  std::vector<std::string> axes;  // the axis of every <axis>_size key, usable or not
  Diagnostics findings;           // what was ignored, and why
};

// Reads parallel_dims: every key `<axis>_size` with an integer from 1 to 2^63-1 is a
// size; any other value of such a key is ignored with a warning, a parallel_dims that is
// not an object (nor null) is an error.
ParallelDims read_parallel_dims(const FrozenMeta& meta);

// The axes the inputs know, by name: `named` (mesh_dim_names, parallel_dims's axes, every
// axis a placement names), the ZeRO axes and the --replica-axis names.
std::vector<std::string> known_axes(std::vector<std::string> named, const ReportPlanOptions& plan);

// One usage error per --replica-axis that some placement shards (`axes`: every axis a
// placement names): a replica axis holds whole copies.
Diagnostics sharded_replica_axes(const std::vector<AxisInfo>& axes, const ReportPlanOptions& plan,
                                 const std::string& meta_file);

// One usage error per --mesh or --sweep axis not in `known` (sorted): it lists them and
// suggests the nearest (equal ignoring case first, else by edit distance).
Diagnostics unknown_axes(const std::vector<std::string>& known,
                         const std::optional<std::vector<AxisSize>>& mesh,
                         const std::vector<AxisSweep>& sweeps);

// Sizes that make no mesh (enumerate_meshes failed with `problem`): a usage error naming
// the flags that gave sizes (and the sizes parallel_dims gave to a mesh too large), or,
// with parallel_dims alone, the meta's error at /parallel_dims. `usage` says which.
Diagnostic mesh_sizes_error(Diagnostic error, MeshesProblem problem, bool mesh_flag,
                            const std::vector<AxisSweep>& sweeps,
                            const std::vector<AxisSize>& from_parallel_dims,
                            const std::string& meta_file, bool& usage);

// Puts the lists of a report in their documented order (report.h): params by
// rank-0 bytes, then FQN (only the first `sorted_params` when given), boundaries the same,
// uncovered params by bytes, then FQN, findings by severity (stable).
void sort_report(Report& report, std::optional<std::size_t> sorted_params);

}  // namespace hpfreeze::report_detail
