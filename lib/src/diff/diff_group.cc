// DiffGrouper: diff --group's pass (diff/diff_group.h). Each difference becomes a shape, its
// text with every number taken out, and its numbers; differences of one shape are one group.
#include "diff/diff_group.h"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "json/encode.h"

namespace hpfreeze {
namespace {

bool holds_brace(std::string_view text) { return text.find_first_of("{}") != text.npos; }

// `text` with each number replaced by "{}" (no brace of its own is left to confuse), the
// numbers appended to `numbers`.
void append_shape(std::string& shape, std::string_view text, std::string_view separators,
                  std::vector<std::uint64_t>& numbers) {
  std::size_t done = 0;
  for_each_number(text, separators, [&](std::size_t begin, std::size_t end) {
    shape.append(text.substr(done, begin - done));
    shape += "{}";
    std::uint64_t n = 0;
    for (std::size_t i = begin; i < end; ++i)
      n = n * 10 + static_cast<std::uint64_t>(text[i] - '0');
    numbers.push_back(n);
    done = end;
  });
  shape.append(text.substr(done));
}

// The value as the JSON writer spells it, strings with their numbers taken out; false when
// a string holds a brace.
bool append_value_shape(std::string& shape, const Json& value,
                        std::vector<std::uint64_t>& numbers) {
  if (value.is_string()) {
    if (holds_brace(value.as_string())) return false;
    std::string text;
    append_shape(text, value.as_string(), ".", numbers);
    append_python_string(shape, text);
    return true;
  }
  if (value.is_array()) {
    shape += '[';
    for (const Json& item : value.as_array()) {
      if (!append_value_shape(shape, item, numbers)) return false;
      shape += ',';
    }
    shape += ']';
    return true;
  }
  if (value.is_object()) {
    shape += '{';
    for (const JsonMember& member : value.as_object()) {
      append_python_string(shape, member.key);  // keys are no numbers' places
      shape += ':';
      if (!append_value_shape(shape, member.value, numbers)) return false;
      shape += ',';
    }
    shape += '}';
    return true;
  }
  shape += encode_compact_json(value);
  return true;
}

}  // namespace

MetaDifference DiffGroup::first() const {
  return MetaDifference{op, pointer, old_value, new_value, subject};
}

void DiffGrouper::add(const MetaDifference& d) {
  shape_.clear();
  numbers_.clear();
  shape_ += static_cast<char>('0' + static_cast<int>(d.op));
  shape_ += static_cast<char>('0' + static_cast<int>(d.subject));
  // The pointer as a JSON string: its end is unambiguous whatever bytes it holds.
  pointer_shape_.clear();
  append_shape(pointer_shape_, d.pointer, "/.", numbers_);
  append_python_string(shape_, pointer_shape_);
  bool foldable = !holds_brace(d.pointer);
  for (const Json* value : {d.old_value, d.new_value}) {
    shape_ += value == nullptr ? '-' : '=';
    if (value != nullptr && foldable) foldable = append_value_shape(shape_, *value, numbers_);
  }
  std::size_t at = groups_.size();
  if (foldable) at = by_shape_.try_emplace(shape_, groups_.size()).first->second;
  if (at == groups_.size()) {
    DiffGroup& group = groups_.emplace_back();
    group.op = d.op;
    group.subject = d.subject;
    group.pointer = std::string(d.pointer);
    group.old_value = d.old_value;
    group.new_value = d.new_value;
    // An unfoldable difference keeps no numbers: it is its own pattern.
    if (!foldable) numbers_.clear();
    group.slots = numbers_.size();
  }
  DiffGroup& group = groups_[at];
  group.numbers.insert(group.numbers.end(), numbers_.begin(), numbers_.end());
  ++group.count;
}

std::vector<DiffGroup> DiffGrouper::finish() && {
  for (DiffGroup& group : groups_) {
    for (std::size_t slot = 0; slot < group.slots; ++slot) {
      for (std::size_t member = 1; member < group.count; ++member) {
        if (group.number(member, slot) != group.number(0, slot)) {
          group.varying.push_back(slot);
          break;
        }
      }
    }
  }
  by_shape_.clear();
  return std::move(groups_);
}

}  // namespace hpfreeze
