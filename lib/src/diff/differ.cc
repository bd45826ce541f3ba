// diff_metas: the walk of two decoded metas that finds their semantic differences
// (diff/diff.h), in output order.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include "diff/diff.h"
#include "diff/pointer_order.h"
#include "json/encode.h"
#include "spec/placement.h"
#include "spec/spec_fields.h"

namespace hpfreeze {
namespace {

// The canonical string of a value that is a valid placement string, else nothing.
std::optional<std::string> canonical_of(const Json& value) {
  if (!value.is_string()) return std::nullopt;
  Expected<Placement> parsed = parse_placement(value.as_string());
  if (!parsed) return std::nullopt;
  return to_canonical(*parsed);
}

// Two placement strings are equal by canonical form; other strings by their bytes.
bool same_placement_text(std::string_view a, std::string_view b) {
  if (a == b) return true;
  const std::optional<std::string> ca = canonical_of(Json(a));
  const std::optional<std::string> cb = canonical_of(Json(b));
  return ca && cb && *ca == *cb;
}

// same_json, with placement strings compared by canonical form at any depth.
bool same_placement_aware(const Json& a, const Json& b) {
  return same_json(a, b, &same_placement_text);
}

// The same members in the same order down to the bytes of every string and the bits of
// every double (so 0.0 and -0.0 differ): no walk over such objects can find a difference,
// however it compares placements, so it is skipped (most of two metas that differ at
// all). Stops at the first mismatch.
bool identical(const Json& a, const Json& b);

bool identical_members(const JsonObject& a, const JsonObject& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i].key != b[i].key || !identical(a[i].value, b[i].value)) return false;
  }
  return true;
}

bool identical(const Json& a, const Json& b) {
  if (a.v.index() != b.v.index()) return false;
  if (a.is_object()) return identical_members(a.as_object(), b.as_object());
  if (a.is_array()) {
    const JsonArray& x = a.as_array();
    const JsonArray& y = b.as_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!identical(x[i], y[i])) return false;
    }
    return true;
  }
  if (const double* d = std::get_if<double>(&a.v)) {
    return std::bit_cast<std::uint64_t>(*d) == std::bit_cast<std::uint64_t>(std::get<double>(b.v));
  }
  return a.v == b.v;  // null, bool, integers, strings
}

// The keys of two objects in output order, each with its value on either side.
struct KeyPair {
  std::string_view key;
  const Json* a = nullptr;
  const Json* b = nullptr;
};

std::vector<KeyPair> key_union(const JsonObject& a, const JsonObject& b) {
  std::vector<KeyPair> keys;
  keys.reserve(a.size() + b.size());
  std::unordered_map<std::string_view, std::size_t> index;
  index.reserve(a.size());
  for (const JsonMember& m : a) {
    index.emplace(m.key, keys.size());
    keys.push_back({m.key, &m.value, nullptr});
  }
  for (const JsonMember& m : b) {
    auto it = index.find(m.key);
    if (it != index.end()) {
      keys[it->second].b = &m.value;
    } else {
      keys.push_back({m.key, nullptr, &m.value});
    }
  }
  std::sort(keys.begin(), keys.end(),
            [](const KeyPair& x, const KeyPair& y) { return natural_less(x.key, y.key); });
  return keys;
}

// Walks two metas and hands each difference to the visitor in output order, so that
// nothing but the current pointer is held per difference. The pointer grows and shrinks
// with the walk.
class Differ {
 public:
  Differ(const DiffVisitor& visit, std::vector<std::string> ignored)
      : visit_(visit), ignored_(std::move(ignored)) {}

  // At or under an ignored pointer (a whole value above one is still one difference).
  [[nodiscard]] bool ignored(std::string_view pointer) const {
    return std::any_of(ignored_.begin(), ignored_.end(), [pointer](const std::string& p) {
      return pointer.starts_with(p) && (pointer.size() == p.size() || pointer[p.size()] == '/');
    });
  }

  void emit(DiffOp op, const Json* a, const Json* b, DiffSubject subject) {
    if (!ignored_.empty() && ignored(pointer_)) return;
    if (buffer_ != nullptr) {
      buffer_->push_back({op, pointer_, a, b, subject});
      return;
    }
    visit_(MetaDifference{op, pointer_, a, b, subject});
  }

  // Calls both(a, b) for shared keys and reports the others as added / removed; one-sided
  // keys for which skip(key, value) holds are no difference.
  template <class Both, class Skip>
  void members(const JsonObject& a, const JsonObject& b, DiffSubject subject, Both both,
               Skip skip) {
    if (identical_members(a, b)) return;
    for (const KeyPair& k : key_union(a, b)) {
      const std::size_t size = pointer_.size();
      append_pointer_token(pointer_, k.key);
      if (k.a != nullptr && k.b != nullptr) {
        both(k.key, *k.a, *k.b);
      } else if (k.a != nullptr) {
        if (!skip(k.key, *k.a)) emit(DiffOp::kRemove, k.a, nullptr, subject);
      } else if (!skip(k.key, *k.b)) {
        emit(DiffOp::kAdd, nullptr, k.b, subject);
      }
      pointer_.resize(size);
    }
  }
  template <class Both>
  void members(const JsonObject& a, const JsonObject& b, DiffSubject subject, Both both) {
    members(a, b, subject, both, [](std::string_view, const Json&) { return false; });
  }

  // Objects member by member, arrays of one length item by item (an index says little
  // once items move, so arrays of different lengths are one value), the rest as values.
  void value(const Json& a, const Json& b) {
    if (a.is_array() && b.is_array() && a.as_array().size() == b.as_array().size()) {
      for (std::size_t i = 0; i < a.as_array().size(); ++i) {
        const std::size_t size = pointer_.size();
        pointer_ += '/';
        pointer_ += std::to_string(i);
        value(a.as_array()[i], b.as_array()[i]);
        pointer_.resize(size);
      }
    } else if (a.is_object() && b.is_object()) {
      members(a.as_object(), b.as_object(), DiffSubject::kValue,
              [this](std::string_view, const Json& x, const Json& y) { value(x, y); });
    } else if (!same_json(a, b)) {
      emit(DiffOp::kChange, &a, &b, DiffSubject::kValue);
    }
  }

  // params and named placements: objects member by member down to the placement leaves.
  void placement_tree(const Json& a, const Json& b) {
    if (a.is_object() && b.is_object()) {
      members(a.as_object(), b.as_object(), DiffSubject::kPlacement,
              [this](std::string_view, const Json& x, const Json& y) { placement_tree(x, y); });
    } else if (!same_placement_aware(a, b)) {
      emit(DiffOp::kChange, &a, &b, DiffSubject::kPlacement);
    }
  }

  // One param_plan entry, field by field as the spec-field table classifies them. An
  // absent is_boundary is what upstream's runtime reads as true (docs/formats.md,
  // deliberate differences), so it equals an explicit true.
  void boundary(const Json& a, const Json& b) {
    auto implicit = [](std::string_view key, const Json& v) {
      return key == "is_boundary" && v.is_bool() && std::get<bool>(v.v);
    };
    members(
        a.as_object(), b.as_object(), DiffSubject::kValue,
        [this](std::string_view key, const Json& x, const Json& y) {
          const std::optional<std::size_t> field = find_spec_field_by_meta_key(key);
          const bool placements =
              field && (kSpecFields[*field].kind == FieldKind::kPlacementMap ||
                        kSpecFields[*field].kind == FieldKind::kNamedPlacements);
          if (placements) {
            placement_tree(x, y);
          } else if (!same_json(x, y)) {
            emit(DiffOp::kChange, &x, &y, DiffSubject::kValue);
          }
        },
        implicit);
  }

  // Members of two arrays as multisets; each surplus member is one add or remove, in the
  // order of their canonical encodings.
  void multiset(const JsonArray& a, const JsonArray& b, DiffSubject subject) {
    // A member both arrays hold at the same place from either end cancels out, whatever
    // the rest holds: only what lies between is counted. Equal strings are one canonical
    // value; the hot case is a frozen_sharded_params of 250,000 names, unchanged or with a
    // name or two added or removed.
    const auto same_string = [](const Json& x, const Json& y) {
      return x.is_string() && y.is_string() && x.as_string() == y.as_string();
    };
    std::size_t begin = 0;
    std::size_t end_a = a.size();
    std::size_t end_b = b.size();
    while (begin < end_a && begin < end_b && same_string(a[begin], b[begin])) ++begin;
    while (end_a > begin && end_b > begin && same_string(a[end_a - 1], b[end_b - 1])) {
      --end_a;
      --end_b;
    }
    // encode_python_json sorts keys and keeps 1 apart from 1.0: a canonical identity. The
    // key is an exact-size copy: the encoder's buffer keeps spare room (kilobytes per
    // member over 45,000 members at DeepSeek-V3 scale).
    std::unordered_map<std::string, std::pair<long, const Json*>> counts;
    counts.reserve(end_a - begin);
    auto count = [&counts](const Json& item, long delta) {
      const std::string encoded = encode_python_json(item);
      auto& entry = counts[std::string(encoded.data(), encoded.size())];
      entry.first += delta;
      entry.second = &item;
    };
    for (std::size_t i = begin; i < end_a; ++i) count(a[i], 1);
    for (std::size_t i = begin; i < end_b; ++i) count(b[i], -1);
    std::vector<const std::pair<const std::string, std::pair<long, const Json*>>*> surplus;
    for (const auto& entry : counts) {
      if (entry.second.first != 0) surplus.push_back(&entry);
    }
    std::sort(surplus.begin(), surplus.end(),
              [](const auto* x, const auto* y) { return x->first < y->first; });
    for (const auto* entry : surplus) {
      for (long i = 0; i < entry->second.first; ++i) {
        emit(DiffOp::kRemove, entry->second.second, nullptr, subject);
      }
    }
    for (const auto* entry : surplus) {
      for (long i = 0; i > entry->second.first; --i) {
        emit(DiffOp::kAdd, nullptr, entry->second.second, subject);
      }
    }
  }

  void injection(const Json& a, const Json& b) {
    members(a.as_object(), b.as_object(), DiffSubject::kValue,
            [this](std::string_view key, const Json& x, const Json& y) {
              if (key == "match") return;
              const std::optional<std::size_t> field = find_spec_field_by_meta_key(key);
              const bool placements =
                  field && (kSpecFields[*field].kind == FieldKind::kValueToDict ||
                            kSpecFields[*field].kind == FieldKind::kNamedPlacements);
              if (placements ? !same_placement_aware(x, y) : !same_json(x, y)) {
                emit(DiffOp::kChange, &x, &y, DiffSubject::kValue);
              }
            });
  }

  // Injections pair up by match (the k-th occurrence of a match with the k-th); decoded
  // metas give every injection a string match.
  void injections(const FrozenMeta& a, const FrozenMeta& b) {
    std::map<std::string_view, std::pair<std::vector<const Json*>, std::vector<const Json*>>>
        by_match;
    for (const MetaInjection& i : a.injections) by_match[i.match].first.push_back(i.entry);
    for (const MetaInjection& i : b.injections) by_match[i.match].second.push_back(i.entry);
    std::vector<std::string_view> matches;
    matches.reserve(by_match.size());
    for (const auto& entry : by_match) matches.push_back(entry.first);
    std::sort(matches.begin(), matches.end(), natural_less);
    for (std::string_view match : matches) {
      const auto& [old_side, new_side] = by_match[match];
      const std::size_t size = pointer_.size();
      append_pointer_token(pointer_, match);
      const std::size_t paired = std::min(old_side.size(), new_side.size());
      // A match that occurs more than once is rare: its differences are sorted in a buffer.
      std::vector<Buffered> buffer;
      if (old_side.size() > 1 || new_side.size() > 1) buffer_ = &buffer;
      for (std::size_t i = paired; i < old_side.size(); ++i) {
        emit(DiffOp::kRemove, old_side[i], nullptr, DiffSubject::kInjection);
      }
      for (std::size_t i = paired; i < new_side.size(); ++i) {
        emit(DiffOp::kAdd, nullptr, new_side[i], DiffSubject::kInjection);
      }
      for (std::size_t i = 0; i < paired; ++i) injection(*old_side[i], *new_side[i]);
      buffer_ = nullptr;
      flush(buffer);
      pointer_.resize(size);
    }
  }

  void top_level(std::string_view key, const FrozenMeta& ma, const FrozenMeta& mb, const Json& a,
                 const Json& b) {
    if (key == "param_plan") {
      members(a.as_object(), b.as_object(), DiffSubject::kBoundary,
              [this](std::string_view, const Json& x, const Json& y) { boundary(x, y); });
    } else if (key == "injections") {
      injections(ma, mb);
    } else if (a.is_array() && b.is_array() &&
               (key == "frozen_sharded_params" || key == "tied_pairs")) {
      multiset(a.as_array(), b.as_array(), DiffSubject::kValue);
    } else if (key == "mesh_dim_names") {
      if (!same_json(a, b)) emit(DiffOp::kChange, &a, &b, DiffSubject::kValue);  // order matters
    } else {
      value(a, b);
    }
  }

  std::string& pointer() { return pointer_; }

 private:
  struct Buffered {
    DiffOp op;
    std::string pointer;
    const Json* a;
    const Json* b;
    DiffSubject subject;
  };

  // Sorted by pointer (token by token), then op, then values.
  void flush(std::vector<Buffered>& buffer) {
    struct Key {
      std::vector<std::string> tokens;
      DiffOp op;
      std::string a;
      std::string b;
    };
    std::vector<std::pair<Key, const Buffered*>> keyed;
    keyed.reserve(buffer.size());
    for (const Buffered& d : buffer) {
      keyed.push_back({{pointer_tokens(d.pointer), d.op, d.a ? encode_python_json(*d.a) : "",
                        d.b ? encode_python_json(*d.b) : ""},
                       &d});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& x, const auto& y) {
      if (tokens_less(x.first.tokens, y.first.tokens)) return true;
      if (tokens_less(y.first.tokens, x.first.tokens)) return false;
      return std::tie(x.first.op, x.first.a, x.first.b) <
             std::tie(y.first.op, y.first.a, y.first.b);
    });
    for (const auto& [key, d] : keyed) {
      visit_(MetaDifference{d->op, d->pointer, d->a, d->b, d->subject});
    }
  }

  const DiffVisitor& visit_;
  std::vector<std::string> ignored_;
  std::string pointer_;
  std::vector<Buffered>* buffer_ = nullptr;
};

}  // namespace

void diff_metas(const FrozenMeta& old_meta, const FrozenMeta& new_meta, const DiffOptions& options,
                const DiffVisitor& visit) {
  std::vector<std::string> ignored;
  if (Expected<std::vector<IgnoredPointer>> pointers = ignored_pointers(options)) {
    for (IgnoredPointer& p : *pointers) ignored.push_back(std::move(p.pointer));
  }
  Differ differ(visit, std::move(ignored));
  std::string& pointer = differ.pointer();
  for (const KeyPair& k : key_union(old_meta.top_level(), new_meta.top_level())) {
    pointer.clear();
    append_pointer_token(pointer, k.key);
    if (differ.ignored(pointer)) continue;  // a whole top-level key: not even walked
    if (k.a != nullptr && k.b != nullptr) {
      differ.top_level(k.key, old_meta, new_meta, *k.a, *k.b);
    } else if (k.a != nullptr) {
      differ.emit(DiffOp::kRemove, k.a, nullptr, DiffSubject::kValue);
    } else {
      differ.emit(DiffOp::kAdd, nullptr, k.b, DiffSubject::kValue);
    }
  }
}

}  // namespace hpfreeze
