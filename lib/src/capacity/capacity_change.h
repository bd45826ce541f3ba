#pragma once
// What a plan change costs on one mesh (diff --model; docs/cli.md, "--model"): the figures
// of the planner's one mesh for the old meta and for the new, and their text and JSON.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "capacity/capacity.h"

namespace hpfreeze {

// One meta's figures: those of report --json's one mesh (meshes[0]).
struct MeshMemory {
  Mesh mesh;                             // the planner's, axes in placement order
  std::vector<AxisSize> sizes;           // the same sizes by axis name: which mesh it is
  std::optional<std::uint64_t> devices;  // nullopt: the planner did not run
  // nullopt when no rank was counted (the mesh cannot be laid out, was refused, or the
  // planner did not run); `no_ranks` then says why.
  std::optional<std::uint64_t> max_rank_bytes;
  std::optional<std::uint64_t> min_rank_bytes;
  std::string no_ranks;
  std::size_t errors = 0;  // the error findings of the report they come from
};

// The figures of `result`'s one mesh (a result without sweeps); `sizes` is the report's
// mesh (by axis name), `errors` its error findings, `not_planned` what to say when the
// planner did not run (no meshes).
MeshMemory mesh_memory(const CapacityResult& result, std::vector<AxisSize> sizes,
                       std::size_t errors, const std::string& not_planned);

struct MemoryChange {
  MeshMemory old_memory;
  MeshMemory new_memory;
  // Both on the same mesh (the same sizes, whatever the axis order).
  [[nodiscard]] bool same_mesh() const { return old_memory.sizes == new_memory.sizes; }
};

// "worst rank on tp=4 ep=8: 354.1 MiB -> 537.4 MiB (+183.4 MiB, +51.8 %)", the same line
// for the best rank, and "devices: 32 -> 64" when the two differ; with two meshes
// "on tp=4 ep=8 -> tp=8 ep=8". Each line ends with '\n'.
void append_memory_change_text(std::string& out, const MemoryChange& change);

// One compact JSON object and '\n': {"memory": {"mesh", "old": {"mesh", "devices",
// "max_rank_bytes", "min_rank_bytes", "errors"}, "new": {...}}}; "mesh" is null when the
// two meshes differ.
void append_memory_change_json(std::string& out, const MemoryChange& change);

}  // namespace hpfreeze
