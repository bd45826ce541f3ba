#pragma once
// The meshes of a run stage by stage (docs/capacity.md, "Pipeline stages"): for each pp
// size, the stack split into stages, a CapacityModel per stage over the parameters it
// holds, each evaluated on the mesh's other axes, and the mesh's figures from theirs. A
// mesh without pp, or at pp = 1, is the whole model's, as before stages.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "capacity/capacity.h"
#include "capacity/pipeline.h"

namespace hpfreeze::capacity_detail {

class StagedModel {
 public:
  // `whole` is the model of every parameter of `params`, built with `order` and the
  // request's accounting; all three must outlive this.
  StagedModel(const CapacityRequest& request, const CapacityParamSource& params,
              const std::vector<std::string>& order, const CapacityModel& whole)
      : request_(request), params_(params), order_(order), whole_(whole) {}

  // The figures of `mesh`, its stages filled in. Fails on a model error of a stage's
  // parameters, and on a placement that shards pp when the mesh splits the stack.
  Expected<MeshCapacity> evaluate(const Mesh& mesh);

 private:
  // The stages of one pp size: their split, models and parameters (indexes of params_,
  // ascending), or why pp cannot split the stack.
  struct Split {
    StageSplit split;
    std::vector<CapacityModel> models;
    std::vector<std::vector<std::size_t>> members;
    // Per stage: the first stage of the same groups (itself when none is earlier), whose
    // figures it takes renamed rather than counted again.
    std::vector<std::size_t> twins;
    std::optional<Indivisible> unsplittable;
  };
  Expected<const Split*> split_for(std::uint64_t pp);
  // Each parameter's position, read once; fails on a Shard on pp.
  std::optional<Diagnostics> read_positions();
  std::vector<std::vector<std::size_t>> members_of(const StageSplit& split) const;
  MeshCapacity combine(const Mesh& mesh, std::vector<MeshCapacity>& parts,
                       const Split& split) const;

  const CapacityRequest& request_;
  const CapacityParamSource& params_;
  const std::vector<std::string>& order_;
  const CapacityModel& whole_;
  std::vector<StagePosition> positions_;  // per parameter, once read
  bool positions_read_ = false;
  std::map<std::uint64_t, Split> splits_;  // by pp size
};

}  // namespace hpfreeze::capacity_detail
