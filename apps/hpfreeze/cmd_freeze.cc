// `hpfreeze freeze --plan PLAN --model MODEL [--base META] [-o OUT] ...`
#include <memory>

#include "cli.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/freeze_command.h"

namespace hpfreeze::cli {

namespace {

// The stage lines of -v, and per input with -vv (docs/cli.md, "Verbose output"); only
// the stages that ran.
void log_stages(const FreezeStages& st, const std::string& output_path) {
  double read_ms = 0;
  double parse_ms = 0;
  double decode_ms = 0;
  std::size_t bytes = 0;
  std::size_t read = 0;
  bool all_parsed = true;
  for (const FreezeStages::Input& input : st.inputs) {
    if (input.read) {
      ++read;
      bytes += input.bytes;
    }
    all_parsed = all_parsed && input.parsed;
    read_ms += input.read_ms;
    parse_ms += input.parse_ms;
    decode_ms += input.decode_ms;
    log_trace("{}: read {:.2f} ms, {} bytes; parse {:.2f} ms; decode {:.2f} ms", input.name,
              input.read_ms, input.bytes, input.parse_ms, input.decode_ms);
  }
  if (read == 0) return;
  log_debug("read: {:.2f} ms, {} bytes in {} files", read_ms, bytes, read);
  if (!all_parsed) return;
  log_debug("parse: {:.2f} ms", parse_ms);
  if (!st.decoded) return;
  log_debug(
      "decode: {:.2f} ms, {} modules, {} planned params; model: {} modules, {} "
      "parameters",
      decode_ms, st.modules, st.planned_params, st.model_modules, st.model_parameters);
  if (!st.frozen) return;
  log_debug("freeze: {:.2f} ms, {} sharded params", st.freeze_ms, st.sharded_params);
  if (!st.encoded) return;
  log_debug("encode: {:.2f} ms, {} bytes", st.encode_ms, st.output_bytes);
  if (st.checked) {
    log_debug("check: {:.2f} ms, {} {}", st.check_ms, output_path,
              st.check_matched ? "holds these bytes" : "differs or is missing");
    return;
  }
  if (!st.written) return;
  const std::string target = output_path == "-" ? "stdout" : output_path;
  if (st.output_unchanged) {
    log_debug("write: {:.2f} ms, {} unchanged (--if-changed left it alone)", st.write_ms, target);
  } else {
    log_debug("write: {:.2f} ms, {} bytes to {}", st.write_ms, st.output_bytes, target);
  }
}

}  // namespace

Runner declare_freeze(CLI::App& app) {
  auto request = std::make_shared<FreezeRequest>();
  auto base = std::make_shared<std::string>();
  auto no_verify = std::make_shared<bool>(false);
  app.add_option("--plan", request->plan_path, "Plan dump (hpfreeze.plan/v1); '-' for stdin")
      ->type_name(kFile)
      ->required();
  app.add_option("--model", request->model_path,
                 "Model tree dump (hpfreeze.model/v1); '-' for stdin")
      ->type_name(kFile)
      ->required();
  app.add_option("--base", *base,
                 "Base meta whose identity fields are kept (default: the plan's 'meta'); '-' for "
                 "stdin")
      ->type_name(kFile);
  app.add_option("-o,--output", request->output_path,
                 "Output file, written atomically; '-' for stdout (default)")
      ->type_name(kFile);
  app.add_flag("--if-changed", request->if_changed,
               "Leave OUT (and its mtime) untouched when it already holds the same bytes");
  app.add_flag("--check", request->check,
               "Write nothing: exit 0 when OUT (-o FILE) already holds these bytes, 1 when it "
               "differs (the differences on stderr) or is missing");
  auto depfile = std::make_shared<std::string>();
  app.add_option("--depfile", *depfile,
                 "Also write a Make-syntax depfile 'OUT: PLAN MODEL [BASE]' for make and ninja "
                 "(needs -o FILE and no '-' input)")
      ->type_name(kFile);
  app.add_flag("--no-verify", *no_verify,
               "Skip the checks against the model's parameters (their coverage included)");
  app.add_flag("--strict", request->options.strict,
               "Treat warnings as errors (a negative dim, uncovered trainable parameters)");
  app.add_flag("--allow-empty", request->options.allow_empty, "Accept a plan with no modules");
  app.footer(
      help_footer("the meta was written (warnings, if any, on stderr); with --check, OUT "
                  "already holds it",
                  "an input was read and rejected: invalid content, a check against the "
                  "model failed, a warning under --strict; with --check, OUT differs or is "
                  "missing",
                  "hpfreeze freeze --plan plan.json --model model.json -o codegen_meta.json"));
  return [request, base, depfile, no_verify, &app]() -> Outcome {
    if (app.count("--base") > 0) request->base_path = *base;
    if (app.count("--depfile") > 0) request->depfile_path = *depfile;
    request->options.verify = !*no_verify;
    request->concurrency = Concurrency::of_this_process();
    FreezeStages stages;
    const CommandResult result = run_freeze(*request, &stages);
    log_stages(stages, request->output_path);
    return finish(result);
  };
}

}  // namespace hpfreeze::cli
