#pragma once
// `hpfreeze diff`: the semantic difference of two codegen_meta.json files.
//
// Semantic means: object key order is irrelevant; values Python would write differently
// are different (1 vs 1.0, 0.0 vs -0.0); placement strings in `params` and in the leaves of
// the named-placement and value_to_dict fields compare by canonical form (`SS( 0 , 2 )`
// equals `SS(0,2)`); injections pair up by `match`, not by index; frozen_sharded_params
// and tied_pairs compare as multisets.

#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json.h"

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
  // (/frozen_sharded_params, /tied_pairs, /injections for entries without a string match).
  std::string pointer;
  std::optional<Json> old_value;  // absent for kAdd
  std::optional<Json> new_value;  // absent for kRemove
  DiffSubject subject = DiffSubject::kValue;
};

struct DiffOptions {
  std::vector<std::string> ignored_fields;  // top-level keys left out of the comparison
};

// Both metas must be JSON objects (anything else compares as one whole value at "").
// The result is sorted by pointer (token by token), then op, then values; the values are
// copies whose strings view into `old_meta` and `new_meta`.
std::vector<MetaDifference> diff_metas(const Json& old_meta, const Json& new_meta,
                                       const DiffOptions& options);

// One line per difference, each ending in '\n':
//   `- POINTER: OLD`, `+ POINTER: NEW`, `~ POINTER: OLD -> NEW`, or for whole boundaries and
//   injections `+ POINTER: boundary added` (`injection removed`, ...).
// A pointer holding control characters is printed as a quoted JSON string.
std::string render_diff_text(const std::vector<MetaDifference>& differences);

// One compact JSON object per line: {"op","pointer","old","new"}, "old" left out for "add"
// and "new" for "remove".
std::string render_diff_json_lines(const std::vector<MetaDifference>& differences);

// Semantic equality as diff_metas uses it for plain values (no placement canonicalisation).
bool same_json(const Json& a, const Json& b);

struct DiffRequest {
  std::string old_path;  // "-" for stdin (at most one of the two)
  std::string new_path;
  bool json = false;
  DiffOptions options;
};

struct DiffReport {
  std::string output;  // for stdout
  bool different = false;
};

// Reads and compares both files. Errors: unreadable files (kIo), invalid JSON and a document
// that is not a JSON object (kRejected); the front end exits 2 on any of them.
Expected<DiffReport> run_diff(const DiffRequest& request);

}  // namespace hpfreeze
