#pragma once
// Expected values computed by Python (HPFREEZE_PYTHON, the interpreter CMake found), the
// independent reference of the tests that use it: never by the code under test.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <string_view>
#include <vector>

namespace hpfreeze::testing_python {

inline std::string shell_quote(std::string_view word) {
  std::string quoted = "'";
  for (const char c : word) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

// Runs `script` with `args`, its stdin `input`, and returns its stdout. A failure to run
// it, or a non-zero exit, fails the test and returns "".
inline std::string run_python(std::string_view script, const std::vector<std::string>& args = {},
                              std::string_view input = {}) {
  std::string dir = ::testing::TempDir() + "hpfreeze_python_XXXXXX";
  if (::mkdtemp(dir.data()) == nullptr) {
    ADD_FAILURE() << "mkdtemp: " << std::strerror(errno);
    return {};
  }
  const std::string script_path = dir + "/reference.py";
  const std::string input_path = dir + "/stdin";
  const std::string output_path = dir + "/stdout";
  std::ofstream(script_path, std::ios::binary) << script;
  std::ofstream(input_path, std::ios::binary) << input;
  std::string command = shell_quote(HPFREEZE_PYTHON) + " " + shell_quote(script_path);
  for (const std::string& arg : args) command += " " + shell_quote(arg);
  command += " <" + shell_quote(input_path) + " >" + shell_quote(output_path);
  const int status = std::system(command.c_str());
  std::ifstream out(output_path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(out), std::istreambuf_iterator<char>()};
  std::remove(script_path.c_str());
  std::remove(input_path.c_str());
  std::remove(output_path.c_str());
  ::rmdir(dir.c_str());
  if (status != 0) {
    ADD_FAILURE() << "python failed (status " << status << "): " << command;
    return {};
  }
  return text;
}

// For each path, one line: its sha256, its size in bytes, and its lines as upstream's
// file_line_count counts them in text mode, or "-" when the file is not UTF-8.
inline constexpr std::string_view kFileDigestsScript = R"(
import hashlib, sys
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        data = f.read()
    try:
        with open(path, "r", encoding="utf-8") as f:
            lines = str(sum(1 for _ in f))
    except UnicodeDecodeError:
        lines = "-"
    print(hashlib.sha256(data).hexdigest(), len(data), lines)
)";

// The lines of `text`, without their LF.
inline std::vector<std::string> split_lines(std::string_view text) {
  std::vector<std::string> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.emplace_back(text.substr(0, end));
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  }
  return lines;
}

}  // namespace hpfreeze::testing_python
