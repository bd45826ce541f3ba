// `hpfreeze diff A B [--json] [--ignore FIELD]...`
#include <memory>

#include "cli.h"
#include "hpfreeze/diff_command.h"
#include "hpfreeze/io.h"

namespace hpfreeze::cli {

namespace {

Runner register_diff(CLI::App& app) {
  auto request = std::make_shared<DiffRequest>();
  app.add_option("old", request->old_path, "The old codegen_meta.json; '-' for stdin")->required();
  app.add_option("new", request->new_path, "The new codegen_meta.json; '-' for stdin")->required();
  app.add_flag("--json", request->json,
               "Print one JSON object per difference: {\"op\", \"pointer\", \"old\", \"new\"}");
  app.add_option("--ignore", request->options.ignored_fields,
                 "Leave this top-level field out of the comparison (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  return [request]() -> int {
    if (request->old_path == "-" && request->new_path == "-") {
      report(make_error({}, {}, "at most one of the two metas may be '-' (stdin)"));
      return kExitTrouble;
    }
    Expected<DiffReport> result = run_diff(*request);
    if (!result) {
      // Exit 1 means "different", so every failure to compare is trouble (2).
      report(result.errors());
      return kExitTrouble;
    }
    if (Expected<WriteOutcome> written = write_stdout(result->output); !written) {
      report(written.errors());
      return kExitTrouble;
    }
    return result->different ? kExitRejected : kExitOk;
  };
}

const bool registered [[maybe_unused]] = add_command(
    {"diff", "Show the semantic difference of two codegen_meta.json files", 50, &register_diff});

}  // namespace
}  // namespace hpfreeze::cli
