#pragma once
// Counting a file's lines as upstream records them in a meta's `outputs`: the lines
// Python's text mode yields for open(path, encoding="utf-8"), fed the bytes in pieces of
// any size. LF, CRLF and a lone CR each end a line, a CRLF split between two pieces is
// one line end, and a last line without a line end counts. Python's strict utf-8 codec
// decides whether there is a count at all: no overlong forms, no surrogates, nothing above
// U+10FFFF, no sequence cut off at the end.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

namespace hpfreeze {

// How the bytes are scanned for line ends and non-ASCII bytes: one byte at a time, or 16
// or 32 at a time where the build and the CPU can. The results are the same.
enum class LineScan { kScalar, kSse2, kAvx2 };

// The fastest scan this CPU runs, and every one it runs (for tests).
LineScan fastest_line_scan();
std::vector<LineScan> available_line_scans();

class TextLineCounter {
 public:
  explicit TextLineCounter(LineScan scan = fastest_line_scan());
  void feed(std::string_view bytes);
  // The lines of everything fed so far, read as a whole file; nullopt when it is not UTF-8.
  [[nodiscard]] std::optional<std::uint64_t> lines() const;

  // Line ends in [begin, end) of p, which holds the byte before begin too (begin >= 1), and
  // whether those bytes are all ASCII.
  using ScanFunction = std::uint64_t (*)(const unsigned char* p, std::size_t begin, std::size_t end,
                                         bool* ascii);

 private:
  void check_utf8(std::string_view bytes);

  ScanFunction scan_;
  std::uint64_t line_ends_ = 0;
  bool any_bytes_ = false;
  bool ends_with_line_end_ = false;
  bool ends_with_cr_ = false;
  bool utf8_ = true;
  // The continuation bytes the current UTF-8 character still needs, and the range the
  // next one must be in.
  unsigned char pending_ = 0;
  unsigned char next_low_ = 0x80;
  unsigned char next_high_ = 0xBF;
};

// Line ends in `bytes` alone: every CR, and every LF not right after a CR of `bytes`.
std::uint64_t count_line_ends(std::string_view bytes, LineScan scan = fastest_line_scan());

}  // namespace hpfreeze
