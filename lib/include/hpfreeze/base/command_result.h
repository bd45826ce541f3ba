#pragma once
// What every command of the library returns, what it amounts to, and the cap on how many
// errors one run lists.

#include <cstddef>
#include <string>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// At most this many errors are listed per input; a last line counts the rest.
inline constexpr std::size_t kMaxReportedErrors = 100;

// What a run amounts to. The front end turns it into the exit status (0, 1, 2) in one
// place; docs/cli.md, "Exit status", gives each command's meaning of the three.
enum class Outcome {
  kOk,        // success; for diff, no differences
  kRejected,  // the inputs were read and rejected; for diff, they differ
  kTrouble,   // a usage error, or an input or output that could not be read or written
};

// The one result shape of every command (freeze, parse, expand, check, diff, thaw, report).
struct CommandResult {
  // The bytes for stdout, in full; empty for a command that writes its outputs itself
  // (freeze and thaw write files or stdout atomically) and after an error that stopped it.
  std::string output;
  // Errors, warnings and notes for stderr, in the order they arose.
  Diagnostics diagnostics;
  // An answer "no" that is not an error: diff found differences, report found no mesh
  // that is usable (docs/capacity.md). It makes the outcome kRejected.
  bool negative = false;
  // For diff, whose exit status 1 means "different": every error is then trouble.
  bool errors_are_trouble = false;

  [[nodiscard]] bool failed() const;     // some error
  [[nodiscard]] bool io_failed() const;  // some error of class kIo
  // Trouble for an error of class kIo (or any error, with errors_are_trouble), rejected
  // for any other error or a negative answer, else ok.
  [[nodiscard]] Outcome outcome() const;
};

// Collects errors about one file, keeping the first kMaxReportedErrors; take() appends one
// line that counts the others.
class ErrorList {
 public:
  void add(Diagnostic d);
  // Adds the errors of `other` after these, as if each had been added here in its order.
  void append(ErrorList&& other);
  [[nodiscard]] bool empty() const { return total_ == 0; }
  [[nodiscard]] std::size_t size() const { return total_; }
  Diagnostics take(const std::string& file);

 private:
  Diagnostics errors_;
  std::size_t total_ = 0;
};

}  // namespace hpfreeze
