#include <algorithm>
#include <charconv>

#include "base/text_table.h"
#include "capacity/accounting.h"
#include "capacity/capacity.h"
#include "capacity/capacity_json.h"
#include "capacity/chunk_geometry.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/diagnostic_json.h"
#include "json/encode.h"
#include "json/json_stream.h"
#include "json/output_name.h"
#include "report/report.h"
#include "report/report_pipeline.h"

// The text and JSON forms of a Report: rendering only, the arithmetic is in build_report.cc.
namespace hpfreeze {
namespace {

// ---- text rendering ----

// "dp x cp, 4 ranks; experts over edp, 2 ranks": the ZeRO groups at rank 0.
std::string zero_groups_text(const Report& r, const std::vector<std::string>& axes) {
  std::string names;
  for (const std::string& a : axes) {
    if (std::none_of(r.mesh.begin(), r.mesh.end(),
                     [&a](const AxisSize& m) { return m.axis == a; })) {
      continue;
    }
    if (names.find(a) == std::string::npos) names += (names.empty() ? "" : " x ") + a;
  }
  auto ranks = [](std::uint64_t n) { return plural(n, "rank"); };
  if (!r.capacity.dense_zero && r.expert_params > 0) {  // a plan of experts only
    return "the experts' edp, " + ranks(r.rank0_zero.expert);
  }
  std::string out =
      names.empty() ? "no axis of the mesh" : names + ", " + ranks(r.rank0_zero.dense);
  if (r.expert_params > 0) out += "; experts over edp, " + ranks(r.rank0_zero.expert);
  return out;
}

// What the byte counts of the rank-0 block and the params table include, when that is
// more than the weights.
std::string accounting_line(const Report& r) {
  const Accounting& accounting = r.capacity.accounting;
  const Optimizer optimizer = accounting.optimizer;
  const int stage = accounting.zero.stage;
  if (optimizer == Optimizer::kNone && stage == 0) return "";
  const std::string recipe = accounting.recipe == Recipe::kDtensor
                                 ? ""
                                 : "recipe " + std::string(recipe_name(accounting.recipe));
  std::string out = "rank 0 below counts ";
  if (optimizer == Optimizer::kNone) {
    out += "the weights" + (recipe.empty() ? "" : " (" + recipe + ")");
  } else {
    out += "weights, gradients and optimizer state (" + std::string(optimizer_name(optimizer)) +
           (recipe.empty() ? "" : ", " + recipe) + ")";
  }
  if (stage > 0 && r.capacity.planned()) {
    out += ", after ZeRO stage " + std::to_string(stage) + " over " +
           zero_groups_text(r, accounting.zero.axes) + "; LOCAL is the plan's piece before it";
  }
  // The meshes table adds what ZeRO-3 gathers when the recipe counts it (per rank, not per
  // parameter).
  return out + ", as the meshes table does" +
         (gathered_module_bytes(accounting) != 0 ? " but for what ZeRO-3 gathers" : "") + "\n";
}

// "model.embed_tokens.weight, lm_head.weight", at most four names, then how many more.
std::string some_names(const std::vector<std::string_view>& names) {
  constexpr std::size_t kShown = 4;
  std::string out;
  for (std::size_t i = 0; i < std::min(kShown, names.size()); ++i) {
    out += (i == 0 ? "" : ", ") + output_name(names[i]);
  }
  if (names.size() > kShown) out += ", and " + std::to_string(names.size() - kShown) + " more";
  return out;
}

// The layer stack pp splits, and the parameters outside it, when stages are in play.
std::string stack_line(const Report& r) {
  if (!report_detail::stages_in_play(r)) return "";
  const ReportStack& p = r.pipeline;
  if (!p.stack) {
    return "layer stack: none in the model (no modules PREFIX.0 .. PREFIX.N); --pp-stack "
           "names one\n";
  }
  std::string out = "layer stack: " + output_name(p.stack->prefix) + ", " +
                    plural(p.stack->layers, "layer") +
                    (p.stack->named ? " (--pp-stack)" : " (found in the model)");
  if (!p.first_stage.empty())
    out += "; before it, on the first stage: " + some_names(p.first_stage);
  if (!p.last_stage.empty()) out += "; after it, on the last: " + some_names(p.last_stage);
  return out + "\n";
}

// Which mesh the rank-0 block below is of, when it is not a mesh of the meshes table: a
// sweep counts its swept axes at size 1, and every mesh counts pp at 1 (every stage's
// parameters).
std::string rank0_mesh_line(const Report& r) {
  const CapacityResult& cap = r.capacity;
  if (!cap.planned()) return "";
  const bool pp = std::any_of(r.mesh.begin(), r.mesh.end(),
                              [](const AxisSize& a) { return a.axis == kStageAxis && a.size > 1; });
  if (!cap.swept && !pp) return "";
  Mesh shown = cap.meshes.front().mesh;
  for (AxisSize& a : shown.axes) {
    const auto fixed = std::find_if(r.mesh.begin(), r.mesh.end(),
                                    [&](const AxisSize& m) { return m.axis == a.axis; });
    a.size = fixed == r.mesh.end() || a.axis == kStageAxis ? 1 : fixed->size;
  }
  std::string why = cap.swept ? (r.mesh.empty() ? "no axis fixed, the swept axes"
                                                : "the fixed axes above, the swept axes")
                              : "the mesh above with pp";
  if (cap.swept && pp) why += " and pp";
  return "rank 0 below is of " + format_mesh(shown) + ": " + why + " at size 1" +
         (pp ? " (every stage's parameters)" : "") + "; the meshes table has " +
         (cap.swept ? "every swept mesh" : "its stages") + "\n";
}

std::string mesh_line(const Report& r) {
  std::string out = r.without_meta ? "plan: none (no META): every parameter replicated\n" : "";
  out += "mesh:";
  if (r.mesh.empty()) {
    out += r.capacity.swept ? " none fixed" : " none, every axis counts as size 1";
  } else {
    Mesh fixed;  // spelled as the meshes table spells one
    fixed.axes = r.mesh;
    out += " " + format_mesh(fixed);
    out += r.mesh_source == MeshSource::kFlag ? " (from --mesh)" : " (from parallel_dims)";
  }
  out += '\n';
  // The answer first: the mesh, its devices, its worst rank and that rank's stage.
  if (r.capacity.planned()) out += render_capacity_answer(r.capacity);
  out += stack_line(r);
  out += rank0_mesh_line(r);
  out += accounting_line(r);
  if (!r.axis_order.empty()) {
    out += "placement order:";
    for (std::size_t i = 0; i < r.axis_order.size(); ++i) {
      out += (i == 0 ? " " : ", ") + output_name(r.axis_order[i]);
    }
    out += '\n';
  }
  return out;
}

// "; BYTES: rank 0's weights, gradients and optimizer state (adam), after ZeRO stage 3":
// what the params table's bytes count.
std::string bytes_words(const Report& r) {
  const Accounting& accounting = r.capacity.accounting;
  std::string out = "; BYTES: rank 0's ";
  out += accounting.optimizer == Optimizer::kNone
             ? "weights only"
             : "weights, gradients and optimizer state (" +
                   std::string(optimizer_name(accounting.optimizer)) + ")";
  if (accounting.zero.stage > 0 && r.capacity.planned()) {
    out += ", after ZeRO stage " + std::to_string(accounting.zero.stage);
  }
  return out;
}

// "(all 5, by bytes)" or "(top 10 of 131, by bytes)", then `more` inside the brackets.
std::string count_of(std::size_t shown, std::size_t total, std::string_view order,
                     std::string_view more = {}) {
  const std::string head = shown == total
                               ? "all " + std::to_string(total)
                               : "top " + std::to_string(shown) + " of " + std::to_string(total);
  return " (" + head + ", " + std::string(order) + std::string(more) + "):\n";
}

const char* mesh_source_name(MeshSource source) {
  switch (source) {
    case MeshSource::kFlag:
      return "--mesh";
    case MeshSource::kParallelDims:
      return "parallel_dims";
    case MeshSource::kNone:
      break;
  }
  return "none";
}

// "pipeline": {"stack", "layers", "from", "first_stage", "last_stage"}.
void write_pipeline(JsonStream& w, const ReportStack& p) {
  w.key("pipeline").start_object();
  w.key("stack").optional_string(p.stack ? std::optional<std::string_view>(p.stack->prefix)
                                         : std::nullopt);
  w.key("layers").number(p.stack ? p.stack->layers : 0);
  w.key("from").optional_string(
      p.stack ? std::optional<std::string_view>(p.stack->named ? "--pp-stack" : "model")
              : std::nullopt);
  for (const auto& [key, names] :
       {std::pair{"first_stage", &p.first_stage}, std::pair{"last_stage", &p.last_stage}}) {
    w.key(key).start_array();
    for (std::string_view name : *names) w.string(name);
    w.end_array();
  }
  w.end_object();
}

}  // namespace

std::string placements_text(const ParamReport& param) {
  std::string out;
  for (const ReportAxis a : param.axes) {
    if (!out.empty()) out += ' ';
    out.append(output_name(a->axis)).append("=").append(output_name(a->text));
  }
  return out;
}

std::string render_report_text(const Report& r, std::size_t top) {
  std::string out = mesh_line(r);
  out += '\n';
  const std::size_t planned = r.params.size();
  const std::size_t uncovered = r.uncovered.size();
  std::uint64_t total = r.rank0_bytes;
  chunking::saturating_add(total, r.uncovered_bytes);
  auto row = [](std::string label, std::size_t count, std::uint64_t bytes) {
    return std::vector<std::string>{std::move(label), std::to_string(count),
                                    format_byte_size(bytes), std::to_string(bytes)};
  };
  out += render_table(
      {Align::kLeft, Align::kRight, Align::kRight, Align::kRight},
      {{"", "PARAMS", "BYTES", "EXACT"},
       row("rank 0, planned params", planned, r.rank0_bytes),
       row("  of which replicated", r.replicated_params, r.replicated_bytes),
       row("planned params at full size", planned, r.unsharded_bytes),
       row(r.without_meta                         ? "model params, all replicated (no META)"
           : r.capacity.accounting.zero.stage > 0 ? "uncovered params (whole but for ZeRO)"
                                                  : "uncovered params (whole on every rank)",
           uncovered, r.uncovered_bytes),
       row("rank 0 total", planned + uncovered, total)},
      "");

  if (r.capacity.planned()) {
    // The planner's view: every rank, optimizer accounting, budget (docs/capacity.md).
    out += "\nmeshes (worst and best rank over all ranks; uncovered params included):\n";
    out += render_capacity_text(r.capacity);
  }

  const std::size_t nb = std::min(top, r.boundaries.size());
  if (nb > 0) {
    out += "\nboundaries" + count_of(nb, r.boundaries.size(), "by rank-0 bytes");
    std::vector<std::vector<std::string>> rows{{"BYTES", "PARAMS", "BOUNDARY"}};
    for (std::size_t i = 0; i < nb; ++i) {
      const BoundaryReport& b = r.boundaries[i];
      rows.push_back({format_byte_size(b.rank0_bytes), std::to_string(b.params),
                      b.fqn.empty() ? std::string("(root)") : output_name(b.fqn)});
    }
    out += render_table({Align::kRight, Align::kRight, Align::kLeft}, rows, "  ");
    if (nb < r.boundaries.size()) {
      std::uint64_t rest = 0;
      for (std::size_t i = nb; i < r.boundaries.size(); ++i) rest += r.boundaries[i].rank0_bytes;
      out += "  ... " + std::to_string(r.boundaries.size() - nb) + " more, " +
             format_byte_size(rest) + "\n";
    }
  }

  const std::size_t np = std::min(top, r.params.size());
  if (np > 0) {
    out += "\nparams" + count_of(np, r.params.size(), "by rank-0 bytes", bytes_words(r));
    std::vector<std::vector<std::string>> rows{
        {"BYTES", "DTYPE", "SHAPE", "LOCAL", "PLACEMENTS", "PARAM"}};
    for (std::size_t i = 0; i < np; ++i) {
      const ParamReport& p = r.params[i];
      const std::string placements = placements_text(p);
      rows.push_back({format_byte_size(p.rank0_bytes), output_name(p.dtype().value_or("-")),
                      shape_text(p.shape()), shape_text(p.local_shape),
                      placements.empty() ? "-" : placements, output_name(p.fqn)});
    }
    out += render_table(
        {Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft, Align::kLeft}, rows,
        "  ");
  }

  const std::size_t nu = std::min(top, r.uncovered.size());
  if (nu > 0) {
    out += std::string(r.without_meta ? "\nmodel params" : "\nuncovered params") +
           count_of(nu, r.uncovered.size(), "by bytes");
    std::vector<std::vector<std::string>> rows{{"BYTES", "DTYPE", "SHAPE", "PARAM"}};
    for (std::size_t i = 0; i < nu; ++i) {
      const UncoveredParam& u = r.uncovered[i];
      rows.push_back({format_byte_size(u.bytes), output_name(u.dtype.value_or("-")),
                      shape_text(u.shape), output_name(u.fqn)});
    }
    out += render_table({Align::kRight, Align::kLeft, Align::kLeft, Align::kLeft}, rows, "  ");
  }

  if (!r.findings.empty()) {
    out += "\nfindings: " + count_severities(r.findings).text() + " (on stderr)\n";
  }
  return out;
}

std::string render_report_json(const Report& r, std::optional<std::size_t> top) {
  const std::size_t np = std::min(top.value_or(r.params.size()), r.params.size());
  // The report of a large model is tens of megabytes: written straight into one string
  // reserved once, no value tree in between.
  std::string out;
  out.reserve(512 + np * 420 + (r.boundaries.size() + r.uncovered.size()) * 160 +
              r.findings.size() * 256);
  JsonStream w(out, JsonLayout::kIndented);
  w.start_object();
  w.key("mesh").start_object();
  for (const AxisSize& a : r.mesh) {
    w.key(a.axis).number(a.size);
  }
  w.end_object();
  w.key("mesh_source").string(mesh_source_name(r.mesh_source));
  w.key("plan").string(r.without_meta ? "replicated" : "meta");
  w.key("placement_order").start_array();
  for (const std::string& a : r.axis_order) w.string(a);
  w.end_array();
  write_pipeline(w, r.pipeline);
  w.key("counts").start_object();
  w.key("planned_params").number(r.params.size());
  w.key("replicated_params").number(r.replicated_params);
  w.key("uncovered_params").number(r.uncovered.size());
  w.key("boundaries").number(r.boundaries.size());
  w.end_object();
  w.key("rank0_bytes").number(r.rank0_bytes);
  w.key("replicated_bytes").number(r.replicated_bytes);
  w.key("unsharded_bytes").number(r.unsharded_bytes);
  w.key("uncovered_bytes").number(r.uncovered_bytes);
  w.key("boundaries").start_array();
  for (const BoundaryReport& b : r.boundaries) {
    w.start_object().key("fqn").string(b.fqn);
    w.key("rank0_bytes").number(b.rank0_bytes);
    w.key("params").number(b.params);
    w.end_object();
  }
  w.end_array();
  w.key("params").start_array();
  for (std::size_t i = 0; i < np; ++i) {
    const ParamReport& p = r.params[i];
    w.start_object();
    w.key("fqn").string(p.fqn);
    w.key("shape").numbers(p.shape());
    w.key("dtype").optional_string(p.dtype());
    w.key("local_shape").numbers(p.local_shape);
    w.key("rank0_bytes").number(p.rank0_bytes);
    w.key("full_bytes").number(p.full_bytes);
    w.key("boundary").string(p.boundary);
    w.key("placements").start_object();
    for (const ReportAxis a : p.axes) {
      w.key(a->axis).string(a->text);
    }
    w.end_object();
    w.key("replicated").boolean(p.replicated);
    w.end_object();
  }
  w.end_array();
  w.key("uncovered").start_array();
  for (const UncoveredParam& u : r.uncovered) {
    w.start_object();
    w.key("fqn").string(u.fqn);
    w.key("shape").numbers(u.shape);
    w.key("dtype").optional_string(u.dtype);
    w.key("bytes").number(u.bytes);
    w.end_object();
  }
  w.end_array();
  write_capacity_json(w, r.capacity);
  w.key("findings").start_array();
  // As check --json writes them, without the detail lines and text positions.
  for (const Diagnostic& d : r.findings) {
    write_finding(w, d, severity_name(d.severity), FindingFields::kMessageOnly);
  }
  w.end_array();
  w.end_object();
  w.end_line();
  return out;
}

}  // namespace hpfreeze
