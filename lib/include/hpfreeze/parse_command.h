#pragma once
// `hpfreeze parse`: canonicalise placement strings (SPEC §8).

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

struct ParseInput {
  std::string_view text;
  std::string origin;     // what diagnostics call it: "argument 2", "<stdin>"
  std::size_t line = 0;   // stdin line number, 0 for arguments
};

struct ParseOptions {
  bool json = false;   // one JSON object per line: the dump form plus "canonical"
  bool check = false;  // valid but non-canonical input is an error too
};

struct ParseResult {
  std::string output;  // the lines for stdout, each ending in '\n'
  Diagnostics errors;  // one per rejected input, in input order
};

ParseResult run_parse(std::span<const ParseInput> inputs, const ParseOptions& options);

// Splits stdin text into parse inputs: one per '\n'-terminated line (a final line without
// '\n' counts too), with one trailing '\r' removed so CRLF files work.
std::vector<ParseInput> split_stdin_lines(std::string_view text, const std::string& origin);

}  // namespace hpfreeze
