#pragma once
// Make-syntax dependency files ("depfiles") that make and ninja (`deps = gcc`) read to
// learn which files a generated output was built from (`freeze --depfile`).
//
// A path is written only when GNU make and ninja both read it back as the same bytes;
// any other path is refused with the reason (docs/cli.md, "--depfile"). The bytes allowed
// are letters, digits, bytes >= 0x80, `+,/_.(){}@!-` as they are, and four escaped ones:
// space as `\ `, `#` as `\#`, `:` as `\:`, `$` as `$$`; `\`, `~` and `%` where neither
// tool gives them a meaning. Escapes never need doubled backslashes: a backslash before
// an escaped byte is refused.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// One path of the rule, with the flag that named it (for messages).
struct DepfilePath {
  std::string_view flag;
  std::string_view path;
};

// Why `path` cannot be written to a depfile as the rule's target (`is_target`) or as a
// prerequisite, naming the byte; nullopt when it can.
std::optional<std::string> depfile_refusal(std::string_view path, bool is_target);

// Escapes one path. Precondition: depfile_refusal(path, ...) is nullopt.
std::string escape_depfile_path(std::string_view path);

// The rule "TARGET: PREREQ1 PREREQ2\n" on one line, prerequisites in the order given and
// exact duplicates listed once. Errors (no file, no pointer) name every path that
// depfile_refusal refuses, with its flag.
Expected<std::string> render_depfile(const DepfilePath& target,
                                     const std::vector<DepfilePath>& prerequisites);

}  // namespace hpfreeze
