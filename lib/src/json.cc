#include "hpfreeze/json.h"

#include <algorithm>
#include <cstring>

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

std::string_view StringArena::copy(std::string_view s) {
  char* p = allocate(s.size());
  if (!s.empty()) std::memcpy(p, s.data(), s.size());
  return {p, s.size()};
}

char* StringArena::allocate(std::size_t n) {
  constexpr std::size_t kBlockSize = 64 * 1024;
  // A moved-from arena has no blocks left, whatever its counters say.
  if (blocks_.empty() || block_size_ - block_used_ < n) {
    block_size_ = std::max(kBlockSize, n);
    blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_size_));
    block_used_ = 0;
  }
  char* p = blocks_.back().get() + block_used_;
  block_used_ += n;
  return p;
}

}  // namespace hpfreeze
