#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/name_index.h"
#include "check/check.h"
#include "check/skipped_overrides.h"
#include "dumps/coverage.h"
#include "json/json.h"
#include "meta/meta.h"
#include "spec/findings.h"
#include "spec/placement.h"
#include "spec/spec_fields.h"

namespace hpfreeze {
namespace {

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
  MetaChecker(const FrozenMeta& meta, const ModelTree* model, bool allow_uncovered)
      : meta_(&meta), file_(meta.file), model_(model), allow_uncovered_(allow_uncovered) {}

  Diagnostics run() {
    check_mesh_dim_names();
    check_param_plan();
    report_axes();
    report_negative_dims();
    check_frozen_sharded_params();
    check_injections();
    if (model_ != nullptr) check_against_model();
    for (Diagnostic& d : skipped_override_warnings(*meta_)) findings_.push_back(std::move(d));
    return std::move(findings_);
  }

  // Upstream's schema rules for the identity fields; a missing key takes its default.
  // Freeze copies these from a base file unjudged, so only check judges them.
  static Diagnostics check_schema(const FrozenMeta& meta) {
    MetaChecker c(meta.file);
    for (std::string_view key : {"codegen_version", "signature", "yaml_path", "yaml_sha256"}) {
      const Json* v = meta.identity_member(key);
      if (v != nullptr && !v->is_string())
        c.add(finding_rule("HPF101"), pointer_join("", key), expected_got("a string", *v));
    }
    for (std::string_view key : {"source", "parallel_dims", "outputs"}) {
      const Json* v = meta.identity_member(key);
      if (v != nullptr && !v->is_object())
        c.add(finding_rule("HPF101"), pointer_join("", key), expected_got("an object", *v));
    }
    if (const Json* v = meta.identity_member("entrypoints")) {
      if (!v->is_object()) {
        c.add(finding_rule("HPF101"), "/entrypoints", expected_got("an object", *v));
      } else {
        for (const JsonMember& m : v->as_object()) {
          if (!m.value.is_string())
            c.add(finding_rule("HPF101"), pointer_join("/entrypoints", m.key),
                  expected_got("a string", m.value));
        }
      }
    }
    if (const Json* v = meta.identity_member("covered")) {
      if (!v->is_object()) {
        c.add(finding_rule("HPF101"), "/covered", expected_got("an object", *v));
      } else if (const Json* s = v->find("sharding_plan"); s != nullptr && !s->is_bool()) {
        c.add(finding_rule("HPF101"), "/covered/sharding_plan", expected_got("a boolean", *s));
      }
    }
    for (std::string_view key : {"not_covered", "remote_siblings", "external_state_classes"}) {
      c.check_array_of(meta.identity_member(key), key, "an array of strings", "a string",
                       [](const Json& e) { return e.is_string(); });
    }
    c.check_array_of(meta.identity_member("module_overrides"), "module_overrides",
                     "an array of objects", "an object",
                     [](const Json& e) { return e.is_object(); });
    return std::move(c.findings_);
  }

 private:
  explicit MetaChecker(const std::string& file) : file_(file), model_(nullptr) {}

  // A finding of `rule` (spec/findings.h) located in `file`, by default the meta.
  Diagnostic& add(const FindingRule& rule, std::string pointer, std::string message) {
    return add(rule, file_, std::move(pointer), std::move(message));
  }
  Diagnostic& add(const FindingRule& rule, const std::string& file, std::string pointer,
                  std::string message) {
    return findings_.emplace_back(make_finding(rule, file, std::move(pointer), std::move(message)));
  }

  template <class Pred>
  void check_array_of(const Json* v, std::string_view key, std::string_view whole,
                      std::string_view element, Pred ok) {
    if (v == nullptr) return;
    const std::string pointer = pointer_join("", key);
    const FindingRule& rule = finding_rule("HPF101");
    if (!v->is_array()) {
      add(rule, pointer, expected_got(whole, *v));
      return;
    }
    const JsonArray& items = v->as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (!ok(items[i])) add(rule, index_pointer(pointer, i), expected_got(element, items[i]));
    }
  }

  void check_mesh_dim_names() {
    const Json* names = meta_->members.mesh_dim_names;
    if (names == nullptr || !names->is_array()) return;  // null, or a decoding error
    std::unordered_map<std::string_view, std::size_t> first;
    for (std::size_t i = 0; i < names->as_array().size(); ++i) {
      const Json& name = names->as_array()[i];
      if (!name.is_string()) continue;
      auto [it, inserted] = first.emplace(name.as_string(), i);
      if (!inserted) {
        add(finding_rule("HPF205"), index_pointer("/mesh_dim_names", i),
            "duplicate axis " + quote_for_diagnostic(name.as_string()) + " (first at " +
                index_pointer("/mesh_dim_names", it->second) + ")");
        continue;
      }
      mesh_axes_.push_back(name.as_string());
    }
  }

  static std::string param_pointer(const MetaBoundary& b, const MetaParam& p) {
    return pointer_join(pointer_join(pointer_join("/param_plan", b.fqn), "params"), p.name);
  }

  void check_param_plan() {
    const Json* plan = meta_->members.param_plan;
    if (plan != nullptr && plan->is_object() && meta_->boundaries.empty())
      add(finding_rule("HPF102"), "/param_plan", "param_plan is empty: the meta plans no boundary");
    for (const MetaBoundary& b : meta_->boundaries) {
      const std::string pointer = pointer_join("/param_plan", b.fqn);
      if (b.entry == nullptr) continue;  // not an object: a decoding error
      // Document order, so that aggregated findings sit at their first occurrence.
      for (const JsonMember& field : *b.entry) {
        const std::optional<std::size_t> i = find_spec_field_by_meta_key(field.key);
        if (!i || kSpecFields[*i].section != FieldSection::kParamPlan) continue;  // reported
        if (kSpecFields[*i].kind == FieldKind::kPlacementMap) {
          check_params(b);
        } else if (kSpecFields[*i].kind == FieldKind::kNamedPlacements && field.value.is_object()) {
          for (const JsonMember& m : field.value.as_object()) {
            check_named_value(b.fqn, m.key, m.value,
                              pointer_join(pointer_join(pointer, field.key), m.key), std::nullopt);
          }
        }
      }
    }
  }

  void check_params(const MetaBoundary& b) {
    for (const MetaParam& p : b.params) {
      for (const MetaAxisPlacement& a : p.axes) {
        // Built only for a finding or an axis's first use, not for every leaf.
        auto leaf = [&b, &p, &a] { return pointer_join(param_pointer(b, p), a.axis); };
        count_axis(a.axis, leaf);
        note_placement(a.text, a.placement, leaf, b.fqn, p.name);
      }
    }
  }

  // Every string leaf is a placement; other scalars pass through as upstream's rebuild does.
  // A leaf's axis is the key that holds it below the name level (arrays keep their key's).
  void check_named_value(std::string_view boundary, std::string_view name, const Json& v,
                         const std::string& pointer, std::optional<std::string_view> axis) {
    if (v.is_string()) {
      Expected<Placement> parsed = parse_placement(v.as_string());
      if (!parsed) {
        add(finding_rule("HPF201"), pointer, parsed.errors().front().message);
        return;
      }
      auto leaf = [&pointer] { return pointer; };
      if (axis) count_axis(*axis, leaf);
      note_placement(v.as_string(), *parsed, leaf, boundary, name);
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

  // `pointer()` gives the leaf's pointer (see check_params).
  template <class Pointer>
  void note_placement(std::string_view text, const Placement& p, const Pointer& pointer,
                      std::string_view boundary, std::string_view name) {
    const std::string canonical = to_canonical(p);
    if (canonical != text) {
      add(finding_rule("HPF202"), pointer(),
          "placement " + quote_for_diagnostic(text) +
              " is not canonical (canonical form: " + quote_for_diagnostic(canonical) + ")");
    }
    if (p.has_dim() && p.uneven_shard) count_negative(boundary, name, text, p, pointer);
  }

  template <class Pointer>
  void count_axis(std::string_view axis, const Pointer& pointer) {
    auto [it, inserted] = axis_index_.emplace(axis, axes_.size());
    if (inserted) axes_.push_back({axis, pointer(), 0});
    ++axes_[it->second].count;
  }

  template <class Pointer>
  void count_negative(std::string_view boundary, std::string_view name, std::string_view text,
                      const Placement& p, const Pointer& pointer) {
    auto [it, inserted] = negative_index_.emplace(std::pair{boundary, name}, negatives_.size());
    if (inserted) negatives_.push_back({boundary, name, text, p, pointer(), 0});
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
      // ep outside mesh_dim_names is HyperParallel's folded expert parallelism.
      const std::string what = use.axis == "ep"
                                   ? "; DTensor ignores it, but the expert-parallel path splits "
                                     "the experts it shards over groups of ep ranks folded into "
                                     "the dense region"
                                   : "; the runtime ignores it";
      add(finding_rule("HPF204"), use.first_pointer,
          "axis " + quote_for_diagnostic(use.axis) + " is not in mesh_dim_names " + declared +
              what + " (" + plural(use.count, "placement") + ")");
    }
  }

  void report_negative_dims() {
    for (const NegativeUse& use : negatives_) {
      const std::int64_t written = use.first_placement.encoded_dim();
      add(finding_rule("HPF203"), use.first_pointer,
          "ambiguous negative dim: " + quote_for_diagnostic(use.first_text) +
              " reads back as an uneven shard of dim " + std::to_string(use.first_placement.dim) +
              ", not as dim " + std::to_string(written) + " counted from the end (" +
              plural(use.count, "negative-dim placement") + " of " +
              quote_for_diagnostic(use.name) + " on boundary " +
              quote_for_diagnostic(use.boundary) + ")");
    }
  }

  void check_frozen_sharded_params() {
    // One FQN may be planned twice (two boundaries, same joined name): sharded if any is,
    // and then named by the first sharded one. Findings are sorted at the end
    // (check_document), so the order they are found in does not matter.
    struct Planned {
      std::string_view fqn;
      const MetaBoundary* boundary;
      const MetaParam* param;
      bool sharded;
      // A param with an undecodable leaf may be sharded or not: it is judged neither way.
      bool uncertain;
      bool repeat = false;  // a later plan of an FQN planned before
    };
    std::vector<Planned> planned;
    for (const MetaBoundary& b : meta_->boundaries) {
      for (const MetaParam& p : b.params) {
        const bool sharded = p.sharded();
        planned.push_back({p.fqn, &b, &p, sharded, !p.complete && !sharded});
      }
    }
    const auto planned_name = [&planned](std::size_t i) { return planned[i].fqn; };
    NameIndex planned_index;  // the first of equal names wins
    if (!planned_index.build(planned.size(), planned_name)) {
      for (std::size_t i = 0; i < planned.size(); ++i) {
        const std::size_t first = *planned_index.find(planned[i].fqn, planned_name);
        if (first == i) continue;
        Planned& kept = planned[first];
        if (planned[i].sharded && !kept.sharded) {
          kept.boundary = planned[i].boundary;
          kept.param = planned[i].param;
          kept.sharded = true;
        }
        kept.uncertain = kept.uncertain || planned[i].uncertain;
        planned[i].repeat = true;
      }
    }
    const std::vector<std::string_view>& listed = meta_->frozen_sharded_params;
    const Json* raw = meta_->members.frozen_sharded_params;
    if (raw != nullptr && (!raw->is_array() || listed.size() != raw->as_array().size())) {
      return;  // not all strings: a decoding error, and the indices would not match
    }
    const auto listed_name = [&listed](std::size_t i) { return listed[i]; };
    NameIndex listed_index;
    listed_index.build(listed.size(), listed_name);
    for (const Planned& p : planned) {
      if (p.repeat || !p.sharded || listed_index.find(p.fqn, listed_name)) continue;
      add(finding_rule("HPF206"), "/frozen_sharded_params",
          "missing " + quote_for_diagnostic(p.fqn) + ", which param_plan shards (" +
              param_pointer(*p.boundary, *p.param) + ")");
    }
    for (std::size_t i = 0; i < listed.size(); ++i) {
      const std::optional<std::size_t> found = planned_index.find(listed[i], planned_name);
      if (found && planned[*found].uncertain) continue;
      if (!found) {
        add(finding_rule("HPF206"), index_pointer("/frozen_sharded_params", i),
            quote_for_diagnostic(listed[i]) + " is not a parameter of param_plan");
      } else if (!planned[*found].sharded) {
        add(finding_rule("HPF206"), index_pointer("/frozen_sharded_params", i),
            quote_for_diagnostic(listed[i]) + " is replicated on every axis in param_plan (" +
                param_pointer(*planned[*found].boundary, *planned[*found].param) + ")");
      }
    }
  }

  void check_injections() {
    std::unordered_map<std::string_view, std::size_t> first;
    for (const MetaInjection& injection : meta_->injections) {
      const std::string match_pointer = index_pointer("/injections", injection.index) + "/match";
      if (meta_->find_boundary(injection.match) == nullptr) {
        add(finding_rule("HPF207"), match_pointer,
            quote_for_diagnostic(injection.match) + " is not a param_plan boundary");
      }
      auto [it, inserted] = first.emplace(injection.match, injection.index);
      if (!inserted) {
        add(finding_rule("HPF207"), match_pointer,
            "second injection for " + quote_for_diagnostic(injection.match) + " (first at " +
                index_pointer("/injections", it->second) + ")");
      }
    }
  }

  // The boundaries and boundary_classes against the model's module tree.
  void check_modules(const ModelTree& model, const std::string& in_model) {
    for (const MetaBoundary& b : meta_->boundaries) {
      if (model.find_class(b.fqn) == nullptr) {
        add(finding_rule("HPF301"), pointer_join("/param_plan", b.fqn),
            "boundary module " + quote_for_diagnostic(b.fqn) + " is not in the model tree" +
                in_model);
      }
    }
    for (const auto& [fqn, cls] : meta_->boundary_classes) {
      const std::string pointer = pointer_join("/boundary_classes", fqn);
      const std::string_view* actual = model.find_class(fqn);
      if (actual == nullptr) {
        add(finding_rule("HPF301"), pointer,
            "module " + quote_for_diagnostic(fqn) + " is not in the model tree" + in_model);
      } else if (*actual != cls) {
        add(finding_rule("HPF302"), pointer,
            "class " + quote_for_diagnostic(cls) + " disagrees with the model tree, which has " +
                quote_for_diagnostic(*actual) + in_model);
      }
    }
  }

  void check_against_model() {
    const ModelTree& model = *model_;
    const std::string in_model = " (" + model.file + ")";
    if (model.checkpoint) {
      add(finding_rule("HPF306"), model.file, "",
          "a checkpoint has no module tree: the module checks (boundary modules and "
          "boundary_classes against the model) were skipped");
    } else {
      check_modules(model, in_model);
    }
    if (!model.has_parameters) {
      add(finding_rule("HPF307"), model.file, "",
          "the model tree has no 'parameters': parameter checks skipped");
      return;
    }
    for (const MetaBoundary& b : meta_->boundaries) {
      for (const MetaParam& p : b.params) check_param_in_model(b, p, in_model);
    }
    for (const std::size_t i :
         uncovered_trainable_parameters(model, [this] { return coverage_of(*meta_); })) {
      const std::string_view fqn = model.parameters[i].first;
      Diagnostic& d = add(finding_rule("HPF305"), model.file, model.parameter_pointer(fqn),
                          "trainable parameter " + quote_for_diagnostic(fqn) +
                              " is not covered by any param_plan entry of " + file_);
      if (allow_uncovered_) d.severity = Severity::kWarning;  // the row's one lowering
    }
  }

  void check_param_in_model(const MetaBoundary& b, const MetaParam& p,
                            const std::string& in_model) {
    const ModelTree& model = *model_;
    const ModelParameter* info = model.find_parameter(p.fqn);
    if (info == nullptr) {
      add(finding_rule("HPF303"), param_pointer(b, p),
          "parameter " + quote_for_diagnostic(p.fqn) + " is not in the model" + in_model);
      return;
    }
    const auto rank = static_cast<std::int64_t>(info->shape.size());
    for (const MetaAxisPlacement& a : p.axes) {
      // The parsed (real) dim is never negative: a negative text is the uneven encoding.
      if (!a.placement.has_dim() || a.placement.dim < rank) continue;
      add(finding_rule("HPF304"), pointer_join(param_pointer(b, p), a.axis),
          quote_for_diagnostic(a.text) + " shards dim " + std::to_string(a.placement.dim) +
              ", but parameter " + quote_for_diagnostic(p.fqn) + " has rank " +
              std::to_string(rank) + " (shape " + shape_text(info->shape) + " in " + model.file +
              ")");
    }
  }

  const FrozenMeta* meta_ = nullptr;
  const std::string& file_;
  const ModelTree* model_;
  bool allow_uncovered_ = false;
  Diagnostics findings_;
  std::vector<std::string_view> mesh_axes_;
  std::vector<AxisUse> axes_;
  std::unordered_map<std::string_view, std::size_t> axis_index_;
  std::vector<NegativeUse> negatives_;
  std::map<std::pair<std::string_view, std::string_view>, std::size_t> negative_index_;
};

}  // namespace

void sort_findings(Diagnostics& findings, const std::string& meta_file) {
  std::stable_sort(findings.begin(), findings.end(),
                   [&meta_file](const Diagnostic& a, const Diagnostic& b) {
                     const bool a_model = a.file != meta_file;
                     const bool b_model = b.file != meta_file;
                     if (a_model != b_model) return b_model;
                     if (a.pointer != b.pointer) return a.pointer < b.pointer;
                     return a.message < b.message;
                   });
}

Diagnostics check_meta(const FrozenMeta& meta, Diagnostics decode_findings, const ModelTree* model,
                       bool allow_uncovered) {
  Diagnostics findings = std::move(decode_findings);
  for (Diagnostics more :
       {MetaChecker::check_schema(meta), MetaChecker(meta, model, allow_uncovered).run()}) {
    findings.insert(findings.end(), std::make_move_iterator(more.begin()),
                    std::make_move_iterator(more.end()));
  }
  sort_findings(findings, meta.file);
  return findings;
}

}  // namespace hpfreeze
