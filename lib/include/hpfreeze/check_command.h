#pragma once
// `hpfreeze check`: the request, run_check and the findings' JSON Lines. The pass,
// check_meta, is in check.h.

#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/check.h"
#include "hpfreeze/command_result.h"
#include "hpfreeze/concurrency.h"
#include "hpfreeze/diagnostic.h"

namespace hpfreeze {

struct CheckRequest {
  std::string meta_path;                  // "-" for stdin
  std::optional<std::string> model_path;  // "-" for stdin (not both)
  // A trainable model parameter no param_plan entry covers: a warning instead of an error
  // (the same flag and rule as report --allow-uncovered).
  bool allow_uncovered = false;
  // The meta is read on a second thread beside the model only when this has a second CPU.
  Concurrency concurrency;
};

// Reads, parses and checks the files of `request`. The diagnostics are the findings
// about the content of META and MODEL (syntax and decode errors included), in the order
// check_meta gives; or, when a file could not be read (ErrorClass::kIo), only those read
// errors: nothing was checked then.
CommandResult run_check(const CheckRequest& request);

// "error", "warning" or "note".
std::string_view severity_name(Severity severity);

// One compact JSON object per finding and line:
// {"severity":...,"file":...,"pointer":...,"message":...}, plus "line" and "column" when
// the finding has a text position (syntax errors).
std::string render_findings_json_lines(const Diagnostics& findings);

// One such line for `d`, with `severity` as its "severity" and the message's detail lines
// appended to "message" after LFs (--message-format json).
void append_finding_json_line(std::string& out, const Diagnostic& d, std::string_view severity);

}  // namespace hpfreeze
