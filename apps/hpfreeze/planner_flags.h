#pragma once
// The flags that say how report's planner counts a mesh, declared once for every command
// that runs it (report, and diff with --model): --mesh, then --replica-axis, --pp-stack,
// --pp-layers, --optimizer, --recipe, --zero, --zero-axis, --expert-zero-dim and
// --expert-parallel. A new planner option
// (a field of Accounting) gets its flag here, and so reaches both commands.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/report/report_options.h"

namespace hpfreeze::cli {

// A check of one value while the command line is parsed, so that a bad one is a usage
// error (exit 2): `parse` gives the value or the error whose message CLI11 prints.
template <class Parse>
CLI::Validator parsed_by(Parse parse) {
  return CLI::Validator(
      [parse](std::string& text) -> std::string {
        auto value = parse(text);
        return value ? std::string() : value.errors().front().message;
      },
      "");
}

class PlannerFlags {
 public:
  // --mesh. A command declares its own options between the two calls (report's --sweep
  // follows --mesh in its --help).
  void declare_mesh(CLI::App& app);
  // The accounting's flags; --replica-axis and --pp-stack are parsed into `plan`, which
  // must outlive the parse.
  void declare_accounting(CLI::App& app, ReportPlanOptions& plan);

  // After `app` is parsed: the values given, into `mesh` and `plan` (what is not given
  // keeps its default).
  void apply(const CLI::App& app, std::optional<std::vector<AxisSize>>& mesh,
             ReportPlanOptions& plan) const;

  // Every option declared here, in --help order.
  [[nodiscard]] const std::vector<CLI::Option*>& options() const { return options_; }

 private:
  std::string mesh_;
  std::string pp_layers_;
  std::string optimizer_;
  std::string zero_;
  std::string recipe_;
  std::string zero_axes_;
  std::string expert_zero_dim_;
  std::string expert_parallel_;
  std::vector<CLI::Option*> options_;
};

}  // namespace hpfreeze::cli
