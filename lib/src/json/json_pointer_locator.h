#pragma once
// Where in a JSON text the values some JSON Pointers name begin (internal to lib/): the
// line and column of a finding, for a CI annotation that lands on its line. The text is
// streamed in pieces, so that a file of any size is scanned in bounded memory, and read no
// further than the last value found.

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace hpfreeze {

struct TextPosition {
  std::size_t line = 0;    // 1-based
  std::size_t column = 0;  // 1-based, in bytes, as a syntax error's column
  bool operator==(const TextPosition&) const = default;
};

// The next piece of the text, or an empty view at its end (or on a failed read).
using TextPieces = std::function<std::string_view()>;

// For each of `pointers` (RFC 6901; "" is the whole document), where the value it names
// starts in the text `pieces` give: the first byte of its string, number, literal, '{' or
// '['. nullopt for a pointer that names nothing there, and for every pointer not found
// before the text stops being JSON. A key named twice counts where it is named first, as
// the readers take the first.
// One pass over the text, whatever the pointers: they are sorted by path, and each member of
// a container the pointers go into is looked up among them by a binary search, so the work
// grows with the text and the pointers, not with their product.
std::vector<std::optional<TextPosition>> locate_pointers(
    const TextPieces& pieces, std::span<const std::string_view> pointers);
std::vector<std::optional<TextPosition>> locate_pointers(const TextPieces& pieces,
                                                         std::span<const std::string> pointers);

}  // namespace hpfreeze
