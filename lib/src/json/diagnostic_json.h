#pragma once
// Diagnostics as JSON: the one writer of a finding's object, for check --json (JSON Lines),
// report --json's findings[] and --message-format json, as ruff keeps one emitter per
// format for every command.

#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "json/json_stream.h"

namespace hpfreeze {

// "error", "warning" or "note".
std::string_view severity_name(Severity severity);

// What of a finding its object holds besides severity, file, pointer and message.
enum class FindingFields {
  kWithPosition,  // the detail lines appended to "message" after LFs, and "line" and
                  // "column" when the finding has a text position (check, --message-format)
  kMessageOnly,   // the message line alone (report's findings[])
};

// {"severity":...,"file":...,"pointer":...,"message":...} into `w`, with `severity` as its
// "severity" and, for a finding, its "code" after it ({"severity","code","file",...}).
void write_finding(JsonStream& w, const Diagnostic& d, std::string_view severity,
                   FindingFields fields);

// One compact such object (kWithPosition) and a newline.
void append_finding_json_line(std::string& out, const Diagnostic& d, std::string_view severity);

// Every finding as such a line, its severity_name as "severity" (check --json).
std::string render_findings_json_lines(const Diagnostics& findings);

}  // namespace hpfreeze
