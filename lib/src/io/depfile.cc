#include "io/depfile.h"

#include <algorithm>
#include <cstdio>

namespace hpfreeze {
namespace {

bool plain_byte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80 ||
         std::string_view("+,/_.(){}@!-").find(static_cast<char>(c)) != std::string_view::npos;
}

// Bytes allowed in some places only, or escaped.
bool conditional_byte(unsigned char c) {
  return std::string_view(" #:$\\~%").find(static_cast<char>(c)) != std::string_view::npos;
}

// "';' (0x3b)", "'\t' (0x09)": the byte quoted as the path is in the message, and its value.
std::string byte_text(unsigned char c) {
  char hex[16];
  std::snprintf(hex, sizeof hex, " (0x%02x)", c);
  return quote_for_diagnostic(std::string(1, static_cast<char>(c))) + hex;
}

}  // namespace

std::optional<std::string> depfile_refusal(std::string_view path, bool is_target) {
  if (path.empty()) return "an empty path names no file";
  for (std::size_t i = 0; i < path.size(); ++i) {
    const auto c = static_cast<unsigned char>(path[i]);
    const bool last = i + 1 == path.size();
    const char next = last ? '\0' : path[i + 1];
    const std::string b = byte_text(c);
    if (c == '\n' || c == '\r') return b + ": make syntax has no newline or carriage return";
    if (c == '\t') {
      return b +
             ": ninja keeps the backslash of an escaped tab and make splits the path at a "
             "bare one";
    }
    if (!plain_byte(c) && !conditional_byte(c)) {
      return b + " is not a byte that make and ninja both read back as itself";
    }
    if (c == '\\' && last) {
      return b + " at the end: make and ninja read it as escaping the separator after it";
    }
    if (c == '\\' && std::string_view(" #:$").find(next) != std::string_view::npos) {
      return b + " before " + byte_text(static_cast<unsigned char>(next)) +
             ": no spelling of the two reads back the same in make and ninja";
    }
    if (c == '~' && i == 0) return b + " first: make expands a leading '~' to a home directory";
    if (c == '%' && is_target) return b + " in the target: make reads it as a pattern rule";
    if (c == ')' && last) {
      return b + " at the end: make reads a word ending in ')' after a '(' as an archive member";
    }
    if (last && !is_target && c == ' ') {
      return b +
             " at the end of a prerequisite: make drops a space at the end of the "
             "line, escaped or not";
    }
    if (last && !is_target && c == ':') {
      return b +
             " at the end of a prerequisite: ninja reads '\\:' there as a backslash "
             "and drops the colon";
    }
  }
  return std::nullopt;
}

std::string escape_depfile_path(std::string_view path) {
  std::string out;
  out.reserve(path.size() + 8);
  for (char c : path) {
    if (c == ' ' || c == '#' || c == ':') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

Expected<std::string> render_depfile(const DepfilePath& target,
                                     const std::vector<DepfilePath>& prerequisites) {
  Diagnostics errors;
  auto check = [&errors](const DepfilePath& p, bool is_target) {
    if (std::optional<std::string> why = depfile_refusal(p.path, is_target)) {
      errors.push_back(make_error({}, {},
                                  "cannot write " + std::string(p.flag) + " " +
                                      quote_for_diagnostic(p.path) + " to a depfile: " + *why));
    }
  };
  check(target, true);
  for (const DepfilePath& p : prerequisites) check(p, false);
  if (!errors.empty()) return errors;

  std::string out = escape_depfile_path(target.path);
  out += ':';
  std::vector<std::string_view> written;
  for (const DepfilePath& p : prerequisites) {
    if (std::find(written.begin(), written.end(), p.path) != written.end()) continue;
    written.push_back(p.path);
    out += ' ';
    out += escape_depfile_path(p.path);
  }
  out += '\n';
  return out;
}

}  // namespace hpfreeze
