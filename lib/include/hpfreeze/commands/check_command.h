#pragma once
// `hpfreeze check`: findings about a codegen_meta.json, alone or against its model
// (docs/cli.md).

#include <optional>
#include <string>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

struct CheckRequest {
  std::string meta_path;                  // "-" for stdin
  std::optional<std::string> model_path;  // "-" for stdin (not both)
  // A trainable model parameter no param_plan entry covers: a warning instead of an error
  // (the same flag and rule as report --allow-uncovered).
  bool allow_uncovered = false;
  // The meta is read on a second thread beside the model only when this has a second CPU.
  Concurrency concurrency;
  // The findings as JSON Lines on stdout, one compact object per finding:
  // {"severity":...,"file":...,"pointer":...,"message":...}, plus "line" and "column" when
  // the finding has a text position (syntax errors). Read errors stay diagnostics.
  bool json = false;
};

// Reads, parses and checks the files of `request`. The diagnostics are the findings
// about the content of META and MODEL (syntax and decode errors included), in the order
// check_meta gives (with `json`, the output instead); or, when a file could not be read
// (ErrorClass::kIo), only those read errors: nothing was checked then. `counts`, when
// given, receives how many findings of each severity there are.
CommandResult run_check(const CheckRequest& request, SeverityCounts* counts = nullptr);

}  // namespace hpfreeze
