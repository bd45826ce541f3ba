#pragma once
// stdin and stdout as the front end uses them; the library's file reading and atomic writing
// are io/io.h's (docs/reliability.md).

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// Reads what stdin has next: at most max_bytes, at least one byte unless at its end (then
// empty).
Expected<std::string> read_stdin_chunk(std::size_t max_bytes);

enum class WriteOutcome { kWritten, kUnchanged };

// Writes bytes to file descriptor 1. SIGPIPE is left alone: on a closed pipe the process
// dies quietly by default.
Expected<WriteOutcome> write_stdout(std::string_view bytes);

// One input of a command. An output may replace it only when may_be_replaced_by says so
// (an in-place update), and only by the atomic replace, never by a write into the same
// file (stdout, a descriptor).
struct InputPath {
  std::string flag;
  std::string path;
  std::string may_be_replaced_by;  // the flag of the one output allowed to replace it
};

// Usage errors (kIo, exit 2) for inputs that are the file stdout writes into, on the real
// disk (io/io.h's check_distinct_paths with stdout as the one output).
Diagnostics check_stdout_apart(std::span<const InputPath> inputs);

}  // namespace hpfreeze
