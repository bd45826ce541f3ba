#include "base/text_table.h"

#include <algorithm>

namespace hpfreeze {

std::string render_table(const std::vector<Align>& align,
                         const std::vector<std::vector<std::string>>& rows,
                         std::string_view indent) {
  std::vector<std::size_t> width(align.size(), 0);
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line(indent);
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t pad = width[i] - row[i].size();
      const bool last = i + 1 == row.size();
      if (i != 0) line += "  ";
      if (align[i] == Align::kRight) line.append(pad, ' ');
      line += row[i];
      if (align[i] == Align::kLeft && !last) line.append(pad, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line;
    out += '\n';
  }
  return out;
}

}  // namespace hpfreeze
