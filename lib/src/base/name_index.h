#pragma once
// Comparing, hashing and indexing names (keys, FQNs), for sorts and for lookups over
// 100,000+ entries.

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "base/huge_pages.h"

namespace hpfreeze {

// A fast, unseeded 64-bit hash of a name, eight bytes per step: names here are long
// dotted paths, and std::hash hashed them byte-serially enough to show in profiles.
inline std::uint64_t hash_name(std::string_view s) {
  std::uint64_t h = 0x9e37'79b9'7f4a'7c15u ^ s.size();
  std::size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    std::uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = (h ^ w) * 0xff51'afd7'ed55'8ccdu;
    h ^= h >> 32;
  }
  // The last 1..7 bytes by whole loads: a variable-length memcpy into `w` made the read
  // of `w` wait on store-to-load forwarding.
  const std::size_t n = s.size() - i;
  const auto* p = reinterpret_cast<const unsigned char*>(s.data()) + i;
  std::uint64_t w = 0;
  if (n >= 4) {
    std::uint32_t low;
    std::uint32_t high;
    std::memcpy(&low, p, 4);
    std::memcpy(&high, p + n - 4, 4);
    w = low | (std::uint64_t{high} << 32);
  } else if (n > 0) {
    w = std::uint64_t{p[0]} | (std::uint64_t{p[n / 2]} << 8) | (std::uint64_t{p[n - 1]} << 16);
  }
  h = (h ^ w) * 0xc4ce'b9fe'1a85'ec53u;
  return h ^ (h >> 29);
}

// Three-way comparison as unsigned bytes, which on UTF-8 is code point order (Python's
// sort_keys). Same result as string_view::compare, inlined: keys are short and the call
// to memcmp was a large share of encoding time.
inline int compare_names(std::string_view a, std::string_view b) {
  const std::size_t n = std::min(a.size(), b.size());
  std::size_t i = 0;
  if constexpr (std::endian::native == std::endian::little) {
    for (; i + 8 <= n; i += 8) {
      std::uint64_t x;
      std::uint64_t y;
      std::memcpy(&x, a.data() + i, 8);
      std::memcpy(&y, b.data() + i, 8);
      if (x != y) return __builtin_bswap64(x) < __builtin_bswap64(y) ? -1 : 1;
    }
  }
  for (; i < n; ++i) {
    const auto x = static_cast<unsigned char>(a[i]);
    const auto y = static_cast<unsigned char>(b[i]);
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// An open-addressing hash index from names to positions in some vector: one flat array of
// slots instead of a node per entry, which matters at 100,000+ names. The first of equal
// names wins. `name_of(i)` gives the name at position i.
class NameIndex {
 public:
  // False when some name repeats an earlier one.
  template <class NameOf>
  bool build(std::size_t count, NameOf name_of) {
    bool unique = true;
    const std::size_t size = std::bit_ceil(count * 2 + 2);
    if (slots_.capacity() >= size) {
      slots_.assign(size, 0);
    } else {
      // Fresh room, in huge pages when the table is large (megabytes at 100,000+ names).
      std::vector<std::uint64_t> slots;
      slots.reserve(size);
      advise_huge_pages(slots);
      slots.resize(size, 0);
      slots_ = std::move(slots);
    }
    const std::size_t mask = slots_.size() - 1;
    // Names are hashed kAhead positions early and their slots prefetched: a large table
    // does not fit in cache, and each insertion would otherwise wait for memory.
    std::array<std::uint64_t, kAhead> hashes{};
    const auto hash_ahead = [&](std::size_t i) {
      const std::uint64_t hash = hash_name(name_of(i));
      hashes[i % kAhead] = hash;
      __builtin_prefetch(&slots_[static_cast<std::size_t>(hash) & mask]);
    };
    for (std::size_t i = 0; i < count && i < kAhead; ++i) hash_ahead(i);
    for (std::size_t i = 0; i < count; ++i) {
      const std::uint64_t hash = hashes[i % kAhead];
      if (i + kAhead < count) hash_ahead(i + kAhead);
      const std::size_t slot = probe(hash, name_of(i), name_of);
      if (slots_[slot] == 0) {
        slots_[slot] = (hash & kTagMask) | (i + 1);
      } else {
        unique = false;
      }
    }
    return unique;
  }

  template <class NameOf>
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name, NameOf name_of) const {
    if (slots_.empty()) return std::nullopt;
    const std::uint64_t entry = slots_[probe(hash_name(name), name, name_of)];
    if (entry == 0) return std::nullopt;
    return static_cast<std::size_t>(entry & ~kTagMask) - 1;
  }

 private:
  static constexpr std::size_t kAhead = 16;
  // A slot holds the high 32 bits of the name's hash and its position + 1 (inputs are below
  // 4 GiB, so positions fit in 32 bits); 0 is empty.
  static constexpr std::uint64_t kTagMask = 0xffff'ffff'0000'0000u;

  // The slot holding `name`, or the empty slot where it would go.
  template <class NameOf>
  std::size_t probe(std::uint64_t hash, std::string_view name, NameOf& name_of) const {
    const std::size_t mask = slots_.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(hash) & mask;; i = (i + 1) & mask) {
      const std::uint64_t entry = slots_[i];
      if (entry == 0) return i;
      if ((entry & kTagMask) == (hash & kTagMask) &&
          name_of(static_cast<std::size_t>(entry & ~kTagMask) - 1) == name) {
        return i;
      }
    }
  }

  std::vector<std::uint64_t> slots_;
};

}  // namespace hpfreeze
