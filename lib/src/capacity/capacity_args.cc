// The command-line values of capacity planning (capacity_args.h), each parsed in one
// place: the front end checks them while it parses the command line and maps them to the
// request.
#include "hpfreeze/capacity/capacity_args.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "capacity/capacity.h"
#include "capacity/usage_error.h"

namespace hpfreeze {
namespace {

constexpr std::uint64_t kMaxBytes = std::numeric_limits<std::uint64_t>::max();

bool is_name_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || (c >= '0' && c <= '9'); }

using capacity_detail::usage_error;

// A size of a list item: decimal digits only, at most kMaxAxisSize; nullopt otherwise.
std::optional<std::uint64_t> decimal_size(std::string_view item) {
  std::uint64_t value = 0;
  bool ok = !item.empty();
  for (char c : item) {
    ok = ok && c >= '0' && c <= '9' && !__builtin_mul_overflow(value, 10, &value) &&
         !__builtin_add_overflow(value, static_cast<std::uint64_t>(c - '0'), &value) &&
         value <= kMaxAxisSize;
  }
  return ok ? std::optional(value) : std::nullopt;
}

}  // namespace

bool is_axis_name(std::string_view name) {
  return !name.empty() && is_name_start(name.front()) &&
         std::all_of(name.begin(), name.end(), is_name_char);
}

Expected<std::vector<AxisSize>> parse_mesh_arg(std::string_view text) {
  auto fail = [](std::string message) -> Expected<std::vector<AxisSize>> {
    // No finding: a flag's value, refused as a usage error.
    return make_error({}, {}, std::move(message));
  };
  if (text.empty()) return fail("expected AXIS=N[,AXIS=N...], got an empty value");
  std::vector<AxisSize> axes;
  std::size_t start = 0;
  while (true) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(
        start, comma == std::string_view::npos ? std::string_view::npos : comma - start);
    if (item.empty()) {
      return fail("empty item in " + quote_for_diagnostic(text) + "; expected AXIS=N[,AXIS=N...]");
    }
    const std::size_t eq = item.find('=');
    if (eq == std::string_view::npos) {
      return fail(quote_for_diagnostic(item) + " is not AXIS=N");
    }
    const std::string_view name = item.substr(0, eq);
    const std::string_view size = item.substr(eq + 1);
    if (!is_axis_name(name)) {
      return fail(quote_for_diagnostic(item) + ": the axis name must match [A-Za-z_][A-Za-z0-9_]*");
    }
    std::uint64_t value = 0;
    bool digits = !size.empty();
    bool too_large = false;
    for (char c : size) {
      if (c < '0' || c > '9') {
        digits = false;
        break;
      }
      if (__builtin_mul_overflow(value, 10, &value) ||
          __builtin_add_overflow(value, c - '0', &value) || value > kMaxAxisSize) {
        too_large = true;
      }
    }
    if (!digits || value == 0) {
      return fail(quote_for_diagnostic(item) + ": the size must be a decimal integer >= 1");
    }
    if (too_large) {
      return fail(quote_for_diagnostic(item) + ": the size is larger than 2^63-1");
    }
    for (const AxisSize& a : axes) {
      if (a.axis == name) return fail("axis " + quote_for_diagnostic(name) + " is given twice");
    }
    axes.push_back(AxisSize{std::string(name), value});
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return axes;
}

Expected<AxisSweep> parse_sweep_arg(std::string_view text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string_view::npos) {
    return usage_error(quote_for_diagnostic(text) + " is not AXIS=N1,N2,...");
  }
  AxisSweep sweep{std::string(text.substr(0, eq)), {}};
  if (!is_axis_name(sweep.axis)) {
    return usage_error(quote_for_diagnostic(text) +
                       ": the axis name must match [A-Za-z_][A-Za-z0-9_]*");
  }
  std::string_view list = text.substr(eq + 1);
  while (true) {
    const std::size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    const std::uint64_t value = decimal_size(item).value_or(0);
    if (value == 0) {
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
  // Local, as every other file's: at namespace scope it would shadow theirs in a unity build.
  __extension__ using U128 = unsigned __int128;
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

std::optional<Optimizer> parse_optimizer(std::string_view name) {
  for (std::size_t i = 0; i < kOptimizers; ++i) {
    const auto optimizer = static_cast<Optimizer>(i);
    if (optimizer_name(optimizer) == name) return optimizer;
  }
  return std::nullopt;
}

Expected<std::uint64_t> parse_expert_zero_dim(std::string_view text) {
  const std::optional<std::uint64_t> dim = decimal_size(text);
  if (!dim) {
    return usage_error(quote_for_diagnostic(text) +
                       " is not a dim; expected a decimal integer >= 0 (1: the experts' ZeRO "
                       "chunks on dim 1)");
  }
  return *dim;
}

std::optional<int> parse_zero_stage(std::string_view text) {
  if (text.size() != 1 || text[0] < '0' || text[0] > '0' + kMaxZeroStage) return std::nullopt;
  return text[0] - '0';
}

Expected<std::vector<std::string>> parse_zero_axes(std::string_view text) {
  std::vector<std::string> axes;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (!is_axis_name(item)) {
      return usage_error(quote_for_diagnostic(text) + ": " + quote_for_diagnostic(item) +
                         " is not an axis name; expected AXIS[,AXIS...], each matching "
                         "[A-Za-z_][A-Za-z0-9_]*");
    }
    if (std::find(axes.begin(), axes.end(), item) != axes.end()) {
      return usage_error(quote_for_diagnostic(text) + ": axis " + quote_for_diagnostic(item) +
                         " is listed twice");
    }
    axes.emplace_back(item);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return axes;
}

std::string_view expert_layout_name(ExpertLayout layout) {
  return layout == ExpertLayout::kFolded ? "folded" : "axis";
}

std::optional<ExpertLayout> parse_expert_layout(std::string_view name) {
  for (const ExpertLayout layout : {ExpertLayout::kFolded, ExpertLayout::kAxis}) {
    if (expert_layout_name(layout) == name) return layout;
  }
  return std::nullopt;
}

Expected<std::vector<std::uint64_t>> parse_pp_layers(std::string_view text) {
  std::vector<std::uint64_t> out;
  std::string_view rest = text;
  while (true) {
    const std::size_t comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    const std::optional<std::uint64_t> value = decimal_size(item);
    if (!value) {
      return usage_error(quote_for_diagnostic(text) + ": " + quote_for_diagnostic(item) +
                         " is not a number of layers; expected N,N,... (the layers of each "
                         "pipeline stage, decimal integers)");
    }
    out.push_back(*value);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

Expected<std::string> parse_pp_stack(std::string_view text) {
  const bool empty_name = text.empty() || text.front() == '.' || text.back() == '.' ||
                          text.find("..") != std::string_view::npos;
  if (empty_name) {
    return usage_error(quote_for_diagnostic(text) +
                       ": expected a module path, names separated by dots (model.layers)");
  }
  return std::string(text);
}

}  // namespace hpfreeze
