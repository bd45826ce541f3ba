#pragma once
// diff --group: the differences that are one change at different numbers of numbered
// module runs (model.layers.N, experts.N) folded into one group, a pure pass over
// diff_metas' stream; and the renderings of a group (docs/cli.md, "--group").
//
// A number is a component of a pointer (between '/' and '.') or of a string in a value
// (between '.') that is a decimal integer of at most kMaxNumberDigits digits without a
// leading zero ("0", "7", "60"; not "01", "+1" or "1e3"). Two differences fold when they
// are the same in everything else: op, subject, pointer and the values' JSON, byte for
// byte. A difference whose pointer or a string of whose values holds '{' or '}' folds with
// nothing, so that a range set in a pattern is never mistaken for text.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "diff/diff.h"

namespace hpfreeze {

// Up to 15 digits, so that every JSON reader (jq and JavaScript read numbers as doubles)
// reads a member exactly.
inline constexpr std::size_t kMaxNumberDigits = 15;

// Calls found(begin, end) for each number of `text`, components being split at any byte of
// `separators` ("/." for a pointer, "." for a string).
template <class Found>
void for_each_number(std::string_view text, std::string_view separators, Found found) {
  std::size_t begin = 0;
  while (begin <= text.size()) {
    std::size_t end = text.find_first_of(separators, begin);
    if (end == std::string_view::npos) end = text.size();
    const std::size_t n = end - begin;
    bool number = n >= 1 && n <= kMaxNumberDigits && (n == 1 || text[begin] != '0');
    for (std::size_t i = begin; number && i < end; ++i) number = text[i] >= '0' && text[i] <= '9';
    if (number) found(begin, end);
    begin = end + 1;
  }
}

// One group: its first member as it came, and every member's numbers.
struct DiffGroup {
  DiffOp op = DiffOp::kChange;
  DiffSubject subject = DiffSubject::kValue;
  std::string pointer;  // the first member's
  const Json* old_value = nullptr;
  const Json* new_value = nullptr;
  // The numbers of one member, in the order found: the pointer's, then those of the
  // strings of old and then of new (depth first, members in document order).
  std::size_t slots = 0;
  std::vector<std::uint64_t> numbers;  // count x slots, member after member, in diff order
  std::size_t count = 0;
  // The slots whose number is not the same in every member (ascending): the range sets of
  // the pattern and the tuples of `members`. Set by DiffGrouper::finish.
  std::vector<std::size_t> varying;

  [[nodiscard]] MetaDifference first() const;
  [[nodiscard]] std::uint64_t number(std::size_t member, std::size_t slot) const {
    return numbers[member * slots + slot];
  }
};

// Takes diff_metas' differences in output order; finish() gives the groups, in the order of
// their first members. Holds, per difference, only its numbers.
class DiffGrouper {
 public:
  void add(const MetaDifference& difference);
  std::vector<DiffGroup> finish() &&;

 private:
  std::vector<DiffGroup> groups_;
  std::unordered_map<std::string, std::size_t> by_shape_;
  std::string shape_;                   // scratch: the difference without its numbers
  std::string pointer_shape_;           // scratch: its pointer without them
  std::vector<std::uint64_t> numbers_;  // scratch: its numbers
};

// "{0..3,5,7..9}": the distinct values ascending, a run of three or more as FIRST..LAST.
std::string range_set(std::vector<std::uint64_t> values);

// The group's line: a group of one exactly as append_diff_text prints its difference;
// else the pattern (each varying number as the range set of its values) and "  (COUNT)".
void append_group_text(std::string& out, const DiffGroup& group);

// One compact JSON object: {"op","pointer","old","new","members","count"}, pointer and
// values as patterns, "old"/"new" left out as append_diff_json_line does; "members" one
// array of the varying numbers per member, in diff order.
void append_group_json_line(std::string& out, const DiffGroup& group);

}  // namespace hpfreeze
