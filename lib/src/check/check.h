#pragma once
// The meta checker, the pass of `hpfreeze check`: an offline preflight of a decoded
// codegen_meta.json, optionally against a model (the findings are specified in docs/cli.md,
// "hpfreeze check"). The command, which loads the files, is in check_command.h.

#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "meta/meta.h"

namespace hpfreeze {

// Every finding about `meta` (and `model` when given), `decode_findings` (what the
// keep-going decode, decode_meta_keep_going, found) among them, sorted: findings located in
// the meta file first, then those located in the model file; within a file by JSON
// Pointer (byte order), then by message. Aggregated findings (unknown axes, ambiguous
// negative dims) sit at their first occurrence in document order.
Diagnostics check_meta(const FrozenMeta& meta, Diagnostics decode_findings, const ModelTree* model,
                       bool allow_uncovered = false);

}  // namespace hpfreeze
