#include "spec/spec_fields.h"

#include <algorithm>

namespace hpfreeze {

std::optional<std::size_t> find_spec_field_by_attribute(std::string_view attribute) {
  for (std::size_t i = 0; i < kSpecFields.size(); ++i) {
    if (kSpecFields[i].attribute == attribute) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> find_spec_field_by_meta_key(std::string_view meta_key) {
  for (std::size_t i = 0; i < kSpecFields.size(); ++i) {
    if (kSpecFields[i].meta_key == meta_key) return i;
  }
  return std::nullopt;
}

bool is_exempt_spec_attribute(std::string_view attribute) {
  return std::find(kExemptSpecAttributes.begin(), kExemptSpecAttributes.end(), attribute) !=
         kExemptSpecAttributes.end();
}

}  // namespace hpfreeze
