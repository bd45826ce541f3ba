#include "json/json.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <unordered_map>

namespace hpfreeze {

bool Json::truthy() const {
  struct Visitor {
    bool operator()(std::nullptr_t) const { return false; }
    bool operator()(bool b) const { return b; }
    bool operator()(std::int64_t i) const { return i != 0; }
    bool operator()(std::uint64_t u) const { return u != 0; }
    bool operator()(double d) const { return d != 0.0; }
    bool operator()(std::string_view s) const { return !s.empty(); }
    bool operator()(const JsonArray& a) const { return !a.empty(); }
    bool operator()(const JsonObject& o) const { return !o.empty(); }
  };
  return std::visit(Visitor{}, v);
}

const Json* Json::find(std::string_view key) const {
  if (!is_object()) return nullptr;
  for (const auto& m : as_object()) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

Json* Json::find(std::string_view key) {
  if (!is_object()) return nullptr;
  for (auto& m : as_object()) {
    if (m.key == key) return &m.value;
  }
  return nullptr;
}

bool operator==(const Json& a, const Json& b) { return a.v == b.v; }

namespace {

// Below this size a linear scan per member is cheaper than building an index.
constexpr std::size_t kIndexedObjectSize = 16;

using SameStrings = bool (*)(std::string_view, std::string_view);

bool same_object(const JsonObject& x, const JsonObject& y, SameStrings same_strings) {
  if (x.size() != y.size()) return false;
  if (x.size() < kIndexedObjectSize) {
    for (const JsonMember& m : x) {
      auto it =
          std::find_if(y.begin(), y.end(), [&m](const JsonMember& n) { return n.key == m.key; });
      if (it == y.end() || !same_json(m.value, it->value, same_strings)) return false;
    }
    return true;
  }
  std::unordered_map<std::string_view, const Json*> index;
  index.reserve(y.size());
  for (const JsonMember& n : y) index.emplace(n.key, &n.value);
  for (const JsonMember& m : x) {
    auto it = index.find(m.key);
    if (it == index.end() || !same_json(m.value, *it->second, same_strings)) return false;
  }
  return true;
}

}  // namespace

bool same_json(const Json& a, const Json& b, SameStrings same_strings) {
  if (a.v.index() != b.v.index()) return false;
  if (same_strings != nullptr && a.is_string()) return same_strings(a.as_string(), b.as_string());
  if (const auto* x = std::get_if<double>(&a.v)) {
    const double y = std::get<double>(b.v);
    return *x == y && std::signbit(*x) == std::signbit(y);
  }
  if (a.is_array()) {
    const JsonArray& x = a.as_array();
    const JsonArray& y = b.as_array();
    if (x.size() != y.size()) return false;
    for (std::size_t i = 0; i < x.size(); ++i) {
      if (!same_json(x[i], y[i], same_strings)) return false;
    }
    return true;
  }
  if (a.is_object()) return same_object(a.as_object(), b.as_object(), same_strings);
  return a.v == b.v;
}

std::string expected_got(std::string_view expected, std::string_view got) {
  std::string out = "expected ";
  out += expected;
  out += ", got ";
  out += got;
  return out;
}

std::string expected_got(std::string_view expected, const Json& value) {
  return expected_got(expected, json_type_article(value));
}

std::string_view json_type_article(const Json& value) {
  struct Visitor {
    std::string_view operator()(std::nullptr_t) const { return "null"; }
    std::string_view operator()(bool) const { return "a boolean"; }
    std::string_view operator()(std::int64_t) const { return "an integer"; }
    std::string_view operator()(std::uint64_t) const { return "an integer"; }
    std::string_view operator()(double) const { return "a float"; }
    std::string_view operator()(std::string_view) const { return "a string"; }
    std::string_view operator()(const JsonArray&) const { return "an array"; }
    std::string_view operator()(const JsonObject&) const { return "an object"; }
  };
  return std::visit(Visitor{}, value.v);
}

std::string_view StringArena::copy(std::string_view s) {
  char* p = allocate(s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

char* StringArena::allocate(std::size_t n) {
  // Each block twice the last, up to a cap: a plan's joined names (megabytes at scale) lie
  // in a few huge pages, a small meta's in one block.
  constexpr std::size_t kFirstBlock = 64 * 1024;
  constexpr std::size_t kLargestBlock = std::size_t{8} << 20;
  // A moved-from arena has no blocks left, whatever its counters say.
  if (blocks_.empty() || block_size_ - block_used_ < n) {
    block_size_ =
        std::max(n, blocks_.empty() ? kFirstBlock : std::min(2 * block_size_, kLargestBlock));
    blocks_.emplace_back(block_size_);
    block_used_ = 0;
  }
  char* p = reinterpret_cast<char*>(blocks_.back().get()) + block_used_;
  block_used_ += n;
  return p;
}

}  // namespace hpfreeze
