#pragma once
// Which of hpfreeze's file kinds a JSON document seems to be, for one message when a user
// passes the wrong file ("this looks like a codegen_meta.json; --plan wants a plan dump
// (hpfreeze.plan/v1)"), the same from every command that reads that kind.

#include <optional>
#include <string_view>

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json_document.h"

namespace hpfreeze {

enum class DumpKind { kUnknown, kPlan, kModel, kMeta, kCheckpointIndex, kSafetensors };

// Whether the first bytes of a file (up to 8) are a safetensors file's header length: a
// NUL byte among them, which no JSON text holds and every header length below 2^56 has.
bool looks_like_safetensors(std::string_view first_bytes);

// The kind a document's `format` tag names (kUnknown for none or another tag).
DumpKind tagged_dump_kind(const JsonDocument& document);

// The kind from the top-level keys: the `format` tag and the shape of `modules` (spec
// objects in a plan, class names in a model tree) must not contradict each other, so that
// a real dump with one bad field keeps its decoder's exact error; `param_plan` or
// `codegen_version` without `modules` is a meta, an object `weight_map` without `modules`
// a sharded checkpoint's index. The document's tree must be alive.
DumpKind guess_dump_kind(const JsonDocument& document);

// "a plan dump (hpfreeze.plan/v1)", "a model tree dump (hpfreeze.model/v1)",
// "a codegen_meta.json", "a sharded checkpoint's index", "a safetensors checkpoint".
std::string_view dump_kind_name(DumpKind kind);

// "this looks like KIND; WHO wants WANTED" (no pointer) when `kind` is known and not
// `wanted`; `who` is the flag or command that read the document.
std::optional<Diagnostic> wrong_kind_error(const JsonDocument& document, DumpKind kind,
                                           DumpKind wanted, std::string_view who);

}  // namespace hpfreeze
