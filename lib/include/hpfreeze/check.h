#pragma once
// The meta checker, the pass of `hpfreeze check`: an offline preflight of a
// codegen_meta.json, optionally against a model tree dump (the findings are specified in
// docs/cli.md, "hpfreeze check"). The command is in check_command.h.

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

// Every finding about `meta` (and `model` when given), sorted: findings located in the meta
// file first, then those located in the model file; within a file by JSON Pointer (byte
// order), then by message. Aggregated findings (unknown axes, ambiguous negative dims) sit
// at their first occurrence in document order.
Diagnostics check_meta(const JsonDocument& meta, const ModelTree* model,
                       bool allow_uncovered = false);

}  // namespace hpfreeze
