#pragma once
// The identity members check --bundle and the skipped-overrides warning read (meta.h:
// MetaBundle, MetaSkippedOverrides), decoded without judging them: check does that.

#include "json/json.h"
#include "meta/meta.h"

namespace hpfreeze {

// Decodes the top-level member `m` into `bundle` or `skipped` when it is one of theirs
// (model_name, outputs, remote_siblings, skipped_overrides); any other member is left alone.
void decode_bundle_member(const JsonMember& m, MetaBundle& bundle, MetaSkippedOverrides& skipped);

}  // namespace hpfreeze
