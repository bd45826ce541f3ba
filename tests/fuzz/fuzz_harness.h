#pragma once
// The bodies of the libFuzzer targets, shared with the regression test that replays
// testdata/fuzz/{seeds,regressions} in every ctest run (tests/unit/fuzz_regressions_test.cc).
//
// Each check_* function takes one input and returns "" when every property held, or a
// description of the first violated one. The fuzz entry points abort on a non-empty result;
// crashes and sanitizer reports need no help to be seen. Everything here is independent of
// the code under test where that is cheap: the placement grammar, Python's int() reading
// and the UTF-8 replacement rule are re-implemented, not called.

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "dumps/plan.h"
#include "freeze/freeze.h"
#include "freeze/reference.h"
#include "fuzz_locator_harness.h"
#include "hpfreeze/base/diagnostic.h"
#include "json/encode.h"
#include "json/json.h"
#include "json/json_document.h"
#include "meta/meta.h"
#include "spec/placement.h"

namespace hpfreeze::fuzz {

// ---------------------------------------------------------------------------------------
// Placement parser: differential check against an independent reading of SPEC §1.

struct PyInt {
  bool overflow = false;
  std::int64_t value = 0;
};

inline bool is_py_space(char c) {
  return c == ' ' || (c >= '\t' && c <= '\r') || (c >= '\x1c' && c <= '\x1f');
}

// Python's int(text) restricted to ASCII; nullopt when int() would raise.
inline std::optional<PyInt> reference_python_int(std::string_view s) {
  while (!s.empty() && is_py_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_py_space(s.back())) s.remove_suffix(1);
  bool negative = false;
  if (!s.empty() && (s[0] == '+' || s[0] == '-')) {
    negative = s[0] == '-';
    s.remove_prefix(1);
  }
  if (s.empty() || s.front() == '_' || s.back() == '_') return std::nullopt;
  std::string digits;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '_') {
      if (s[i - 1] == '_') return std::nullopt;
    } else if (s[i] >= '0' && s[i] <= '9') {
      digits += s[i];
    } else {
      return std::nullopt;
    }
  }
  const std::size_t first = digits.find_first_not_of('0');
  digits = first == std::string::npos ? "0" : digits.substr(first);
  const std::string_view limit = negative ? "9223372036854775808" : "9223372036854775807";
  PyInt out;
  if (digits.size() > limit.size() || (digits.size() == limit.size() && digits > limit)) {
    out.overflow = true;
    return out;
  }
  const std::string text = (negative ? "-" : "") + digits;
  std::from_chars(text.data(), text.data() + text.size(), out.value);
  return out;
}

// nullopt: the text must be rejected.
inline std::optional<Placement> reference_placement(std::string_view text) {
  for (const char c : text) {
    if (static_cast<unsigned char>(c) >= 0x80) return std::nullopt;
  }
  if (text == "R") return Placement::replicate();
  std::string_view kind;
  for (const std::string_view k : {"SS", "S", "P"}) {
    if (text.size() >= k.size() + 2 && text.substr(0, k.size()) == k && text[k.size()] == '(' &&
        text.back() == ')') {
      kind = k;
      break;
    }
  }
  if (kind.empty()) return std::nullopt;
  const std::string_view inner = text.substr(kind.size() + 1, text.size() - kind.size() - 2);
  if (inner.find('\n') != std::string_view::npos) return std::nullopt;
  if (kind == "P") {
    if (inner.empty()) return std::nullopt;
    return Placement::partial(inner);
  }
  std::vector<std::string_view> parts;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= inner.size(); ++i) {
    if (i == inner.size() || inner[i] == ',') {
      parts.push_back(inner.substr(start, i - start));
      start = i + 1;
    }
  }
  if (parts.size() != (kind == "S" ? 1u : 2u)) return std::nullopt;
  const std::optional<PyInt> dim = reference_python_int(parts[0]);
  if (!dim || dim->overflow) return std::nullopt;
  const bool uneven = dim->value < 0;
  const std::int64_t real_dim = uneven ? -(dim->value + 1) : dim->value;
  if (kind == "S") return Placement::shard(real_dim, uneven);
  const std::optional<PyInt> factor = reference_python_int(parts[1]);
  if (!factor || factor->overflow || factor->value < 1) return std::nullopt;
  return Placement::strided_shard(real_dim, factor->value, uneven);
}

inline std::string check_placement(std::string_view text) {
  const Expected<Placement> parsed = parse_placement(text);
  const std::optional<Placement> expected = reference_placement(text);
  if (!parsed) {
    if (expected) return "rejected, but SPEC §1 accepts it as " + to_canonical(*expected);
    const std::string prefix = "invalid placement " + quote_for_diagnostic(text) + ": ";
    const std::string& message = parsed.errors().front().message;
    if (!message.starts_with(prefix) || message.size() == prefix.size()) {
      return "error message does not name the text: " + message;
    }
    return {};
  }
  if (!expected) return "accepted as " + to_canonical(*parsed) + ", but SPEC §1 rejects it";
  if (!(*parsed == *expected)) {
    return "read as " + to_canonical(*parsed) + ", SPEC §1 reads " + to_canonical(*expected);
  }
  const std::string canonical = to_canonical(*parsed);
  const Expected<Placement> again = parse_placement(canonical);
  if (!again) return "canonical string " + canonical + " is rejected";
  if (!(*again == *parsed)) return "canonical string " + canonical + " reads back differently";
  if (to_canonical(*again) != canonical) return "canonical form of " + canonical + " differs";
  return {};
}

// ---------------------------------------------------------------------------------------
// JSON values: strict comparison (doubles bit for bit, int64 and uint64 kept apart).

inline bool same_json(const Json& a, const Json& b, bool ignore_member_order);

inline bool same_members(const JsonObject& a, const JsonObject& b, bool ignore_member_order) {
  if (a.size() != b.size()) return false;
  if (!ignore_member_order) {
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (a[i].key != b[i].key || !same_json(a[i].value, b[i].value, false)) return false;
    }
    return true;
  }
  std::vector<const JsonMember*> x;
  std::vector<const JsonMember*> y;
  for (const JsonMember& m : a) x.push_back(&m);
  for (const JsonMember& m : b) y.push_back(&m);
  const auto by_key = [](const JsonMember* l, const JsonMember* r) { return l->key < r->key; };
  std::stable_sort(x.begin(), x.end(), by_key);
  std::stable_sort(y.begin(), y.end(), by_key);
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (x[i]->key != y[i]->key || !same_json(x[i]->value, y[i]->value, true)) return false;
  }
  return true;
}

inline bool same_json(const Json& a, const Json& b, bool ignore_member_order) {
  if (a.v.index() != b.v.index()) return false;
  if (const auto* d = std::get_if<double>(&a.v)) {
    return std::bit_cast<std::uint64_t>(*d) == std::bit_cast<std::uint64_t>(std::get<double>(b.v));
  }
  if (const auto* x = std::get_if<JsonArray>(&a.v)) {
    const JsonArray& y = std::get<JsonArray>(b.v);
    if (x->size() != y.size()) return false;
    for (std::size_t i = 0; i < x->size(); ++i) {
      if (!same_json((*x)[i], y[i], ignore_member_order)) return false;
    }
    return true;
  }
  if (const auto* o = std::get_if<JsonObject>(&a.v)) {
    return same_members(*o, std::get<JsonObject>(b.v), ignore_member_order);
  }
  return a == b;
}

// Length of the well-formed UTF-8 sequence at s[i] (Unicode table 3-7), 0 if none.
inline std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned char b0 = byte(i);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80;
  unsigned char hi = 0xbf;
  if (b0 >= 0xc2 && b0 <= 0xdf) {
    n = 2;
  } else if (b0 >= 0xe0 && b0 <= 0xef) {
    n = 3;
    lo = b0 == 0xe0 ? 0xa0 : 0x80;
    hi = b0 == 0xed ? 0x9f : 0xbf;
  } else if (b0 >= 0xf0 && b0 <= 0xf4) {
    n = 4;
    lo = b0 == 0xf0 ? 0x90 : 0x80;
    hi = b0 == 0xf4 ? 0x8f : 0xbf;
  } else {
    return 0;
  }
  if (s.size() - i < n) return 0;
  for (std::size_t k = 1; k < n; ++k) {
    const unsigned char b = byte(i + k);
    if (b < lo || b > hi) return 0;
    lo = 0x80;
    hi = 0xbf;
  }
  return n;
}

// What the encoders promise to make of arbitrary bytes: every byte that does not start a
// well-formed sequence becomes U+FFFD.
inline std::string replace_invalid_utf8(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s, i);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      ++i;
    } else {
      out += s.substr(i, n);
      i += n;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// Encoder round trip: value -> each encoder -> our reader (simdjson) -> the same value.

// `fixed_point`: also require that encoding the value read back gives the same bytes (not
// so when invalid UTF-8 was replaced: the replacement can change the key order).
inline std::string check_encoded(const Json& value, const std::string& bytes,
                                 std::string_view encoder, bool sorted, bool fixed_point) {
  Expected<JsonDocument> doc = parse_json_document(std::string(encoder), bytes);
  if (!doc) {
    return std::string(encoder) +
           " output does not parse: " + doc.errors().front().location_and_message();
  }
  const Json back = json_from_dom(doc->root());
  if (!same_json(value, back, sorted)) {
    return std::string(encoder) + " output reads back as a different value";
  }
  if (!fixed_point) return {};
  const std::string again = encoder == "python"    ? encode_python_json(back)
                            : encoder == "compact" ? encode_compact_json(back)
                                                   : encode_plain_json(back);
  if (again != bytes) return std::string(encoder) + " encoding is not a fixed point";
  return {};
}

inline std::string check_round_trip(const Json& value) {
  for (const auto& [encoded, name, sorted] :
       {std::tuple{encode_python_json(value), "python", true},
        std::tuple{encode_compact_json(value), "compact", false},
        std::tuple{encode_plain_json(value), "plain", false}}) {
    if (std::string r = check_encoded(value, encoded, name, sorted, true); !r.empty()) return r;
  }
  return {};
}

// Turns arbitrary bytes into a Json value, so that the encoders also see doubles and
// strings (invalid UTF-8 included) that rarely come out of parsing fuzzed text.
class ValueBuilder {
 public:
  ValueBuilder(std::string_view bytes, StringArena& arena) : in_(bytes), arena_(arena) {}

  // True once some string held invalid UTF-8.
  [[nodiscard]] bool replaced_any() const { return replaced_any_; }

  // `value` is what the encoders are given; `expected` is what must be read back.
  void build(Json& value, Json& expected, int depth) {
    const unsigned kind = depth >= kMaxDepth ? take_byte() % 6 : take_byte() % 8;
    switch (kind) {
      case 0:
        value = expected = Json(nullptr);
        return;
      case 1:
        value = expected = Json((take_byte() & 1) != 0);
        return;
      case 2:
        value = expected = Json(static_cast<std::int64_t>(take_u64()));
        return;
      case 3:
        value = expected = Json(take_u64() | (std::uint64_t{1} << 63));
        return;
      case 4: {
        double d = std::bit_cast<double>(take_u64());
        if (!std::isfinite(d)) d = 0.0;  // the reader rejects NaN and Infinity
        value = expected = Json(d);
        return;
      }
      case 5: {
        const std::string_view raw = take_string();
        value = Json(raw);
        expected = Json(read_back(raw));
        return;
      }
      case 6: {
        JsonArray values;
        JsonArray expecteds;
        for (unsigned n = take_byte() % 8; n > 0 && !in_.empty(); --n) {
          build(values.emplace_back(), expecteds.emplace_back(), depth + 1);
        }
        value = Json(std::move(values));
        expected = Json(std::move(expecteds));
        return;
      }
      default: {
        JsonObject values;
        JsonObject expecteds;
        std::vector<std::string_view> keys_read_back;
        for (unsigned n = take_byte() % 8; n > 0 && !in_.empty(); --n) {
          const std::string_view raw = take_string();
          const std::string_view key = read_back(raw);
          // Distinct raw keys may read back equal; the reader would call that a duplicate.
          if (std::find(keys_read_back.begin(), keys_read_back.end(), key) !=
              keys_read_back.end()) {
            continue;
          }
          keys_read_back.push_back(key);
          values.push_back({raw, Json()});
          expecteds.push_back({key, Json()});
          build(values.back().value, expecteds.back().value, depth + 1);
        }
        value = Json(std::move(values));
        expected = Json(std::move(expecteds));
        return;
      }
    }
  }

 private:
  static constexpr int kMaxDepth = 48;

  std::string_view read_back(std::string_view raw) {
    std::string replaced = replace_invalid_utf8(raw);
    if (replaced == raw) return raw;
    replaced_any_ = true;
    return arena_.store(std::move(replaced));
  }

  unsigned take_byte() {
    if (in_.empty()) return 0;
    const auto b = static_cast<unsigned char>(in_.front());
    in_.remove_prefix(1);
    return b;
  }
  std::uint64_t take_u64() {
    std::uint64_t x = 0;
    const std::size_t n = std::min<std::size_t>(8, in_.size());
    std::memcpy(&x, in_.data(), n);
    in_.remove_prefix(n);
    return x;
  }
  std::string_view take_string() {
    const unsigned length = take_byte() % 32;  // before in_.size(): it shrinks in_
    const std::size_t n = std::min<std::size_t>(length, in_.size());
    const std::string_view s = in_.substr(0, n);
    in_.remove_prefix(n);
    return s;
  }

  std::string_view in_;
  StringArena& arena_;
  bool replaced_any_ = false;
};

inline std::string check_encode(std::string_view bytes) {
  // Input that is a JSON document is round-tripped as read; anything else is taken as a
  // recipe for a value.
  if (Expected<JsonDocument> doc = parse_json_document("input.json", std::string(bytes))) {
    const Json value = json_from_dom(doc->root());
    if (std::string r = check_pointer_positions(bytes, value); !r.empty()) return r;
    return check_round_trip(value);
  }
  StringArena arena;
  Json value;
  Json expected;
  ValueBuilder builder(bytes, arena);
  builder.build(value, expected, 0);
  for (const auto& [encoded, name, sorted] :
       {std::tuple{encode_python_json(value), "python", true},
        std::tuple{encode_compact_json(value), "compact", false},
        std::tuple{encode_plain_json(value), "plain", false}}) {
    if (std::string r = check_encoded(expected, encoded, name, sorted, !builder.replaced_any());
        !r.empty()) {
      return r;
    }
  }
  return {};
}

// ---------------------------------------------------------------------------------------
// Plan reader + freeze, and model reader + freeze.

// The model tree shared by most golden cases in testdata/cases, so that fuzzing from
// those plans gets past the boundary and parameter checks.
inline constexpr std::string_view kFixedModel = R"json({
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net", "blk": "Block", "blk.attn": "Attention", "blk.mlp": "MLP",
              "emb": "Embedding", "lin": "Linear"},
  "parameters": {
    "blk.attn.qkv": {"shape": [12, 4]},
    "blk.mlp.up": {"shape": [16, 4]},
    "blk.w": {"shape": [4, 4, 2]},
    "emb.weight": {"shape": [100, 4], "dtype": "bfloat16"},
    "lin.bias": {"shape": [8], "dtype": "float32", "requires_grad": false},
    "lin.weight": {"shape": [8, 4], "dtype": "float32", "requires_grad": true},
    "lm_head.weight": {"shape": [100, 4]}
  }
})json";

// A plan over kFixedModel's names that touches every field kind, for the model target.
inline constexpr std::string_view kFixedPlan = R"json({
  "format": "hpfreeze.plan/v1",
  "mesh_dim_names": ["dp", "tp"],
  "tied_pairs": [["emb.weight", "lm_head.weight"]],
  "special_handlers": {"blk.w": "h"},
  "meta": {"signature": "fixed", "covered": {"axes": ["tp"]}},
  "modules": {
    "": {"params": {"lm_head.weight": {"tp": "S(0)"}}},
    "blk": {"params": {"w": {"tp": {"$placement": "StridedShard", "dim": 2, "split_factor": 2},
                             "dp": "R"}},
            "in_src": {"x": {"tp": "P(sum)"}}, "_ep_size": 2,
            "inner_wrapper": {"$target": {"_target_": "m.f", "k": [1, 2.5]}}},
    "blk.attn": {"params": {"qkv": {"tp": {"$placement": "Shard", "dim": -1}}},
                 "local_compute_fn": {"$callable": "fn"}, "out_names": ["y"]},
    "blk.mlp": {"params": {"up": {"tp": {"$placement": "Shard", "dim": 1, "uneven_shard": true}}}},
    "emb": {"params": {"weight": {"tp": {"$placement": "Partial", "reduce_op": "max"}}}},
    "lin": {"params": {"weight": {"tp": "SS(1,4)"}, "bias": {"tp": "R"}}, "is_boundary": true}
  }
})json";

// Errors must say where they are: a file name, and a message.
inline std::string check_diagnostics(const Diagnostics& errors, std::string_view file) {
  if (errors.empty()) return "failure without a diagnostic";
  for (const Diagnostic& d : errors) {
    if (d.file != file) return "diagnostic names file '" + d.file + "': " + d.message;
    if (d.message.empty()) return "diagnostic without a message";
  }
  return {};
}

// Freezes and encodes; checks the output is JSON that holds the plan.
inline std::string check_freeze_output(const PlanDump& plan, const ModelTree& model,
                                       const FreezeOptions& options) {
  Expected<FreezeResult> frozen = freeze_plan(plan, model, options);
  if (!frozen) return check_diagnostics(frozen.errors(), plan.file);
  const std::vector<std::string> sharded = expand_sharded_params(plan);
  std::optional<Json> base;
  if (plan.meta) {
    Expected<Json> checked = decode_base_meta(*plan.meta, plan.file, "/meta");
    if (!checked) return check_diagnostics(checked.errors(), plan.file);
    base = std::move(*checked);
  }
  // What freeze writes (straight from the frozen tables) against the assembled tree.
  const std::string direct =
      encode_meta(frozen->frozen, meta_defaults_and_base(base ? &*base : nullptr));
  const Json meta = assemble_meta(frozen->frozen, base ? &*base : nullptr);
  const std::string bytes = encode_python_json(meta);
  if (direct != bytes) return "encode_meta differs from encode_python_json(assemble_meta)";
  Expected<JsonDocument> out = parse_json_document("codegen_meta.json", bytes);
  if (!out) return "output does not parse: " + out.errors().front().location_and_message();
  const Json back = json_from_dom(out->root());
  const Json* param_plan = back.find("param_plan");
  if (param_plan == nullptr || !param_plan->is_object() ||
      param_plan->as_object().size() != plan.modules.size()) {
    return "param_plan does not hold one entry per module";
  }
  const Json* listed = back.find("frozen_sharded_params");
  if (listed == nullptr || !listed->is_array() || listed->as_array().size() != sharded.size()) {
    return "frozen_sharded_params differs from the expand pass";
  }
  for (std::size_t i = 0; i < sharded.size(); ++i) {
    const Json& name = listed->as_array()[i];
    if (!name.is_string() || name.as_string() != sharded[i]) {
      return "frozen_sharded_params differs from the expand pass";
    }
  }
  const Json* covered = back.find("covered");
  const Json* sharding_plan = covered != nullptr ? covered->find("sharding_plan") : nullptr;
  if (sharding_plan == nullptr || !(*sharding_plan == Json(true))) {
    return "covered.sharding_plan is not true";
  }
  return {};
}

struct FixedDocument {
  Expected<JsonDocument> document;
  explicit FixedDocument(std::string_view text)
      : document(parse_json_document("fixed.json", std::string(text))) {}
};

// kFixedModel decoded once: the model every target that needs one checks against.
inline const ModelTree& fixed_model() {
  static const FixedDocument document(kFixedModel);
  static const Expected<ModelTree> model = decode_model_tree(*document.document);
  return *model;
}

inline std::string check_freeze(std::string_view bytes) {
  const ModelTree& model = fixed_model();
  Expected<JsonDocument> doc = parse_json_document("plan.json", std::string(bytes));
  if (!doc) return check_diagnostics(doc.errors(), "plan.json");
  Expected<PlanDump> plan = decode_plan_dump(*doc);
  if (!plan) return check_diagnostics(plan.errors(), "plan.json");
  FreezeOptions checked;
  if (std::string r = check_freeze_output(*plan, model, checked); !r.empty()) return r;
  FreezeOptions lenient;
  lenient.verify = false;
  lenient.strict = true;
  lenient.allow_empty = true;
  return check_freeze_output(*plan, model, lenient);
}

inline std::string check_model(std::string_view bytes) {
  static const FixedDocument plan_doc(kFixedPlan);
  static const Expected<PlanDump> plan = decode_plan_dump(*plan_doc.document);
  Expected<JsonDocument> doc = parse_json_document("model.json", std::string(bytes));
  if (!doc) return check_diagnostics(doc.errors(), "model.json");
  Expected<ModelTree> model = decode_model_tree(*doc);
  if (!model) return check_diagnostics(model.errors(), "model.json");
  // Keys are unique, so every module and parameter is found under its own name.
  for (const auto& [fqn, cls] : model->modules) {
    const std::string_view* found = model->find_class(fqn);
    if (found == nullptr || *found != cls) return "module lookup fails for a listed module";
  }
  for (const auto& [fqn, parameter] : model->parameters) {
    if (model->find_parameter(fqn) != &parameter) return "parameter lookup fails";
  }
  Expected<FreezeResult> frozen = freeze_plan(*plan, *model, FreezeOptions{});
  if (!frozen) return check_diagnostics(frozen.errors(), "fixed.json");
  const std::string out = encode_python_json(assemble_meta(frozen->frozen, &*plan->meta));
  if (!parse_json_document("codegen_meta.json", out)) return "output does not parse";
  return {};
}

}  // namespace hpfreeze::fuzz
