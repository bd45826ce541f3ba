#pragma once
// How every text output on stdout shows a name from the inputs (a parameter, module,
// boundary, axis, dtype or reduce op): the one rule that keeps a hostile name from breaking
// a line or starting a CI runner's workflow command (docs/reliability.md, "Names on
// stdout"). The --json outputs need none of it: their strings are escaped ASCII.

#include <string>
#include <string_view>

namespace hpfreeze {

// What makes a name unfit to stand on a line of text as it is. A line reader may break a
// line at a C0 control, DEL, a C1 control (NEL, U+0085, among them), U+2028 or U+2029; the
// GitHub Actions runner reads a line whose text, after leading white space, starts with
// "::" as a workflow command, from stdout as from stderr.
enum class NameHazard { kNone, kControl, kLineSeparator, kCommandStart, kNotUtf8 };

// The hazard of `name`; of several, the one first in the enum's order.
NameHazard name_hazard(std::string_view name);

// "holds a control character", "holds a line or paragraph separator (U+2028 or U+2029)",
// "starts with '::' as a workflow command does", "is not UTF-8"; empty for kNone.
std::string_view describe(NameHazard hazard);

// Appends `name` as it is when it has no hazard and does not start with '"'; else as a
// JSON string in Python's ensure_ascii spelling ("a\nb", "\u0085", "::x"), which is one
// line of printable ASCII and reads back with any JSON parser. The quote rule keeps the
// two forms apart: a name that starts with '"' is always quoted.
void append_output_name(std::string& out, std::string_view name);
std::string output_name(std::string_view name);

}  // namespace hpfreeze
