#pragma once
// A sharded checkpoint's index (`*.safetensors.index.json`, docs/formats.md "Checkpoints")
// decoded: its weight_map, the shards it names and the check of each shard's tensors
// against it. The shards are files, read by the loader (lib/src/inputs/model_input.cc),
// which appends each one's header to model() (safetensors_header.h) and asks check_shard.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/name_index.h"
#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/json_document.h"

namespace hpfreeze {

class CheckpointIndex {
 public:
  // The index `index`, found at `path` (its shards are named relative to its directory;
  // "-": the current one). Errors: a repeated key, the weight_map's shape, a shard name
  // that leaves the index's directory. Views the document's strings: it must outlive the
  // result.
  static Expected<CheckpointIndex> decode(const JsonDocument& index, const std::string& path);

  // The shards in the order the weight_map first names them.
  [[nodiscard]] std::size_t shards() const { return shards_.size(); }
  // The file to read shard `s` from.
  [[nodiscard]] std::string shard_path(std::size_t s) const;
  // The tree every shard's header is appended to.
  ModelTree& model() { return model_; }
  // Shard `s`'s tensors (model().parameters from `from` on) against the weight_map: each
  // listed there, for this shard, and in no other shard.
  std::optional<Diagnostic> check_shard(std::size_t s, std::size_t from);
  // The tree, or the first weight_map entry that no shard held.
  Expected<ModelTree> finish() &&;

 private:
  CheckpointIndex() = default;

  ModelTree model_;
  std::string dir_;  // the index's directory with its '/', empty for the current one
  // The weight_map's entries (tensor, shard) in the index's order.
  std::vector<std::pair<std::string_view, std::size_t>> listed_;
  std::vector<std::string_view> shards_;
  NameIndex by_name_;               // over listed_'s tensors
  std::vector<std::size_t> found_;  // the shard each entry was found in
};

}  // namespace hpfreeze
