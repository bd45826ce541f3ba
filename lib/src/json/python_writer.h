#pragma once
// The token writers behind every encoder of encode.h and the meta writer of
// frozen_meta_encode.cc: an output buffer written through a raw cursor, Python's string
// escaping and float repr, and the pieces of Python's indent=2 layout.

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "base/background_task.h"
#include "base/huge_pages.h"
#include "base/name_index.h"

namespace hpfreeze {
struct Json;
}

namespace hpfreeze::pyjson {

// Appends into a std::string through a raw cursor: callers reserve room for a whole token,
// write it through the returned pointer and commit the end. While encoding, the string is
// resized ahead of the cursor (zero-filled, since std::string has no uninitialized growth
// before C++23); the destructor trims it to the bytes written.
class OutputBuffer {
 public:
  explicit OutputBuffer(std::string& out) : out_(out), start_(out.size()), size_(out.size()) {}
  ~OutputBuffer() { out_.resize(size_); }
  OutputBuffer(const OutputBuffer&) = delete;
  OutputBuffer& operator=(const OutputBuffer&) = delete;

  char* reserve(std::size_t n) {
    if (out_.size() - size_ < n) grow(n);
    return out_.data() + size_;
  }
  void commit(const char* end) { size_ = static_cast<std::size_t>(end - out_.data()); }
  // The room reserved beyond the bytes written.
  [[nodiscard]] std::size_t room() const { return out_.size() - size_; }
  // The bytes written through this buffer, and forgetting them (their room is kept).
  [[nodiscard]] std::string_view written() const { return {out_.data() + start_, size_ - start_}; }
  void rewind() { size_ = start_; }

 private:
  // Adds as much room again as this buffer has written so far, up to kMaxGrowth: amortized
  // O(1) per byte (std::string reallocates geometrically), and the zero-filled room not yet
  // written, which counts in the peak memory, stays small.
  // Never beyond the capacity reserved up front while the request fits in it: reallocating
  // would copy everything written so far and double the memory.
  void grow(std::size_t n) {
    std::size_t size = size_ + n + std::min(size_ - start_, kMaxGrowth);
    if (size > out_.capacity() && size_ + n <= out_.capacity()) size = out_.capacity();
    out_.resize(size);
  }

  static constexpr std::size_t kMaxGrowth = std::size_t{1} << 20;

  std::string& out_;
  std::size_t start_;
  std::size_t size_;
};

// Worst case output per input byte: a control byte or an invalid byte becomes \uXXXX.
constexpr std::size_t kMaxEscapedPerByte = 6;
// Long strings are escaped in pieces so that the reserved room stays small.
constexpr std::size_t kStringChunk = 4096;
// A UTF-8 sequence starting before a chunk's end may run 3 bytes past it.
constexpr std::size_t kChunkSlack = 3 * kMaxEscapedPerByte;
// Longest repr: sign, 17 digits, point, 'e', exponent sign, 3 digits.
constexpr std::size_t kMaxFloatLength = 32;
// What the last token of an encoding may reserve beyond its own bytes: an output sized
// by an estimate plus this is never reallocated.
constexpr std::size_t kReserveSlack =
    kStringChunk * kMaxEscapedPerByte + kChunkSlack + kMaxFloatLength + 64;

// Appends `utf8` quoted and escaped as Python's json module does with ensure_ascii
// (encode.h, append_python_string).
void write_string(OutputBuffer& out, std::string_view utf8);

// Writes Python's repr(d) at `out` (room for kMaxFloatLength) and returns its end.
char* write_float(char* out, double d);

// Python's indent=2 layout: before each element of a non-empty container, a comma
// (not before the first), a newline and two spaces per level of `depth`; the same
// without the comma before the closing bracket.
inline void write_newline(OutputBuffer& out, std::size_t depth, bool comma) {
  static constexpr char kSpaces[] =
      "                                                                ";
  constexpr std::size_t kMaxCopied = sizeof kSpaces - 1;
  const std::size_t spaces = 2 * depth;
  // Room for a whole block of spaces: a fixed-size copy is two stores, whatever the depth.
  char* q = out.reserve(2 + std::max(spaces, kMaxCopied));
  if (comma) *q++ = ',';
  *q++ = '\n';
  if (spaces <= kMaxCopied) {
    std::memcpy(q, kSpaces, kMaxCopied);
  } else {
    std::memset(q, ' ', spaces);
  }
  out.commit(q + spaces);
}

// A key and the ": " after it.
inline void write_key(OutputBuffer& out, std::string_view key) {
  write_string(out, key);
  char* q = out.reserve(2);
  q[0] = ':';
  q[1] = ' ';
  out.commit(q + 2);
}

inline void write_raw(OutputBuffer& out, std::string_view text) {
  char* q = out.reserve(text.size());
  std::memcpy(q, text.data(), text.size());
  out.commit(q + text.size());
}

inline void open_bracket(OutputBuffer& out, char bracket) {
  char* q = out.reserve(1);
  *q = bracket;
  out.commit(q + 1);
}

// The newline and indentation before a non-empty container's closing bracket, and the
// bracket.
inline void close_bracket(OutputBuffer& out, char bracket, std::size_t depth) {
  write_newline(out, depth, false);
  open_bracket(out, bracket);
}

// The depths of the one table the meta's param_plan and the plan dump's "modules" both are
// (a member of the top-level object, depth 1): modules (or boundaries) 2, their fields
// and "params" 3, params 4, axes 5.
constexpr std::size_t kModuleDepth = 2;
constexpr std::size_t kFieldDepth = 3;
constexpr std::size_t kParamDepth = 4;
constexpr std::size_t kAxisDepth = 5;

// For size estimates: the newline, indentation, quotes, ": " and separator around a
// member at `depth` whose key has no escapes.
constexpr std::size_t member_overhead(std::size_t depth) { return 2 + 2 * depth + 4; }
// "{", the closing newline, indentation and "}".
constexpr std::size_t container_overhead(std::size_t depth) { return 3 + 2 * depth; }

// encode_python_json's bytes for `value` written as if nested `depth` levels deep (the
// indentation of its inner lines), for writers that lay out the outer levels themselves.
void write_python_json(OutputBuffer& out, const Json& value, std::size_t depth);
// The same for encode_plain_json (members in insertion order).
void write_plain_json(OutputBuffer& out, const Json& value, std::size_t depth);

// At least the bytes write_python_json (or write_plain_json) writes for `value` at `depth`
// when it holds only ASCII without escapes (exact then, but for numbers, counted at their
// widest).
std::size_t python_json_size(const Json& value, std::size_t depth);

// Below this estimate an output is written on one thread: the second would cost about as
// much to start as it saves.
constexpr std::size_t kSplitFrom = std::size_t{4} << 20;

// Writes into `bytes` (reserved once for `total`, an estimate) an output whose middle is a
// run of items of estimated `sizes`, the first starting `head` bytes in. Where the estimate
// is kSplitFrom or more and `concurrency` has a second CPU, it is written in two halves at
// once: first(out, split) up to the item `split` with about half the bytes before it, and
// second(out, split) the rest, on a second thread into its own buffer, appended afterwards
// (the copy costs far less than the half it saves). Otherwise whole(out) writes it all.
template <class Whole, class First, class Second>
void write_in_halves(std::string& bytes, std::size_t total, std::size_t head,
                     const std::vector<std::size_t>& sizes, Concurrency concurrency, Whole whole,
                     First first, Second second) {
  std::size_t split = sizes.size();
  std::size_t before = head;
  if (total >= kSplitFrom && concurrency.second_thread()) {
    split = 0;
    while (split < sizes.size() && before < total / 2) before += sizes[split++];
  }
  bytes.reserve(total + kReserveSlack);
  advise_huge_pages(bytes);
  if (split == 0 || split == sizes.size()) {
    OutputBuffer out(bytes);  // trims `bytes` to what was written when it goes
    whole(out);
    return;
  }
  std::string tail;
  BackgroundTask second_half(concurrency, [&] {
    tail.reserve(total - before + kReserveSlack);
    advise_huge_pages(tail);
    OutputBuffer out(tail);
    second(out, split);
  });
  {
    OutputBuffer out(bytes);
    first(out, split);
  }
  second_half.wait();
  bytes += tail;
}

}  // namespace hpfreeze::pyjson
