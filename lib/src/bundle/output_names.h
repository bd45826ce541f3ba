#pragma once
// The generated bundle's vocabulary: which file of the bundle (the directory that holds a
// codegen_meta.json) each key of the meta's `outputs` names, as upstream's artifact layout
// names them, and what a recorded sha256 looks like. Pure functions of strings: the bundle
// check (check/) reads the meta and the files, this only names them.

#include <optional>
#include <string>
#include <string_view>

namespace hpfreeze {

// The message for an `outputs` key that names no plain file of the bundle.
inline constexpr std::string_view kInvalidOutputFilename = "invalid output filename";

// The keys upstream gives its three generated files; every other key is a file name.
enum class OutputRole { kModeling, kDiff, kInit, kFile };
OutputRole output_role(std::string_view key);

// "modeling_<name>_gen_npu.py": <name> is `model_name`, or "model" when it is empty (the
// caller passes "" for a model_name that is absent, null or ""), with every code point
// that is neither a letter or number (Python 3.11's str.isalnum, Unicode 14.0) nor '_'
// replaced by one '_'. A byte that starts no well-formed UTF-8 character is one '_' too
// (a parsed meta never has one: its strings are UTF-8).
std::string modeling_file_name(std::string_view model_name);

// True for a key that may name a file in the bundle: not empty, not "." or "..", and
// without '/', '\\' or NUL.
bool is_plain_file_name(std::string_view key);

// The file name in the bundle for the `outputs` key: role modeling is
// modeling_file_name(model_name), diff that name plus ".diff", init "__init__.py", any
// other key the key itself. nullopt for a key of role kFile that is not a plain file name
// (kInvalidOutputFilename): nothing may be opened for it.
std::optional<std::string> output_file_name(std::string_view key, std::string_view model_name);

// True for exactly 64 lowercase hex digits, the form upstream records a sha256 in.
bool is_sha256_hex(std::string_view text);

}  // namespace hpfreeze
