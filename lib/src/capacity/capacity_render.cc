// The text side of capacity planning: the option values it reads (--optimizer, --budget,
// --sweep) and the one-line-per-mesh table of a result (its --json: capacity_json.cc).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <utility>

#include "hpfreeze/capacity.h"

namespace hpfreeze {
namespace {

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();
constexpr std::size_t kBarWidth = 32;

__extension__ using U128 = unsigned __int128;

bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  return !__builtin_mul_overflow(a, b, &out);
}

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

Diagnostic usage_error(std::string message) { return make_error({}, {}, std::move(message)); }

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

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  static constexpr std::pair<std::string_view, Optimizer> kNames[] = {
      {"none", Optimizer::kNone},
      {"sgd", Optimizer::kSgd},
      {"momentum", Optimizer::kMomentum},
      {"adam", Optimizer::kAdam},
      {"adamw", Optimizer::kAdamW}};
  for (const auto& [n, o] : kNames) {
    if (n == name) return o;
  }
  return std::nullopt;
}

std::string_view optimizer_name(Optimizer optimizer) {
  // In the order of the enum (capacity.h).
  static constexpr std::array<std::string_view, 5> kNames{"none", "sgd", "momentum", "adam",
                                                          "adamw"};
  return kNames[static_cast<std::size_t>(optimizer)];
}

Expected<std::uint64_t> parse_byte_size(std::string_view text) {
  const std::string quoted = quote_for_diagnostic(text);
  auto fail = [&quoted](std::string_view why) -> Expected<std::uint64_t> {
    return usage_error(quoted + ": " + std::string(why));
  };
  auto is_digit = [](char c) { return c >= '0' && c <= '9'; };
  std::size_t i = 0;
  while (i < text.size() && is_digit(text[i])) ++i;
  const std::string_view whole = text.substr(0, i);
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && is_digit(text[i])) ++i;
    fraction = text.substr(start, i - start);
  }
  if (whole.empty() && fraction.empty()) {
    return fail("expected a number of bytes with an optional unit, as 80GiB");
  }
  const std::string_view unit = text.substr(i);
  // A second point, a digit group, a sign or an exponent: a number, but not a decimal one.
  const bool exponent = !unit.empty() && (unit[0] == 'e' || unit[0] == 'E') && unit.size() > 1 &&
                        (is_digit(unit[1]) || unit[1] == '+' || unit[1] == '-');
  if (exponent || (!unit.empty() &&
                   std::string_view(".,+-0123456789").find(unit[0]) != std::string_view::npos)) {
    return fail(
        "not a decimal number; expected digits with at most one '.' and no exponent, then an "
        "optional unit, as 80GiB or 1.5TiB");
  }
  static constexpr std::string_view kPrefixes = "KMGTPE";
  std::uint64_t multiplier = 1;
  if (!unit.empty() && unit != "B") {
    std::size_t k = kPrefixes.find(unit.front() == 'k' ? 'K' : unit.front());
    const std::string_view rest = unit.substr(1);
    const bool binary = rest == "i" || rest == "iB";
    if (k == std::string_view::npos || (!binary && !rest.empty() && rest != "B") ||
        (binary && unit.front() == 'k')) {
      return fail(
          "unknown unit; expected B, K, M, G, T, P, E (x1000) or Ki, Mi, Gi, Ti, Pi, Ei "
          "(x1024), optionally followed by B");
    }
    for (std::size_t p = 0; p <= k; ++p) multiplier *= binary ? 1024 : 1000;
  }
  // Exactly floor((whole + 0.fraction) x multiplier), for any number of digits: leading
  // zeros of the whole part count for nothing, and the fraction's part is found digit by
  // digit from the last, floor((d x m + floor(r)) / 10) being floor((d x m + r) / 10).
  const std::string_view significant =
      whole.substr(std::min(whole.find_first_not_of('0'), whole.size()));
  if (significant.size() > 20) return fail("more than 2^64-1 bytes");  // >= 10^20
  U128 bytes = 0;
  for (char c : significant) bytes = bytes * 10 + static_cast<unsigned>(c - '0');
  bytes *= multiplier;  // < 10^20 x 2^60 < 2^127
  U128 part = 0;        // < multiplier
  for (std::size_t d = fraction.size(); d-- > 0;) {
    part = (U128{static_cast<unsigned>(fraction[d] - '0')} * multiplier + part) / 10;
  }
  bytes += part;
  if (bytes > kMaxBytes) return fail("more than 2^64-1 bytes");
  return static_cast<std::uint64_t>(bytes);
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

Expected<AxisSweep> parse_sweep_arg(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return usage_error(quote_for_diagnostic(text) + " is not AXIS=N1,N2,...");
  }
  AxisSweep sweep{std::string(text.substr(0, eq)), {}};
  if (sweep.axis.empty() || !is_name_start(sweep.axis.front()) ||
      !std::all_of(sweep.axis.begin(), sweep.axis.end(), is_name_char)) {
    return usage_error(quote_for_diagnostic(text) +
                       ": the axis name must match [A-Za-z_][A-Za-z0-9_]*");
  }
  std::string_view list = text.substr(eq + 1);
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    std::uint64_t value = 0;
    bool ok = !item.empty();
    for (char c : item) {
      ok = ok && c >= '0' && c <= '9' && checked_mul(value, 10, value) &&
           !__builtin_add_overflow(value, static_cast<std::uint64_t>(c - '0'), &value) &&
           value <= kMaxAxisSize;
    }
    if (!ok || value == 0) {
      return usage_error(quote_for_diagnostic(text) + ": " + quote_for_diagnostic(item) +
                         " is not a size; sizes are decimal integers from 1 to 2^63-1");
    }
    if (std::find(sweep.sizes.begin(), sweep.sizes.end(), value) != sweep.sizes.end()) {
      return usage_error(quote_for_diagnostic(text) + ": size " + std::to_string(value) +
                         " is listed twice");
    }
    sweep.sizes.push_back(value);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 1);
  }
  return sweep;
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

  std::vector<std::array<std::string, 6>> rows;
  rows.push_back({"MESH", "DEVICES", "WORST RANK", "BEST RANK", "BAR", "VERDICT"});
  for (const MeshCapacity& m : result.meshes) {
    if (!shown(result, m)) continue;
    rows.push_back({format_mesh(m.mesh), std::to_string(m.mesh.devices),
                    format_byte_size(m.max_rank_bytes), format_byte_size(m.min_rank_bytes),
                    bar(m.max_rank_bytes, scale, result.budget), verdict(m)});
  }
  std::array<std::size_t, 6> width{};
  for (const auto& row : rows) {
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  static constexpr bool kRight[] = {false, true, true, true, false, false};
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < row.size(); ++i) {
      const std::size_t pad = width[i] - row[i].size();
      if (i != 0) line += "  ";
      if (kRight[i]) line.append(pad, ' ');
      line += row[i];
      if (!kRight[i] && i + 1 != row.size()) line.append(pad, ' ');
    }
    out += line;
    out += '\n';
  }
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
