// DiffStat: diff --stat's pass and its two renderings (diff/diff_stat.h).
#include "diff/diff_stat.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

#include "base/text_table.h"
#include "diff/pointer_order.h"
#include "json/json_stream.h"
#include "json/output_name.h"

namespace hpfreeze {

void DiffCounts::add(DiffOp op) {
  switch (op) {
    case DiffOp::kAdd:
      ++added;
      break;
    case DiffOp::kRemove:
      ++removed;
      break;
    case DiffOp::kChange:
      ++changed;
      break;
  }
}

void DiffStat::add(const MetaDifference& d) {
  all.add(d.op);
  // Every pointer diff prints starts at a top-level key: "/KEY" or "/KEY/...".
  const std::string_view escaped = d.pointer.substr(0, d.pointer.find('/', 1));
  if (by_key.empty() || last_escaped_ != escaped) {
    last_escaped_ = std::string(escaped);
    std::vector<std::string> tokens = pointer_tokens(escaped);
    std::string key = tokens.empty() ? std::string() : std::move(tokens.front());
    auto same = [&key](const auto& entry) { return entry.first == key; };
    auto it = std::find_if(by_key.begin(), by_key.end(), same);
    if (it == by_key.end()) it = by_key.insert(by_key.end(), {std::move(key), DiffCounts{}});
    last_ = static_cast<std::size_t>(it - by_key.begin());
  }
  by_key[last_].second.add(d.op);
}

std::string diff_stat_total(const DiffStat& stat) {
  std::string line = plural(stat.all.total(), "difference");
  if (stat.groups) line += " in " + plural(*stat.groups, "group");
  line += ": " + std::to_string(stat.all.added) + " added, " + std::to_string(stat.all.removed) +
          " removed, " + std::to_string(stat.all.changed) + " changed";
  return line;
}

void append_diff_stat_text(std::string& out, const DiffStat& stat) {
  if (stat.all.total() == 0) return;
  std::vector<std::vector<std::string>> rows;
  rows.reserve(stat.by_key.size());
  for (const auto& [key, counts] : stat.by_key) {
    rows.push_back({output_name(key), std::to_string(counts.total()),
                    "+" + std::to_string(counts.added), "-" + std::to_string(counts.removed),
                    "~" + std::to_string(counts.changed)});
  }
  out += render_table({Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight},
                      rows, "");
  out += diff_stat_total(stat);
  out += '\n';
}

void append_diff_stat_json(std::string& out, const DiffStat& stat) {
  JsonStream w(out, JsonLayout::kOneLine);
  w.start_object();
  w.key("differences").number(stat.all.total());
  w.key("added").number(stat.all.added);
  w.key("removed").number(stat.all.removed);
  w.key("changed").number(stat.all.changed);
  if (stat.groups) w.key("groups").number(*stat.groups);
  w.key("by_key").start_object();
  for (const auto& [key, counts] : stat.by_key) {
    w.key(key).start_object();
    w.key("added").number(counts.added);
    w.key("removed").number(counts.removed);
    w.key("changed").number(counts.changed);
    w.end_object();
  }
  w.end_object();
  w.end_object();
  w.end_line();
}

}  // namespace hpfreeze
