#pragma once
// Plain-text tables, as report and the capacity planner print them.

#include <string>
#include <string_view>
#include <vector>

namespace hpfreeze {

enum class Align { kLeft, kRight };

// One line per row: `indent`, then the cells two spaces apart, each column padded to its
// widest cell on the side `align` gives; the last column is not padded and no line ends in
// blanks.
std::string render_table(const std::vector<Align>& align,
                         const std::vector<std::vector<std::string>>& rows,
                         std::string_view indent);

}  // namespace hpfreeze
