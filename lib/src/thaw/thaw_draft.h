#pragma once
// What the thaw pass (thaw.cc) hands its two writers: the plan dump as a tree (thaw_meta)
// and as bytes written straight from the meta (thawed_plan_encode.cc, for
// thaw_meta_to_bytes), which never builds the tree of every param's placements.

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/concurrency.h"
#include "json/json.h"
#include "meta/meta.h"
#include "spec/spec_fields.h"

namespace hpfreeze {

// One plan-dump module: the fields by kSpecFields index. A `params` object comes from the
// boundary's decoded params (`params`, with fields[kParamsField] left empty); a `params`
// that is null stays in `fields`.
struct ModuleDraft {
  std::string_view fqn;
  std::array<std::optional<Json>, kSpecFields.size()> fields;
  const MetaBoundary* params = nullptr;
  bool has_injection = false;
};

// The plan dump: `head` holds its members before "modules", `modules` the modules in the
// dump's order.
struct ThawDraft {
  JsonObject head;
  std::vector<ModuleDraft> modules;
};

// A boundary's params as the plan dump holds them: param -> axis -> placement_to_dump.
Json thawed_params(const MetaBoundary& b);

// encode_plain_json of the draft's plan dump (head, then "modules") without building its
// tree; in two halves at once where `concurrency` has a second CPU and the dump is large.
std::string encode_thawed_plan(const ThawDraft& draft, Concurrency concurrency);

}  // namespace hpfreeze
