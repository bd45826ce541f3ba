#include <algorithm>
#include <utility>
#include <vector>

#include "dumps/coverage.h"
#include "dumps/dump_kind.h"
#include "dumps/plan.h"
#include "hpfreeze/base/command_result.h"
#include "meta/bundle_members.h"
#include "meta/identity.h"
#include "meta/meta.h"
#include "spec/findings.h"

namespace hpfreeze {

bool MetaParam::sharded() const {
  return std::any_of(axes.begin(), axes.end(),
                     [](const MetaAxisPlacement& a) { return a.placement.is_sharded(); });
}

const MetaBoundary* FrozenMeta::find_boundary(std::string_view fqn) const {
  auto it = boundary_index_.find(fqn);
  return it == boundary_index_.end() ? nullptr : &boundaries[it->second];
}

const Json* FrozenMeta::identity_member(std::string_view key) const {
  auto it = std::find_if(identity.begin(), identity.end(),
                         [key](const JsonMember* m) { return m->key == key; });
  return it == identity.end() ? nullptr : &(*it)->value;
}

const JsonObject& FrozenMeta::top_level() const {
  static const JsonObject kNone;
  return root_.is_object() ? root_.as_object() : kNone;  // a FrozenMeta not decoded
}

std::vector<std::string_view> FrozenMeta::sharded_params() const {
  std::vector<std::string_view> out;
  for (const MetaBoundary& b : boundaries) {
    for (const MetaParam& p : b.params) {
      if (p.sharded()) out.push_back(p.fqn);
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

class MetaDecoder {
 public:
  MetaDecoder(FrozenMeta& meta, MetaDecodeOptions options)
      : meta_(meta),
        keep_params_(options.keep_params),
        params_from_document_(!options.params_in_tree),
        silenced_(options.silenced) {}

  // The meta's tree (FrozenMeta::root_).
  void set_root(Json root) { meta_.root_ = std::move(root); }

  // Without params_in_tree: the `params` of the param_plan entries, which root does not
  // hold, in document order, and how many axes they have in all.
  void decode_params_from(std::vector<simdjson::dom::element> params, std::size_t axes) {
    params_elements_ = std::move(params);
    axes_from_document_ = axes;
  }

  void error(const FindingRule& rule, std::string pointer, std::string message) {
    if (is_silenced(rule.code, silenced_)) return;
    errors_.add(make_finding(rule, meta_.file, std::move(pointer), std::move(message)));
  }
  Diagnostics take_errors() { return errors_.take(meta_.file); }
  [[nodiscard]] bool failed() const { return !errors_.empty(); }

  // False when the document is no meta at all.
  bool decode(const JsonDocument& document, std::string_view command) {
    const Json& root = meta_.root_;
    if (!root.is_object()) {
      // No finding (no code): the document is no meta, and nothing else is checked.
      errors_.add(
          make_error(meta_.file, "", expected_got("a JSON object (a codegen_meta.json)", root)));
      return false;
    }
    if (std::optional<Diagnostic> wrong =
            wrong_kind_error(document, meta_lookalike_kind(document), DumpKind::kMeta, command)) {
      errors_.add(std::move(*wrong));
      return false;
    }
    const Json* param_plan = root.find("param_plan");
    if (param_plan == nullptr)
      error(finding_rule("HPF102"), "", "missing param_plan: the meta plans no boundary");
    for (const JsonMember& m : root.as_object()) {
      const std::string pointer = pointer_join("", m.key);
      if (m.key == "param_plan") {
        meta_.members.param_plan = &m.value;
        decode_param_plan(m.value);
      } else if (m.key == "injections") {
        meta_.members.injections = &m.value;
        decode_injections(m.value);
      } else if (m.key == "frozen_sharded_params") {
        meta_.members.frozen_sharded_params = &m.value;
        strings(finding_rule("HPF105"), m.value, pointer, meta_.frozen_sharded_params,
                "an array of strings");
      } else if (m.key == "boundary_classes") {
        decode_boundary_classes(m.value);
      } else if (m.key == "mesh_dim_names") {
        meta_.members.mesh_dim_names = &m.value;
        if (m.value.is_null()) continue;
        std::vector<std::string_view> names;
        strings(finding_rule("HPF104"), m.value, pointer, names, "null or an array of strings");
        meta_.mesh_dim_names = std::move(names);
      } else if (m.key == "tied_pairs") {
        meta_.members.tied_pairs = &m.value;
        decode_tied_pairs(m.value);
      } else if (m.key == "special_handlers") {
        meta_.members.special_handlers = &m.value;
        if (m.value.is_null()) continue;
        if (!m.value.is_object()) {
          error(finding_rule("HPF109"), pointer, expected_got("an object", m.value));
        }
        meta_.special_handlers = &m.value;
      } else {
        // Judged by their readers (check's schema rules, thaw, report), not here: freeze
        // copies them from a base unjudged.
        if (m.key == "covered") meta_.covered = decode_covered(m.value);
        if (m.key == "parallel_dims") meta_.parallel_dims = decode_parallel_dims(m.value);
        decode_bundle_member(m, meta_.bundle, meta_.skipped_overrides);
        meta_.identity.push_back(&m);
      }
    }
    return true;
  }

 private:
  void strings(const FindingRule& rule, const Json& v, const std::string& pointer,
               std::vector<std::string_view>& out, std::string_view whole) {
    if (!v.is_array()) {
      error(rule, pointer, expected_got(whole, v));
      return;
    }
    const JsonArray& items = v.as_array();
    for (std::size_t i = 0; i < items.size(); ++i) {
      if (items[i].is_string()) {
        out.push_back(items[i].as_string());
      } else {
        error(rule, index_pointer(pointer, i), expected_got("a string", items[i]));
      }
    }
  }

  void decode_tied_pairs(const Json& v) {
    if (v.is_null()) return;
    if (!v.is_array()) {
      error(finding_rule("HPF108"), "/tied_pairs",
            expected_got("an array of arrays of strings", v));
      return;
    }
    const JsonArray& pairs = v.as_array();
    for (std::size_t i = 0; i < pairs.size(); ++i) {
      strings(finding_rule("HPF108"), pairs[i], index_pointer("/tied_pairs", i),
              meta_.tied_pairs.emplace_back(), "an array of strings");
    }
  }

  void decode_boundary_classes(const Json& v) {
    if (!v.is_object()) {
      error(finding_rule("HPF107"), "/boundary_classes", expected_got("an object", v));
      return;
    }
    for (const JsonMember& m : v.as_object()) {
      if (m.value.is_string()) {
        meta_.boundary_classes.emplace_back(m.key, m.value.as_string());
      } else {
        error(finding_rule("HPF107"), pointer_join("/boundary_classes", m.key),
              expected_got("a string", m.value));
      }
    }
  }

  void decode_param_plan(const Json& v) {
    if (!v.is_object()) {
      error(finding_rule("HPF103"), "/param_plan", expected_got("an object", v));
      return;
    }
    meta_.boundaries.reserve(v.as_object().size());
    if (keep_params_) {
      meta_.axes_.reserve(params_from_document_ ? axes_from_document_ : axis_bound(v.as_object()));
    }
    for (const JsonMember& m : v.as_object()) {
      const std::string pointer = pointer_join("/param_plan", m.key);
      meta_.boundary_index_.emplace(m.key, meta_.boundaries.size());
      MetaBoundary& boundary = meta_.boundaries.emplace_back();
      boundary.fqn = m.key;
      if (!m.value.is_object()) {
        error(finding_rule("HPF103"), pointer, expected_got("an object", m.value));
        continue;
      }
      boundary.entry = &m.value.as_object();
      for (const JsonMember& field : m.value.as_object()) {
        const std::string field_pointer = pointer_join(pointer, field.key);
        const std::optional<std::size_t> i = find_spec_field_by_meta_key(field.key);
        if (!i) {
          boundary.unknown.push_back(&field);
          continue;
        }
        if (kSpecFields[*i].section != FieldSection::kParamPlan) {
          error(finding_rule("HPF103"), field_pointer,
                quote_for_diagnostic(field.key) +
                    " is an injection field and cannot appear in param_plan");
          continue;
        }
        boundary.fields[*i] = &field.value;
        if (*i == kParamsField && params_from_document_) {
          // Converted one entry at a time: the views it holds point into the document.
          const Json params = json_from_dom(params_elements_.at(next_params_++));
          decode_params(boundary, params, field_pointer);
        } else if (*i == kParamsField) {
          decode_params(boundary, field.value, field_pointer);
        } else {
          check_field(finding_rule("HPF103"), kSpecFields[*i].kind, field.value, field_pointer);
        }
      }
    }
  }

  // At least as many axes as decode_params will store: the spans into meta_.axes_ need
  // it never to reallocate.
  static std::size_t axis_bound(const JsonObject& param_plan) {
    const std::string_view params_key = kSpecFields[kParamsField].meta_key;
    std::size_t n = 0;
    for (const JsonMember& entry : param_plan) {
      const Json* params = entry.value.is_object() ? entry.value.find(params_key) : nullptr;
      if (params == nullptr || !params->is_object()) continue;
      for (const JsonMember& param : params->as_object()) {
        if (param.value.is_object()) n += param.value.as_object().size();
      }
    }
    return n;
  }

  void decode_params(MetaBoundary& boundary, const Json& v, const std::string& pointer) {
    if (v.is_null()) return;
    if (!v.is_object()) {
      error(finding_rule("HPF103"), pointer,
            expected_got("an object (param -> axis -> placement)", v));
      return;
    }
    if (keep_params_) boundary.params.reserve(v.as_object().size());
    for (const JsonMember& param : v.as_object()) {
      // Built only for a message: most metas have no error and tens of thousands of params.
      auto param_pointer = [&pointer, &param] { return pointer_join(pointer, param.key); };
      MetaParam checked_only;  // every leaf is checked, kept or not
      MetaParam& out = keep_params_ ? boundary.params.emplace_back() : checked_only;
      out.name = param.key;
      if (keep_params_) out.fqn = meta_.strings.copy(join_fqn(boundary.fqn, param.key));
      if (!param.value.is_object()) {
        error(finding_rule("HPF103"), param_pointer(),
              expected_got("an object (axis -> placement)", param.value));
        out.complete = false;
        continue;
      }
      std::vector<MetaAxisPlacement>& storage = meta_.axes_;
      const std::size_t first = storage.size();
      for (const JsonMember& axis : param.value.as_object()) {
        if (!axis.value.is_string()) {
          error(finding_rule("HPF103"), pointer_join(param_pointer(), axis.key),
                expected_got("a placement string", axis.value));
          out.complete = false;
          continue;
        }
        Expected<Placement> parsed = parse_placement(axis.value.as_string());
        if (!parsed) {
          error(finding_rule("HPF201"), pointer_join(param_pointer(), axis.key),
                parsed.errors().front().message);
          out.complete = false;
          continue;
        }
        if (keep_params_) storage.push_back({axis.key, axis.value.as_string(), *parsed});
      }
      if (keep_params_)
        out.axes =
            std::span<const MetaAxisPlacement>(storage.data() + first, storage.size() - first);
    }
  }

  // The type rule each field kind's freeze gives its written value (docs/formats.md, the
  // field table); falsy values of the truthy kinds are what freeze leaves out.
  void check_field(const FindingRule& rule, FieldKind kind, const Json& v,
                   const std::string& pointer) {
    switch (kind) {
      case FieldKind::kNamedPlacements:
        if (v.truthy() && !v.is_object())
          error(rule, pointer, expected_got("an object (name -> placements)", v));
        break;
      case FieldKind::kNameList:
        if (v.truthy() && !v.is_array()) error(rule, pointer, expected_got("an array", v));
        break;
      case FieldKind::kAttrList:
        if (!v.is_null() && !v.is_array()) error(rule, pointer, expected_got("an array", v));
        break;
      case FieldKind::kDictCopy:
        if (v.truthy() && !v.is_object()) error(rule, pointer, expected_got("an object", v));
        break;
      case FieldKind::kPlacementMap:
      case FieldKind::kScalar:
      case FieldKind::kValueToDict:
      case FieldKind::kPlain:
      case FieldKind::kIntTruthy:
        break;
    }
  }

  void decode_injections(const Json& v) {
    if (!v.is_array()) {
      error(finding_rule("HPF106"), "/injections", expected_got("an array of objects", v));
      return;
    }
    const JsonArray& items = v.as_array();
    for (std::size_t n = 0; n < items.size(); ++n) {
      const std::string pointer = index_pointer("/injections", n);
      const Json& item = items[n];
      if (!item.is_object()) {
        error(finding_rule("HPF106"), pointer, expected_got("an object", item));
        continue;
      }
      const Json* match = item.find("match");
      if (match == nullptr) {
        error(finding_rule("HPF106"), pointer, "injection without a 'match'");
        continue;
      }
      if (!match->is_string()) {
        error(finding_rule("HPF106"), pointer + "/match", expected_got("a string", *match));
        continue;
      }
      MetaInjection& injection = meta_.injections.emplace_back();
      injection.match = match->as_string();
      injection.entry = &item;
      injection.index = n;
      for (const JsonMember& m : item.as_object()) {
        if (m.key == "match") continue;
        const std::string field_pointer = pointer_join(pointer, m.key);
        const std::optional<std::size_t> i = find_spec_field_by_meta_key(m.key);
        if (!i) {
          injection.unknown.push_back(&m);
        } else if (kSpecFields[*i].section != FieldSection::kInjections) {
          error(finding_rule("HPF106"), field_pointer,
                quote_for_diagnostic(m.key) +
                    " is a param_plan field and cannot appear in an injection");
        } else {
          injection.fields[*i] = &m.value;
          check_field(finding_rule("HPF106"), kSpecFields[*i].kind, m.value, field_pointer);
        }
      }
    }
  }

  FrozenMeta& meta_;
  bool keep_params_ = true;
  bool params_from_document_ = false;
  std::vector<simdjson::dom::element> params_elements_;
  std::size_t next_params_ = 0;
  std::size_t axes_from_document_ = 0;
  std::span<const std::string> silenced_;
  ErrorList errors_;
};

namespace {

// The document as a Json tree with each param_plan entry's `params` object as {}; the
// elements left out go to `params` in document order, with at least as many axes in `axes`
// as the decoder will store.
Json root_without_params(simdjson::dom::element root, std::vector<simdjson::dom::element>& params,
                         std::size_t& axes) {
  simdjson::dom::object top;
  if (root.get_object().get(top)) return json_from_dom(root);
  const std::string_view params_key = kSpecFields[kParamsField].meta_key;
  JsonObject out;
  out.reserve(top.size());
  for (auto it = top.begin(); it != top.end(); ++it) {
    simdjson::dom::object plan;
    if (it.key() != "param_plan" || it.value().get_object().get(plan)) {
      out.push_back({it.key(), json_from_dom(it.value())});
      continue;
    }
    JsonObject entries;
    entries.reserve(plan.size());
    for (auto entry = plan.begin(); entry != plan.end(); ++entry) {
      simdjson::dom::object fields;
      if (entry.value().get_object().get(fields)) {
        entries.push_back({entry.key(), json_from_dom(entry.value())});
        continue;
      }
      JsonObject kept;
      kept.reserve(fields.size());
      for (auto field = fields.begin(); field != fields.end(); ++field) {
        if (field.key() != params_key) {
          kept.push_back({field.key(), json_from_dom(field.value())});
          continue;
        }
        // An empty object stands in for an object (readers still tell it from null); any
        // other value is kept as it is, for the decoder to reject.
        kept.push_back({field.key(), field.value().is_object() ? Json(JsonObject{})
                                                               : json_from_dom(field.value())});
        params.push_back(field.value());
        simdjson::dom::object by_param;
        if (field.value().get_object().get(by_param)) continue;
        for (auto param = by_param.begin(); param != by_param.end(); ++param) {
          simdjson::dom::object by_axis;
          if (!param.value().get_object().get(by_axis)) axes += by_axis.size();
        }
      }
      entries.push_back({entry.key(), Json(std::move(kept))});
    }
    out.push_back({it.key(), Json(std::move(entries))});
  }
  return Json(std::move(out));
}

// The meta's tree from the document, with or without the params (MetaDecodeOptions).
void build_root(const JsonDocument& document, MetaDecodeOptions options, MetaDecoder& decoder) {
  if (options.params_in_tree) {
    decoder.set_root(json_from_dom(document.root()));
    return;
  }
  std::vector<simdjson::dom::element> params;
  std::size_t axes = 0;
  decoder.set_root(root_without_params(document.root(), params, axes));
  decoder.decode_params_from(std::move(params), axes);
}

}  // namespace

Expected<FrozenMeta> decode_meta(const JsonDocument& document, std::string_view command,
                                 MetaDecodeOptions options) {
  FrozenMeta meta;
  meta.file = document.name();
  MetaDecoder decoder(meta, options);
  build_root(document, options, decoder);
  decoder.decode(document, command);
  if (decoder.failed()) return decoder.take_errors();
  return meta;
}

std::optional<FrozenMeta> decode_meta_keep_going(const JsonDocument& document,
                                                 std::string_view command, Diagnostics& errors,
                                                 MetaDecodeOptions options) {
  FrozenMeta meta;
  meta.file = document.name();
  MetaDecoder decoder(meta, options);
  build_root(document, options, decoder);
  const bool is_meta = decoder.decode(document, command);
  Diagnostics found = decoder.take_errors();
  errors.insert(errors.end(), std::make_move_iterator(found.begin()),
                std::make_move_iterator(found.end()));
  if (!is_meta) return std::nullopt;
  return meta;
}

CoverageIndex coverage_of(const FrozenMeta& meta) {
  std::size_t n = 0;
  for (const MetaBoundary& b : meta.boundaries) n += b.params.size();
  std::vector<PlannedKey> keys;
  keys.reserve(n);
  for (const MetaBoundary& b : meta.boundaries) {
    for (const MetaParam& p : b.params) keys.push_back({p.fqn, {}});
  }
  return CoverageIndex(std::move(keys));
}

}  // namespace hpfreeze
