#include "bundle/unicode_alnum.h"

#include <algorithm>
#include <iterator>

#include "bundle/unicode_alnum_table.h"

namespace hpfreeze {

namespace {

constexpr bool ranges_sorted_and_disjoint() {
  for (std::size_t i = 0; i < std::size(kUnicodeAlnumRanges); ++i) {
    if (kUnicodeAlnumRanges[i].first > kUnicodeAlnumRanges[i].last) return false;
    if (i > 0 && kUnicodeAlnumRanges[i - 1].last + 1 >= kUnicodeAlnumRanges[i].first) return false;
  }
  return true;
}
static_assert(ranges_sorted_and_disjoint(), "run scripts/gen_unicode_alnum.py");

}  // namespace

bool is_unicode_alnum(char32_t code_point) {
  if (code_point < 0x80) {
    return (code_point >= '0' && code_point <= '9') || (code_point >= 'A' && code_point <= 'Z') ||
           (code_point >= 'a' && code_point <= 'z');
  }
  // The first range that ends at or after the code point holds it, if any does.
  const auto* end = std::end(kUnicodeAlnumRanges);
  const auto* range =
      std::lower_bound(std::begin(kUnicodeAlnumRanges), end, code_point,
                       [](const CodePointRange& r, char32_t cp) { return r.last < cp; });
  return range != end && range->first <= code_point;
}

}  // namespace hpfreeze
