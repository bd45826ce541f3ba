#pragma once
// `hpfreeze parse`: canonicalise placement strings (docs/cli.md, "hpfreeze parse").

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hpfreeze/base/command_result.h"

namespace hpfreeze {

struct ParseInput {
  std::string_view text;
  std::string origin;     // what diagnostics call it: "argument 2", "<stdin>"
  std::size_t line = 0;   // stdin line number, 0 for arguments
  bool too_long = false;  // a stdin line over kMaxParseLine bytes; text is then empty
};

// The longest stdin line parse accepts, its '\n' not counted. A placement is a few bytes;
// the limit only bounds the memory an endless line can take.
inline constexpr std::size_t kMaxParseLine = std::size_t{1} << 20;

struct ParseCommandOptions {
  bool json = false;   // one JSON object per line: the dump form plus "canonical"
  bool check = false;  // valid but non-canonical input is an error too
};

// The canonical form (or with `json`, the JSON object) of each valid input as an output
// line ending in '\n', and one error per rejected input, in input order.
CommandResult run_parse(std::span<const ParseInput> inputs, const ParseCommandOptions& options);

// Cuts stdin into parse inputs as it arrives, chunk by chunk: one per '\n'-terminated
// line (a final line without '\n' counts too, from finish()), with one trailing '\r'
// removed so CRLF files work. Holds at most kMaxParseLine bytes of an unfinished line:
// a longer line is skipped to its end and comes out as too_long.
class LineSplitter {
 public:
  explicit LineSplitter(std::string origin) : origin_(std::move(origin)) {}
  // The lines that chunk completes; their text views stay valid until the next call.
  std::vector<ParseInput> feed(std::string_view chunk);
  // The last line, when the input did not end in '\n'.
  std::vector<ParseInput> finish();

 private:
  ParseInput make_line(std::string_view text, bool too_long);

  std::string origin_;
  std::string pending_;  // the unfinished line so far
  std::string done_;     // the completed lines of the last feed
  bool skipping_ = false;
  std::size_t line_ = 0;
};

}  // namespace hpfreeze
