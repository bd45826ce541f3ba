#pragma once
// The thaw pass, the inverse of freeze: a decoded codegen_meta.json (meta.h) becomes a
// plan dump (hpfreeze.plan/v1) and, on request, a model tree dump (hpfreeze.model/v1) such
// that freezing them again reproduces the meta's param_plan, injections,
// frozen_sharded_params, tied_pairs, special_handlers and mesh_dim_names byte for byte, for
// every meta freeze can write. docs/cli/thaw.md lists what cannot round-trip. The command
// that reads and writes the files is thaw_command.h.

#include <optional>
#include <string>

#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"
#include "meta/meta.h"
#include "spec/placement.h"

namespace hpfreeze {

// Inverse of freeze's value_to_dict, for named placements and value_to_dict fields:
// - a string that is a placement in canonical form becomes a typed placement; any other
//   string (a callable's name, "SS( 0 , 2 )", "S(x)") stays a string;
// - an object with a `_target_` key, or with a `$placement`/`$target`/`$callable` key
//   (which a dump would read as a typed value), becomes {"$target": object}, copied as is;
// - other objects and arrays are converted member by member; anything else is copied.
Json thaw_value(const Json& value);

struct ThawOptions {
  bool model = false;  // also build the model tree dump
  // A large meta's sharded-name check runs beside the drafting, and a large plan dump is
  // written in two halves at once, only when this has a second CPU.
  Concurrency concurrency;
};

struct ThawedPlan {
  Json plan;                  // the plan dump; views into the meta's document, static strings
  std::optional<Json> model;  // the model tree dump, when requested
  Diagnostics warnings;       // what will not round-trip
};

// Errors (kRejected) for metas that no plan dump can express though decode_meta accepts
// them: a key no field-table row names, a '$'-tagged key inside a plain field, a
// `covered` that is not an object. The
// plan views only into the document `meta` was decoded from (its strings), so it may
// outlive `meta` itself.
Expected<ThawedPlan> thaw_meta(const FrozenMeta& meta, const ThawOptions& options);

// thaw_meta's outputs as run_thaw writes them: encode_plain_json of each plus a newline.
// The plan's bytes are written straight from the meta's decoded params, without the tree
// of every placement, so `meta` must still be there (the bytes view nothing).
struct ThawedBytes {
  std::string plan;
  std::optional<std::string> model;
  Diagnostics warnings;
};
Expected<ThawedBytes> thaw_meta_to_bytes(const FrozenMeta& meta, const ThawOptions& options);

}  // namespace hpfreeze
