#pragma once
// The meta checker, the pass of `hpfreeze check`: an offline preflight of a decoded
// codegen_meta.json, optionally against a model (the findings are specified in docs/cli.md,
// "hpfreeze check"). The command, which loads the files, is in check_command.h.

#include <string>

#include "dumps/plan.h"
#include "hpfreeze/base/diagnostic.h"
#include "meta/meta.h"

namespace hpfreeze {

// Check's one order of findings: those located in `meta_file` first, then the others (the
// model file's); within a file by JSON Pointer (byte order), then by message; stable.
void sort_findings(Diagnostics& findings, const std::string& meta_file);

// Every finding about `meta` (and `model` when given), `decode_findings` (what the
// keep-going decode, decode_meta_keep_going, found) among them, in sort_findings' order.
// Aggregated findings (unknown axes, ambiguous
// negative dims) sit at their first occurrence in document order.
Diagnostics check_meta(const FrozenMeta& meta, Diagnostics decode_findings, const ModelTree* model,
                       bool allow_uncovered = false);

}  // namespace hpfreeze
