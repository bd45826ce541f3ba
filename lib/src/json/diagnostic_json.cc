#include "json/diagnostic_json.h"

#include <array>
#include <cstddef>

namespace hpfreeze {

std::string_view severity_name(Severity severity) {
  constexpr std::array<std::string_view, 3> kNames{"error", "warning", "note"};  // enum order
  return kNames[static_cast<std::size_t>(severity)];
}

void write_finding(JsonStream& w, const Diagnostic& d, std::string_view severity,
                   FindingFields fields) {
  const bool with_position = fields == FindingFields::kWithPosition;
  w.start_object();
  w.key("severity").string(severity);
  if (!d.code.empty()) w.key("code").string(d.code);
  w.key("file").string(d.file);
  w.key("pointer").string(d.pointer);
  if (with_position && !d.detail.empty()) {
    std::string message = d.message;
    for (const std::string& line : d.detail) {
      message += '\n';
      message += line;
    }
    w.key("message").string(message);
  } else {
    w.key("message").string(d.message);
  }
  if (with_position && d.line != 0) {
    w.key("line").number(d.line);
    if (d.column != 0) w.key("column").number(d.column);
  }
  w.end_object();
}

void append_finding_json_line(std::string& out, const Diagnostic& d, std::string_view severity) {
  JsonStream w(out, JsonLayout::kOneLine);
  write_finding(w, d, severity, FindingFields::kWithPosition);
  w.end_line();
}

std::string render_findings_json_lines(const Diagnostics& findings) {
  std::string out;
  for (const Diagnostic& d : findings) append_finding_json_line(out, d, severity_name(d.severity));
  return out;
}

}  // namespace hpfreeze
