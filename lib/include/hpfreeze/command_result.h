#pragma once
// What every command of the library returns, and the cap on how many errors one run lists.

#include <cstddef>
#include <string>

#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

// At most this many errors are listed per input; a last line counts the rest.
inline constexpr std::size_t kMaxReportedErrors = 100;

struct CommandResult {
  Diagnostics diagnostics;  // warnings and errors, in the order they arose
  [[nodiscard]] bool failed() const;     // some error
  [[nodiscard]] bool io_failed() const;  // some error of class kIo (exit 2)
};

// Collects errors about one file, keeping the first kMaxReportedErrors; take() appends one
// line that counts the others.
class ErrorList {
 public:
  void add(Diagnostic d);
  [[nodiscard]] bool empty() const { return total_ == 0; }
  [[nodiscard]] std::size_t size() const { return total_; }
  Diagnostics take(const std::string& file);

 private:
  Diagnostics errors_;
  std::size_t total_ = 0;
};

}  // namespace hpfreeze
