#pragma once
// The skipped-overrides rule of `hpfreeze check`: the plan_overrides entries generation left
// out (the meta's skipped_overrides), one warning each, as upstream's preflight
// warn_skipped_overrides lists them (docs/cli.md, "skipped_overrides").

#include "hpfreeze/base/diagnostic.h"
#include "meta/meta.h"

namespace hpfreeze {

// One warning per entry of a skipped_overrides array, at /skipped_overrides/I:
// "plan_overrides entry skipped: match 'M': REASON"; and one at /skipped_overrides when it
// is neither null nor an array. In document order.
Diagnostics skipped_override_warnings(const FrozenMeta& meta);

}  // namespace hpfreeze
