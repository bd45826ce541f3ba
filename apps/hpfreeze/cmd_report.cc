// `hpfreeze report [META] --model MODEL [--mesh AXIS=N,...] [--sweep AXIS=N,...]...
//  [--replica-axis NAME]... [--expert-parallel folded|axis] [--pp-stack PREFIX]
//  [--pp-layers N,N,...] [--optimizer NAME] [--recipe NAME] [--zero 0|1|2|3]
//  [--zero-axis AXIS[,AXIS...]] [--expert-zero-dim D] [--budget SIZE] [--reserve SIZE]
//  [--fits-only] [--allow-uncovered] [--json] [--top K]`
#include <limits>
#include <memory>
#include <string>

#include "cli.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/commands/report_command.h"

namespace hpfreeze::cli {
namespace {

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

}  // namespace

Runner declare_report(CLI::App& app) {
  struct Flags {
    ReportRequest request;
    std::string mesh;
    std::string top;
    std::vector<std::string> sweeps;
    std::string optimizer;
    std::string budget;
    std::string reserve;
    std::string pp_layers;
    std::string zero;
    std::string zero_axes;
    std::string expert_parallel;
    std::string recipe;
    std::string expert_zero_dim;
  };
  auto flags = std::make_shared<Flags>();
  app.add_option("META", flags->request.meta_path,
                 "codegen_meta.json; '-' for stdin. Without it every parameter is replicated "
                 "(then --mesh or --sweep is required)")
      ->type_name("");
  app.add_option("--model", flags->request.model_path,
                 "Parameter shapes: " + std::string(kModelFormats))
      ->type_name(kFile);
  app.add_option("--mesh", flags->mesh,
                 "Mesh axis sizes, e.g. tp=2,cp=2,ep=8,pp=4 (default: the meta's "
                 "parallel_dims); pp splits the layer stack into pipeline stages")
      ->type_name("AXIS=N[,AXIS=N...]")
      ->check(parsed_by(parse_mesh_arg));
  app.add_option("--sweep", flags->sweeps,
                 "Evaluate every size of one axis, e.g. tp=1,2,4,8 (repeatable, one per axis; "
                 "every combination with the --mesh axes)")
      ->type_name("AXIS=N[,N...]")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(parsed_by(parse_sweep_arg));
  const CLI::Validator axis_name(
      [](std::string& text) -> std::string {
        return is_axis_name(text)
                   ? std::string()
                   : "'" + text + "': the axis name must match [A-Za-z_][A-Za-z0-9_]*";
      },
      "");
  app.add_option("--replica-axis", flags->request.plan.replica_axes,
                 "An axis no input names that holds replicas and only multiplies the devices, "
                 "e.g. a second data-parallel axis, so that --mesh and --sweep may use it "
                 "(repeatable; not pp, which splits the layer stack)")
      ->type_name("NAME")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(axis_name)
      ->check(CLI::Validator(
          [](std::string& text) -> std::string {
            return text == "pp" ? "pp is no replica axis: it splits the layer stack into "
                                  "pipeline stages; give pp in --mesh or --sweep as it is"
                                : std::string();
          },
          ""));
  app.add_option("--pp-stack", flags->request.plan.accounting.pipeline.stack,
                 "The layer stack pp splits, e.g. model.layers (default: the outermost run of "
                 "modules PREFIX.0, PREFIX.1, ... in the model tree; docs/capacity.md)")
      ->type_name("PREFIX")
      ->check(parsed_by(parse_pp_stack));
  app.add_option("--pp-layers", flags->pp_layers,
                 "Layers per pipeline stage, one number per stage, summing to the stack's "
                 "layers (default: as even as possible, the first stages one longer)")
      ->type_name("N,N,...")
      ->check(parsed_by(parse_pp_layers));
  app.add_option("--optimizer", flags->optimizer,
                 "Count gradients and optimizer state too (default: none; docs/capacity.md)")
      ->type_name("NAME")
      ->check(CLI::IsMember(optimizer_names()));
  app.add_option("--recipe", flags->recipe,
                 "Whose accounting: dtensor (default), fsdp2 (padded chunks), megatron "
                 "(fp32 main gradients; --zero 1 its distributed optimizer) or deepspeed "
                 "(its estimator); docs/capacity.md")
      ->type_name("NAME")
      ->check(CLI::IsMember(recipe_names()));
  app.add_option("--zero", flags->zero,
                 "ZeRO/FSDP stage over --zero-axis: 1 splits the optimizer state, 2 the "
                 "gradients too, 3 the weights too (default: 0; docs/capacity.md)")
      ->type_name("STAGE")
      ->check(CLI::IsMember({"0", "1", "2", "3"}));
  app.add_option("--zero-axis", flags->zero_axes,
                 "The data-parallel axes ZeRO splits over, their product one group "
                 "(default: dp,cp); folded experts are split over edp")
      ->type_name("AXIS[,AXIS...]")
      ->check(parsed_by(parse_zero_axes));
  app.add_option("--expert-zero-dim", flags->expert_zero_dim,
                 "The dim ZeRO chunks folded experts on (default: 0; 1 as FSDP2's "
                 "shard_placement_fn Shard(1))")
      ->type_name("D")
      ->check(parsed_by(parse_expert_zero_dim));
  app.add_option("--expert-parallel", flags->expert_parallel,
                 "How ep is laid out: folded into the dense region (default when the meta's "
                 "mesh_dim_names does not name ep) or an axis of its own (docs/capacity.md)")
      ->type_name("LAYOUT")
      ->check(CLI::IsMember({"folded", "axis"}));
  app.add_option("--budget", flags->budget,
                 "Device memory per rank, e.g. 80GiB, 75G or bytes: mark each mesh fits or not")
      ->type_name("SIZE")
      ->check(parsed_by(parse_byte_size));
  app.add_option("--reserve", flags->reserve,
                 "Memory per rank kept from --budget for what fits does not count "
                 "(activations, buffers), e.g. 16GiB: model states may use the rest")
      ->type_name("SIZE")
      ->check(parsed_by(parse_byte_size));
  app.add_flag("--fits-only", flags->request.plan.filter.fits_only,
               "List only the usable meshes: those that divide and, with --budget, fit");
  app.add_flag("--allow-uncovered", flags->request.plan.allow_uncovered,
               "A trainable model parameter no plan entry covers is a warning, not an error "
               "(as check --allow-uncovered)");
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
  app.footer(help_footer("every finding is a warning or a note, and some mesh is usable",
                         "an error finding (a sharded dim does not divide on the mesh, the "
                         "meta does not fit the model, an uncovered trainable parameter), or "
                         "no mesh divides and fits the --budget (one error line says why)",
                         "hpfreeze report codegen_meta.json --model model.json --mesh dp=8 "
                         "--sweep tp=1,2,4,8 --optimizer adam --zero 3 --budget 80GiB",
                         "usage error (an axis the inputs do not know, among others), or an "
                         "input or output could not be read or written"));
  return [flags, &app]() -> Outcome {
    ReportRequest& request = flags->request;
    Accounting& accounting = request.plan.accounting;
    MeshFilter& filter = request.plan.filter;
    if (app.count("--mesh") > 0) request.mesh = *parse_mesh_arg(flags->mesh);
    for (const std::string& text : flags->sweeps) {
      request.plan.sweeps.push_back(*parse_sweep_arg(text));
    }
    if (app.count("--optimizer") > 0) accounting.optimizer = *parse_optimizer(flags->optimizer);
    if (app.count("--budget") > 0) {
      filter.budget = *parse_byte_size(flags->budget);
      filter.budget_text = flags->budget;
    }
    if (app.count("--reserve") > 0) {
      filter.reserve = *parse_byte_size(flags->reserve);
      request.reserve_given = true;
    }
    if (app.count("--pp-layers") > 0)
      accounting.pipeline.layers = *parse_pp_layers(flags->pp_layers);
    if (app.count("--recipe") > 0) accounting.recipe = *parse_recipe(flags->recipe);
    if (app.count("--zero") > 0) accounting.zero.stage = *parse_zero_stage(flags->zero);
    if (app.count("--expert-zero-dim") > 0)
      accounting.zero.expert_dim = *parse_expert_zero_dim(flags->expert_zero_dim);
    if (app.count("--zero-axis") > 0) {
      accounting.zero.axes = *parse_zero_axes(flags->zero_axes);
      accounting.zero_axes_named = true;
    }
    if (app.count("--expert-parallel") > 0) {
      accounting.layout = *parse_expert_layout(flags->expert_parallel);
      accounting.layout_source = LayoutSource::kFlag;
    }
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
    request.quiet = quiet_count() > 0;  // -q: no findings line on stdout either
    // The rules between values (a sweep twice, an axis in --mesh and --sweep, two inputs on
    // stdin) are run_report's.
    return finish(run_report(request));
  };
}

}  // namespace hpfreeze::cli
