// Decoding of the model tree dump (docs/formats.md, "The model tree dump") and the name
// lookups over it.
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "base/huge_pages.h"
#include "base/name_index.h"
#include "dumps/dom_decode.h"
#include "dumps/plan.h"
#include "json/json_document.h"

namespace hpfreeze {

using namespace dom_decode;

// Each index is built once, by the first lookup that needs it (a freeze's lookups mostly
// hit the cursor, and indexing 100,000 names costs more than they do), under a once_flag:
// lookups on one ModelTree from several threads at once are safe.
struct ModelTree::Indexes {
  NameIndex modules;
  NameIndex parameters;
  std::once_flag modules_once;
  std::once_flag parameters_once;
  bool modules_unique = true;
  bool parameters_unique = true;
};

ModelTree::ModelTree() : indexes_(std::make_unique<Indexes>()) {}
// A moved-from tree holds no indexes: it may only be assigned to or destroyed.
ModelTree::ModelTree(ModelTree&&) noexcept = default;
ModelTree& ModelTree::operator=(ModelTree&&) noexcept = default;
ModelTree::~ModelTree() = default;

NameIndex& ModelTree::module_index() const {
  std::call_once(indexes_->modules_once, [this] {
    indexes_->modules_unique =
        indexes_->modules.build(modules.size(), [this](std::size_t k) { return modules[k].first; });
  });
  return indexes_->modules;
}

NameIndex& ModelTree::parameter_index() const {
  std::call_once(indexes_->parameters_once, [this] {
    indexes_->parameters_unique = indexes_->parameters.build(
        parameters.size(), [this](std::size_t k) { return parameters[k].first; });
  });
  return indexes_->parameters;
}

const std::string_view* ModelTree::find_class(std::string_view fqn) const {
  const auto i = module_index().find(fqn, [this](std::size_t k) { return modules[k].first; });
  return i ? &modules[*i].second : nullptr;
}

const ModelParameter* ModelTree::find_parameter(std::string_view fqn) const {
  const auto i = parameter_index().find(fqn, [this](std::size_t k) { return parameters[k].first; });
  return i ? &parameters[*i].second : nullptr;
}

const ModelParameter* ModelTree::find_parameter(std::string_view fqn, std::size_t& cursor) const {
  if (cursor < parameters.size() && parameters[cursor].first == fqn) {
    return &parameters[cursor++].second;
  }
  const auto i = parameter_index().find(fqn, [this](std::size_t k) { return parameters[k].first; });
  if (!i) return nullptr;
  cursor = *i + 1;
  return &parameters[*i].second;
}

std::string ModelTree::parameter_pointer(std::string_view fqn) const {
  return pointer_join(parameters_pointer, fqn);
}

bool ModelTree::index() {
  module_index();
  parameter_index();
  return indexes_->modules_unique && indexes_->parameters_unique;
}

// Every object of a model dump is either walked here (the root, `modules`, `parameters`
// and each parameter's fields) or a type error, so the decoder can check its keys for
// repeats itself when the parse did not (ParseOptions): known keys by a bit each, module
// and parameter names by the lookup indexes, built here then.
Expected<ModelTree> decode_model_tree(const JsonDocument& document) {
  return decode_dump<ModelTree>(document, [&document](ModelTree& model, simdjson::dom::object root,
                                                      const Path& root_path) {
    std::optional<element> modules;
    unsigned root_keys = 0;
    for_each_member(root, root_path, [&](std::string_view key, element value, const Path& pointer) {
      if (is(key, "modules")) {
        see(root_keys, 1);
        modules = value;
      } else if (is(key, "format")) {
        see(root_keys, 2);
        check_format(value, "hpfreeze.model/v1");
      } else if (is(key, "parameters")) {
        see(root_keys, 4);
        if (value.is_null()) return;
        model.has_parameters = true;
        simdjson::dom::object params = expect_object(value, pointer);
        model.parameters.reserve(params.size());
        advise_huge_pages(model.parameters);
        // Explicit iterators and in-place construction: structured bindings and a moved
        // ModelParameter were copied through the stack, stalling on store forwarding.
        for (auto it = params.begin(); it != params.end(); ++it) {
          const std::string_view fqn = it.key();
          const Path param_pointer(pointer, fqn);
          simdjson::dom::object info = expect_object(it.value(), param_pointer);
          auto& [name, parameter] = model.parameters.emplace_back();
          name = fqn;
          bool has_shape = false;
          unsigned fields = 0;
          for (auto field_it = info.begin(); field_it != info.end(); ++field_it) {
            const std::string_view field = field_it.key();
            const element field_value = field_it.value();
            const Path field_pointer(param_pointer, field);
            if (is(field, "shape")) {
              see(fields, 1);
              has_shape = true;
              simdjson::dom::array dims = expect_array(field_value, field_pointer);
              // In the tree's arena: no allocation per parameter.
              const std::span<std::uint64_t> shape = model.dims.allocate(dims.size());
              std::size_t i = 0;
              for (element d : dims) {
                const Path dim_pointer(field_pointer, i);
                if (d.type() == element_type::UINT64) {
                  shape[i++] = uint64_of(d);
                } else if (d.type() == element_type::INT64 && int64_of(d) >= 0) {
                  shape[i++] = static_cast<std::uint64_t>(int64_of(d));
                } else if (d.type() == element_type::INT64) {
                  fail(dim_pointer,
                       "shape dimensions must be non-negative, got " + std::to_string(int64_of(d)));
                } else {
                  fail_type(dim_pointer, "a non-negative integer", d);
                }
              }
              parameter.shape = shape;
            } else if (is(field, "dtype")) {
              see(fields, 2);
              if (!field_value.is_null())
                parameter.dtype = expect_string(field_value, field_pointer);
            } else if (is(field, "requires_grad")) {
              see(fields, 4);
              if (field_value.is_null()) continue;
              if (!field_value.is_bool()) fail_type(field_pointer, "a boolean", field_value);
              parameter.requires_grad = bool_of(field_value);
            } else {
              fail(field_pointer, "unknown parameter field " + quote_for_diagnostic(field));
            }
          }
          if (!has_shape) fail(param_pointer, "parameter has no 'shape'");
        }
      } else {
        fail(pointer, "unknown top-level key " + quote_for_diagnostic(key));
      }
    });
    const Path modules_path(root_path, "modules");
    simdjson::dom::object module_object = required_modules(modules, modules_path);
    model.modules.reserve(module_object.size());
    advise_huge_pages(model.modules);
    for (auto it = module_object.begin(); it != module_object.end(); ++it) {
      const std::string_view fqn = it.key();
      model.modules.emplace_back(fqn, expect_string(it.value(), Path(modules_path, fqn)));
    }
    if (!document.keys_checked() && !model.index()) fail_repeated_key();
  });
}

}  // namespace hpfreeze
