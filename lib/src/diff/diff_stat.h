#pragma once
// diff --stat: the differences counted by op and by top-level key, a pure pass over
// diff_metas' stream, and its renderings (docs/cli.md, "--stat").

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "diff/diff.h"

namespace hpfreeze {

struct DiffCounts {
  std::size_t added = 0;
  std::size_t removed = 0;
  std::size_t changed = 0;
  [[nodiscard]] std::size_t total() const { return added + removed + changed; }
  void add(DiffOp op);
};

struct DiffStat {
  DiffCounts all;
  // Per top-level key (unescaped), in the order of the differences.
  std::vector<std::pair<std::string, DiffCounts>> by_key;
  // With --group: how many groups (lines) the differences fold into.
  std::optional<std::size_t> groups;

  void add(const MetaDifference& difference);

 private:
  std::string last_escaped_;  // the top-level key of the last difference, as its pointer has it
  std::size_t last_ = 0;      // and its entry of by_key
};

// "N differences: A added, R removed, C changed", with groups "N differences in G groups:
// ...": the last line of the text, and the summary note of --message-format github.
std::string diff_stat_total(const DiffStat& stat);

// One line per top-level key, `KEY  N  +A  -R  ~C` in aligned columns, then the total line;
// nothing at all when there is no difference (as diff itself prints nothing).
void append_diff_stat_text(std::string& out, const DiffStat& stat);

// One compact JSON object and '\n': {"differences","added","removed","changed"[,"groups"],
// "by_key":{KEY:{"added","removed","changed"}}}; also when there is no difference.
void append_diff_stat_json(std::string& out, const DiffStat& stat);

}  // namespace hpfreeze
