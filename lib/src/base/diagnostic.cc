#include "hpfreeze/base/diagnostic.h"

#include <cstdio>
#include <string>

namespace hpfreeze {

namespace {

// Escapes control characters (a diagnostic is one line). A quoted text also escapes quotes,
// backslashes and non-ASCII bytes, so any input renders unambiguously.
void append_escaped(std::string& out, std::string_view text, bool quoted) {
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (quoted && (c == '\\' || c == '\'')) {
      out += '\\';
      out += ch;
    } else if (c >= 0x20 && c != 0x7f && (c < 0x80 || !quoted)) {
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char buf[5];
      std::snprintf(buf, sizeof buf, "\\x%02x", c);
      out += buf;
    }
  }
}

bool is_continuation(char c) { return (static_cast<unsigned char>(c) & 0xC0) == 0x80; }

std::size_t count_characters(std::string_view text) {
  std::size_t n = 0;
  for (char c : text) n += is_continuation(c) ? 0 : 1;
  return n;
}

}  // namespace

std::string shape_text(std::span<const std::uint64_t> shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) out += ", ";
    out += std::to_string(shape[i]);
  }
  return out + "]";
}

std::string plural(std::size_t count, std::string_view noun) {
  return std::to_string(count) + " " + std::string(noun) + (count == 1 ? "" : "s");
}

std::string SeverityCounts::text() const {
  return plural(errors, "error") + ", " + plural(warnings, "warning") + ", " +
         plural(notes, "note");
}

SeverityCounts count_severities(const Diagnostics& diagnostics) {
  SeverityCounts counts;
  for (const Diagnostic& d : diagnostics) {
    ++(d.severity == Severity::kError     ? counts.errors
       : d.severity == Severity::kWarning ? counts.warnings
                                          : counts.notes);
  }
  return counts;
}

std::string shorten_for_diagnostic(std::string_view text, std::size_t limit) {
  if (text.size() <= limit) return std::string(text);
  // Two thirds of the room for the head (where names differ least often), the rest for
  // the tail; both ends are moved off the middle of a UTF-8 sequence.
  std::size_t head = limit * 2 / 3;
  std::size_t tail = text.size() - (limit - head);
  while (head > 0 && is_continuation(text[head])) --head;
  while (tail < text.size() && is_continuation(text[tail])) ++tail;
  const std::size_t left_out = count_characters(text.substr(head, tail - head));
  std::string out(text.substr(0, head));
  out += "...[" + plural(left_out, "character") + " left out]...";
  out += text.substr(tail);
  return out;
}

std::string Diagnostic::location_and_message() const {
  std::string out;
  if (!file.empty()) {
    append_escaped(out, file, false);
    if (line != 0) {
      out += ':';
      out += std::to_string(line);
      if (column != 0) {
        out += ':';
        out += std::to_string(column);
      }
    }
    out += ": ";
  }
  if (!pointer.empty()) {
    append_escaped(out, shorten_for_diagnostic(pointer), false);
    out += ": ";
  }
  append_escaped(out, message, false);
  return out;
}

Diagnostic make_error(std::string file, std::string pointer, std::string message) {
  Diagnostic d;
  d.file = std::move(file);
  d.pointer = std::move(pointer);
  d.message = std::move(message);
  return d;
}

Diagnostic make_warning(std::string file, std::string pointer, std::string message) {
  Diagnostic d = make_error(std::move(file), std::move(pointer), std::move(message));
  d.severity = Severity::kWarning;
  return d;
}

Diagnostic make_note(std::string file, std::string pointer, std::string message) {
  Diagnostic d = make_error(std::move(file), std::move(pointer), std::move(message));
  d.severity = Severity::kNote;
  return d;
}

Diagnostic make_io_error(std::string file, std::string message) {
  Diagnostic d = make_error(std::move(file), {}, std::move(message));
  d.error_class = ErrorClass::kIo;
  return d;
}

void append_pointer_token(std::string& pointer, std::string_view token) {
  pointer += '/';
  for (char c : token) {
    if (c == '~') {
      pointer += "~0";
    } else if (c == '/') {
      pointer += "~1";
    } else {
      pointer += c;
    }
  }
}

std::string pointer_join(std::string_view pointer, std::string_view token) {
  std::string out(pointer);
  append_pointer_token(out, token);
  return out;
}

std::string index_pointer(std::string_view pointer, std::size_t index) {
  return std::string(pointer) + "/" + std::to_string(index);
}

std::string escape_control(std::string_view text) {
  std::string out;
  append_escaped(out, text, false);
  return out;
}

std::string quote_for_diagnostic(std::string_view text) {
  std::string out = "'";
  append_escaped(out, shorten_for_diagnostic(text), true);
  out += '\'';
  return out;
}

}  // namespace hpfreeze
