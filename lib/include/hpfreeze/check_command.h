#pragma once
// `hpfreeze check`: an offline preflight of a codegen_meta.json, optionally against a model
// tree dump (issue 6; the findings are specified in docs/cli/check.md).

#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/diagnostic.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

struct CheckRequest {
  std::string meta_path;                  // "-" for stdin
  std::optional<std::string> model_path;  // "-" for stdin (not both)
  // A trainable model parameter no param_plan entry covers: a warning instead of an error
  // (the same flag and rule as report --allow-uncovered).
  bool allow_uncovered = false;
};

struct CheckResult {
  // Errors, warnings and notes about the content of META and MODEL (syntax and decode
  // errors of either file included), in report order.
  Diagnostics findings;
  // Failed reads (ErrorClass::kIo). When not empty, nothing was checked and findings is empty.
  Diagnostics io_errors;

  [[nodiscard]] bool has_errors() const;
};

// Every finding about `meta` (and `model` when given), sorted: findings located in the meta
// file first, then those located in the model file; within a file by JSON Pointer (byte
// order), then by message. Aggregated findings (unknown axes, ambiguous negative dims) sit
// at their first occurrence in document order.
Diagnostics check_meta(const JsonDocument& meta, const ModelTree* model,
                       bool allow_uncovered = false);

// Reads, parses and checks the files of `request`.
CheckResult run_check(const CheckRequest& request);

// "error", "warning" or "note".
std::string_view severity_name(Severity severity);

// One compact JSON object per finding and line:
// {"severity":...,"file":...,"pointer":...,"message":...}, plus "line" and "column" when
// the finding has a text position (syntax errors).
std::string render_findings_json_lines(const Diagnostics& findings);

}  // namespace hpfreeze
