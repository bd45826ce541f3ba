#pragma once
// The plan-dump form of a placement read back, for the plan decoder (dumps/plan_decode.cc):
// the inverse of placement_to_dump (placement.h), defined beside it in placement.cc.

#include <simdjson.h>

#include "json/dom_decode.h"
#include "spec/placement.h"

namespace hpfreeze {

// `o` is a {"$placement": TYPE, ...} object at `pointer`, `type` the value of its one
// "$placement" key. Every field its type takes, each at most once, none other, as
// docs/formats.md ("Typed values") states. Throws dom_decode::DecodeError at the first
// defect: the decoders turn it into their diagnostic.
Placement placement_from_dump(simdjson::dom::object o, simdjson::dom::element type,
                              const dom_decode::Path& pointer);

}  // namespace hpfreeze
