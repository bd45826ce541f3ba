#include "bundle/output_names.h"

#include <algorithm>

#include "base/utf8.h"
#include "bundle/unicode_alnum.h"

namespace hpfreeze {

OutputRole output_role(std::string_view key) {
  if (key == "modeling") return OutputRole::kModeling;
  if (key == "diff") return OutputRole::kDiff;
  if (key == "init") return OutputRole::kInit;
  return OutputRole::kFile;
}

std::string modeling_file_name(std::string_view model_name) {
  if (model_name.empty()) model_name = "model";
  std::string name = "modeling_";
  const auto* bytes = reinterpret_cast<const unsigned char*>(model_name.data());
  std::size_t i = 0;
  while (i < model_name.size()) {
    char32_t code_point = 0;
    const std::size_t length = decode_utf8_char(bytes + i, model_name.size() - i, &code_point);
    if (length != 0 && (code_point == '_' || is_unicode_alnum(code_point))) {
      name.append(model_name.substr(i, length));
    } else {
      name += '_';
    }
    i += length != 0 ? length : 1;
  }
  name += "_gen_npu.py";
  return name;
}

bool is_plain_file_name(std::string_view key) {
  if (key.empty() || key == "." || key == "..") return false;
  return std::none_of(key.begin(), key.end(),
                      [](char c) { return c == '/' || c == '\\' || c == '\0'; });
}

std::optional<std::string> output_file_name(std::string_view key, std::string_view model_name) {
  switch (output_role(key)) {
    case OutputRole::kModeling:
      return modeling_file_name(model_name);
    case OutputRole::kDiff:
      return modeling_file_name(model_name) + ".diff";
    case OutputRole::kInit:
      return std::string("__init__.py");
    case OutputRole::kFile:
      break;
  }
  if (!is_plain_file_name(key)) return std::nullopt;
  return std::string(key);
}

bool is_sha256_hex(std::string_view text) {
  return text.size() == 64 && std::all_of(text.begin(), text.end(), [](char c) {
           return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
         });
}

}  // namespace hpfreeze
