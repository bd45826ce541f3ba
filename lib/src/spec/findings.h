#pragma once
// The findings table: every finding of check, check --bundle and report (and freeze's
// uncovered-parameter warning, check's rule counted once), one row each, as ruff's rule
// table (docs/cli.md, "Finding codes"). A finding is made from its row (make_finding), so
// its code and severity are the row's; adding a finding is a row here, a heading in
// docs/cli.md and a case in tests/unit/commands/finding_codes_test.cc.

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

struct FindingRule {
  // "HPF" and three digits, the hundreds by family: 1 the meta's schema (a member of the
  // wrong type), 2 the plan (placements, axes, the lists that must agree with param_plan),
  // 3 against the model, 4 the generated bundle, 5 the mesh and the memory (report).
  std::string_view code;
  Severity severity;
  std::string_view name;  // kebab-case, unique
};

inline constexpr FindingRule kFindingRules[] = {
    {.code = "HPF101", .severity = Severity::kError, .name = "identity-type"},
    {.code = "HPF102", .severity = Severity::kError, .name = "no-boundary"},
    {.code = "HPF103", .severity = Severity::kError, .name = "param-plan-type"},
    {.code = "HPF104", .severity = Severity::kError, .name = "mesh-dim-names-type"},
    {.code = "HPF105", .severity = Severity::kError, .name = "frozen-sharded-params-type"},
    {.code = "HPF106", .severity = Severity::kError, .name = "injections-type"},
    {.code = "HPF107", .severity = Severity::kError, .name = "boundary-classes-type"},
    {.code = "HPF108", .severity = Severity::kError, .name = "tied-pairs-type"},
    {.code = "HPF109", .severity = Severity::kError, .name = "special-handlers-type"},
    {.code = "HPF201", .severity = Severity::kError, .name = "invalid-placement"},
    {.code = "HPF202", .severity = Severity::kWarning, .name = "non-canonical-placement"},
    {.code = "HPF203", .severity = Severity::kWarning, .name = "ambiguous-negative-dim"},
    {.code = "HPF204", .severity = Severity::kNote, .name = "undeclared-axis"},
    {.code = "HPF205", .severity = Severity::kError, .name = "duplicate-axis"},
    {.code = "HPF206", .severity = Severity::kError, .name = "frozen-sharded-mismatch"},
    {.code = "HPF207", .severity = Severity::kError, .name = "injection-match"},
    {.code = "HPF208", .severity = Severity::kWarning, .name = "skipped-override"},
    {.code = "HPF301", .severity = Severity::kError, .name = "boundary-not-in-model"},
    {.code = "HPF302", .severity = Severity::kError, .name = "boundary-class-mismatch"},
    {.code = "HPF303", .severity = Severity::kError, .name = "parameter-not-in-model"},
    {.code = "HPF304", .severity = Severity::kError, .name = "dim-out-of-range"},
    // --allow-uncovered lowers it to a warning, and freeze warns unless --strict.
    {.code = "HPF305", .severity = Severity::kError, .name = "uncovered-parameter"},
    {.code = "HPF306", .severity = Severity::kNote, .name = "module-checks-skipped"},
    {.code = "HPF307", .severity = Severity::kNote, .name = "parameter-checks-skipped"},
    {.code = "HPF401", .severity = Severity::kNote, .name = "no-bundle"},
    {.code = "HPF402", .severity = Severity::kError, .name = "model-name-type"},
    {.code = "HPF403", .severity = Severity::kError, .name = "missing-output-hash"},
    {.code = "HPF404", .severity = Severity::kError, .name = "invalid-output-record"},
    {.code = "HPF405", .severity = Severity::kError, .name = "unreadable-output"},
    {.code = "HPF406", .severity = Severity::kError, .name = "hash-drift"},
    {.code = "HPF501", .severity = Severity::kError, .name = "indivisible-dim"},
    {.code = "HPF502", .severity = Severity::kError, .name = "folded-expert-placement"},
    {.code = "HPF503", .severity = Severity::kNote, .name = "inert-axis"},
    {.code = "HPF504", .severity = Severity::kNote, .name = "axis-shards-nothing"},
    {.code = "HPF505", .severity = Severity::kWarning, .name = "duplicate-parameter"},
    {.code = "HPF506", .severity = Severity::kError, .name = "parallel-dims-type"},
    {.code = "HPF507", .severity = Severity::kWarning, .name = "ignored-axis-size"},
    {.code = "HPF508", .severity = Severity::kWarning, .name = "no-mesh-sizes"},
    {.code = "HPF509", .severity = Severity::kError, .name = "too-many-devices"},
    {.code = "HPF510", .severity = Severity::kError, .name = "unknown-dtype"},
    {.code = "HPF511", .severity = Severity::kWarning, .name = "missing-dtype"},
    {.code = "HPF512", .severity = Severity::kError, .name = "byte-overflow"},
    {.code = "HPF513", .severity = Severity::kError, .name = "planner-limit"},
    {.code = "HPF514", .severity = Severity::kError, .name = "no-usable-mesh"},
    {.code = "HPF515", .severity = Severity::kNote, .name = "budget-unit"},
    {.code = "HPF516", .severity = Severity::kError, .name = "pp-placement"},
    {.code = "HPF517", .severity = Severity::kError, .name = "no-layer-stack"},
    {.code = "HPF518", .severity = Severity::kNote, .name = "decimal-budget"},
    {.code = "HPF519", .severity = Severity::kNote, .name = "near-budget"},
    {.code = "HPF520", .severity = Severity::kNote, .name = "idle-expert-ranks"},
};

// The row of `code`, found while compiling: a code the table lacks does not compile.
consteval const FindingRule& finding_rule(std::string_view code) {
  for (const FindingRule& rule : kFindingRules) {
    if (rule.code == code) return rule;
  }
  throw "no such finding code in kFindingRules";
}

// The anchor of the rule's heading in docs/cli.md, "### HPF101 identity-type":
// "hpf101-identity-type" (the code in lower case, '-', the name).
std::string finding_anchor(const FindingRule& rule);

// The row of `code` at run time; nullptr when there is none.
const FindingRule* find_finding_rule(std::string_view code);

// A finding of `rule`: its code and severity are the row's.
Diagnostic make_finding(const FindingRule& rule, std::string file, std::string pointer,
                        std::string message);

// Whether `codes` (check's and report's --silence, each a code of the table) names `code`,
// a finding's; a line that is no finding (no code) is never silenced.
bool is_silenced(std::string_view code, std::span<const std::string> codes);

// `diagnostics` without the silenced ones, in their order.
void drop_silenced(Diagnostics& diagnostics, std::span<const std::string> codes);

// For a request's silenced codes: a usage error (kIo) about the first that is no code of the
// table, as --silence says it (parse_finding_codes), else nullopt.
std::optional<Diagnostic> unknown_finding_code(std::span<const std::string> codes);

}  // namespace hpfreeze
