#pragma once
// The plan dump (docs/formats.md, "plan dump") and the model tree dump ("model tree dump")
// as plain C++ structs. Every string is a view into the JsonDocument it was decoded from:
// keep it alive. Users that only read the structs need no simdjson: the document type is
// only declared here (include json/json_document.h to make one).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "base/huge_block.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"
#include "spec/placement.h"
#include "spec/spec_fields.h"

namespace hpfreeze {

class JsonDocument;
class NameIndex;

// {"$target": {...}}: the inner object (upstream's Target.to_dict()), copied as is.
struct Target {
  Json object;
};
// {"$callable": "name"}: a function, recorded by name.
struct Callable {
  std::string_view name;
};

struct SpecValue;
struct SpecMember;
using SpecArray = std::vector<SpecValue>;
using SpecObject = std::vector<SpecMember>;

// A module-spec value: scalars as Json, containers as SpecArray/SpecObject (so typed values
// may appear at any depth), typed values as their own alternatives.
struct SpecValue {
  std::variant<Json, Placement, Target, Callable, SpecArray, SpecObject> v;
};
struct SpecMember {
  std::string_view key;
  SpecValue value;
};

struct AxisPlacement {
  std::string_view axis;
  Placement placement;
};
struct ParamPlacements {
  std::string_view name;
  std::span<AxisPlacement> axes;  // dump order; held by the PlanDump's AxisStorage
};

// The axes of every param of a plan (a param's axes are contiguous).
using AxisStorage = BlockArena<AxisPlacement>;

struct ModuleField {
  std::size_t index;  // into kSpecFields
  SpecValue value;
};

struct ModuleSpec {
  std::string_view fqn;
  // `params` (kSpecFields[kParamsField]); nullopt when missing or null.
  std::optional<std::vector<ParamPlacements>> params;
  // Every other table field that is present and not null, sorted by its kSpecFields index
  // (stored sparsely: most modules set one or two of the sixteen fields). The kind's type
  // rules have already been checked.
  std::vector<ModuleField> fields;
};

// Typed placements whose real dim is negative (PyTorch style): their canonical string
// collides with the uneven-shard encoding (docs/formats.md, "Typed values").
struct NegativeDims {
  std::size_t count = 0;
  std::string first_pointer;
};

struct PlanDump {
  std::string file;                 // display name, for diagnostics
  AxisStorage axis_storage;         // the params' axes (before `modules`, which view it)
  std::vector<ModuleSpec> modules;  // plan order
  std::vector<std::string_view> mesh_dim_names;
  std::vector<std::vector<std::string_view>> tied_pairs;
  Json special_handlers = JsonObject{};
  std::optional<Json> meta;  // the plan's own `meta` (a base meta: decode_base_meta, meta.h)
  NegativeDims negative_dims;
};

struct ModelParameter {
  std::span<const std::uint64_t> shape;  // held by the ModelTree's dims
  std::optional<std::string_view> dtype;
  bool requires_grad = true;
};

struct ModelTree {
  ModelTree();
  ModelTree(ModelTree&&) noexcept;
  ModelTree& operator=(ModelTree&&) noexcept;
  ~ModelTree();

  std::string file;
  std::vector<std::pair<std::string_view, std::string_view>> modules;  // FQN -> class
  bool has_parameters = false;  // `parameters` present and not null
  std::vector<std::pair<std::string_view, ModelParameter>> parameters;
  BlockArena<std::uint64_t> dims;  // every parameter's shape
  // A checkpoint's (checkpoint.h): parameters and no module tree, the names held in
  // `names`, each parameter at `parameters_pointer`/NAME of `file` ("" in a safetensors
  // header, "/weight_map" in an index).
  bool checkpoint = false;
  std::string parameters_pointer = "/parameters";
  StringArena names;

  // The JSON Pointer of parameter `fqn` in `file`.
  [[nodiscard]] std::string parameter_pointer(std::string_view fqn) const;

  [[nodiscard]] const std::string_view* find_class(std::string_view fqn) const;
  [[nodiscard]] const ModelParameter* find_parameter(std::string_view fqn) const;
  // The same lookup, first trying the entry after the previous hit (`cursor`, start at 0):
  // plans list params in about the model's order, so most lookups then skip the hash
  // table and stay in cache.
  [[nodiscard]] const ModelParameter* find_parameter(std::string_view fqn,
                                                     std::size_t& cursor) const;

  // Builds both lookup indexes now. Otherwise each is built, once, by the first lookup that
  // needs it (indexing 100,000 names costs more than a freeze's lookups, which mostly hit
  // the cursor). Lookups from several threads at once are safe; changing `modules` or
  // `parameters` after the first lookup is not (the index would not see it), nor is any use
  // of a moved-from tree but assigning to it or destroying it. False when two modules or two
  // parameters have the same name (only possible in a dump parsed without the duplicate-key
  // check).
  bool index();

 private:
  struct Indexes;  // hash indexes over the names, each built under a once_flag (model_decode.cc)
  NameIndex& module_index() const;
  NameIndex& parameter_index() const;

  std::unique_ptr<Indexes> indexes_;
};

// A plan of more than one module is decoded in two lanes at once where `concurrency` has a
// second CPU (the result is the same either way).
Expected<PlanDump> decode_plan_dump(const JsonDocument& document, Concurrency concurrency = {});
Expected<ModelTree> decode_model_tree(const JsonDocument& document);

// FQN of a parameter planned on a boundary: "b.n", "n" on the root boundary "", "b" when
// the name is "".
std::string join_fqn(std::string_view boundary, std::string_view name);
// Whether `fqn` is join_fqn(boundary, name), without joining (inline: freeze asks it once
// per planned parameter).
inline bool is_joined_fqn(std::string_view fqn, std::string_view boundary, std::string_view name) {
  if (boundary.empty()) return fqn == name;
  if (name.empty()) return fqn == boundary;
  return fqn.size() == boundary.size() + 1 + name.size() && fqn[boundary.size()] == '.' &&
         fqn.starts_with(boundary) && fqn.ends_with(name);
}

// Converts a SpecValue with no typed value inside to Json (views shared).
Json spec_value_to_plain_json(const SpecValue& value);

}  // namespace hpfreeze
