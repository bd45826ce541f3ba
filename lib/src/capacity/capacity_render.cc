// The text side of capacity planning: the two renderings of a result (the one-line-per-mesh
// table and --json) and the texts they share. The option values are capacity_args.cc's.
#include <rapidjson/stringbuffer.h>
#include <rapidjson/writer.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <utility>

#include "base/text_table.h"
#include "hpfreeze/capacity.h"
#include "hpfreeze/encode.h"

namespace hpfreeze {
namespace {

constexpr std::size_t kBarWidth = 32;

using JsonWriter = rapidjson::Writer<rapidjson::StringBuffer>;

// `write(*value)` when the optional holds a value, else JSON null.
template <typename T, typename Write>
void write_or_null(JsonWriter& w, const std::optional<T>& value, Write write) {
  if (value) {
    write(*value);
  } else {
    w.Null();
  }
}

// Keys and strings spelled as every other hpfreeze JSON output (Python's ensure_ascii).
void write_string(JsonWriter& w, std::string_view s) {
  std::string quoted;
  append_python_string(quoted, s);
  w.RawValue(quoted.data(), quoted.size(), rapidjson::kStringType);
}

void write_coordinates(JsonWriter& w, const Mesh& mesh, const std::vector<std::uint64_t>* at) {
  w.StartObject();
  for (std::size_t i = 0; i < mesh.axes.size(); ++i) {
    write_string(w, mesh.axes[i].axis);
    w.Uint64(at == nullptr ? mesh.axes[i].size : (*at)[i]);
  }
  w.EndObject();
}

void write_mesh(JsonWriter& w, const MeshCapacity& m) {
  w.StartObject();
  write_string(w, "mesh");
  write_coordinates(w, m.mesh, nullptr);
  write_string(w, "devices");
  w.Uint64(m.mesh.devices);
  write_string(w, "max_rank_bytes");
  w.Uint64(m.max_rank_bytes);
  write_string(w, "min_rank_bytes");
  w.Uint64(m.min_rank_bytes);
  write_string(w, "max_rank");
  write_coordinates(w, m.mesh, &m.max_rank);
  write_string(w, "min_rank");
  write_coordinates(w, m.mesh, &m.min_rank);
  write_string(w, "divisible");
  w.Bool(m.divisible());
  write_string(w, "indivisible");
  if (m.indivisible) {
    const Indivisible& x = *m.indivisible;
    w.StartObject();
    write_string(w, "param");
    write_string(w, x.fqn);
    write_string(w, "dim");
    w.Uint64(x.dim);
    write_string(w, "size");
    w.Uint64(x.size);
    write_string(w, "axis");
    write_string(w, x.axis);
    write_string(w, "axis_size");
    w.Uint64(x.axis_size);
    write_string(w, "split_factor");
    w.Uint64(x.split_factor);
    w.EndObject();
  } else {
    w.Null();
  }
  write_string(w, "fits");
  write_or_null(w, m.fits, [&](bool fits) { w.Bool(fits); });
  write_string(w, "over_by_bytes");
  write_or_null(w, m.fits, [&](bool) { w.Uint64(m.over_by); });
  w.EndObject();
}

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
         zero.axis + ")";
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
    out += a.axis + "=" + std::to_string(a.size);
  }
  return out;
}

std::string indivisible_text(const Indivisible& x) {
  std::string out = x.fqn + " dim " + std::to_string(x.dim) + " by " + x.axis + "=" +
                    std::to_string(x.axis_size);
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
         x.fqn + " dim " + std::to_string(x.dim) + " (size " + std::to_string(x.size) +
         ") by " + x.axis + "=" + std::to_string(x.axis_size) +
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

std::string render_capacity_json(const CapacityResult& result) {
  rapidjson::StringBuffer buffer;
  JsonWriter w(buffer);
  w.StartObject();
  write_string(w, "optimizer");
  write_string(w, optimizer_name(result.optimizer));
  write_string(w, "zero");
  w.StartObject();
  write_string(w, "stage");
  w.Int(result.zero.stage);
  write_string(w, "axis");
  write_string(w, result.zero.axis);
  w.EndObject();
  write_string(w, "budget_bytes");
  write_or_null(w, result.budget, [&](std::uint64_t budget) { w.Uint64(budget); });
  write_string(w, "axis_order");
  w.StartArray();
  for (const std::string& a : result.axis_order) write_string(w, a);
  w.EndArray();
  write_string(w, "params");
  w.Uint64(result.params);
  write_string(w, "full_bytes");
  w.Uint64(result.full_bytes);
  write_string(w, "answer");
  if (const MeshCapacity* m = capacity_answer(result)) {
    w.StartObject();
    write_string(w, "mesh");
    write_coordinates(w, m->mesh, nullptr);
    write_string(w, "devices");
    w.Uint64(m->mesh.devices);
    write_string(w, "max_rank_bytes");
    w.Uint64(m->max_rank_bytes);
    w.EndObject();
  } else {
    w.Null();
  }
  write_string(w, "meshes");
  w.StartArray();
  for (const MeshCapacity& m : result.meshes) {
    if (shown(result, m)) write_mesh(w, m);
  }
  w.EndArray();
  w.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize()) + "\n";
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
