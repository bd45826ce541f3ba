// `hpfreeze report META --model MODEL [--mesh AXIS=N,...] [--json] [--top K]`
#include <limits>
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/io.h"
#include "hpfreeze/report_command.h"

namespace hpfreeze::cli {

Runner declare_report(CLI::App& app) {
  struct Flags {
    ReportRequest request;
    std::string mesh;
    std::string top;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("META", flags->request.meta_path, "codegen_meta.json; '-' for stdin")
      ->type_name("")
      ->required();
  app.add_option("--model", flags->request.model_path,
                 "Model tree dump (hpfreeze.model/v1) with parameter shapes; '-' for stdin")
      ->type_name(kFile)
      ->required();
  // Checked while the command line is parsed, so a bad --mesh is a usage error (exit 2).
  const CLI::Validator mesh_syntax(
      [](std::string& text) -> std::string {
        Expected<std::vector<MeshAxis>> mesh = parse_mesh_arg(text);
        return mesh ? std::string() : mesh.errors().front().message;
      },
      "");
  app.add_option("--mesh", flags->mesh,
                 "Mesh axis sizes, e.g. tp=2,cp=2,ep=8 (default: the meta's parallel_dims)")
      ->type_name("AXIS=N[,AXIS=N...]")
      ->check(mesh_syntax);
  app.add_flag("--json", flags->request.json, "Print one JSON object instead of the table");
  app.add_option("--top", flags->top,
                 "List this many params and boundaries (default: 10; with --json, all params)")
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const bool digits =
                !text.empty() && text.find_first_not_of("0123456789") == std::string::npos;
            return digits ? std::string() : "expected a non-negative integer, got '" + text + "'";
          },
          ""))
      ->type_name("N");
  app.footer(help_footer("every finding is a warning or a note",
                         "an error finding: a sharded dim does not divide on the mesh, or the "
                         "meta does not fit the model",
                         "hpfreeze report codegen_meta.json --model model.json --mesh tp=2,cp=2"));
  return [flags, &app]() -> Outcome {
    ReportRequest& request = flags->request;
    if (app.count("--mesh") > 0) request.mesh = *parse_mesh_arg(flags->mesh);
    if (app.count("--top") > 0) {
      // Digits only (checked above); a count beyond any list is as good as "all".
      std::size_t top = 0;
      for (char c : flags->top) {
        if (__builtin_mul_overflow(top, std::size_t{10}, &top) ||
            __builtin_add_overflow(top, static_cast<std::size_t>(c - '0'), &top)) {
          top = std::numeric_limits<std::size_t>::max();
          break;
        }
      }
      request.top = top;
    }
    if (request.meta_path == "-" && request.model_path == "-") {
      report(make_error({}, {}, "at most one of META and --model may be '-' (stdin)"));
      return kExitTrouble;
    }
    const ReportOutput result = run_report(request);
    if (!result.output.empty()) {
      if (Expected<WriteOutcome> written = write_stdout(result.output); !written) {
        report(result.diagnostics);
        report(written.errors());
        return kExitTrouble;
      }
    }
    report(result.diagnostics);
    if (!result.failed) return kExitOk;
    return exit_code_for(result.diagnostics);
  };
}

}  // namespace hpfreeze::cli
