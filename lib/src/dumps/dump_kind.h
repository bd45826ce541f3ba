#pragma once
// Which of hpfreeze's file kinds a JSON document seems to be, for one message when a user
// passes the wrong file ("this looks like a codegen_meta.json; --plan wants a plan dump
// (hpfreeze.plan/v1)"), the same from every command that reads that kind. Every reader's
// rule is here, and every wrong-kind message comes from wrong_kind_error:
// - the plan and model readers (freeze --plan and --model, expand): guess_dump_kind;
// - freeze --base: base_meta_lookalike_kind;
// - the meta readers (decode_meta: check, thaw, report, diff): meta_lookalike_kind;
// - --model of report and check, by its first bytes: looks_like_safetensors;
// - every JSON reader given a file that is no JSON: not_json_kind (freeze's --model:
//   not_json_model_dump_kind).

#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "json/json_document.h"

namespace hpfreeze {

enum class DumpKind { kUnknown, kPlan, kModel, kMeta, kCheckpointIndex, kSafetensors };

// The kind a document's `format` tag names (kUnknown for none or another tag).
DumpKind tagged_dump_kind(const JsonDocument& document);

// The kind from the top-level keys: the `format` tag and the shape of `modules` (spec
// objects in a plan, class names in a model tree) must not contradict each other, so that
// a real dump with one bad field keeps its decoder's exact error; `param_plan` or
// `codegen_version` without `modules` is a meta, an object `weight_map` without `modules`
// a sharded checkpoint's index. The document's tree must be alive.
DumpKind guess_dump_kind(const JsonDocument& document);

// What a meta reader takes a document for instead of a meta: the dump its `format` tag
// names, else, when it has `modules` and no `param_plan` (which a meta never lacks and a
// dump never has), a model tree dump if it has `parameters` and a plan dump if not;
// kUnknown when it may be a meta. The document's tree must be alive.
DumpKind meta_lookalike_kind(const JsonDocument& document);

// What freeze takes a --base file for: the kind its `format` tag names (a plan or model
// dump would put its `format`, `modules` or `parameters` into the meta, and the tag alone
// is enough for the meta readers to refuse the meta), else guess_dump_kind.
DumpKind base_meta_lookalike_kind(const JsonDocument& document);

// "a plan dump (hpfreeze.plan/v1)", "a model tree dump (hpfreeze.model/v1)",
// "a codegen_meta.json", "a sharded checkpoint's index", "a safetensors checkpoint".
std::string_view dump_kind_name(DumpKind kind);

// Whether the first bytes of a file (up to 8) are a safetensors file's header length: a
// NUL byte among them, which no JSON text holds and every header length below 2^56 has.
bool looks_like_safetensors(std::string_view first_bytes);

// What a text that did not parse as JSON is instead, as the message that replaces its
// syntax error (ParseOptions::not_json): for a whole safetensors file (its header length,
// a header that fits in the bytes and starts as an object) "this looks like a safetensors
// checkpoint, not JSON (report and check read one as --model FILE, by path)". nullopt for
// anything else, a stream cut at its first NUL included: it keeps its syntax error.
std::optional<std::string> not_json_kind(std::string_view bytes);

// The same for freeze's --model, which wants a model tree dump: a safetensors file is "this
// looks like a safetensors checkpoint, not JSON; --model wants a model tree dump
// (hpfreeze.model/v1): " and why (the module classes a checkpoint does not hold) and where
// one comes from (hpfreeze-export), as wrong_kind_error says it of an index.
std::optional<std::string> not_json_model_dump_kind(std::string_view bytes);

// "this looks like KIND; WHO wants WANTED" (no pointer) when `kind` is known and not
// `wanted`; `who` is the flag or command that read the document. A checkpoint's index where
// a model tree dump is wanted (freeze --model) adds why a checkpoint will not do and where a
// dump comes from.
std::optional<Diagnostic> wrong_kind_error(const JsonDocument& document, DumpKind kind,
                                           DumpKind wanted, std::string_view who);

}  // namespace hpfreeze
