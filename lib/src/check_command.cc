#include "hpfreeze/check_command.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "hpfreeze/encode.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json.h"
#include "hpfreeze/placement.h"

namespace hpfreeze {
namespace {

std::string_view article_name(const Json& v) {
  if (v.is_null()) return "null";
  if (v.is_bool()) return "a boolean";
  if (v.is_string()) return "a string";
  if (v.is_array()) return "an array";
  if (v.is_object()) return "an object";
  if (std::holds_alternative<double>(v.v)) return "a float";
  return "an integer";
}

std::string got(std::string_view expected, const Json& v) {
  return "expected " + std::string(expected) + ", got " + std::string(article_name(v));
}

std::string index_pointer(std::string_view pointer, std::size_t i) {
  return std::string(pointer) + "/" + std::to_string(i);
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i > 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::string plural(std::size_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

// The placement sections of a param_plan entry other than `params`: name -> value where every
// string leaf, at any depth, is a placement (upstream's rebuild parses them all).
constexpr std::array<std::string_view, 4> kNamedSections{"in_src", "in_dst", "out_src", "out_dst"};

struct DimUse {
  std::string pointer;
  std::string_view text;
  Placement placement;
};

struct PlannedParam {
  std::string fqn;
  std::string pointer;
  bool sharded = false;
  bool uncertain = false;  // an unreadable leaf: whether it is sharded is unknown
  std::vector<DimUse> dims;
};

struct AxisUse {
  std::string_view axis;
  std::string first_pointer;
  std::size_t count = 0;
};

struct NegativeUse {
  std::string_view boundary;
  std::string_view name;
  std::string_view first_text;
  Placement first_placement;
  std::string first_pointer;
  std::size_t count = 0;
};

class MetaChecker {
 public:
  MetaChecker(std::string file, const ModelTree* model) : file_(std::move(file)), model_(model) {}

  Diagnostics run(const Json& root) {
    if (!root.is_object()) {
      error("", "a codegen meta must be a JSON object, got " + std::string(article_name(root)));
      return std::move(findings_);
    }
    check_schema(root);
    check_mesh_dim_names(root.find("mesh_dim_names"));
    check_param_plan(root.find("param_plan"));
    report_axes();
    report_negative_dims();
    check_frozen_sharded_params(root.find("frozen_sharded_params"));
    check_injections(root.find("injections"));
    check_boundary_classes(root.find("boundary_classes"));
    if (model_ != nullptr) check_against_model();
    return std::move(findings_);
  }

 private:
  void add(Severity severity, const std::string& file, std::string pointer, std::string message) {
    Diagnostic d = make_error(file, std::move(pointer), std::move(message));
    d.severity = severity;
    findings_.push_back(std::move(d));
  }
  void error(std::string pointer, std::string message) {
    add(Severity::kError, file_, std::move(pointer), std::move(message));
  }
  void warning(std::string pointer, std::string message) {
    add(Severity::kWarning, file_, std::move(pointer), std::move(message));
  }
  void note(std::string pointer, std::string message) {
    add(Severity::kNote, file_, std::move(pointer), std::move(message));
  }

  // Upstream's schema rules for the identity fields; a missing key takes its default.
  void check_schema(const Json& root) {
    for (std::string_view key : {"codegen_version", "signature", "yaml_path", "yaml_sha256"}) {
      const Json* v = root.find(key);
      if (v != nullptr && !v->is_string()) error(pointer_join("", key), got("a string", *v));
    }
    for (std::string_view key : {"source", "parallel_dims", "outputs"}) {
      const Json* v = root.find(key);
      if (v != nullptr && !v->is_object()) error(pointer_join("", key), got("an object", *v));
    }
    if (const Json* v = root.find("entrypoints")) {
      if (!v->is_object()) {
        error("/entrypoints", got("an object", *v));
      } else {
        for (const JsonMember& m : v->as_object()) {
          if (!m.value.is_string())
            error(pointer_join("/entrypoints", m.key), got("a string", m.value));
        }
      }
    }
    if (const Json* v = root.find("covered")) {
      if (!v->is_object()) {
        error("/covered", got("an object", *v));
      } else if (const Json* s = v->find("sharding_plan"); s != nullptr && !s->is_bool()) {
        error("/covered/sharding_plan", got("a boolean", *s));
      }
    }
    for (std::string_view key : {"not_covered", "remote_siblings", "external_state_classes"}) {
      check_array_of(root, key, "an array of strings", "a string",
                     [](const Json& e) { return e.is_string(); });
    }
    check_array_of(root, "module_overrides", "an array of objects", "an object",
                   [](const Json& e) { return e.is_object(); });
  }

  template <class Pred>
  void check_array_of(const Json& root, std::string_view key, std::string_view whole,
                      std::string_view element, Pred ok) {
    const Json* v = root.find(key);
    if (v == nullptr) return;
    const std::string pointer = pointer_join("", key);
    if (!v->is_array()) {
      error(pointer, got(whole, *v));
      return;
    }
    const JsonArray& items = v->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!ok(items[i])) error(index_pointer(pointer, i), got(element, items[i]));
    }
  }

  void check_mesh_dim_names(const Json* v) {
    if (v == nullptr || v->is_null()) return;
    if (!v->is_array()) {
      error("/mesh_dim_names", got("null or an array of strings", *v));
      return;
    }
    const JsonArray& names = v->as_array();
    std::unordered_map<std::string_view, std::size_t> first;
    for (std::size_t i = 0; i < names.size(); ++i) {
      const std::string pointer = index_pointer("/mesh_dim_names", i);
      if (!names[i].is_string()) {
        error(pointer, got("a string", names[i]));
        continue;
      }
      const std::string_view name = names[i].as_string();
      auto [it, inserted] = first.emplace(name, i);
      if (!inserted) {
        error(pointer, "duplicate axis " + quote_for_diagnostic(name) + " (first at " +
                           index_pointer("/mesh_dim_names", it->second) + ")");
        continue;
      }
      mesh_axes_.push_back(name);
    }
  }

  void check_param_plan(const Json* v) {
    if (v == nullptr) {
      error("", "missing param_plan: the meta plans no boundary");
      return;
    }
    if (!v->is_object()) {
      error("/param_plan", got("an object", *v));
      return;
    }
    param_plan_ = &v->as_object();
    if (param_plan_->empty())
      error("/param_plan", "param_plan is empty: the meta plans no boundary");
    for (const JsonMember& m : *param_plan_) {
      const std::string pointer = pointer_join("/param_plan", m.key);
      if (!m.value.is_object()) {
        error(pointer, got("an object", m.value));
        continue;
      }
      // Document order, so that aggregated findings sit at their first occurrence.
      for (const JsonMember& field : m.value.as_object()) {
        const std::string field_pointer = pointer_join(pointer, field.key);
        if (field.key == "params") {
          check_params(m.key, field.value, field_pointer);
        } else if (std::find(kNamedSections.begin(), kNamedSections.end(), field.key) !=
                   kNamedSections.end()) {
          check_named(m.key, field.value, field_pointer);
        }
      }
    }
  }

  void check_params(std::string_view boundary, const Json& params, const std::string& pointer) {
    if (params.is_null()) return;
    if (!params.is_object()) {
      error(pointer, got("an object (param -> axis -> placement)", params));
      return;
    }
    for (const JsonMember& param : params.as_object()) {
      PlannedParam planned;
      planned.fqn = join_fqn(boundary, param.key);
      planned.pointer = pointer_join(pointer, param.key);
      if (!param.value.is_object()) {
        error(planned.pointer, got("an object (axis -> placement)", param.value));
        planned.uncertain = true;
        planned_.push_back(std::move(planned));
        continue;
      }
      for (const JsonMember& axis : param.value.as_object()) {
        std::string leaf_pointer = pointer_join(planned.pointer, axis.key);
        if (!axis.value.is_string()) {
          error(std::move(leaf_pointer), got("a placement string", axis.value));
          planned.uncertain = true;
          continue;
        }
        std::optional<Placement> p =
            check_placement(axis.value.as_string(), leaf_pointer, boundary, param.key, axis.key);
        if (!p) {
          planned.uncertain = true;
          continue;
        }
        if (p->is_sharded()) planned.sharded = true;
        if (p->has_dim()) {
          planned.dims.push_back({std::move(leaf_pointer), axis.value.as_string(), *p});
        }
      }
      planned_.push_back(std::move(planned));
    }
  }

  void check_named(std::string_view boundary, const Json& section, const std::string& pointer) {
    if (!section.truthy()) return;  // upstream reads a falsy section as {}
    if (!section.is_object()) {
      error(pointer, got("an object (name -> placements)", section));
      return;
    }
    for (const JsonMember& m : section.as_object()) {
      check_named_value(boundary, m.key, m.value, pointer_join(pointer, m.key), std::nullopt);
    }
  }

  // Every string leaf is a placement; other scalars pass through as upstream's rebuild does.
  // A leaf's axis is the key that holds it below the name level (arrays keep their key's).
  void check_named_value(std::string_view boundary, std::string_view name, const Json& v,
                         const std::string& pointer, std::optional<std::string_view> axis) {
    if (v.is_string()) {
      check_placement(v.as_string(), pointer, boundary, name, axis);
    } else if (v.is_object()) {
      for (const JsonMember& m : v.as_object()) {
        check_named_value(boundary, name, m.value, pointer_join(pointer, m.key), m.key);
      }
    } else if (v.is_array()) {
      const JsonArray& items = v.as_array();
      for (std::size_t i = 0; i < items.size(); ++i) {
        check_named_value(boundary, name, items[i], index_pointer(pointer, i), axis);
      }
    }
  }

  std::optional<Placement> check_placement(std::string_view text, const std::string& pointer,
                                           std::string_view boundary, std::string_view name,
                                           std::optional<std::string_view> axis) {
    Expected<Placement> parsed = parse_placement(text);
    if (!parsed) {
      error(pointer, parsed.errors().front().message);
      return std::nullopt;
    }
    if (axis) count_axis(*axis, pointer);
    const std::string canonical = to_canonical(*parsed);
    if (canonical != text) {
      warning(pointer, "placement " + quote_for_diagnostic(text) +
                           " is not canonical (canonical form: " + quote_for_diagnostic(canonical) +
                           ")");
    }
    if (parsed->has_dim() && parsed->uneven_shard)
      count_negative(boundary, name, text, *parsed, pointer);
    return *parsed;
  }

  void count_axis(std::string_view axis, const std::string& pointer) {
    auto [it, inserted] = axis_index_.emplace(axis, axes_.size());
    if (inserted) axes_.push_back({axis, pointer, 0});
    ++axes_[it->second].count;
  }

  void count_negative(std::string_view boundary, std::string_view name, std::string_view text,
                      const Placement& p, const std::string& pointer) {
    auto [it, inserted] = negative_index_.emplace(std::pair{boundary, name}, negatives_.size());
    if (inserted) negatives_.push_back({boundary, name, text, p, pointer, 0});
    ++negatives_[it->second].count;
  }

  // Axes outside mesh_dim_names are normal (templates declare tp/cp/ep whatever the mesh);
  // one note per name. With no declared axes (null or []) there is nothing to compare.
  void report_axes() {
    if (mesh_axes_.empty()) return;
    std::string declared = "[";
    for (std::size_t i = 0; i < mesh_axes_.size(); ++i) {
      if (i > 0) declared += ", ";
      declared += quote_for_diagnostic(mesh_axes_[i]);
    }
    declared += "]";
    for (const AxisUse& use : axes_) {
      if (std::find(mesh_axes_.begin(), mesh_axes_.end(), use.axis) != mesh_axes_.end()) continue;
      note(use.first_pointer,
           "axis " + quote_for_diagnostic(use.axis) + " is not in mesh_dim_names " + declared +
               "; the runtime ignores it (" + plural(use.count, "placement") + ")");
    }
  }

  void report_negative_dims() {
    for (const NegativeUse& use : negatives_) {
      const std::int64_t written = use.first_placement.encoded_dim();
      warning(use.first_pointer, "ambiguous negative dim: " + quote_for_diagnostic(use.first_text) +
                                     " reads back as an uneven shard of dim " +
                                     std::to_string(use.first_placement.dim) + ", not as dim " +
                                     std::to_string(written) + " counted from the end (" +
                                     plural(use.count, "negative-dim placement") + " of " +
                                     quote_for_diagnostic(use.name) + " on boundary " +
                                     quote_for_diagnostic(use.boundary) + ")");
    }
  }

  void check_frozen_sharded_params(const Json* v) {
    const JsonArray empty;
    const JsonArray* listed = &empty;  // a missing key is the default []
    if (v != nullptr) {
      if (!v->is_array()) {
        error("/frozen_sharded_params", got("an array of strings", *v));
        return;
      }
      listed = &v->as_array();
    }
    std::unordered_set<std::string_view> listed_names;
    bool all_strings = true;
    for (std::size_t i = 0; i < listed->size(); ++i) {
      const Json& e = (*listed)[i];
      if (!e.is_string()) {
        error(index_pointer("/frozen_sharded_params", i), got("a string", e));
        all_strings = false;
        continue;
      }
      listed_names.insert(e.as_string());
    }
    if (!all_strings || param_plan_ == nullptr) return;

    // One FQN may be planned twice (two boundaries, same joined name): sharded if any is.
    std::map<std::string_view, const PlannedParam*> recomputed;
    std::unordered_set<std::string_view> uncertain;
    for (const PlannedParam& p : planned_) {
      if (p.uncertain && !p.sharded) uncertain.insert(p.fqn);
      auto [it, inserted] = recomputed.emplace(p.fqn, &p);
      if (!inserted && p.sharded && !it->second->sharded) it->second = &p;
    }
    for (const auto& [fqn, p] : recomputed) {
      if (p->sharded && !listed_names.contains(fqn)) {
        error("/frozen_sharded_params", "missing " + quote_for_diagnostic(fqn) +
                                            ", which param_plan shards (" + p->pointer + ")");
      }
    }
    for (std::size_t i = 0; i < listed->size(); ++i) {
      const std::string_view fqn = (*listed)[i].as_string();
      if (uncertain.contains(fqn)) continue;
      auto it = recomputed.find(fqn);
      if (it == recomputed.end()) {
        error(index_pointer("/frozen_sharded_params", i),
              quote_for_diagnostic(fqn) + " is not a parameter of param_plan");
      } else if (!it->second->sharded) {
        error(index_pointer("/frozen_sharded_params", i),
              quote_for_diagnostic(fqn) + " is replicated on every axis in param_plan (" +
                  it->second->pointer + ")");
      }
    }
  }

  void check_injections(const Json* v) {
    if (v == nullptr) return;
    if (!v->is_array()) {
      error("/injections", got("an array of objects", *v));
      return;
    }
    const JsonArray& items = v->as_array();
    std::unordered_map<std::string_view, std::size_t> first;
    for (std::size_t i = 0; i < items.size(); ++i) {
      const std::string pointer = index_pointer("/injections", i);
      if (!items[i].is_object()) {
        error(pointer, got("an object", items[i]));
        continue;
      }
      const Json* match = items[i].find("match");
      if (match == nullptr) {
        error(pointer, "injection without a 'match'");
        continue;
      }
      const std::string match_pointer = pointer + "/match";
      if (!match->is_string()) {
        error(match_pointer, got("a string", *match));
        continue;
      }
      const std::string_view fqn = match->as_string();
      if (param_plan_ != nullptr && !has_boundary(fqn)) {
        error(match_pointer, quote_for_diagnostic(fqn) + " is not a param_plan boundary");
      }
      auto [it, inserted] = first.emplace(fqn, i);
      if (!inserted) {
        error(match_pointer, "second injection for " + quote_for_diagnostic(fqn) + " (first at " +
                                 index_pointer("/injections", it->second) + ")");
      }
    }
  }

  void check_boundary_classes(const Json* v) {
    if (v == nullptr) return;
    if (!v->is_object()) {
      error("/boundary_classes", got("an object", *v));
      return;
    }
    for (const JsonMember& m : v->as_object()) {
      if (!m.value.is_string()) {
        error(pointer_join("/boundary_classes", m.key), got("a string", m.value));
        continue;
      }
      boundary_classes_.emplace_back(m.key, m.value.as_string());
    }
  }

  bool has_boundary(std::string_view fqn) {
    if (boundaries_.empty()) {
      for (const JsonMember& m : *param_plan_) boundaries_.insert(m.key);
    }
    return boundaries_.contains(fqn);
  }

  void check_against_model() {
    const ModelTree& model = *model_;
    const std::string in_model = " (" + model.file + ")";
    if (param_plan_ != nullptr) {
      for (const JsonMember& m : *param_plan_) {
        if (model.find_class(m.key) == nullptr) {
          error(pointer_join("/param_plan", m.key), "boundary module " +
                                                        quote_for_diagnostic(m.key) +
                                                        " is not in the model tree" + in_model);
        }
      }
    }
    for (const auto& [fqn, cls] : boundary_classes_) {
      const std::string pointer = pointer_join("/boundary_classes", fqn);
      const std::string_view* actual = model.find_class(fqn);
      if (actual == nullptr) {
        error(pointer,
              "module " + quote_for_diagnostic(fqn) + " is not in the model tree" + in_model);
      } else if (*actual != cls) {
        error(pointer, "class " + quote_for_diagnostic(cls) +
                           " disagrees with the model tree, which has " +
                           quote_for_diagnostic(*actual) + in_model);
      }
    }
    if (!model.has_parameters) {
      add(Severity::kNote, model.file, "",
          "the model tree has no 'parameters': parameter checks skipped");
      return;
    }
    std::unordered_set<std::string_view> planned_keys;
    for (const PlannedParam& p : planned_) {
      planned_keys.insert(p.fqn);
      const ModelParameter* info = model.find_parameter(p.fqn);
      if (info == nullptr) {
        error(p.pointer,
              "parameter " + quote_for_diagnostic(p.fqn) + " is not in the model" + in_model);
        continue;
      }
      const auto rank = static_cast<std::int64_t>(info->shape.size());
      for (const DimUse& use : p.dims) {
        // The parsed (real) dim is never negative: a negative text is the uneven encoding.
        if (use.placement.dim < rank) continue;
        error(use.pointer, quote_for_diagnostic(use.text) + " shards dim " +
                               std::to_string(use.placement.dim) + ", but parameter " +
                               quote_for_diagnostic(p.fqn) + " has rank " + std::to_string(rank) +
                               " (shape " + shape_text(info->shape) + " in " + model.file + ")");
      }
    }
    for (const auto& [fqn, info] : model.parameters) {
      if (!info.requires_grad || is_covered(fqn, planned_keys)) continue;
      add(Severity::kError, model.file, pointer_join("/parameters", fqn),
          "trainable parameter " + quote_for_diagnostic(fqn) +
              " is not covered by any param_plan entry of " + file_);
    }
  }

  // Upstream's preflight rule: fqn is a planned key, or lies under one (key + ".").
  static bool is_covered(std::string_view fqn,
                         const std::unordered_set<std::string_view>& planned_keys) {
    if (planned_keys.contains(fqn)) return true;
    for (std::size_t dot = fqn.find('.'); dot != std::string_view::npos;
         dot = fqn.find('.', dot + 1)) {
      if (planned_keys.contains(fqn.substr(0, dot))) return true;
    }
    return false;
  }

  std::string file_;
  const ModelTree* model_;
  Diagnostics findings_;
  const JsonObject* param_plan_ = nullptr;
  std::unordered_set<std::string_view> boundaries_;
  std::vector<std::string_view> mesh_axes_;
  std::vector<PlannedParam> planned_;
  std::vector<std::pair<std::string_view, std::string_view>> boundary_classes_;
  std::vector<AxisUse> axes_;
  std::unordered_map<std::string_view, std::size_t> axis_index_;
  std::vector<NegativeUse> negatives_;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> negative_index_;
};

Expected<JsonDocument> load_document(const std::string& path) {
  Expected<InputFile> input = read_input(path);
  if (!input) return std::move(input.errors());
  return parse_json_document(input->display_name, std::move(input->bytes));
}

void split_by_class(Diagnostics&& from, CheckResult& result) {
  for (Diagnostic& d : from) {
    (d.error_class == ErrorClass::kIo ? result.io_errors : result.findings).push_back(std::move(d));
  }
}

}  // namespace

bool CheckResult::has_errors() const {
  return !io_errors.empty() ||
         std::any_of(findings.begin(), findings.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

Diagnostics check_meta(const JsonDocument& meta, const ModelTree* model) {
  const Json root = json_from_dom(meta.root());
  Diagnostics findings = MetaChecker(meta.name(), model).run(root);
  const std::string& meta_file = meta.name();
  std::stable_sort(findings.begin(), findings.end(),
                   [&meta_file](const Diagnostic& a, const Diagnostic& b) {
                     const bool a_model = a.file != meta_file;
                     const bool b_model = b.file != meta_file;
                     if (a_model != b_model) return b_model;
                     if (a.pointer != b.pointer) return a.pointer < b.pointer;
                     return a.message < b.message;
                   });
  return findings;
}

CheckResult run_check(const CheckRequest& request) {
  CheckResult result;
  // Both files are read and parsed before anything is checked, so every unreadable or
  // malformed input is reported in one run.
  Expected<JsonDocument> meta = load_document(request.meta_path);
  if (!meta) split_by_class(std::move(meta.errors()), result);
  std::optional<Expected<JsonDocument>> model_doc;
  if (request.model_path) {
    model_doc = load_document(*request.model_path);
    if (!*model_doc) split_by_class(std::move(model_doc->errors()), result);
  }
  if (!result.io_errors.empty()) {
    result.findings.clear();
    return result;
  }
  if (!result.findings.empty()) return result;

  std::optional<ModelTree> model;
  if (model_doc) {
    Expected<ModelTree> decoded = decode_model_tree(**model_doc);
    if (!decoded) {
      result.findings = std::move(decoded.errors());
      return result;
    }
    model = std::move(*decoded);
  }
  result.findings = check_meta(*meta, model ? &*model : nullptr);
  return result;
}

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return "error";
    case Severity::kWarning:
      return "warning";
    case Severity::kNote:
      return "note";
  }
  return "error";
}

std::string render_findings_json_lines(const Diagnostics& findings) {
  std::string out;
  for (const Diagnostic& d : findings) {
    JsonObject o;
    o.push_back({"severity", Json(severity_name(d.severity))});
    o.push_back({"file", Json(std::string_view(d.file))});
    o.push_back({"pointer", Json(std::string_view(d.pointer))});
    o.push_back({"message", Json(std::string_view(d.message))});
    if (d.line != 0) {
      o.push_back({"line", Json(static_cast<std::uint64_t>(d.line))});
      if (d.column != 0) o.push_back({"column", Json(static_cast<std::uint64_t>(d.column))});
    }
    out += encode_compact_json(Json(std::move(o)));
    out += '\n';
  }
  return out;
}

}  // namespace hpfreeze
