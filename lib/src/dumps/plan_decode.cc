// Decoding of the plan dump: every type rule of docs/formats.md ("The plan dump") and the
// per-kind rules of the freeze are checked here, so the freeze passes only see well-formed
// values. The model tree has its own decoder (model_decode.cc).
#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <exception>
#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "base/background_task.h"
#include "dumps/dom_decode.h"
#include "dumps/plan.h"
#include "json/json_document.h"
#include "spec/placement_dump.h"

namespace hpfreeze {
namespace {

using namespace dom_decode;

// Python truthiness of a DOM value.
bool truthy(element e) {
  switch (e.type()) {
    case element_type::OBJECT:
      return object_of(e).size() != 0;
    case element_type::ARRAY:
      return array_of(e).size() != 0;
    case element_type::STRING:
      return !string_of(e).empty();
    case element_type::INT64:
      return int64_of(e) != 0;
    case element_type::UINT64:
      return uint64_of(e) != 0;
    case element_type::DOUBLE:
      return double_of(e) != 0.0;
    case element_type::BOOL:
      return bool_of(e);
    case element_type::NULL_VALUE:
      return false;
  }
  return false;
}

enum class Tag { kNone, kPlacement, kTarget, kCallable };

// The number of members; simdjson's size() stops counting at 0xFFFFFF.
std::size_t object_size(simdjson::dom::object o) {
  std::size_t size = o.size();
  if (size < 0xFFFFFF) return size;
  size = 0;
  for (auto it = o.begin(); it != o.end(); ++it) ++size;
  return size;
}

Tag tag_of_key(std::string_view key) {
  if (is(key, "$placement")) return Tag::kPlacement;
  if (is(key, "$target")) return Tag::kTarget;
  if (is(key, "$callable")) return Tag::kCallable;
  return Tag::kNone;
}

// Which type tag an object carries; two tags are an error. `tag_value` receives the
// tag's value, so that a placement's type is not looked up again.
Tag find_tag(simdjson::dom::object o, const Path& pointer, element& tag_value) {
  Tag found = Tag::kNone;
  std::string_view found_key;
  for (auto key_it = o.begin(); key_it != o.end(); ++key_it) {
    const std::string_view key = key_it.key();
    const Tag t = tag_of_key(key);
    if (t == Tag::kNone) continue;
    if (found != Tag::kNone) {
      fail(pointer, "object carries two type tags, '" + std::string(found_key) + "' and '" +
                        std::string(key) + "'");
    }
    found = t;
    found_key = key;
    tag_value = key_it.value();
  }
  return found;
}

// When the parse did not check keys (ParseOptions), the decoder checks every object it
// walks: known keys by a bit each, other keys with a RepeatCheck, and subtrees it copies
// without walking them with has_repeated_key(). A repeat makes it throw, and
// decode_plan_dump then reports the first repeat of the whole document, as the parse
// would have.
class Decoder {
 public:
  Decoder(NegativeDims* negative_dims, AxisStorage* axis_storage, bool check_keys)
      : negative_dims_(negative_dims), axis_storage_(axis_storage), check_keys_(check_keys) {}

  // Copies a subtree that is not walked.
  Json copy(element e) {
    if (check_keys_ && has_repeated_key(e)) fail_repeated_key();
    return json_from_dom(e);
  }

  // `type_element` is the value of the object's one "$placement" key (find_tag).
  Placement placement_object(simdjson::dom::object o, element type_element, const Path& pointer) {
    Placement p = placement_from_dump(o, type_element, pointer);
    if (p.has_dim() && p.dim < 0) {
      if (negative_dims_->count++ == 0) negative_dims_->first_pointer = pointer.str();
    }
    return p;
  }

  SpecValue typed_object(simdjson::dom::object o, Tag tag, element tag_value, const Path& pointer) {
    switch (tag) {
      case Tag::kPlacement:
        return SpecValue{placement_object(o, tag_value, pointer)};
      case Tag::kTarget: {
        if (o.size() != 1) fail(pointer, "a $target object may hold no other key");
        element inner = member_of(o, "$target");
        expect_object(inner, Path(pointer, "$target"));
        return SpecValue{Target{copy(inner)}};
      }
      case Tag::kCallable: {
        if (o.size() != 1) fail(pointer, "a $callable object may hold no other key");
        const Path name_pointer(pointer, "$callable");
        const std::string_view name = expect_string(member_of(o, "$callable"), name_pointer);
        if (name.empty()) fail(name_pointer, "a $callable name must not be empty");
        return SpecValue{Callable{name}};
      }
      case Tag::kNone:
        break;
    }
    return SpecValue{Json()};
  }

  SpecValue spec_value(element e, const Path& pointer) {
    if (e.is_object()) {
      simdjson::dom::object o = object_of(e);
      element tag_value;
      const Tag tag = find_tag(o, pointer, tag_value);
      if (tag != Tag::kNone) return typed_object(o, tag, tag_value, pointer);
      SpecObject members;
      members.reserve(o.size());
      for (auto key_it = o.begin(); key_it != o.end(); ++key_it) {
        const std::string_view key = key_it.key();
        const element value = key_it.value();
        members.push_back(SpecMember{key, spec_value(value, Path(pointer, key))});
      }
      if (check_keys_ &&
          repeats_.any(members.size(), [&members](std::size_t i) { return members[i].key; })) {
        fail_repeated_key();
      }
      return SpecValue{std::move(members)};
    }
    if (e.is_array()) {
      simdjson::dom::array a = array_of(e);
      SpecArray items;
      items.reserve(a.size());
      std::size_t i = 0;
      for (element item : a) items.push_back(spec_value(item, Path(pointer, i++)));
      return SpecValue{std::move(items)};
    }
    return SpecValue{json_from_dom(e)};
  }

  // A plain JSON value: no typed object anywhere inside.
  void check_plain(element e, const Path& pointer) {
    if (e.is_object()) {
      simdjson::dom::object o = object_of(e);
      if (check_keys_ && repeats_.any(o)) fail_repeated_key();
      for (auto key_it = o.begin(); key_it != o.end(); ++key_it) {
        const std::string_view key = key_it.key();
        if (tag_of_key(key) != Tag::kNone) {
          fail(pointer, "expected a plain JSON value, got a typed " + std::string(key) + " value");
        }
      }
      for (auto it = o.begin(); it != o.end(); ++it)
        check_plain(it.value(), Path(pointer, it.key()));
    } else if (e.is_array()) {
      std::size_t i = 0;
      for (element item : array_of(e)) check_plain(item, Path(pointer, i++));
    }
  }

  Placement param_leaf(element e, const Path& pointer) {
    if (e.is_string()) {
      Expected<Placement> parsed = parse_placement(string_of(e));
      if (!parsed) fail(pointer, parsed.errors().front().message);
      return *parsed;
    }
    std::string_view got;
    if (e.is_object()) {
      simdjson::dom::object o = object_of(e);
      element tag_value;
      const Tag tag = find_tag(o, pointer, tag_value);
      if (tag == Tag::kPlacement) return placement_object(o, tag_value, pointer);
      // A $callable or $target leaf is a typed value, not a plain object: say which.
      got = tag == Tag::kCallable ? "a typed $callable value"
            : tag == Tag::kTarget ? "a typed $target value"
                                  : "a plain object";
    } else {
      got = json_type_article(e);
    }
    fail(pointer, "expected a placement ({\"$placement\": ...} or a canonical string), got " +
                      std::string(got));
  }

  std::vector<ParamPlacements> params(element e, const Path& pointer) {
    simdjson::dom::object o = expect_object(e, pointer);
    std::vector<ParamPlacements> out;
    out.reserve(o.size());
    for (auto name_it = o.begin(); name_it != o.end(); ++name_it) {
      const std::string_view name = name_it.key();
      // An object with a type tag is that typed value, never a map (docs/formats.md, "Typed
      // values").
      if (tag_of_key(name) != Tag::kNone) {
        fail(pointer,
             "expected an object of parameters, got a typed " + std::string(name) + " value");
      }
      const element axes_element = name_it.value();
      const Path param_pointer(pointer, name);
      simdjson::dom::object axes = expect_object(axes_element, param_pointer);
      // Built in place: copies through the stack stalled on store forwarding.
      ParamPlacements& param = out.emplace_back();
      param.name = name;
      param.axes = axis_storage_->allocate(object_size(axes));
      std::size_t count = 0;
      for (auto axis_it = axes.begin(); axis_it != axes.end(); ++axis_it) {
        const std::string_view axis = axis_it.key();
        if (tag_of_key(axis) != Tag::kNone) {
          fail(param_pointer, "expected an object of axis placements, got a typed " +
                                  std::string(axis) + " value");
        }
        AxisPlacement& placement = param.axes[count++];
        placement.axis = axis;
        placement.placement = param_leaf(axis_it.value(), Path(param_pointer, axis));
      }
      if (check_keys_ &&
          repeats_.any(param.axes.size(), [&param](std::size_t i) { return param.axes[i].axis; })) {
        fail_repeated_key();
      }
    }
    if (check_keys_ && repeats_.any(out.size(), [&out](std::size_t i) { return out[i].name; })) {
      fail_repeated_key();
    }
    return out;
  }

  // Applies the kind's write condition and type rule; nullopt when the field is not written.
  std::optional<SpecValue> field(FieldKind kind, element e, const Path& pointer) {
    if (e.is_null()) return std::nullopt;
    if (!writes_falsy(kind) && !truthy(e)) return std::nullopt;
    switch (kind) {
      case FieldKind::kPlacementMap:
        return std::nullopt;  // handled by params()
      case FieldKind::kNamedPlacements: {
        if (!truthy(e)) return SpecValue{SpecObject{}};
        simdjson::dom::object o = expect_object(e, pointer);
        for (auto key_it = o.begin(); key_it != o.end(); ++key_it) {
          const std::string_view key = key_it.key();
          if (tag_of_key(key) != Tag::kNone) {
            fail(pointer, "expected an object of named placements, got a typed " +
                              std::string(key) + " value");
          }
        }
        return spec_value(e, pointer);
      }
      case FieldKind::kValueToDict:
        return spec_value(e, pointer);
      case FieldKind::kNameList:
      case FieldKind::kAttrList:
        expect_array(e, pointer);
        check_plain(e, pointer);
        return SpecValue{json_from_dom(e)};
      case FieldKind::kDictCopy:
        expect_object(e, pointer);
        check_plain(e, pointer);
        return SpecValue{json_from_dom(e)};
      case FieldKind::kScalar:
      case FieldKind::kPlain:
      case FieldKind::kIntTruthy:
        check_plain(e, pointer);
        return SpecValue{json_from_dom(e)};
    }
    return std::nullopt;
  }

  ModuleSpec module_spec(std::string_view fqn, element e, const Path& pointer) {
    simdjson::dom::object o = expect_object(e, pointer);
    ModuleSpec spec;
    spec.fqn = fqn;
    // A bit per table field, then one per exempt attribute.
    static_assert(kSpecFields.size() + kExemptSpecAttributes.size() <= 32);
    unsigned seen = 0;
    for (auto key_it = o.begin(); key_it != o.end(); ++key_it) {
      const std::string_view key = key_it.key();
      const element value = key_it.value();
      const std::optional<std::size_t> index = find_spec_field_by_attribute(key);
      if (!index) {
        const auto exempt =
            std::find(kExemptSpecAttributes.begin(), kExemptSpecAttributes.end(), key);
        if (exempt != kExemptSpecAttributes.end()) {
          // Ignored whatever they hold, so not walked: only their keys are checked.
          see(seen, 1u << (kSpecFields.size() +
                           static_cast<std::size_t>(exempt - kExemptSpecAttributes.begin())));
          if (check_keys_ && has_repeated_key(value)) fail_repeated_key();
          continue;
        }
        fail(Path(pointer, key), "unknown module-spec field " + quote_for_diagnostic(key));
      }
      see(seen, 1u << *index);
      const Path field_pointer(pointer, key);
      if (*index == kParamsField) {
        if (!value.is_null()) spec.params = params(value, field_pointer);
      } else {
        std::optional<SpecValue> decoded = field(kSpecFields[*index].kind, value, field_pointer);
        if (decoded) spec.fields.push_back({*index, std::move(*decoded)});
      }
    }
    // Keys are unique (checked above or while parsing), so each index appears once.
    std::sort(spec.fields.begin(), spec.fields.end(),
              [](const ModuleField& a, const ModuleField& b) { return a.index < b.index; });
    return spec;
  }

 private:
  NegativeDims* negative_dims_;
  AxisStorage* axis_storage_;
  bool check_keys_;
  RepeatCheck repeats_;
};

// A bit per known top-level key, 0 for the others (which are rejected).
unsigned root_key_bit(std::string_view key) {
  static constexpr std::string_view kKeys[] = {
      "modules",          "format", "mesh_dim_names",    "tied_pairs",
      "special_handlers", "meta",   "sequence_parallel", "loss_parallel"};
  for (std::size_t i = 0; i < std::size(kKeys); ++i) {
    if (kKeys[i] == key) return 1u << i;
  }
  return 0;
}

std::vector<std::string_view> string_array(element e, const Path& pointer) {
  simdjson::dom::array a = expect_array(e, pointer);
  std::vector<std::string_view> out;
  out.reserve(a.size());
  std::size_t i = 0;
  for (element item : a) out.push_back(expect_string(item, Path(pointer, i++)));
  return out;
}

// The specs of `modules`, in document order, decoded on two threads where `concurrency` has
// a second CPU to run them: the modules are independent, and the document is only read. Each
// thread claims the next module not yet claimed, so every module before the first that
// fails has been decoded, and that first failure is the one thrown, as in one pass over
// the modules; the first negative dim is likewise the one of the first module that has
// one.
void decode_modules(simdjson::dom::object module_object, const Path& modules_path, bool check_keys,
                    Concurrency concurrency, PlanDump& plan) {
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::vector<std::pair<std::string_view, element>> entries;
  entries.reserve(module_object.size());
  for (auto it = module_object.begin(); it != module_object.end(); ++it) {
    entries.emplace_back(it.key(), it.value());
  }
  plan.modules.resize(entries.size());
  std::atomic<std::size_t> next{0};
  std::atomic<std::size_t> first_failure{kNone};
  struct Lane {
    NegativeDims negative_dims;
    std::size_t first_negative = kNone;  // the module of negative_dims.first_pointer
    AxisStorage axis_storage;
    std::size_t failed_at = kNone;
    std::exception_ptr failure;
  };
  const auto run = [&](Lane& lane) {
    Decoder decoder(&lane.negative_dims, &lane.axis_storage, check_keys);
    for (;;) {
      const std::size_t i = next.fetch_add(1, std::memory_order_relaxed);
      // Modules after a failed one are not needed.
      if (i >= entries.size() || i > first_failure.load(std::memory_order_relaxed)) return;
      const auto& [fqn, spec] = entries[i];
      try {
        const std::size_t negative_before = lane.negative_dims.count;
        plan.modules[i] = decoder.module_spec(fqn, spec, Path(modules_path, fqn));
        if (negative_before == 0 && lane.negative_dims.count > 0) lane.first_negative = i;
      } catch (...) {
        lane.failed_at = i;
        lane.failure = std::current_exception();
        std::size_t seen = first_failure.load(std::memory_order_relaxed);
        while (i < seen && !first_failure.compare_exchange_weak(seen, i)) {
        }
        return;
      }
    }
  };
  // Room for every param's axes up front (one per mesh dim each, an estimate), shared
  // out between the lanes: a few blocks in huge pages instead of many growing ones.
  std::size_t axes = 0;
  for (const auto& [fqn, spec] : entries) {
    simdjson::dom::object params;
    if (spec.is_object() && !object_of(spec).at_key("params").get_object().get(params)) {
      axes += params.size();
    }
  }
  axes *= std::max<std::size_t>(plan.mesh_dim_names.size(), 1);
  std::array<Lane, 2> lanes;
  const bool two_lanes = entries.size() > 1 && concurrency.second_thread();
  if (two_lanes) {
    for (Lane& lane : lanes) lane.axis_storage.reserve(axes / 2 + axes / 8);
    BackgroundTask second(concurrency, [&run, &lanes] { run(lanes[1]); });
    run(lanes[0]);
    second.wait();  // with no second thread, finds every module claimed
  } else {
    lanes[0].axis_storage.reserve(axes);
    run(lanes[0]);
  }
  const Lane* failed = nullptr;
  const Lane* negative = nullptr;
  for (Lane& lane : lanes) {
    if (lane.failure && (failed == nullptr || lane.failed_at < failed->failed_at)) failed = &lane;
    if (lane.first_negative != kNone &&
        (negative == nullptr || lane.first_negative < negative->first_negative)) {
      negative = &lane;
    }
    plan.negative_dims.count += lane.negative_dims.count;
    plan.axis_storage.absorb(std::move(lane.axis_storage));
  }
  if (failed != nullptr) std::rethrow_exception(failed->failure);
  if (negative != nullptr) plan.negative_dims.first_pointer = negative->negative_dims.first_pointer;
}

}  // namespace

Expected<PlanDump> decode_plan_dump(const JsonDocument& document, Concurrency concurrency) {
  return decode_dump<PlanDump>(document, [&document, concurrency](PlanDump& plan,
                                                                  simdjson::dom::object root,
                                                                  const Path& root_path) {
    std::optional<element> modules;
    const bool check_keys = !document.keys_checked();
    Decoder decoder(&plan.negative_dims, &plan.axis_storage, check_keys);
    unsigned root_keys = 0;
    for_each_member(root, root_path, [&](std::string_view key, element value, const Path& pointer) {
      see(root_keys, root_key_bit(key));
      if (is(key, "modules")) {
        modules = value;
      } else if (is(key, "format")) {
        check_format(value, "hpfreeze.plan/v1");
      } else if (value.is_null()) {
        if (key != "mesh_dim_names" && key != "tied_pairs" && key != "special_handlers" &&
            key != "meta" && key != "sequence_parallel" && key != "loss_parallel") {
          fail(pointer, "unknown top-level key " + quote_for_diagnostic(key));
        }
      } else if (is(key, "mesh_dim_names")) {
        plan.mesh_dim_names = string_array(value, pointer);
      } else if (is(key, "tied_pairs")) {
        simdjson::dom::array pairs = expect_array(value, pointer);
        std::size_t i = 0;
        for (element pair : pairs) {
          plan.tied_pairs.push_back(string_array(pair, Path(pointer, i++)));
        }
      } else if (is(key, "special_handlers")) {
        expect_object(value, pointer);
        plan.special_handlers = decoder.copy(value);
      } else if (is(key, "meta")) {
        expect_object(value, pointer);
        plan.meta = decoder.copy(value);
      } else if (is(key, "sequence_parallel") || is(key, "loss_parallel")) {
        if (!value.is_bool()) fail_type(pointer, "a boolean", value);
      } else {
        fail(pointer, "unknown top-level key " + quote_for_diagnostic(key));
      }
    });
    const Path modules_path(root_path, "modules");
    decode_modules(required_modules(modules, modules_path), modules_path, check_keys, concurrency,
                   plan);
    if (check_keys && RepeatCheck().any(plan.modules.size(),
                                        [&plan](std::size_t i) { return plan.modules[i].fqn; })) {
      fail_repeated_key();
    }
  });
}

}  // namespace hpfreeze
