#pragma once
// The order diff lists differences in: JSON Pointers token by token, each token in natural
// order (digit runs as numbers).

#include <string>
#include <string_view>
#include <vector>

namespace hpfreeze {

// The reference tokens of a JSON Pointer, unescaped ("~1" is '/', "~0" is '~').
std::vector<std::string> pointer_tokens(std::string_view pointer);

// Natural order: digit runs compare as numbers (layers.2 before layers.10, array index 2
// before 10), other runs by bytes; equal-looking tokens ("01", "1") fall back to bytes.
bool natural_less(std::string_view a, std::string_view b);

// Token by token in natural order; a pointer before the pointers below it.
bool tokens_less(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace hpfreeze
