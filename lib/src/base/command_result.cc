#include "hpfreeze/base/command_result.h"

#include <algorithm>
#include <utility>

namespace hpfreeze {

bool CommandResult::failed() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(),
                     [](const Diagnostic& d) { return d.severity == Severity::kError; });
}

bool CommandResult::io_failed() const {
  return std::any_of(diagnostics.begin(), diagnostics.end(), [](const Diagnostic& d) {
    return d.severity == Severity::kError && d.error_class == ErrorClass::kIo;
  });
}

Outcome CommandResult::outcome() const {
  if (io_failed() || (errors_are_trouble && failed())) return Outcome::kTrouble;
  if (failed() || negative) return Outcome::kRejected;
  return Outcome::kOk;
}

void ErrorList::add(Diagnostic d) {
  ++total_;
  if (errors_.size() < kMaxReportedErrors) errors_.push_back(std::move(d));
}

void ErrorList::append(ErrorList&& other) {
  const std::size_t dropped = other.total_ - other.errors_.size();
  for (Diagnostic& d : other.errors_) add(std::move(d));
  total_ += dropped;
  other.errors_.clear();
  other.total_ = 0;
}

Diagnostics ErrorList::take(const std::string& file) {
  if (total_ > errors_.size()) {
    errors_.push_back(
        make_error(file, {}, std::to_string(total_ - errors_.size()) + " more errors not shown"));
  }
  total_ = 0;
  return std::move(errors_);
}

}  // namespace hpfreeze
