// `hpfreeze check META [--model MODEL] [--json]`
#include <fmt/core.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/check_command.h"
#include "hpfreeze/io.h"

namespace hpfreeze::cli {

namespace {

// Notes are findings of this command, not chatter: they show whenever warnings do. spdlog has
// no "note" level (its info level is hidden by default), so they are written here in the
// same `hpfreeze: <level>: ...` form.
void print_finding(const Diagnostic& d) {
  if (d.severity != Severity::kNote) {
    report(d);
    return;
  }
  if (!spdlog::default_logger()->should_log(spdlog::level::warn)) return;
  fmt::print(stderr, "hpfreeze: note: {}\n", d.location_and_message());
  std::fflush(stderr);
}

Runner register_check(CLI::App& app) {
  struct Flags {
    std::string meta;
    std::string model;
    bool json = false;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("meta", flags->meta, "codegen_meta.json to check; '-' for stdin")->required();
  app.add_option("--model", flags->model,
                 "Model tree dump (hpfreeze.model/v1) to check the meta against; '-' for stdin");
  app.add_flag("--json", flags->json,
               "Print findings as JSON Lines on stdout instead of diagnostics on stderr");
  return [flags, &app]() -> int {
    CheckRequest request;
    request.meta_path = flags->meta;
    if (app.count("--model") > 0) request.model_path = flags->model;
    if (request.meta_path == "-" && request.model_path && *request.model_path == "-") {
      report(make_error({}, {}, "at most one of META and --model may be '-' (stdin)"));
      return kExitTrouble;
    }
    const CheckResult result = run_check(request);
    if (!result.io_errors.empty()) {
      report(result.io_errors);
      return kExitTrouble;
    }
    if (flags->json) {
      if (Expected<WriteOutcome> written =
              write_stdout(render_findings_json_lines(result.findings));
          !written) {
        report(written.errors());
        return kExitTrouble;
      }
    } else {
      for (const Diagnostic& d : result.findings) print_finding(d);
    }
    return result.has_errors() ? kExitRejected : kExitOk;
  };
}

const bool registered [[maybe_unused]] =
    add_command({"check", "Check a codegen_meta.json offline, optionally against a model tree", 40,
                 &register_check});

}  // namespace
}  // namespace hpfreeze::cli
