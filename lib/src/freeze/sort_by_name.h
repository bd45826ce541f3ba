#pragma once
// Sorting by name for the freeze pass (freeze.cc): FQNs share long prefixes
// ("model.layers.12.mlp.experts."), which a comparison sort reads again in every
// comparison; this sorts small keys of eight bytes of each name at a time instead, in the
// order std::string_view's operator< gives (unsigned bytes, code point order on UTF-8).

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <utility>
#include <vector>

#include "base/name_index.h"

namespace hpfreeze::freeze_detail {

// The eight bytes of s from `depth` on as a big-endian number (zeros past its end), so that
// comparing numbers compares those bytes as unsigned bytes, code point order on UTF-8.
inline std::uint64_t name_word(std::string_view s, std::size_t depth) {
  std::uint64_t word = 0;
  if (depth + 8 <= s.size()) {
    std::memcpy(&word, s.data() + depth, 8);
  } else if (depth < s.size()) {
    std::memcpy(&word, s.data() + depth, s.size() - depth);
  }
  if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
  return word;
}

// A name's sort key at one depth: its eight bytes there, then where it ends. Two names
// with the same word there have the same bytes up to the end of the shorter one (it may
// end early, padded with zeros like a real NUL), so the one that ends first sorts first:
// `end` is how many of the eight bytes the name has, and 9 when it goes on past them (then
// only the next depth can tell such names apart).
struct NameKey {
  std::uint64_t word;
  std::uint32_t end;
  std::uint32_t item;  // position in the range being sorted
};

inline bool key_less(const NameKey& a, const NameKey& b) {
  return a.word != b.word ? a.word < b.word : a.end < b.end;
}

// Sorts keys[0, n) by the names they stand for: by word and end at depth 0, then each run
// of names that tie there and go on, at depth 8, and so on, without recursion. Before
// keying a range, the bytes all its names share are skipped, eight at a time, so that
// names agreeing on a long stretch cost one pass over it. Past `levels` rounds on one range
// (adversarial names) the range is left to std::sort.
template <class NameOf>
void sort_keys(NameKey* keys, std::size_t n, const NameOf& name_of) {
  struct Range {
    std::size_t begin;
    std::size_t size;
    std::size_t depth;  // all names of the range agree on their first `depth` bytes
    int level;
  };
  const int levels = 2 * static_cast<int>(std::bit_width(n)) + 16;
  std::vector<Range> todo{{0, n, 0, 0}};
  while (!todo.empty()) {
    const Range range = todo.back();
    todo.pop_back();
    NameKey* const k = keys + range.begin;
    std::size_t depth = range.depth;
    if (range.level > levels) {
      std::sort(k, k + range.size, [&name_of, depth](const NameKey& a, const NameKey& b) {
        const std::string_view x = name_of(a.item);
        const std::string_view y = name_of(b.item);
        return compare_names(x.substr(std::min(depth, x.size())),
                             y.substr(std::min(depth, y.size()))) < 0;
      });
      continue;
    }
    const std::string_view first = name_of(k[0].item);
    std::size_t shared = first.size() > depth ? first.size() - depth : 0;
    for (std::size_t i = 1; i < range.size && shared >= 8; ++i) {
      const std::string_view name = name_of(k[i].item);
      std::size_t same = 0;
      while (same + 8 <= shared && depth + same + 8 <= name.size() &&
             std::memcmp(first.data() + depth + same, name.data() + depth + same, 8) == 0) {
        same += 8;
      }
      shared = std::min(shared, same);
    }
    depth += shared / 8 * 8;
    for (std::size_t i = 0; i < range.size; ++i) {
      const std::string_view name = name_of(k[i].item);
      k[i].word = name_word(name, depth);
      k[i].end = static_cast<std::uint32_t>(
          name.size() > depth + 8 ? 9 : (name.size() > depth ? name.size() - depth : 0));
    }
    std::sort(k, k + range.size, key_less);
    for (std::size_t run = 0; run < range.size;) {
      std::size_t end = run + 1;
      while (end < range.size && k[end].word == k[run].word && k[end].end == k[run].end) ++end;
      if (end - run > 1 && k[run].end == 9) {
        todo.push_back({range.begin + run, end - run, depth + 8, range.level + 1});
      }
      run = end;
    }
  }
}

// Sorts items by name as std::string_view's operator< does (unsigned bytes): FQNs share long
// prefixes ("model.layers.12.mlp.experts."), which a comparison sort reads again in every
// comparison. This sorts small keys (eight bytes of each name at a time) held in one array,
// with no indirection per comparison, and goes deeper only for names that tie. Not stable.
template <class T, class NameOf>
void sort_by_name(T* first, T* last, NameOf name_of) {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 2) return;
  std::vector<NameKey> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i].item = static_cast<std::uint32_t>(i);
  sort_keys(keys.data(), n,
            [first, &name_of](std::uint32_t i) -> std::string_view { return name_of(first[i]); });
  std::vector<T> sorted;
  sorted.reserve(n);
  for (const NameKey& k : keys) sorted.push_back(std::move(first[k.item]));
  std::move(sorted.begin(), sorted.end(), first);
}

}  // namespace hpfreeze::freeze_detail
