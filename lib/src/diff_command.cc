#include "hpfreeze/diff_command.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "hpfreeze/encode.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/placement.h"
#include "hpfreeze/spec_fields.h"

namespace hpfreeze {
namespace {

// The canonical string of a value that is a valid placement string, else nothing.
std::optional<std::string> canonical_of(const Json& value) {
  if (!value.is_string()) return std::nullopt;
  Expected<Placement> parsed = parse_placement(value.as_string());
  if (!parsed) return std::nullopt;
  return to_canonical(*parsed);
}

// same_json, except that two valid placement strings compare by canonical form at any depth.
bool same_placement_aware(const Json& a, const Json& b) {
  if (a.is_string() && b.is_string()) {
    if (a.as_string() == b.as_string()) return true;
    const std::optional<std::string> ca = canonical_of(a);
    const std::optional<std::string> cb = canonical_of(b);
    return ca && cb && *ca == *cb;
  }
  if (a.is_array() && b.is_array()) {
    const JsonArray& x = a.as_array();
    const JsonArray& y = b.as_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!same_placement_aware(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_object() && b.is_object()) {
    const JsonObject& x = a.as_object();
    if (x.size() != b.as_object().size()) return false;
    for (const JsonMember& m : x) {
      const Json* other = b.find(m.key);
      if (other == nullptr || !same_placement_aware(m.value, *other)) return false;
    }
    return true;
  }
  return same_json(a, b);
}

// Key -> value of an object, for the per-key walks (param_plan can hold thousands of keys).
class ObjectIndex {
 public:
  explicit ObjectIndex(const JsonObject& object) {
    index_.reserve(object.size());
    for (const JsonMember& m : object) index_.emplace(m.key, &m.value);
  }
  [[nodiscard]] const Json* find(std::string_view key) const {
    auto it = index_.find(key);
    return it == index_.end() ? nullptr : it->second;
  }

 private:
  std::unordered_map<std::string_view, const Json*> index_;
};

class Differ {
 public:
  explicit Differ(std::vector<MetaDifference>& out) : out_(out) {}

  void add(std::string pointer, const Json& value, DiffSubject subject) {
    out_.push_back({DiffOp::kAdd, std::move(pointer), std::nullopt, value, subject});
  }
  void remove(std::string pointer, const Json& value, DiffSubject subject) {
    out_.push_back({DiffOp::kRemove, std::move(pointer), value, std::nullopt, subject});
  }
  void change(std::string pointer, const Json& a, const Json& b, DiffSubject subject) {
    out_.push_back({DiffOp::kChange, std::move(pointer), a, b, subject});
  }

  // Calls both(key, a, b) for shared keys and reports the others as added / removed.
  template <class Both>
  void each_member(const std::string& pointer, const JsonObject& a, const JsonObject& b,
                   DiffSubject subject, Both both) {
    const ObjectIndex index_a(a);
    const ObjectIndex index_b(b);
    for (const JsonMember& m : a) {
      if (const Json* other = index_b.find(m.key)) {
        both(pointer_join(pointer, m.key), m.key, m.value, *other);
      } else {
        remove(pointer_join(pointer, m.key), m.value, subject);
      }
    }
    for (const JsonMember& m : b) {
      if (index_a.find(m.key) == nullptr) add(pointer_join(pointer, m.key), m.value, subject);
    }
  }

  // Objects member by member, arrays of one length item by item (an index says little
  // once items move, so arrays of different lengths are one value), the rest as values.
  void value(const std::string& pointer, const Json& a, const Json& b) {
    if (a.is_array() && b.is_array() && a.as_array().size() == b.as_array().size()) {
      for (std::size_t i = 0; i < a.as_array().size(); ++i) {
        value(pointer + "/" + std::to_string(i), a.as_array()[i], b.as_array()[i]);
      }
    } else if (a.is_object() && b.is_object()) {
      each_member(pointer, a.as_object(), b.as_object(), DiffSubject::kValue,
                  [this](const std::string& p, std::string_view, const Json& x, const Json& y) {
                    value(p, x, y);
                  });
    } else if (!same_json(a, b)) {
      change(pointer, a, b, DiffSubject::kValue);
    }
  }

  // params and named placements: objects member by member down to the placement leaves.
  void placement_tree(const std::string& pointer, const Json& a, const Json& b) {
    if (a.is_object() && b.is_object()) {
      each_member(pointer, a.as_object(), b.as_object(), DiffSubject::kPlacement,
                  [this](const std::string& p, std::string_view, const Json& x, const Json& y) {
                    placement_tree(p, x, y);
                  });
    } else if (!same_placement_aware(a, b)) {
      change(pointer, a, b, DiffSubject::kPlacement);
    }
  }

  void boundary(const std::string& pointer, const Json& a, const Json& b) {
    if (!a.is_object() || !b.is_object()) {
      value(pointer, a, b);
      return;
    }
    each_member(pointer, a.as_object(), b.as_object(), DiffSubject::kValue,
                [this](const std::string& p, std::string_view key, const Json& x, const Json& y) {
                  const std::optional<std::size_t> field = find_spec_field_by_meta_key(key);
                  const bool placements =
                      field && (kSpecFields[*field].kind == FieldKind::kPlacementMap ||
                                kSpecFields[*field].kind == FieldKind::kNamedPlacements);
                  if (placements) {
                    placement_tree(p, x, y);
                  } else if (!same_json(x, y)) {
                    change(p, x, y, DiffSubject::kValue);
                  }
                });
  }

  void param_plan(const std::string& pointer, const Json& a, const Json& b) {
    if (!a.is_object() || !b.is_object()) {
      value(pointer, a, b);
      return;
    }
    each_member(pointer, a.as_object(), b.as_object(), DiffSubject::kBoundary,
                [this](const std::string& p, std::string_view, const Json& x, const Json& y) {
                  boundary(p, x, y);
                });
  }

  // Members of two arrays as multisets; each surplus member is one add or remove.
  void multiset(const std::string& pointer, const JsonArray& a, const JsonArray& b,
                DiffSubject subject) {
    // encode_python_json sorts keys and keeps 1 apart from 1.0: a canonical identity.
    std::map<std::string, std::pair<long, const Json*>> counts;
    for (const Json& item : a) {
      auto& entry = counts[encode_python_json(item)];
      ++entry.first;
      entry.second = &item;
    }
    for (const Json& item : b) {
      auto& entry = counts[encode_python_json(item)];
      --entry.first;
      entry.second = &item;
    }
    for (const auto& [key, entry] : counts) {
      for (long i = 0; i < entry.first; ++i) remove(pointer, *entry.second, subject);
      for (long i = 0; i > entry.first; --i) add(pointer, *entry.second, subject);
    }
  }

  void injection(const std::string& pointer, const Json& a, const Json& b) {
    each_member(pointer, a.as_object(), b.as_object(), DiffSubject::kValue,
                [this](const std::string& p, std::string_view key, const Json& x, const Json& y) {
                  if (key == "match") return;
                  const std::optional<std::size_t> field = find_spec_field_by_meta_key(key);
                  const bool placements =
                      field && (kSpecFields[*field].kind == FieldKind::kValueToDict ||
                                kSpecFields[*field].kind == FieldKind::kNamedPlacements);
                  if (placements ? !same_placement_aware(x, y) : !same_json(x, y)) {
                    change(p, x, y, DiffSubject::kValue);
                  }
                });
  }

  // Injections pair up by match (the k-th occurrence of a match with the k-th); entries
  // without a string match compare as a multiset.
  void injections(const std::string& pointer, const JsonArray& a, const JsonArray& b) {
    std::map<std::string_view, std::pair<std::vector<const Json*>, std::vector<const Json*>>>
        by_match;
    JsonArray unkeyed_a;
    JsonArray unkeyed_b;
    auto group = [&](const JsonArray& items, bool old_side, JsonArray& unkeyed) {
      for (const Json& item : items) {
        const Json* match = item.find("match");
        if (match == nullptr || !match->is_string()) {
          unkeyed.push_back(item);
          continue;
        }
        auto& sides = by_match[match->as_string()];
        (old_side ? sides.first : sides.second).push_back(&item);
      }
    };
    group(a, true, unkeyed_a);
    group(b, false, unkeyed_b);
    for (const auto& [match, sides] : by_match) {
      const std::string p = pointer_join(pointer, match);
      const std::size_t paired = std::min(sides.first.size(), sides.second.size());
      for (std::size_t i = 0; i < paired; ++i) injection(p, *sides.first[i], *sides.second[i]);
      for (std::size_t i = paired; i < sides.first.size(); ++i) {
        remove(p, *sides.first[i], DiffSubject::kInjection);
      }
      for (std::size_t i = paired; i < sides.second.size(); ++i) {
        add(p, *sides.second[i], DiffSubject::kInjection);
      }
    }
    multiset(pointer, unkeyed_a, unkeyed_b, DiffSubject::kValue);
  }

  void top_level(const std::string& pointer, std::string_view key, const Json& a, const Json& b) {
    if (key == "param_plan") {
      param_plan(pointer, a, b);
    } else if (a.is_array() && b.is_array() && key == "injections") {
      injections(pointer, a.as_array(), b.as_array());
    } else if (a.is_array() && b.is_array() &&
               (key == "frozen_sharded_params" || key == "tied_pairs")) {
      multiset(pointer, a.as_array(), b.as_array(), DiffSubject::kValue);
    } else if (key == "mesh_dim_names") {
      if (!same_json(a, b)) change(pointer, a, b, DiffSubject::kValue);  // axis order matters
    } else {
      value(pointer, a, b);
    }
  }

 private:
  std::vector<MetaDifference>& out_;
};

std::vector<std::string> pointer_tokens(std::string_view pointer) {
  std::vector<std::string> tokens;
  std::size_t pos = 0;
  while (pos < pointer.size()) {
    // Every token starts after a '/'.
    const std::size_t end = std::min(pointer.find('/', pos + 1), pointer.size());
    std::string token;
    for (std::size_t i = pos + 1; i < end; ++i) {
      if (pointer[i] == '~' && i + 1 < end) {
        token += pointer[i + 1] == '1' ? '/' : '~';
        ++i;
      } else {
        token += pointer[i];
      }
    }
    tokens.push_back(std::move(token));
    pos = end;
  }
  return tokens;
}

// Natural order: digit runs compare as numbers (layers.2 before layers.10, array index 2
// before 10), other runs by bytes; equal-looking tokens ("01", "1") fall back to bytes.
bool natural_less(std::string_view a, std::string_view b) {
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0;
  std::size_t j = 0;
  while (i < a.size() && j < b.size()) {
    if (is_digit(a[i]) && is_digit(b[j])) {
      std::size_t ei = i;
      std::size_t ej = j;
      while (ei < a.size() && is_digit(a[ei])) ++ei;
      while (ej < b.size() && is_digit(b[ej])) ++ej;
      std::string_view x = a.substr(i, ei - i);
      std::string_view y = b.substr(j, ej - j);
      while (x.size() > 1 && x.front() == '0') x.remove_prefix(1);
      while (y.size() > 1 && y.front() == '0') y.remove_prefix(1);
      if (x.size() != y.size()) return x.size() < y.size();
      if (x != y) return x < y;
      i = ei;
      j = ej;
    } else {
      if (a[i] != b[j]) {
        return static_cast<unsigned char>(a[i]) < static_cast<unsigned char>(b[j]);
      }
      ++i;
      ++j;
    }
  }
  if ((i < a.size()) != (j < b.size())) return j < b.size();
  return a < b;
}

bool tokens_less(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  const std::size_t n = std::min(a.size(), b.size());
  for (std::size_t k = 0; k < n; ++k) {
    if (natural_less(a[k], b[k])) return true;
    if (natural_less(b[k], a[k])) return false;
  }
  return a.size() < b.size();
}

void sort_differences(std::vector<MetaDifference>& differences) {
  struct Key {
    std::vector<std::string> tokens;
    DiffOp op;
    std::string old_text;
    std::string new_text;
  };
  std::vector<Key> keys;
  keys.reserve(differences.size());
  for (const MetaDifference& d : differences) {
    keys.push_back({pointer_tokens(d.pointer), d.op,
                    d.old_value ? encode_python_json(*d.old_value) : std::string(),
                    d.new_value ? encode_python_json(*d.new_value) : std::string()});
  }
  std::vector<std::size_t> order(differences.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&keys](std::size_t x, std::size_t y) {
    const Key& a = keys[x];
    const Key& b = keys[y];
    if (tokens_less(a.tokens, b.tokens)) return true;
    if (tokens_less(b.tokens, a.tokens)) return false;
    return std::tie(a.op, a.old_text, a.new_text) < std::tie(b.op, b.old_text, b.new_text);
  });
  std::vector<MetaDifference> sorted;
  sorted.reserve(differences.size());
  for (std::size_t i : order) sorted.push_back(std::move(differences[i]));
  differences = std::move(sorted);
}

bool printable_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c < 0x7F; });
}

std::string render_value(const Json& value, DiffSubject subject) {
  if (subject == DiffSubject::kPlacement && value.is_string() &&
      printable_ascii(value.as_string()) && parse_placement(value.as_string()).ok()) {
    return std::string(value.as_string());
  }
  return encode_compact_json(value);
}

std::string render_pointer(std::string_view pointer) {
  const bool plain = std::none_of(pointer.begin(), pointer.end(),
                                  [](char c) { return (c >= 0 && c < 0x20) || c == 0x7F; });
  if (plain) return std::string(pointer);
  std::string out;
  append_python_string(out, pointer);
  return out;
}

std::string_view op_name(DiffOp op) {
  switch (op) {
    case DiffOp::kAdd:
      return "add";
    case DiffOp::kRemove:
      return "remove";
    case DiffOp::kChange:
      return "change";
  }
  return "change";
}

std::string_view json_type_article(simdjson::dom::element e) {
  switch (e.type()) {
    case simdjson::dom::element_type::ARRAY:
      return "an array";
    case simdjson::dom::element_type::STRING:
      return "a string";
    case simdjson::dom::element_type::INT64:
    case simdjson::dom::element_type::UINT64:
      return "an integer";
    case simdjson::dom::element_type::DOUBLE:
      return "a float";
    case simdjson::dom::element_type::BOOL:
      return "a boolean";
    case simdjson::dom::element_type::NULL_VALUE:
      return "null";
    case simdjson::dom::element_type::OBJECT:
      return "an object";
  }
  return "a value";
}

}  // namespace

bool same_json(const Json& a, const Json& b) {
  if (a.v.index() != b.v.index()) return false;
  if (const auto* x = std::get_if<double>(&a.v)) {
    const double y = std::get<double>(b.v);
    return *x == y && std::signbit(*x) == std::signbit(y);
  }
  if (a.is_array()) {
    const JsonArray& x = a.as_array();
    const JsonArray& y = b.as_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!same_json(x[i], y[i])) return false;
    }
    return true;
  }
  if (a.is_object()) {
    const JsonObject& x = a.as_object();
    if (x.size() != b.as_object().size()) return false;
    for (const JsonMember& m : x) {
      const Json* other = b.find(m.key);
      if (other == nullptr || !same_json(m.value, *other)) return false;
    }
    return true;
  }
  return a.v == b.v;
}

std::vector<MetaDifference> diff_metas(const Json& old_meta, const Json& new_meta,
                                       const DiffOptions& options) {
  std::vector<MetaDifference> out;
  Differ differ(out);
  if (!old_meta.is_object() || !new_meta.is_object()) {
    differ.value("", old_meta, new_meta);
    return out;
  }
  auto ignored = [&options](std::string_view key) {
    return std::find(options.ignored_fields.begin(), options.ignored_fields.end(), key) !=
           options.ignored_fields.end();
  };
  const ObjectIndex index_old(old_meta.as_object());
  const ObjectIndex index_new(new_meta.as_object());
  for (const JsonMember& m : old_meta.as_object()) {
    if (ignored(m.key)) continue;
    const std::string pointer = pointer_join("", m.key);
    if (const Json* other = index_new.find(m.key)) {
      differ.top_level(pointer, m.key, m.value, *other);
    } else {
      differ.remove(pointer, m.value, DiffSubject::kValue);
    }
  }
  for (const JsonMember& m : new_meta.as_object()) {
    if (ignored(m.key) || index_old.find(m.key) != nullptr) continue;
    differ.add(pointer_join("", m.key), m.value, DiffSubject::kValue);
  }
  sort_differences(out);
  return out;
}

std::string render_diff_text(const std::vector<MetaDifference>& differences) {
  std::string out;
  for (const MetaDifference& d : differences) {
    const bool whole = d.subject == DiffSubject::kBoundary || d.subject == DiffSubject::kInjection;
    const std::string_view what = d.subject == DiffSubject::kBoundary ? "boundary" : "injection";
    switch (d.op) {
      case DiffOp::kAdd:
        out += "+ " + render_pointer(d.pointer) + ": ";
        out += whole ? std::string(what) + " added" : render_value(*d.new_value, d.subject);
        break;
      case DiffOp::kRemove:
        out += "- " + render_pointer(d.pointer) + ": ";
        out += whole ? std::string(what) + " removed" : render_value(*d.old_value, d.subject);
        break;
      case DiffOp::kChange:
        out += "~ " + render_pointer(d.pointer) + ": " + render_value(*d.old_value, d.subject) +
               " -> " + render_value(*d.new_value, d.subject);
        break;
    }
    out += '\n';
  }
  return out;
}

std::string render_diff_json_lines(const std::vector<MetaDifference>& differences) {
  std::string out;
  for (const MetaDifference& d : differences) {
    JsonObject line{{"op", Json(op_name(d.op))}, {"pointer", Json(std::string_view(d.pointer))}};
    if (d.old_value) line.push_back({"old", *d.old_value});
    if (d.new_value) line.push_back({"new", *d.new_value});
    out += encode_compact_json(Json(std::move(line)));
    out += '\n';
  }
  return out;
}

Expected<DiffReport> run_diff(const DiffRequest& request) {
  // Both files are read and parsed before either error is returned, so one run names both.
  Diagnostics errors;
  std::vector<JsonDocument> documents;
  for (const std::string* path : {&request.old_path, &request.new_path}) {
    Expected<InputFile> input = read_input(*path);
    if (!input) {
      errors.insert(errors.end(), input.errors().begin(), input.errors().end());
      continue;
    }
    Expected<JsonDocument> doc = parse_json_document(input->display_name, std::move(input->bytes));
    if (!doc) {
      errors.insert(errors.end(), doc.errors().begin(), doc.errors().end());
      continue;
    }
    if (!doc->root().is_object()) {
      errors.push_back(make_error(doc->name(), {},
                                  "expected a JSON object (a codegen_meta.json), got " +
                                      std::string(json_type_article(doc->root()))));
      continue;
    }
    documents.push_back(std::move(*doc));
  }
  if (!errors.empty()) return errors;
  const Json old_meta = json_from_dom(documents[0].root());
  const Json new_meta = json_from_dom(documents[1].root());
  const std::vector<MetaDifference> differences = diff_metas(old_meta, new_meta, request.options);
  DiffReport report;
  report.different = !differences.empty();
  report.output =
      request.json ? render_diff_json_lines(differences) : render_diff_text(differences);
  return report;
}

}  // namespace hpfreeze
