#pragma once
// Placements: how one tensor dimension is laid out along one mesh axis (docs/formats.md,
// "Typed values"; the string grammar in docs/cli.md, "hpfreeze parse").

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"

namespace hpfreeze {

// kLast names the last kind, so a new one goes before it (or moves it) where it is added.
enum class PlacementKind : std::uint8_t {
  kShard,
  kStridedShard,
  kReplicate,
  kPartial,
  kLast = kPartial
};
// The number of kinds: the rows of every table indexed by kind (placement.cc's names, each
// required non-empty), and the bits freeze packs a kind into (freeze.cc).
inline constexpr std::size_t kPlacementKinds = static_cast<std::size_t>(PlacementKind::kLast) + 1;

struct Placement {
  // Members ordered largest first: 40 bytes rather than 48, and a plan holds one per
  // param and axis.
  //
  // The real dim. Negative values are PyTorch-style (counted from the end) and are the
  // known flaw of the canonical form: S(-1) reads back as Shard(0, uneven_shard=true).
  std::int64_t dim = 0;
  std::int64_t split_factor = 1;  // StridedShard only, >= 1
  // Partial only; a view into the text or document the placement was read from.
  std::string_view reduce_op = "sum";
  PlacementKind kind = PlacementKind::kReplicate;
  bool uneven_shard = false;  // Shard / StridedShard only

  static Placement shard(std::int64_t dim, bool uneven = false);
  static Placement strided_shard(std::int64_t dim, std::int64_t split_factor, bool uneven = false);
  static Placement replicate();
  static Placement partial(std::string_view reduce_op = "sum");

  // Shard, StridedShard and Partial make a parameter "sharded" in the frozen plan.
  [[nodiscard]] bool is_sharded() const { return kind != PlacementKind::kReplicate; }
  [[nodiscard]] bool has_dim() const {
    return kind == PlacementKind::kShard || kind == PlacementKind::kStridedShard;
  }
  // The dim as the canonical string carries it: -dim-1 when uneven.
  [[nodiscard]] std::int64_t encoded_dim() const { return uneven_shard ? ~dim : dim; }
  // The chunks of the sharded dim per rank of the axis: torch.chunk cuts it into n x this
  // many and deals them out (chunk_geometry.h). A StridedShard's split factor, else 1.
  [[nodiscard]] std::uint64_t chunk_factor() const {
    return kind == PlacementKind::kStridedShard && split_factor > 1
               ? static_cast<std::uint64_t>(split_factor)
               : 1;
  }

  friend bool operator==(const Placement& a, const Placement& b);
};

// "Shard", "StridedShard", "Replicate", "Partial": the names of the dump's $placement tag.
std::string_view placement_type_name(PlacementKind kind);

// The plan-dump form of a placement (docs/formats.md, plan dump): {"$placement": "Shard",
// "dim": d, "uneven_shard": u} and the like, every field written. A Partial's reduce_op
// views into the placement's own view.
Json placement_to_dump(const Placement& p);

// S(d), SS(d,f), R or P(op).
std::string to_canonical(const Placement& p);
void append_canonical(std::string& out, const Placement& p);

// Parses a placement string (docs/cli.md, "hpfreeze parse"): the inverse of to_canonical,
// also accepting Python-int() spellings such as `SS( 0 , 2 )` or `S(1_0)`. The Partial reduce_op
// views into `text`. On failure the diagnostic's message names the offending text and says what is
// wrong.
Expected<Placement> parse_placement(std::string_view text);

// Python int() over ASCII: optional sign, digits with single '_' between digits, surrounded
// by whitespace (Python's str.isspace() restricted to ASCII). False when not an integer;
// `overflow` is set when it is one but does not fit in int64.
bool parse_python_int(std::string_view text, std::int64_t& value, bool& overflow);

}  // namespace hpfreeze
