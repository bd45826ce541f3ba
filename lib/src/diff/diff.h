#pragma once
// The semantic difference of two codegen_meta.json files, the pass of `hpfreeze diff`
// (and of `freeze --check`), and the two renderings of one difference. The command is in
// hpfreeze/commands/diff_command.h.
//
// Semantic means: object key order is irrelevant; values Python would write differently
// are different (1 vs 1.0, 0.0 vs -0.0); placement strings in `params` and in the leaves of
// the named-placement and value_to_dict fields compare by canonical form (`SS( 0 , 2 )`
// equals `SS(0,2)`); injections pair up by `match`, not by index; frozen_sharded_params
// and tied_pairs compare as multisets.

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/diff/diff_options.h"
#include "json/json.h"
#include "meta/meta.h"

namespace hpfreeze {

// Declaration order is the order differences at one pointer are listed in.
enum class DiffOp { kRemove, kAdd, kChange };

// What a difference is about; decides how the text form shows its values.
enum class DiffSubject {
  kValue,      // any JSON value, shown as compact JSON
  kPlacement,  // a placement leaf: canonical-looking strings shown bare (S(0))
  kBoundary,   // a whole param_plan entry: "boundary added" / "boundary removed"
  kInjection,  // a whole injection: "injection added" / "injection removed"
};

struct MetaDifference {
  DiffOp op = DiffOp::kChange;
  // JSON Pointer of the value in the meta, except that injections are addressed by their
  // match (/injections/<match>/<key>) and multiset members by their array
  // (/frozen_sharded_params, /tied_pairs). Valid only during the visitor's call.
  std::string_view pointer;
  const Json* old_value = nullptr;  // nullptr for kAdd
  const Json* new_value = nullptr;  // nullptr for kRemove
  DiffSubject subject = DiffSubject::kValue;
};

struct IgnoredPointer {
  std::string given;    // the item as typed, for messages
  std::string pointer;  // "signature" -> "/signature"; a pointer item as it is
};

// The --ignore items split at commas, each as a JSON Pointer, or usage errors (kIo) for an
// empty item and a pointer with a '~' not followed by 0 or 1.
Expected<std::vector<IgnoredPointer>> ignored_pointers(const DiffOptions& options);

// Usage errors (kIo) for ignored pointers that name nothing in either meta, resolved the
// way diff addresses values: injections by match, and members of the multiset arrays
// (frozen_sharded_params, tied_pairs) cannot be named one by one.
Diagnostics check_ignored(const std::vector<IgnoredPointer>& pointers, const FrozenMeta& old_meta,
                          const FrozenMeta& new_meta);

// Called once per difference, in output order: by pointer (token by token, digit runs as
// numbers), then op, then values.
using DiffVisitor = std::function<void(const MetaDifference&)>;

// Compares two decoded metas field kind by field kind and streams the differences: the
// walk holds nothing per difference, so memory does not grow with their number. An absent
// is_boundary equals an explicit true (upstream's runtime reads it so). Ignored items
// that do not parse are skipped here; run_diff refuses them first.
void diff_metas(const FrozenMeta& old_meta, const FrozenMeta& new_meta, const DiffOptions& options,
                const DiffVisitor& visit);

// One line per difference, ending in '\n':
//   `- POINTER: OLD`, `+ POINTER: NEW`, `~ POINTER: OLD -> NEW`, or for whole boundaries and
//   injections `+ POINTER: boundary added` (`injection removed`, ...).
// A pointer holding control characters is printed as a quoted JSON string.
void append_diff_text(std::string& out, const MetaDifference& difference);

// "remove", "add", "change": the op as --json names it.
std::string_view diff_op_name(DiffOp op);

// One compact JSON object per line: {"op","pointer","old","new"}, "old" left out for "add"
// and "new" for "remove".
void append_diff_json_line(std::string& out, const MetaDifference& difference);

}  // namespace hpfreeze
