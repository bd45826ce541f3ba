// The text side of capacity planning: the one-line-per-mesh table of a result and the
// texts it shares (its --json: capacity_json.cc; the settings in the header:
// settings_render.cc; the option values: capacity_args.cc).
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "base/text_table.h"
#include "capacity/capacity.h"
#include "capacity/settings_render.h"
#include "json/output_name.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kBarWidth = 32;

// "the dense region dp x cp x tp (8 ranks) by ep=3": the folded layout's ep does not divide it.
std::string dense_region_text(const Indivisible& x) {
  std::string axes;
  for (const std::string& a : x.dense_axes) axes += (axes.empty() ? "" : " x ") + output_name(a);
  return "the dense region " + axes + " (" + plural(x.size, "rank") + ") by " +
         output_name(x.axis) + "=" + std::to_string(x.axis_size);
}

// "the 61 layers of model.layers by pp=64", "no layer stack to split by pp=2 ...": pp
// cannot split the stack.
std::string stack_text(const Indivisible& x) {
  const std::string pp = output_name(x.axis) + "=" + std::to_string(x.axis_size);
  if (x.stack->empty()) {
    return "no layer stack to split by " + pp +
           " (the model has no modules PREFIX.0 .. PREFIX.N; --pp-stack names one)";
  }
  return "the " + plural(x.size, "layer") + " of " + output_name(*x.stack) + " by " + pp;
}

std::string verdict(const MeshCapacity& m) {
  if (m.refused) return "not counted: " + refused_text(m);
  if (m.indivisible) return "does not divide: " + indivisible_text(*m.indivisible);
  if (!m.fits) return "divides";
  return *m.fits ? "fits" : "over by " + format_byte_size(m.over_by);
}

// The bar of a worst rank on a log scale between the least and the largest value drawn
// (worst ranks and the budget): the least gets one cell, the largest all kBarWidth, so a
// table stays the same width whatever the budget. Over a range of up to 1.09^31 (about
// 14x) each cell stands for at most a factor 1.09, less than 1.1, so two values 10 % or
// more apart differ by more than one cell; a wider range shares the same cells.
struct BarScale {
  std::uint64_t least = 0;
  std::uint64_t largest = 0;
  std::size_t width = kBarWidth;

  void add(std::uint64_t v) {
    if (v == 0) return;  // an empty bar needs no scale
    least = least == 0 ? v : std::min(least, v);
    largest = std::max(largest, v);
  }
  [[nodiscard]] std::size_t cells(std::uint64_t v) const {
    if (v == 0 || least == 0) return 0;
    if (largest == least) return width;
    const double at = std::log(static_cast<double>(v) / static_cast<double>(least)) /
                      std::log(static_cast<double>(largest) / static_cast<double>(least));
    return 1 + static_cast<std::size_t>(std::lround(static_cast<double>(width - 1) * at));
  }
};

std::string bar(std::uint64_t bytes, const BarScale& scale, std::optional<std::uint64_t> budget) {
  std::string out(scale.width, '.');
  std::fill_n(out.begin(), scale.cells(bytes), '#');
  if (budget) out.insert(scale.cells(*budget), 1, '|');
  return out;
}

// What `fits` leaves out, with a budget.
std::string fits_line(const CapacityResult& result) {
  if (!result.filter.budget) return "";
  const bool weights = result.accounting.optimizer == Optimizer::kNone;
  std::string out =
      weights ? "fits counts the weights" : "fits counts weights, gradients and optimizer state";
  if (const std::uint64_t module = gathered_module_bytes(result.accounting)) {
    // The recipe counts what ZeRO-3 gathers its own way.
    return out + ", and what ZeRO-3 gathers for compute as DeepSpeed's estimator does (" +
           std::to_string(module) + " B an element of the module owning the most): no " +
           (weights ? "gradients or optimizer state (--optimizer), " : "") +
           "activations, all-gather and bucket buffers or allocator slack\n";
  }
  out += " only: no ";
  out += weights ? "gradients or optimizer state (--optimizer), " : "";
  out += "activations, all-gather and bucket buffers or allocator slack";
  // The largest parameter ZeRO-3 gathers, on the mesh the answer line names.
  const MeshCapacity* named = capacity_answer(result);
  if (named == nullptr) named = closest_mesh(result);
  if (result.accounting.zero.stage == kMaxZeroStage && named != nullptr &&
      named->largest_gathered != 0) {
    out += ", nor the parameter ZeRO-3 gathers whole for compute (on " + format_mesh(named->mesh) +
           " the largest, " + named->largest_gathered_fqn + ", is " +
           format_byte_size(named->largest_gathered) + ")";
  }
  return out + "\n";
}

std::string bytes_cell(const MeshCapacity& m, std::uint64_t bytes) {
  return m.laid_out() ? format_byte_size(bytes) : "-";
}

// ", on stage 3 of 16": where the worst rank of a mesh of several stages is.
std::string stage_words(const MeshCapacity& m) {
  if (m.stages.size() < 2) return "";
  return ", on stage " + std::to_string(m.worst_stage()) + " of " + std::to_string(m.stages.size());
}

// "0-3", "5", "-": the layers of a stage.
std::string layers_cell(const StageCapacity& stage) {
  if (!stage.layers) return "-";
  const auto [first, last] = *stage.layers;
  return first == last ? std::to_string(first) : std::to_string(first) + "-" + std::to_string(last);
}

// Why no mesh divides, from the first mesh: it does not divide, cannot be laid out, or
// was not counted.
std::string first_failure_text(const CapacityResult& result) {
  const MeshCapacity& first = result.meshes.front();
  const bool one = result.meshes.size() == 1;
  if (first.refused) {
    return std::string(one ? "the mesh was not counted: " : "no mesh is usable; the first: ") +
           refused_text(first);
  }
  const Indivisible& x = *first.indivisible;
  std::string out = one ? "the mesh does not divide: "
                        : "no mesh divides; the first, " + format_mesh(first.mesh) + ", fails on ";
  if (x.dense_region()) return out + dense_region_text(x);
  if (x.stack_split()) return out + stack_text(x);
  return out + output_name(x.fqn) + " dim " + std::to_string(x.dim) + " (size " +
         std::to_string(x.size) + ") by " + output_name(x.axis) + "=" +
         std::to_string(x.axis_size) +
         (x.split_factor != 1 ? " x split factor " + std::to_string(x.split_factor)
                              : std::string());
}

// "; ZeRO-1 keeps weights and gradients whole: at least 2.5 TiB a rank at any dp; ...":
// why more data-parallel ranks cannot help, when that is so.
std::string unsplit_words(const CapacityResult& result) {
  static constexpr std::string_view kKept[] = {"", "weights and gradients", "weights"};
  const std::optional<std::uint64_t> budget = result.filter.states_budget();
  const int stage = result.accounting.zero.stage;
  if (!budget || !result.unsplit_floor || *result.unsplit_floor <= *budget) return "";
  std::string axes;
  for (const std::string& a : result.accounting.zero.axes) {
    const bool present =
        std::any_of(result.meshes.begin(), result.meshes.end(), [&](const MeshCapacity& m) {
          return std::any_of(m.mesh.axes.begin(), m.mesh.axes.end(),
                             [&](const AxisSize& x) { return x.axis == a; });
        });
    if (present && axes.find(a) == std::string::npos) axes += (axes.empty() ? "" : " x ") + a;
  }
  return "; ZeRO-" + std::to_string(stage) + " keeps " +
         std::string(kKept[static_cast<std::size_t>(stage)]) + " whole: at least " +
         format_byte_size(*result.unsplit_floor) + " a rank at any " +
         (axes.empty() ? std::string("data-parallel size") : axes) +
         "; shard the model (tp, ep, pp) or use --zero 3";
}

}  // namespace

std::string format_mesh(const Mesh& mesh) {
  if (mesh.axes.empty()) return "(no axes)";
  std::string out;
  for (const AxisSize& a : mesh.axes) {
    if (!out.empty()) out += ' ';
    out += output_name(a.axis) + "=" + std::to_string(a.size);
  }
  return out;
}

std::string refused_text(const MeshCapacity& m) {
  return "the ranks of mesh " + format_mesh(m.mesh) + " " + m.refused.value_or("") +
         "; too many to compare exactly";
}

std::string indivisible_text(const Indivisible& x) {
  if (x.dense_region()) return dense_region_text(x);
  if (x.stack_split()) return stack_text(x);
  std::string out = output_name(x.fqn) + " dim " + std::to_string(x.dim) + " by " +
                    output_name(x.axis) + "=" + std::to_string(x.axis_size);
  if (x.split_factor != 1) out += " x split factor " + std::to_string(x.split_factor);
  return out;
}

std::string capacity_answer_text(const CapacityResult& result) {
  auto devices = [](const MeshCapacity& m) { return plural(m.mesh.devices, "device"); };
  if (result.no_answer) return "no answer: " + *result.no_answer;
  const std::optional<std::uint64_t> budget = result.filter.states_budget();
  if (const MeshCapacity* m = capacity_answer(result)) {
    const std::size_t ties = capacity_ties(result);
    return std::string(budget ? "smallest mesh that fits: " : "smallest mesh that divides: ") +
           format_mesh(m->mesh) + " (" + devices(*m) + ", worst rank " +
           format_byte_size(m->max_rank_bytes) +
           (budget ? " of " + format_byte_size(*budget) : std::string()) + stage_words(*m) + ")" +
           (ties == 0 ? std::string()
                      : ", and " + std::to_string(ties) + " more with " + devices(*m));
  }
  if (result.meshes.empty()) return "no mesh";
  if (const MeshCapacity* m = closest_mesh(result)) {
    return "no mesh fits the " + format_byte_size(budget.value_or(0)) + " budget" +
           (result.filter.reserve > 0 ? " for model states" : "") +
           "; closest: " + format_mesh(m->mesh) + " (" + devices(*m) + ", worst rank " +
           format_byte_size(m->max_rank_bytes) + ", over by " + format_byte_size(m->over_by) +
           stage_words(*m) + ")" + unsplit_words(result);
  }
  return first_failure_text(result);
}

std::string render_capacity_answer(const CapacityResult& result) {
  std::string out = capacity_answer_text(result) + "\n";
  const MeshCapacity* named = capacity_answer(result);
  if (named == nullptr) named = closest_mesh(result);
  if (named == nullptr || named->stages.size() < 2) return out;
  std::vector<std::vector<std::string>> rows{{"STAGE", "LAYERS", "WORST RANK", "BEST RANK"}};
  for (std::size_t s = 0; s < named->stages.size(); ++s) {
    const StageCapacity& stage = named->stages[s];
    rows.push_back({std::to_string(s), layers_cell(stage), format_byte_size(stage.max_rank_bytes),
                    format_byte_size(stage.min_rank_bytes)});
  }
  return out +
         render_table({Align::kRight, Align::kLeft, Align::kRight, Align::kRight}, rows, "  ");
}

std::string format_byte_size(std::uint64_t bytes) {
  if (bytes < 1024) return std::to_string(bytes) + " B";
  static constexpr std::string_view kUnits[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  std::uint64_t tenths = 0;
  std::size_t k = 0;
  for (; k < std::size(kUnits); ++k) {
    const std::uint64_t unit = std::uint64_t{1} << (10 * (k + 1));
    const std::uint64_t r10 = (bytes % unit) * 10;  // < 10 x 2^60: fits
    tenths = bytes / unit * 10 + r10 / unit + (r10 % unit >= unit - r10 % unit ? 1 : 0);
    if (tenths < 10240) break;
  }
  k = std::min(k, std::size(kUnits) - 1);
  return std::to_string(tenths / 10) + "." + std::to_string(tenths % 10) + " " +
         std::string(kUnits[k]);
}

std::string render_capacity_text(const CapacityResult& result) {
  const std::optional<std::uint64_t> budget = result.filter.states_budget();
  std::string out = std::to_string(result.params) + " param" + (result.params == 1 ? "" : "s") +
                    ", " + format_byte_size(result.full_bytes) + " whole on one device" +
                    settings_text(result);
  out += fits_line(result);
  BarScale scale;
  if (budget) scale.add(*budget);
  bool staged = false;  // some mesh shown has several stages: a column says the worst's
  for (const MeshCapacity& m : result.meshes) {
    if (!capacity_shown(result, m)) continue;
    scale.add(m.max_rank_bytes);
    staged = staged || m.stages.size() > 1;
  }

  std::vector<std::vector<std::string>> rows;
  rows.push_back({"MESH", "DEVICES", "WORST RANK", "BEST RANK", "BAR", "VERDICT"});
  if (staged) rows.back().insert(rows.back().begin() + 3, "STAGE");
  for (const MeshCapacity& m : result.meshes) {
    if (!capacity_shown(result, m)) continue;
    rows.push_back({format_mesh(m.mesh), std::to_string(m.mesh.devices),
                    bytes_cell(m, m.max_rank_bytes), bytes_cell(m, m.min_rank_bytes),
                    bar(m.max_rank_bytes, scale, budget), verdict(m)});
    if (staged) {
      rows.back().insert(rows.back().begin() + 3,
                         m.laid_out() ? std::to_string(m.worst_stage()) : std::string("-"));
    }
  }
  std::vector<Align> align{Align::kLeft,  Align::kRight, Align::kRight,
                           Align::kRight, Align::kLeft,  Align::kLeft};
  if (staged) align.insert(align.begin() + 3, Align::kRight);
  // No cell ends in a blank (a verdict ends in a number or a unit): the table's trimming of
  // line ends changes nothing here.
  out += render_table(align, rows, "");
  if (scale.least != 0) {
    out += "BAR: the worst rank, ";
    out += scale.largest == scale.least
               ? "full at " + format_byte_size(scale.largest)
               : "log scale from 1 '#' at " + format_byte_size(scale.least) + " to " +
                     std::to_string(scale.width) + " at " + format_byte_size(scale.largest);
    out += budget ? (result.filter.reserve > 0 ? "; '|' marks the budget less the reserve\n"
                                               : "; '|' marks the budget\n")
                  : "\n";
  }
  return out;
}

}  // namespace hpfreeze
