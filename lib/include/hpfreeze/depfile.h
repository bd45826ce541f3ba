#pragma once
// Make-syntax dependency files ("depfiles") that make and ninja (`deps = gcc`) read to
// learn which files a generated output was built from (`freeze --depfile`).
//
// Paths are escaped as GCC's -MD/-MQ escape them: a space or tab gets a backslash in
// front, and every backslash directly before it is doubled (GNU make reads 2N+1
// backslashes + space as N backslashes + space); `#` becomes `\#`; `$` becomes `$$`;
// every other byte is written as is. One addition to GCC: `:` becomes `\:`, which GNU
// make and ninja both read back as a colon, where a bare one makes make see a second
// rule separator. A newline or carriage return cannot be written in make syntax at all.

#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

// True when path can be written into a depfile: not empty, no '\n' and no '\r'.
bool depfile_can_express(std::string_view path);

// Escapes one path. Precondition: depfile_can_express(path).
std::string escape_depfile_path(std::string_view path);

// The rule "TARGET: PREREQ1 PREREQ2\n" on one line, prerequisites in the order given and
// exact duplicates listed once. Errors (no file, no pointer) name every path that
// depfile_can_express rejects.
Expected<std::string> render_depfile(std::string_view target,
                                     const std::vector<std::string>& prerequisites);

}  // namespace hpfreeze
