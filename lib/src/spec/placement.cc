#include "spec/placement.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>
#include <optional>
#include <span>
#include <vector>

#include "hpfreeze/base/suggest.h"
#include "spec/placement_dump.h"

namespace hpfreeze {
namespace {

// The dump's names of the kinds, in the order of the enum (placement.h).
constexpr std::array<std::string_view, kPlacementKinds> kNames{"Shard", "StridedShard", "Replicate",
                                                               "Partial"};
static_assert(std::none_of(kNames.begin(), kNames.end(),
                           [](std::string_view name) { return name.empty(); }),
              "every placement kind has a name");

}  // namespace

Placement Placement::shard(std::int64_t dim, bool uneven) {
  Placement p;
  p.kind = PlacementKind::kShard;
  p.dim = dim;
  p.uneven_shard = uneven;
  return p;
}

Placement Placement::strided_shard(std::int64_t dim, std::int64_t split_factor, bool uneven) {
  Placement p = shard(dim, uneven);
  p.kind = PlacementKind::kStridedShard;
  p.split_factor = split_factor;
  return p;
}

Placement Placement::replicate() { return Placement{}; }

Placement Placement::partial(std::string_view reduce_op) {
  Placement p;
  p.kind = PlacementKind::kPartial;
  p.reduce_op = reduce_op;
  return p;
}

bool operator==(const Placement& a, const Placement& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case PlacementKind::kReplicate:
      return true;
    case PlacementKind::kPartial:
      return a.reduce_op == b.reduce_op;
    case PlacementKind::kShard:
      return a.dim == b.dim && a.uneven_shard == b.uneven_shard;
    case PlacementKind::kStridedShard:
      return a.dim == b.dim && a.uneven_shard == b.uneven_shard && a.split_factor == b.split_factor;
  }
  return false;
}

std::string_view placement_type_name(PlacementKind kind) {
  return kNames[static_cast<std::size_t>(kind)];
}

namespace {

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, end);
}

// Python's str.isspace() for ASCII: \t \n \v \f \r, the separators 0x1c-0x1f, and space.
bool is_python_ascii_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

std::string_view strip_python_space(std::string_view s) {
  while (!s.empty() && is_python_ascii_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_python_ascii_space(s.back())) s.remove_suffix(1);
  return s;
}

bool is_ascii(std::string_view s) {
  for (char c : s) {
    if (static_cast<unsigned char>(c) >= 0x80) return false;
  }
  return true;
}

constexpr std::string_view kExpectedForms = "expected R, S(dim), SS(dim,factor) or P(reduce_op)";

Diagnostic placement_error(std::string_view text, std::string_view what) {
  std::string message = "invalid placement " + quote_for_diagnostic(text) + ": ";
  message += what;
  return make_error({}, {}, std::move(message));
}

}  // namespace

void append_canonical(std::string& out, const Placement& p) {
  switch (p.kind) {
    case PlacementKind::kReplicate:
      out += 'R';
      return;
    case PlacementKind::kPartial:
      out += "P(";
      out += p.reduce_op;
      out += ')';
      return;
    case PlacementKind::kShard:
      out += "S(";
      append_int(out, p.encoded_dim());
      out += ')';
      return;
    case PlacementKind::kStridedShard:
      out += "SS(";
      append_int(out, p.encoded_dim());
      out += ',';
      append_int(out, p.split_factor);
      out += ')';
      return;
  }
}

std::string to_canonical(const Placement& p) {
  std::string out;
  append_canonical(out, p);
  return out;
}

bool parse_python_int(std::string_view text, std::int64_t& value, bool& overflow) {
  overflow = false;
  std::string_view s = strip_python_space(text);
  bool negative = false;
  if (!s.empty() && (s.front() == '+' || s.front() == '-')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return false;
  // Accumulate the magnitude as unsigned; -2^63 is the one value whose magnitude
  // exceeds int64's maximum.
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 63;
  std::uint64_t magnitude = 0;
  bool previous_was_digit = false;
  for (char c : s) {
    if (c == '_') {
      if (!previous_was_digit) return false;
      previous_was_digit = false;
      continue;
    }
    if (c < '0' || c > '9') return false;
    previous_was_digit = true;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (!overflow) {
      if (magnitude > (kLimit - digit) / 10) {
        overflow = true;
      } else {
        magnitude = magnitude * 10 + digit;
      }
    }
  }
  if (!previous_was_digit) return false;  // trailing underscore
  if (overflow || magnitude > kLimit || (magnitude == kLimit && !negative)) {
    overflow = true;
    return true;
  }
  if (negative) {
    value = magnitude == kLimit ? std::numeric_limits<std::int64_t>::min()
                                : -static_cast<std::int64_t>(magnitude);
  } else {
    value = static_cast<std::int64_t>(magnitude);
  }
  return true;
}

Expected<Placement> parse_placement(std::string_view text) {
  if (text.empty()) return placement_error(text, "empty string");
  if (!is_ascii(text)) return placement_error(text, "non-ASCII character");
  if (text == "R") return Placement::replicate();

  // The whole string must be KIND(ARGS) with KIND one of S, SS, P and no newline inside.
  std::string_view kind;
  if (text.starts_with("SS(")) {
    kind = "SS";
  } else if (text.starts_with("S(")) {
    kind = "S";
  } else if (text.starts_with("P(")) {
    kind = "P";
  }
  if (kind.empty() || !text.ends_with(')') || text.size() < kind.size() + 2) {
    return placement_error(text, std::string("unknown form, ") + std::string(kExpectedForms));
  }
  const std::string_view args = text.substr(kind.size() + 1, text.size() - kind.size() - 2);
  if (args.find('\n') != std::string_view::npos) {
    return placement_error(text, "newline inside the parentheses");
  }

  if (kind == "P") {
    if (args.empty()) return placement_error(text, "missing reduce_op in P(...)");
    return Placement::partial(args);
  }

  const std::size_t comma = args.find(',');
  const std::string_view dim_text = args.substr(0, comma);
  std::int64_t dim = 0;
  bool overflow = false;
  if (!parse_python_int(dim_text, dim, overflow)) {
    return placement_error(
        text, "dim " + quote_for_diagnostic(strip_python_space(dim_text)) + " is not an integer");
  }
  if (overflow) return placement_error(text, "dim does not fit in a signed 64-bit integer");

  std::size_t parts = 1;
  for (char c : args) parts += c == ',' ? 1 : 0;
  const bool uneven = dim < 0;
  const std::int64_t real_dim = uneven ? ~dim : dim;  // -dim-1 without overflow

  if (kind == "S") {
    if (parts != 1) {
      return placement_error(text, "S(dim) takes 1 argument, got " + std::to_string(parts));
    }
    return Placement::shard(real_dim, uneven);
  }
  if (parts != 2) {
    return placement_error(text, "SS(dim,factor) takes 2 arguments, got " + std::to_string(parts));
  }
  const std::string_view factor_text = args.substr(comma + 1);
  std::int64_t factor = 0;
  if (!parse_python_int(factor_text, factor, overflow)) {
    return placement_error(text, "split_factor " +
                                     quote_for_diagnostic(strip_python_space(factor_text)) +
                                     " is not an integer");
  }
  if (overflow) {
    return placement_error(text, "split_factor does not fit in a signed 64-bit integer");
  }
  if (factor < 1) {
    return placement_error(text, "split_factor must be >= 1, got " + std::to_string(factor));
  }
  return Placement::strided_shard(real_dim, factor, uneven);
}

Json placement_to_dump(const Placement& p) {
  JsonObject out{{"$placement", Json(placement_type_name(p.kind))}};
  switch (p.kind) {
    case PlacementKind::kShard:
      out.push_back({"dim", Json(p.dim)});
      out.push_back({"uneven_shard", Json(p.uneven_shard)});
      break;
    case PlacementKind::kStridedShard:
      out.push_back({"dim", Json(p.dim)});
      out.push_back({"split_factor", Json(p.split_factor)});
      out.push_back({"uneven_shard", Json(p.uneven_shard)});
      break;
    case PlacementKind::kPartial:
      out.push_back({"reduce_op", Json(p.reduce_op)});
      break;
    case PlacementKind::kReplicate:
      break;
  }
  return Json(std::move(out));
}

namespace {

// The meta writes a Partial as P(op), which must read back as the same op (docs/formats.md,
// "Typed values"): the canonical-string parser takes ASCII only and no newline.
void check_reduce_op(std::string_view op, const dom_decode::Path& pointer) {
  if (op.empty()) dom_decode::fail(pointer, "reduce_op must not be empty");
  for (const char c : op) {
    if (static_cast<unsigned char>(c) >= 0x80 || c == '\n') {
      dom_decode::fail(pointer,
                       "reduce_op " + quote_for_diagnostic(op) +
                           " does not read back from P(...): it must be ASCII without a newline");
    }
  }
}

// An unknown $placement type, with the nearest known one when it is near enough
// ("Replicat", "shard").
[[noreturn]] void unknown_placement_type(std::string_view type, const dom_decode::Path& pointer) {
  const std::vector<std::string> names(kNames.begin(), kNames.end());
  const std::optional<std::string> near = nearest_ignoring_case(type, names);
  std::string expected;
  for (std::size_t i = 0; i < names.size(); ++i) {
    expected += (i == 0 ? "" : i + 1 == names.size() ? " or " : ", ") + names[i];
  }
  dom_decode::fail(pointer, "unknown placement type " + quote_for_diagnostic(type) +
                                (near ? "; did you mean '" + *near + "'?" : std::string()) +
                                " (expected " + expected + ")");
}

}  // namespace

Placement placement_from_dump(simdjson::dom::object o, simdjson::dom::element type_element,
                              const dom_decode::Path& pointer) {
  using namespace dom_decode;  // in this block only: a unity build shares the file's scopes
  const std::string_view type = expect_string(type_element, Path(pointer, "$placement"));
  static constexpr std::string_view kShardFields[] = {"dim", "uneven_shard"};
  static constexpr std::string_view kStridedFields[] = {"dim", "split_factor", "uneven_shard"};
  static constexpr std::string_view kPartialFields[] = {"reduce_op"};
  Placement p;
  std::span<const std::string_view> allowed;
  if (is(type, "Shard")) {
    p.kind = PlacementKind::kShard;
    allowed = kShardFields;
  } else if (is(type, "StridedShard")) {
    p.kind = PlacementKind::kStridedShard;
    allowed = kStridedFields;
  } else if (is(type, "Replicate")) {
    p.kind = PlacementKind::kReplicate;
  } else if (is(type, "Partial")) {
    p.kind = PlacementKind::kPartial;
    allowed = kPartialFields;
  } else if (is(type, "RaggedShard")) {
    fail(pointer, "placement type 'RaggedShard' has no canonical string form and cannot be frozen");
  } else {
    unknown_placement_type(type, pointer);
  }
  bool has_dim = false;
  bool has_split = false;
  unsigned seen = 0;
  for (auto key_it = o.begin(); key_it != o.end(); ++key_it) {
    const std::string_view key = key_it.key();
    const element value = key_it.value();
    if (is(key, "$placement")) {
      see(seen, 1);
      continue;
    }
    if (std::find(allowed.begin(), allowed.end(), key) == allowed.end()) {
      fail(Path(pointer, key),
           "unknown field " + quote_for_diagnostic(key) + " for placement " + std::string(type));
    }
    const Path field_pointer(pointer, key);
    if (is(key, "dim")) {
      see(seen, 2);
      p.dim = expect_int64(value, field_pointer, "dim");
      has_dim = true;
    } else if (is(key, "uneven_shard")) {
      see(seen, 4);
      if (!value.is_bool()) fail_type(field_pointer, "a boolean", value);
      p.uneven_shard = bool_of(value);
    } else if (is(key, "split_factor")) {
      see(seen, 8);
      p.split_factor = expect_int64(value, field_pointer, "split_factor");
      if (p.split_factor < 1) {
        fail(field_pointer, "split_factor must be >= 1, got " + std::to_string(p.split_factor));
      }
      has_split = true;
    } else if (is(key, "reduce_op")) {
      see(seen, 16);
      p.reduce_op = expect_string(value, field_pointer);
      check_reduce_op(p.reduce_op, field_pointer);
    }
  }
  if (p.has_dim() && !has_dim) fail(pointer, "placement " + std::string(type) + " needs a dim");
  if (p.kind == PlacementKind::kStridedShard && !has_split) {
    fail(pointer, "placement StridedShard needs a split_factor");
  }
  return p;
}

}  // namespace hpfreeze
