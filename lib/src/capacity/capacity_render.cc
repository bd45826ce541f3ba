// The text side of capacity planning: the one-line-per-mesh table of a result and the
// texts it shares (its --json: capacity_json.cc; the option values: capacity_args.cc).
#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "base/text_table.h"
#include "hpfreeze/capacity.h"
#include "json/output_name.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kBarWidth = 32;


std::string verdict(const MeshCapacity& m) {
  if (m.indivisible) return "does not divide: " + indivisible_text(*m.indivisible);
  if (!m.fits) return "divides";
  return *m.fits ? "fits" : "over by " + format_byte_size(m.over_by);
}

// The bar of a worst rank on a log scale between the least and the largest value drawn
// (worst ranks and the budget): the least gets one cell, the largest `width`. Each cell
// stands for at most a factor kCellFactor, less than 1.1, so two values 10 % or more
// apart always differ by more than one cell (and so after rounding); the bar grows
// beyond kBarWidth cells when the range needs it.
constexpr double kCellFactor = 1.09;

struct BarScale {
  std::uint64_t least = 0;
  std::uint64_t largest = 0;
  std::size_t width = kBarWidth;

  void add(std::uint64_t v) {
    if (v == 0) return;  // an empty bar needs no scale
    least = least == 0 ? v : std::min(least, v);
    largest = std::max(largest, v);
  }
  void finish() {
    if (least == 0 || largest == least) return;
    const double cells = std::ceil(std::log(static_cast<double>(largest) / static_cast<double>(least)) /
                                   std::log(kCellFactor));
    width = std::max(width, 1 + static_cast<std::size_t>(cells));
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

std::string zero_words(const ZeroSharding& zero) {
  static constexpr std::string_view kSplit[] = {
      "", "the optimizer state", "the gradients and optimizer state",
      "the weights, gradients and optimizer state"};
  return "ZeRO stage " + std::to_string(zero.stage) + " (" +
         std::string(kSplit[static_cast<std::size_t>(zero.stage)]) + " split over " +
         output_name(zero.axis) + ")";
}

bool shown(const CapacityResult& result, const MeshCapacity& m) {
  return !result.fits_only || m.usable();
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

std::string indivisible_text(const Indivisible& x) {
  std::string out = output_name(x.fqn) + " dim " + std::to_string(x.dim) + " by " +
                    output_name(x.axis) + "=" + std::to_string(x.axis_size);
  if (x.split_factor != 1) out += " x split factor " + std::to_string(x.split_factor);
  return out;
}

std::string capacity_answer_text(const CapacityResult& result) {
  auto devices = [](const MeshCapacity& m) {
    return std::to_string(m.mesh.devices) + (m.mesh.devices == 1 ? " device" : " devices");
  };
  if (const MeshCapacity* m = capacity_answer(result)) {
    return std::string(result.budget ? "smallest mesh that fits: " : "smallest mesh that divides: ") +
           format_mesh(m->mesh) + " (" + devices(*m) + ", worst rank " +
           format_byte_size(m->max_rank_bytes) +
           (result.budget ? " of " + format_byte_size(*result.budget) : std::string()) + ")";
  }
  if (result.meshes.empty()) return "no mesh";
  if (const MeshCapacity* m = closest_mesh(result)) {
    return "no mesh fits the " + format_byte_size(result.budget.value_or(0)) +
           " budget; closest: " + format_mesh(m->mesh) + " (" + devices(*m) + ", worst rank " +
           format_byte_size(m->max_rank_bytes) + ", over by " + format_byte_size(m->over_by) + ")";
  }
  const MeshCapacity& first = result.meshes.front();
  const Indivisible& x = *first.indivisible;
  return std::string(result.meshes.size() == 1 ? "the mesh does not divide: "
                                               : "no mesh divides; the first, ") +
         (result.meshes.size() == 1 ? std::string() : format_mesh(first.mesh) + ", fails on ") +
         output_name(x.fqn) + " dim " + std::to_string(x.dim) + " (size " + std::to_string(x.size) +
         ") by " + output_name(x.axis) + "=" + std::to_string(x.axis_size) +
         (x.split_factor != 1 ? " x split factor " + std::to_string(x.split_factor)
                              : std::string());
}

std::string_view optimizer_name(Optimizer optimizer) {
  // In the order of the enum (capacity.h).
  static constexpr std::array<std::string_view, 5> kNames{"none", "sgd", "momentum", "adam",
                                                          "adamw"};
  return kNames[static_cast<std::size_t>(optimizer)];
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
  std::string out = std::to_string(result.params) + " param" + (result.params == 1 ? "" : "s") +
                    ", " + format_byte_size(result.full_bytes) + " whole on one device" +
                    ", optimizer " + std::string(optimizer_name(result.optimizer)) +
                    (result.zero.stage > 0 ? ", " + zero_words(result.zero) : std::string()) +
                    ", " +
                    (result.budget ? "budget " + format_byte_size(*result.budget) : "no budget") +
                    "\n";
  out += capacity_answer_text(result) + "\n";
  BarScale scale;
  if (result.budget) scale.add(*result.budget);
  for (const MeshCapacity& m : result.meshes) {
    if (shown(result, m)) scale.add(m.max_rank_bytes);
  }
  scale.finish();

  std::vector<std::vector<std::string>> rows;
  rows.push_back({"MESH", "DEVICES", "WORST RANK", "BEST RANK", "BAR", "VERDICT"});
  for (const MeshCapacity& m : result.meshes) {
    if (!shown(result, m)) continue;
    rows.push_back({format_mesh(m.mesh), std::to_string(m.mesh.devices),
                    format_byte_size(m.max_rank_bytes), format_byte_size(m.min_rank_bytes),
                    bar(m.max_rank_bytes, scale, result.budget), verdict(m)});
  }
  // No cell ends in a blank (a verdict ends in a number or a unit): the table's trimming of
  // line ends changes nothing here.
  out += render_table(
      {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kLeft, Align::kLeft}, rows,
      "");
  if (scale.least != 0) {
    out += "BAR: the worst rank, ";
    out += scale.largest == scale.least
               ? "full at " + format_byte_size(scale.largest)
               : "log scale from 1 '#' at " + format_byte_size(scale.least) + " to " +
                     std::to_string(scale.width) + " at " + format_byte_size(scale.largest);
    out += result.budget ? "; '|' marks the budget\n" : "\n";
  }
  return out;
}

}  // namespace hpfreeze
