// The planner's flags of report and diff (planner_flags.h).
#include "planner_flags.h"

namespace hpfreeze::cli {

void PlannerFlags::declare_mesh(CLI::App& app) {
  options_.push_back(
      app.add_option("--mesh", mesh_,
                     "Mesh axis sizes, e.g. tp=2,cp=2,ep=8,pp=4 (default: the meta's "
                     "parallel_dims); pp splits the layer stack into pipeline stages")
          ->type_name("AXIS=N[,AXIS=N...]")
          ->check(parsed_by(parse_mesh_arg)));
}

void PlannerFlags::declare_accounting(CLI::App& app, ReportPlanOptions& plan) {
  const CLI::Validator axis_name(
      [](std::string& text) -> std::string {
        return is_axis_name(text)
                   ? std::string()
                   : "'" + text + "': the axis name must match [A-Za-z_][A-Za-z0-9_]*";
      },
      "");
  options_.push_back(
      app.add_option("--replica-axis", plan.replica_axes,
                     "An axis no input names that holds replicas and only multiplies the "
                     "devices, e.g. a second data-parallel axis, so that --mesh and --sweep may "
                     "use it (repeatable; not pp, which splits the layer stack)")
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
              "")));
  options_.push_back(
      app.add_option("--pp-stack", plan.accounting.pipeline.stack,
                     "The layer stack pp splits, e.g. model.layers (default: the outermost run "
                     "of modules PREFIX.0, PREFIX.1, ... in the model tree; docs/capacity.md)")
          ->type_name("PREFIX")
          ->check(parsed_by(parse_pp_stack)));
  options_.push_back(
      app.add_option("--pp-layers", pp_layers_,
                     "Layers per pipeline stage, one number per stage, summing to the stack's "
                     "layers (default: as even as possible, the first stages one longer)")
          ->type_name("N,N,...")
          ->check(parsed_by(parse_pp_layers)));
  options_.push_back(
      app.add_option("--optimizer", optimizer_,
                     "Count gradients and optimizer state too (default: none; docs/capacity.md)")
          ->type_name("NAME")
          ->check(CLI::IsMember(optimizer_names())));
  options_.push_back(
      app.add_option("--recipe", recipe_,
                     "Whose accounting: dtensor (default), fsdp2 (padded chunks), megatron "
                     "(fp32 main gradients; --zero 1 its distributed optimizer) or deepspeed "
                     "(its estimator); docs/capacity.md")
          ->type_name("NAME")
          ->check(CLI::IsMember(recipe_names())));
  options_.push_back(
      app.add_option("--zero", zero_,
                     "ZeRO/FSDP stage over --zero-axis: 1 splits the optimizer state, 2 the "
                     "gradients too, 3 the weights too (default: 0; docs/capacity.md)")
          ->type_name("STAGE")
          ->check(CLI::IsMember({"0", "1", "2", "3"})));
  options_.push_back(app.add_option("--zero-axis", zero_axes_,
                                    "The data-parallel axes ZeRO splits over, their product one "
                                    "group (default: dp,cp); folded experts are split over edp")
                         ->type_name("AXIS[,AXIS...]")
                         ->check(parsed_by(parse_zero_axes)));
  options_.push_back(
      app.add_option("--expert-zero-dim", expert_zero_dim_,
                     "The dim ZeRO chunks folded experts on (default: 0; 1 as FSDP2's "
                     "shard_placement_fn Shard(1))")
          ->type_name("D")
          ->check(parsed_by(parse_expert_zero_dim)));
  options_.push_back(
      app.add_option("--expert-parallel", expert_parallel_,
                     "How ep is laid out: folded into the dense region (default when the "
                     "meta's mesh_dim_names does not name ep) or an axis of its own "
                     "(docs/capacity.md)")
          ->type_name("LAYOUT")
          ->check(CLI::IsMember({"folded", "axis"})));
}

void PlannerFlags::apply(const CLI::App& app, std::optional<std::vector<AxisSize>>& mesh,
                         ReportPlanOptions& plan) const {
  // Each value was checked while parsing (parsed_by, IsMember), so it parses.
  Accounting& accounting = plan.accounting;
  if (app.count("--mesh") > 0) mesh = *parse_mesh_arg(mesh_);
  if (app.count("--optimizer") > 0) accounting.optimizer = *parse_optimizer(optimizer_);
  if (app.count("--pp-layers") > 0) accounting.pipeline.layers = *parse_pp_layers(pp_layers_);
  if (app.count("--recipe") > 0) accounting.recipe = *parse_recipe(recipe_);
  if (app.count("--zero") > 0) accounting.zero.stage = *parse_zero_stage(zero_);
  if (app.count("--expert-zero-dim") > 0)
    accounting.zero.expert_dim = *parse_expert_zero_dim(expert_zero_dim_);
  if (app.count("--zero-axis") > 0) {
    accounting.zero.axes = *parse_zero_axes(zero_axes_);
    accounting.zero_axes_named = true;
  }
  if (app.count("--expert-parallel") > 0) {
    accounting.layout = *parse_expert_layout(expert_parallel_);
    accounting.layout_source = LayoutSource::kFlag;
  }
}

}  // namespace hpfreeze::cli
