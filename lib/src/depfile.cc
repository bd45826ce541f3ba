#include "hpfreeze/depfile.h"

#include <algorithm>

namespace hpfreeze {

bool depfile_can_express(std::string_view path) {
  return !path.empty() && path.find_first_of("\n\r") == std::string_view::npos;
}

std::string escape_depfile_path(std::string_view path) {
  std::string out;
  out.reserve(path.size() + 8);
  std::size_t backslashes = 0;  // length of the run of backslashes just written
  for (char c : path) {
    switch (c) {
      case ' ':
      case '\t':
        out.append(backslashes + 1, '\\');
        break;
      case '#':
      case ':':
        out += '\\';
        break;
      case '$':
        out += '$';
        break;
      default:
        break;
    }
    out += c;
    backslashes = c == '\\' ? backslashes + 1 : 0;
  }
  return out;
}

Expected<std::string> render_depfile(std::string_view target,
                                     const std::vector<std::string>& prerequisites) {
  Diagnostics errors;
  auto check = [&errors](std::string_view path) {
    if (path.empty()) {
      errors.push_back(make_error({}, {}, "an empty path cannot be written to a depfile"));
    } else if (!depfile_can_express(path)) {
      errors.push_back(make_error({}, {},
                                  "cannot write " + quote_for_diagnostic(path) +
                                      " to a depfile: make syntax has no newline or carriage "
                                      "return"));
    }
  };
  check(target);
  for (const std::string& p : prerequisites) check(p);
  if (!errors.empty()) return errors;

  std::string out = escape_depfile_path(target);
  out += ':';
  std::vector<std::string_view> written;
  for (const std::string& p : prerequisites) {
    if (std::find(written.begin(), written.end(), p) != written.end()) continue;
    written.push_back(p);
    out += ' ';
    out += escape_depfile_path(p);
  }
  out += '\n';
  return out;
}

}  // namespace hpfreeze
