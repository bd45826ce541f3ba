// The renderings of a diff --group group (diff/diff_group.h): its pattern, in which each
// number that varies among the members is the range set of its values, as a text line or a
// JSON object with the members' numbers.
#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "diff/diff_group.h"
#include "json/json_stream.h"

namespace hpfreeze {
namespace {

// The group's pattern: its first member with the varying numbers as range sets. The
// values it points at live in the pattern itself.
class GroupPattern {
 public:
  explicit GroupPattern(const DiffGroup& group) : sets_(group.slots) {
    pointer_ = group.pointer;
    difference_ = group.first();
    difference_.pointer = pointer_;
    if (group.varying.empty()) return;  // every member is the first: it is the pattern
    std::vector<std::uint64_t> values(group.count);
    for (const std::size_t slot : group.varying) {
      for (std::size_t m = 0; m < group.count; ++m) values[m] = group.number(m, slot);
      sets_[slot] = range_set(values);
    }
    pointer_ = text(group.pointer, "/.");
    if (group.old_value != nullptr) old_ = value(*group.old_value);
    if (group.new_value != nullptr) new_ = value(*group.new_value);
    difference_ = MetaDifference{group.op, pointer_, group.old_value ? &old_ : nullptr,
                                 group.new_value ? &new_ : nullptr, group.subject};
  }
  GroupPattern(const GroupPattern&) = delete;
  GroupPattern& operator=(const GroupPattern&) = delete;

  [[nodiscard]] const MetaDifference& difference() const { return difference_; }

 private:
  // Numbers are met in the order the grouper met them, so the k-th is slot k.
  std::string text(std::string_view original, std::string_view separators) {
    std::string out;
    std::size_t done = 0;
    for_each_number(original, separators, [&](std::size_t begin, std::size_t end) {
      const std::string& set = sets_[next_slot_++];
      if (set.empty()) return;  // the same in every member: the number itself
      out.append(original.substr(done, begin - done));
      out += set;
      done = end;
    });
    out.append(original.substr(done));
    return out;
  }

  Json value(const Json& original) {
    if (original.is_string()) return Json(arena_.store(text(original.as_string(), ".")));
    if (original.is_array()) {
      JsonArray items;
      items.reserve(original.as_array().size());
      for (const Json& item : original.as_array()) items.push_back(value(item));
      return Json(std::move(items));
    }
    if (original.is_object()) {
      JsonObject members;
      members.reserve(original.as_object().size());
      for (const JsonMember& m : original.as_object()) members.push_back({m.key, value(m.value)});
      return Json(std::move(members));
    }
    return original;
  }

  std::vector<std::string> sets_;  // per slot: its range set, empty when it does not vary
  std::size_t next_slot_ = 0;
  StringArena arena_;
  std::string pointer_;
  Json old_;
  Json new_;
  MetaDifference difference_;
};

}  // namespace

std::string range_set(std::vector<std::uint64_t> values) {
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  std::string out = "{";
  for (std::size_t i = 0; i < values.size();) {
    std::size_t j = i;
    while (j + 1 < values.size() && values[j + 1] == values[j] + 1) ++j;
    if (i > 0) out += ',';
    out += std::to_string(values[i]);
    if (j >= i + 2) {
      out += "..";
      out += std::to_string(values[j]);
      i = j + 1;
    } else {
      ++i;  // a run of two is written as two numbers
    }
  }
  out += '}';
  return out;
}

void append_group_text(std::string& out, const DiffGroup& group) {
  if (group.count == 1) {
    append_diff_text(out, group.first());
    return;
  }
  const GroupPattern pattern(group);
  append_diff_text(out, pattern.difference());
  out.pop_back();  // its '\n'
  out += "  (" + std::to_string(group.count) + ")\n";
}

void append_group_json_line(std::string& out, const DiffGroup& group) {
  const GroupPattern pattern(group);
  const MetaDifference& d = pattern.difference();
  JsonStream w(out, JsonLayout::kOneLine);
  w.start_object();
  w.key("op").string(diff_op_name(d.op));
  w.key("pointer").string(d.pointer);
  if (d.old_value != nullptr) w.key("old").value(*d.old_value);
  if (d.new_value != nullptr) w.key("new").value(*d.new_value);
  w.key("members").start_array();
  std::vector<std::uint64_t> tuple(group.varying.size());
  for (std::size_t m = 0; m < group.count; ++m) {
    for (std::size_t k = 0; k < tuple.size(); ++k) tuple[k] = group.number(m, group.varying[k]);
    w.numbers(tuple);
  }
  w.end_array();
  w.key("count").number(group.count);
  w.end_object();
  w.end_line();
}

}  // namespace hpfreeze
