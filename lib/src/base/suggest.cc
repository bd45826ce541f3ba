#include "hpfreeze/base/suggest.h"

#include <algorithm>

namespace hpfreeze {

std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::optional<std::string> nearest(std::string_view typed,
                                   const std::vector<std::string>& candidates) {
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& c : candidates) {
    const std::size_t limit = std::max<std::size_t>(1, c.size() / 3);
    // The lengths alone put it out of reach: no table of typed.size() x c.size() cells
    // for a name of megabytes.
    if ((typed.size() > c.size() ? typed.size() - c.size() : c.size() - typed.size()) > limit) {
      continue;
    }
    const std::size_t d = edit_distance(typed, c);
    if (d > limit) continue;
    if (!best || d < best_distance) {
      best = c;
      best_distance = d;
    }
  }
  return best;
}

std::optional<std::string> equal_ignoring_case(std::string_view typed,
                                               const std::vector<std::string>& candidates) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; };
  for (const std::string& c : candidates) {
    if (c.size() == typed.size() &&
        std::equal(c.begin(), c.end(), typed.begin(),
                   [&](char x, char y) { return lower(x) == lower(y); })) {
      return c;
    }
  }
  return std::nullopt;
}

std::optional<std::string> nearest_ignoring_case(std::string_view typed,
                                                 const std::vector<std::string>& candidates) {
  if (std::optional<std::string> same = equal_ignoring_case(typed, candidates)) return same;
  return nearest(typed, candidates);
}

}  // namespace hpfreeze
