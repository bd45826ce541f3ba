#pragma once
// The identity members of a meta that readers need decoded (meta.h: MetaCovered,
// MetaParallelDims), for decode_meta and decode_base_meta alike.

#include "json/json.h"
#include "meta/meta.h"

namespace hpfreeze {

// A present member's state: null, an object, or another value.
MetaMemberState state_of(const Json& value);

MetaCovered decode_covered(const Json& value);
MetaParallelDims decode_parallel_dims(const Json& value);

}  // namespace hpfreeze
