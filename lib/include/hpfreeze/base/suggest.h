#pragma once
// "Did you mean": the known name nearest to a mistyped one, for commands, options and
// mesh axes alike.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hpfreeze {

// Optimal string alignment distance: edits, counting a swap of neighbours as one, so that
// "frezee" is one edit from "freeze".
std::size_t edit_distance(std::string_view a, std::string_view b);

// The candidate nearest to `typed`, when it is near enough to be what was meant: at most a
// third of its length in edits (one for short names). The first of equals wins.
std::optional<std::string> nearest(std::string_view typed,
                                   const std::vector<std::string>& candidates);

// The first candidate equal to `typed` ignoring ASCII case, if one is.
std::optional<std::string> equal_ignoring_case(std::string_view typed,
                                               const std::vector<std::string>& candidates);

// A candidate equal to `typed` ignoring ASCII case (the first such), else nearest().
std::optional<std::string> nearest_ignoring_case(std::string_view typed,
                                                 const std::vector<std::string>& candidates);

}  // namespace hpfreeze
