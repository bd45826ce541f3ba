#pragma once
// The report's byte counts as the meshes table counts them (docs/cli.md, "report"): the ZeRO
// groups at rank 0 of the report's mesh (what each element costs and what rank 0 keeps of
// it are capacity/accounting.h's), and the folded layout's rule for expert parameters. The
// builder (build_report.cc) calls these per parameter.

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "capacity/capacity.h"
#include "hpfreeze/base/diagnostic.h"
#include "meta/meta.h"
#include "report/report.h"

namespace hpfreeze::report_detail {

using AxisSizes = std::map<std::string, std::uint64_t, std::less<>>;

// Product of `shape` times `unit`; false on overflow. A zero dim makes it 0 whatever the
// rest.
bool checked_volume(std::span<const std::uint64_t> shape, std::uint64_t unit, std::uint64_t& out);

// The ZeRO groups at rank 0 of the mesh `sizes`: the product of the listed axes, and in the
// folded layout edp (the dense region over ep; 1 when ep does not divide it).
ZeroGroups rank0_zero_groups(const Accounting& accounting, const AxisSizes& sizes);

// The group a parameter is split over (`param` nullptr: an uncovered one, which no
// placement shards): edp for an expert, else the listed axes it is not sharded on.
std::uint64_t zero_group_of(const ZeroSharding& zero, const AxisSizes& sizes,
                            const MetaParam* param, bool expert, const ZeroGroups& groups);

// In the folded layout, whether a Shard or StridedShard puts `param` on ep.
bool is_expert(ExpertLayout layout, const MetaParam& param);

// An expert is split on ep only (upstream: no second-axis sharding): one error per other
// placement that is not a Replicate, at `pointer` (the param's) joined with its axis.
Diagnostics expert_placement_errors(const MetaParam& param, const std::string& meta_file,
                                    const std::string& pointer);

}  // namespace hpfreeze::report_detail
