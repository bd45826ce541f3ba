#include "hpfreeze/freeze.h"

#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "base/huge_pages.h"
#include "base/name_index.h"

namespace hpfreeze {

namespace {

// Canonical strings repeat endlessly (S(0), R): each distinct one is stored once. Shard,
// StridedShard and Replicate with small numbers are found by value in a direct-mapped
// cache, Partial by its reduce op in a short list, without formatting or hashing text;
// anything else goes through a map keyed by the text.
class CanonicalStrings {
 public:
  explicit CanonicalStrings(StringArena& arena) : arena_(arena) {}

  std::string_view get(const Placement& p) {
    const std::uint64_t key = value_key(p);
    Slot* slot = nullptr;
    if (key != kNoKey) {
      slot = &slots_[(key * 0x9e37'79b9'7f4a'7c15u) >> (64 - kSlotBits)];
      if (slot->key == key) return slot->text;
    } else if (p.kind == PlacementKind::kPartial) {
      for (const auto& [op, text] : partials_) {
        if (op == p.reduce_op) return text;
      }
    }
    scratch_.clear();
    append_canonical(scratch_, p);
    std::string_view text;
    if (auto it = by_text_.find(scratch_); it != by_text_.end()) {
      text = it->second;
    } else {
      text = arena_.copy(scratch_);
      by_text_.emplace(text, text);
    }
    if (slot != nullptr) {
      *slot = Slot{key, text};
    } else if (p.kind == PlacementKind::kPartial && partials_.size() < kPartials) {
      partials_.emplace_back(p.reduce_op, text);
    }
    return text;
  }

 private:
  static constexpr std::uint64_t kNoKey = ~std::uint64_t{0};
  static constexpr int kSlotBits = 6;
  static constexpr std::int64_t kFieldLimit = std::int64_t{1} << 28;

  struct Slot {
    std::uint64_t key = kNoKey;
    std::string_view text;
  };

  // Kind, unevenness, dim and split factor packed into one number; kNoKey for Partial and
  // for numbers too large to pack.
  static std::uint64_t value_key(const Placement& p) {
    if (p.kind == PlacementKind::kPartial) return kNoKey;
    if (p.kind == PlacementKind::kReplicate) return 0;
    if (p.dim < -kFieldLimit || p.dim >= kFieldLimit || p.split_factor < 0 ||
        p.split_factor >= kFieldLimit) {
      return kNoKey;
    }
    return static_cast<std::uint64_t>(p.kind) | (std::uint64_t{p.uneven_shard} << 2) |
           (static_cast<std::uint64_t>(p.dim + kFieldLimit) << 3) |
           (static_cast<std::uint64_t>(p.split_factor) << 32);
  }

  StringArena& arena_;
  std::string scratch_;
  std::array<Slot, std::size_t{1} << kSlotBits> slots_{};
  // Partial by reduce op (sum, avg, max: a handful per plan), compared as text.
  static constexpr std::size_t kPartials = 8;
  std::vector<std::pair<std::string_view, std::string_view>> partials_;
  std::unordered_map<std::string_view, std::string_view> by_text_;
};

Json value_to_dict(const SpecValue& value, CanonicalStrings& canonical) {
  struct Visitor {
    CanonicalStrings& canonical;
    Json operator()(const Json& j) const { return j; }
    Json operator()(const Placement& p) const { return Json(canonical.get(p)); }
    Json operator()(const Target& t) const { return t.object; }
    Json operator()(const Callable& c) const { return Json(c.name); }
    Json operator()(const SpecArray& a) const {
      JsonArray out;
      out.reserve(a.size());
      for (const SpecValue& item : a) out.push_back(value_to_dict(item, canonical));
      return Json(std::move(out));
    }
    Json operator()(const SpecObject& o) const {
      JsonObject out;
      out.reserve(o.size());
      for (const SpecMember& m : o) out.push_back({m.key, value_to_dict(m.value, canonical)});
      return Json(std::move(out));
    }
  };
  return std::visit(Visitor{canonical}, value.v);
}

// The eight bytes of s from `depth` on as a big-endian number (zeros past its end), so that
// comparing numbers compares those bytes as unsigned bytes, code point order on UTF-8.
std::uint64_t name_word(std::string_view s, std::size_t depth) {
  std::uint64_t word = 0;
  if (depth + 8 <= s.size()) {
    std::memcpy(&word, s.data() + depth, 8);
  } else if (depth < s.size()) {
    std::memcpy(&word, s.data() + depth, s.size() - depth);
  }
  if constexpr (std::endian::native == std::endian::little) word = __builtin_bswap64(word);
  return word;
}

// A name's sort key at one depth: its eight bytes there, then where it ends. Two names
// with the same word there have the same bytes up to the end of the shorter one (it may
// end early, padded with zeros like a real NUL), so the one that ends first sorts first:
// `end` is how many of the eight bytes the name has, and 9 when it goes on past them (then
// only the next depth can tell such names apart).
struct NameKey {
  std::uint64_t word;
  std::uint32_t end;
  std::uint32_t item;  // position in the range being sorted
};

bool key_less(const NameKey& a, const NameKey& b) {
  return a.word != b.word ? a.word < b.word : a.end < b.end;
}

// Sorts keys[0, n) by the names they stand for: by word and end at depth 0, then each run
// of names that tie there and go on, at depth 8, and so on, without recursion. Before
// keying a range, the bytes all its names share are skipped, eight at a time, so that
// names agreeing on a long stretch cost one pass over it. Past `levels` rounds on one range
// (adversarial names) the range is left to std::sort.
template <class NameOf>
void sort_keys(NameKey* keys, std::size_t n, const NameOf& name_of) {
  struct Range {
    std::size_t begin;
    std::size_t size;
    std::size_t depth;  // all names of the range agree on their first `depth` bytes
    int level;
  };
  const int levels = 2 * static_cast<int>(std::bit_width(n)) + 16;
  std::vector<Range> todo{{0, n, 0, 0}};
  while (!todo.empty()) {
    const Range range = todo.back();
    todo.pop_back();
    NameKey* const k = keys + range.begin;
    std::size_t depth = range.depth;
    if (range.level > levels) {
      std::sort(k, k + range.size, [&name_of, depth](const NameKey& a, const NameKey& b) {
        const std::string_view x = name_of(a.item);
        const std::string_view y = name_of(b.item);
        return compare_names(x.substr(std::min(depth, x.size())),
                             y.substr(std::min(depth, y.size()))) < 0;
      });
      continue;
    }
    const std::string_view first = name_of(k[0].item);
    std::size_t shared = first.size() > depth ? first.size() - depth : 0;
    for (std::size_t i = 1; i < range.size && shared >= 8; ++i) {
      const std::string_view name = name_of(k[i].item);
      std::size_t same = 0;
      while (same + 8 <= shared && depth + same + 8 <= name.size() &&
             std::memcmp(first.data() + depth + same, name.data() + depth + same, 8) == 0) {
        same += 8;
      }
      shared = std::min(shared, same);
    }
    depth += shared / 8 * 8;
    for (std::size_t i = 0; i < range.size; ++i) {
      const std::string_view name = name_of(k[i].item);
      k[i].word = name_word(name, depth);
      k[i].end = static_cast<std::uint32_t>(
          name.size() > depth + 8 ? 9 : (name.size() > depth ? name.size() - depth : 0));
    }
    std::sort(k, k + range.size, key_less);
    for (std::size_t run = 0; run < range.size;) {
      std::size_t end = run + 1;
      while (end < range.size && k[end].word == k[run].word && k[end].end == k[run].end) ++end;
      if (end - run > 1 && k[run].end == 9) {
        todo.push_back({range.begin + run, end - run, depth + 8, range.level + 1});
      }
      run = end;
    }
  }
}

// Sorts items by name as std::string_view's operator< does (unsigned bytes): FQNs share long
// prefixes ("model.layers.12.mlp.experts."), which a comparison sort reads again in every
// comparison. This sorts small keys (eight bytes of each name at a time) held in one array,
// with no indirection per comparison, and goes deeper only for names that tie. Not stable.
template <class T, class NameOf>
void sort_by_name(T* first, T* last, NameOf name_of) {
  const auto n = static_cast<std::size_t>(last - first);
  if (n < 2) return;
  std::vector<NameKey> keys(n);
  for (std::size_t i = 0; i < n; ++i) keys[i].item = static_cast<std::uint32_t>(i);
  sort_keys(keys.data(), n,
            [first, &name_of](std::uint32_t i) -> std::string_view { return name_of(first[i]); });
  std::vector<T> sorted;
  sorted.reserve(n);
  for (const NameKey& k : keys) sorted.push_back(std::move(first[k.item]));
  std::move(sorted.begin(), sorted.end(), first);
}

bool is_sharded(const ParamPlacements& param) {
  return std::any_of(param.axes.begin(), param.axes.end(),
                     [](const AxisPlacement& a) { return a.placement.is_sharded(); });
}

// Appends one boundary's params to the flat tables, each param's axes and then the params
// sorted by name (the order the meta is written in).
void freeze_params(const std::vector<ParamPlacements>& params, CanonicalStrings& canonical,
                   FrozenParamPlan& out, FrozenBoundary& boundary) {
  boundary.has_params = true;
  boundary.first_param = out.params.size();
  boundary.param_count = params.size();
  for (const ParamPlacements& param : params) {
    FrozenParam& frozen = out.params.emplace_back();
    frozen.name = param.name;
    frozen.first_axis = out.axes.size();
    frozen.axis_count = param.axes.size();
    frozen.sharded = is_sharded(param);
    for (const AxisPlacement& a : param.axes) {
      out.axes.push_back({a.axis, canonical.get(a.placement)});
    }
    // A param has one axis per mesh dim: a few, insertion sort.
    FrozenAxis* const first = out.axes.data() + frozen.first_axis;
    for (std::size_t i = 1; i < frozen.axis_count; ++i) {
      for (std::size_t j = i; j > 0 && compare_names(first[j].axis, first[j - 1].axis) < 0; --j) {
        std::swap(first[j], first[j - 1]);
      }
    }
  }
  FrozenParam* const first = out.params.data() + boundary.first_param;
  sort_by_name(first, first + boundary.param_count, [](const FrozenParam& p) { return p.name; });
}

std::string module_pointer(std::string_view fqn) { return pointer_join("/modules", fqn); }

std::string param_pointer(std::string_view fqn, std::string_view name) {
  return pointer_join(pointer_join(module_pointer(fqn), "params"), name);
}

// join_fqn into a reused buffer.
void join_fqn_into(std::string& out, std::string_view boundary, std::string_view name) {
  if (boundary.empty()) {
    out.assign(name);
    return;
  }
  out.assign(boundary);
  if (!name.empty()) {
    out += '.';
    out += name;
  }
}

// join_fqn written straight into the arena.
std::string_view join_fqn_in(StringArena& arena, std::string_view boundary, std::string_view name) {
  if (boundary.empty()) return arena.copy(name);
  if (name.empty()) return arena.copy(boundary);
  char* out = arena.allocate(boundary.size() + 1 + name.size());
  std::memcpy(out, boundary.data(), boundary.size());
  out[boundary.size()] = '.';
  std::memcpy(out + boundary.size() + 1, name.data(), name.size());
  return {out, boundary.size() + 1 + name.size()};
}

// Whether fqn is join_fqn(boundary, name), without joining.
bool is_joined_fqn(std::string_view fqn, std::string_view boundary, std::string_view name) {
  if (boundary.empty()) return fqn == name;
  if (name.empty()) return fqn == boundary;
  return fqn.size() == boundary.size() + 1 + name.size() && fqn[boundary.size()] == '.' &&
         fqn.starts_with(boundary) && fqn.ends_with(name);
}

// FQNs of the sharded params (frozen_sharded_params, docs/formats.md "The meta"), copied
// into `arena`, sorted and de-duplicated.
std::vector<std::string_view> sharded_param_fqns(const PlanDump& plan, StringArena& arena) {
  std::vector<std::string_view> fqns;
  std::size_t params = 0;
  for (const ModuleSpec& spec : plan.modules) params += spec.params ? spec.params->size() : 0;
  fqns.reserve(params);
  advise_huge_pages(fqns);
  for (const ModuleSpec& spec : plan.modules) {
    if (!spec.params) continue;
    for (const ParamPlacements& param : *spec.params) {
      if (is_sharded(param)) fqns.push_back(join_fqn_in(arena, spec.fqn, param.name));
    }
  }
  // Unsigned byte order is code point order on UTF-8.
  sort_by_name(fqns.data(), fqns.data() + fqns.size(), [](std::string_view s) { return s; });
  fqns.erase(std::unique(fqns.begin(), fqns.end()), fqns.end());
  return fqns;
}

// The same list from the sorted tables. Each boundary's sharded params, joined, are a sorted
// run ("b" for the name "" first, then "b." + names in order), but runs interleave (the
// params of "m.layers.0" and of "m.layers.0.mlp"; "a.b-c.x" sorts before "a.b.x"): the
// runs are merged pairwise, about log2(runs) passes instead of a sort.
std::vector<std::string_view> sharded_param_fqns(const FrozenParamPlan& plan, StringArena& arena) {
  std::vector<std::string_view> fqns;
  std::vector<std::size_t> runs;  // start of each run, then the end
  fqns.reserve(plan.params.size());
  advise_huge_pages(fqns);
  for (const FrozenBoundary& b : plan.boundaries) {
    runs.push_back(fqns.size());
    for (std::size_t p = b.first_param; p < b.first_param + b.param_count; ++p) {
      if (plan.params[p].sharded) fqns.push_back(join_fqn_in(arena, b.fqn, plan.params[p].name));
    }
  }
  runs.push_back(fqns.size());
  // Adjacent runs already in order (most are: "m.layers.0.mlp" < "m.layers.1") are one:
  // only the starts of runs that sort before the end of the run before them stay.
  std::vector<std::size_t> starts{0};
  for (std::size_t r = 1; r + 1 < runs.size(); ++r) {
    const std::size_t i = runs[r];
    if (i > starts.back() && i < fqns.size() && compare_names(fqns[i - 1], fqns[i]) > 0) {
      starts.push_back(i);
    }
  }
  starts.push_back(fqns.size());
  runs.swap(starts);
  std::vector<std::string_view> merged(fqns.size());
  while (runs.size() > 2) {
    std::vector<std::size_t> next;
    next.reserve(runs.size() / 2 + 2);
    for (std::size_t r = 0; r + 1 < runs.size(); r += 2) {
      next.push_back(runs[r]);
      const auto at = [&](std::vector<std::string_view>& v, std::size_t i) {
        return v.begin() + static_cast<std::ptrdiff_t>(i);
      };
      if (r + 2 < runs.size() && compare_names(fqns[runs[r + 1] - 1], fqns[runs[r + 1]]) > 0) {
        std::merge(at(fqns, runs[r]), at(fqns, runs[r + 1]), at(fqns, runs[r + 1]),
                   at(fqns, runs[r + 2]), at(merged, runs[r]),
                   [](std::string_view a, std::string_view b) { return compare_names(a, b) < 0; });
      } else {
        // The last run, or two in order.
        const std::size_t end = runs[std::min(r + 2, runs.size() - 1)];
        std::copy(at(fqns, runs[r]), at(fqns, end), at(merged, runs[r]));
      }
    }
    next.push_back(runs.back());
    fqns.swap(merged);
    runs.swap(next);
  }
  fqns.erase(std::unique(fqns.begin(), fqns.end()), fqns.end());
  return fqns;
}

// Pointers and FQN strings are only built for the errors: this runs once per planned param.
void verify_against_model(const PlanDump& plan, const ModelTree& model, ErrorList& errors) {
  std::string fqn;
  std::size_t cursor = 0;
  for (const ModuleSpec& spec : plan.modules) {
    if (!spec.params) continue;
    for (const ParamPlacements& param : *spec.params) {
      // The model's next parameter is usually the one: then nothing is joined or hashed.
      const ModelParameter* info = nullptr;
      if (cursor < model.parameters.size() &&
          is_joined_fqn(model.parameters[cursor].first, spec.fqn, param.name)) {
        info = &model.parameters[cursor++].second;
      } else {
        join_fqn_into(fqn, spec.fqn, param.name);
        info = model.find_parameter(fqn, cursor);
      }
      if (info == nullptr) {
        errors.add(make_error(plan.file, param_pointer(spec.fqn, param.name),
                              "parameter " + quote_for_diagnostic(fqn) + " is not in the model (" +
                                  model.file + ")"));
        continue;
      }
      const auto rank = static_cast<std::int64_t>(info->shape.size());
      for (const AxisPlacement& a : param.axes) {
        if (!a.placement.has_dim()) continue;
        if (a.placement.dim < -rank || a.placement.dim >= rank) {
          join_fqn_into(fqn, spec.fqn, param.name);
          errors.add(
              make_error(plan.file, pointer_join(param_pointer(spec.fqn, param.name), a.axis),
                         "dim " + std::to_string(a.placement.dim) + " out of range for parameter " +
                             quote_for_diagnostic(fqn) + " of shape " + shape_text(info->shape) +
                             " (rank " + std::to_string(rank) + ")"));
        }
      }
    }
  }
  for (std::size_t i = 0; i < plan.tied_pairs.size(); ++i) {
    for (std::size_t j = 0; j < plan.tied_pairs[i].size(); ++j) {
      const std::string_view name = plan.tied_pairs[i][j];
      if (model.find_parameter(name) == nullptr) {
        errors.add(make_error(plan.file,
                              "/tied_pairs/" + std::to_string(i) + "/" + std::to_string(j),
                              "tied parameter " + quote_for_diagnostic(name) +
                                  " is not in the model (" + model.file + ")"));
      }
    }
  }
}

void set_member(JsonObject& object, std::string_view key, Json value) {
  for (JsonMember& m : object) {
    if (m.key == key) {
      m.value = std::move(value);
      return;
    }
  }
  object.push_back({key, std::move(value)});
}

JsonObject default_meta() {
  JsonObject meta;
  meta.reserve(24);
  meta.push_back({"codegen_version", "0.1.1"});
  meta.push_back({"signature", ""});
  meta.push_back({"yaml_path", ""});
  meta.push_back({"yaml_sha256", ""});
  meta.push_back({"source", JsonObject{}});
  meta.push_back({"parallel_dims", JsonObject{}});
  meta.push_back({"outputs", JsonObject{}});
  meta.push_back({"special_handlers", JsonObject{}});
  meta.push_back({"boundary_classes", JsonObject{}});
  meta.push_back({"param_plan", JsonObject{}});
  meta.push_back({"model_name", nullptr});
  meta.push_back({"model_class", nullptr});
  for (std::string_view key :
       {"injections", "skipped_overrides", "frozen_sharded_params", "tied_pairs",
        "module_overrides", "external_state_classes", "remote_siblings"}) {
    meta.push_back({key, JsonArray{}});
  }
  meta.push_back({"entrypoints", JsonObject{{"parallelize", "hp_parallelize"}}});
  meta.push_back(
      {"covered",
       JsonObject{{"sharding_plan", false}, {"module_overrides", false}, {"axes", JsonArray{}}}});
  meta.push_back(
      {"not_covered", JsonArray{"mesh", "fsdp2", "pp", "activation_checkpoint", "compile"}});
  meta.push_back({"mesh_dim_names", nullptr});
  return meta;
}

}  // namespace

PlanFreezer::PlanFreezer(const PlanDump& plan, const FreezeOptions& options)
    : plan_(plan), options_(options), errors_(std::make_unique<ErrorList>()) {
  if (plan.modules.empty() && !options.allow_empty) {
    empty_ = true;
    return;
  }
  FrozenPlan& frozen = result_.frozen;
  if (plan.negative_dims.count > 0) {
    const std::string message =
        std::to_string(plan.negative_dims.count) +
        " placement(s) with a negative dim, first here: S(-k) reads back as an uneven shard of "
        "dim k-1; written verbatim as upstream does";
    if (options.strict) {
      errors_->add(make_error(plan.file, plan.negative_dims.first_pointer,
                              message + " (--strict makes this an error)"));
    } else {
      result_.warnings.push_back(
          make_warning(plan.file, plan.negative_dims.first_pointer, message));
    }
  }

  CanonicalStrings canonical(frozen.strings);
  FrozenParamPlan& param_plan = frozen.param_plan;
  std::size_t params = 0;
  std::size_t axes = 0;
  for (const ModuleSpec& spec : plan.modules) {
    if (!spec.params) continue;
    params += spec.params->size();
    for (const ParamPlacements& param : *spec.params) axes += param.axes.size();
  }
  param_plan.boundaries.reserve(plan.modules.size());
  param_plan.params.reserve(params);
  advise_huge_pages(param_plan.params);
  param_plan.axes.reserve(axes);
  advise_huge_pages(param_plan.axes);
  JsonArray injections;
  for (const ModuleSpec& spec : plan.modules) {
    FrozenBoundary& boundary = param_plan.boundaries.emplace_back();
    boundary.fqn = spec.fqn;
    JsonObject injection;
    if (spec.params) freeze_params(*spec.params, canonical, param_plan, boundary);
    for (const ModuleField& present : spec.fields) {
      const SpecField& field = kSpecFields[present.index];
      JsonObject& target = field.section == FieldSection::kParamPlan ? boundary.fields : injection;
      target.push_back({field.meta_key, value_to_dict(present.value, canonical)});
    }
    if (!injection.empty()) {
      injection.insert(injection.begin(), JsonMember{"match", Json(spec.fqn)});
      injections.push_back(Json(std::move(injection)));
    }
  }
  // Boundary FQNs are unique (they are the keys of the plan's `modules`).
  std::sort(param_plan.boundaries.begin(), param_plan.boundaries.end(),
            [](const FrozenBoundary& a, const FrozenBoundary& b) { return a.fqn < b.fqn; });
  frozen.injections = Json(std::move(injections));

  frozen.frozen_sharded_params = sharded_param_fqns(param_plan, frozen.strings);

  JsonArray pairs;
  pairs.reserve(plan.tied_pairs.size());
  for (const auto& pair : plan.tied_pairs) {
    JsonArray names(pair.begin(), pair.end());
    pairs.push_back(Json(std::move(names)));
  }
  frozen.tied_pairs = Json(std::move(pairs));
  frozen.special_handlers = plan.special_handlers;
  if (!plan.mesh_dim_names.empty()) {
    frozen.mesh_dim_names = Json(JsonArray(plan.mesh_dim_names.begin(), plan.mesh_dim_names.end()));
  }
}

PlanFreezer::~PlanFreezer() = default;
PlanFreezer::PlanFreezer(PlanFreezer&&) noexcept = default;

ModelChecks check_against_model(const PlanDump& plan, const ModelTree& model,
                                const FreezeOptions& options) {
  ModelChecks checks;
  if (options.verify && model.has_parameters) verify_against_model(plan, model, checks.errors);
  return checks;
}

Expected<FreezeResult> PlanFreezer::finish(const ModelTree& model) && {
  ModelChecks checks = check_against_model(plan_, model, options_);
  return std::move(*this).finish(model, std::move(checks));
}

Expected<FreezeResult> PlanFreezer::finish(const ModelTree& model, ModelChecks checks) && {
  const PlanDump& plan = plan_;
  if (empty_) {
    return make_error(plan.file, "/modules",
                      "the plan has no modules (use --allow-empty to accept an empty plan)");
  }
  FrozenPlan& frozen = result_.frozen;
  // One pass over the model's modules through an index of the (few) boundaries, instead of
  // an index of the (many) modules.
  // Most module names cannot be a boundary by their length alone: those are not hashed.
  const auto boundary_of = [&plan](std::size_t i) { return plan.modules[i].fqn; };
  NameIndex boundaries;
  boundaries.build(plan.modules.size(), boundary_of);
  constexpr std::size_t kLengths = 256;  // longer names are always looked up
  std::bitset<kLengths> boundary_lengths;
  for (const ModuleSpec& spec : plan.modules) {
    boundary_lengths.set(std::min(spec.fqn.size(), kLengths - 1));
  }
  std::vector<const std::string_view*> classes(plan.modules.size(), nullptr);
  for (const auto& [fqn, cls] : model.modules) {
    if (!boundary_lengths.test(std::min(fqn.size(), kLengths - 1))) continue;
    if (const auto i = boundaries.find(fqn, boundary_of); i && classes[*i] == nullptr) {
      classes[*i] = &cls;
    }
  }
  JsonObject boundary_classes;
  boundary_classes.reserve(plan.modules.size());
  for (std::size_t i = 0; i < plan.modules.size(); ++i) {
    const ModuleSpec& spec = plan.modules[i];
    if (const std::string_view* cls = classes[i]) {
      boundary_classes.push_back({spec.fqn, Json(frozen.strings.copy(*cls))});
    } else {
      errors_->add(make_error(plan.file, module_pointer(spec.fqn),
                              "boundary module " + quote_for_diagnostic(spec.fqn) +
                                  " is not in the model tree (" + model.file + ")"));
    }
  }
  errors_->append(std::move(checks.errors));
  if (!errors_->empty()) return errors_->take(plan.file);
  frozen.boundary_classes = Json(std::move(boundary_classes));
  return std::move(result_);
}

Expected<FreezeResult> freeze_plan(const PlanDump& plan, const ModelTree& model,
                                   const FreezeOptions& options) {
  return PlanFreezer(plan, options).finish(model);
}

std::vector<std::string> expand_sharded_params(const PlanDump& plan) {
  StringArena arena;
  const std::vector<std::string_view> fqns = sharded_param_fqns(plan, arena);
  return {fqns.begin(), fqns.end()};
}

Json FrozenParamPlan::to_json() const {
  JsonObject out;
  out.reserve(boundaries.size());
  for (const FrozenBoundary& boundary : boundaries) {
    JsonObject entry;
    entry.reserve(boundary.fields.size() + 1);
    if (boundary.has_params) {
      JsonObject members;
      members.reserve(boundary.param_count);
      for (std::size_t p = boundary.first_param; p < boundary.first_param + boundary.param_count;
           ++p) {
        JsonObject placements;
        for (std::size_t a = params[p].first_axis; a < params[p].first_axis + params[p].axis_count;
             ++a) {
          placements.push_back({axes[a].axis, Json(axes[a].placement)});
        }
        members.push_back({params[p].name, Json(std::move(placements))});
      }
      entry.push_back({"params", Json(std::move(members))});
    }
    entry.insert(entry.end(), boundary.fields.begin(), boundary.fields.end());
    out.push_back({boundary.fqn, Json(std::move(entry))});
  }
  return Json(std::move(out));
}

JsonObject meta_defaults_and_base(const Json* base) {
  JsonObject meta = default_meta();
  if (base != nullptr && base->is_object()) {
    for (const JsonMember& m : base->as_object()) set_member(meta, m.key, m.value);
  }
  for (JsonMember& m : meta) {
    if (m.key == "covered" && m.value.is_object()) {
      set_member(m.value.as_object(), "sharding_plan", true);
    }
  }
  return meta;
}

Json assemble_meta(FrozenPlan& frozen, const Json* base) {
  JsonObject meta = meta_defaults_and_base(base);
  set_member(meta, "param_plan", frozen.param_plan.to_json());
  set_member(meta, "injections", std::move(frozen.injections));
  set_member(meta, "tied_pairs", std::move(frozen.tied_pairs));
  set_member(meta, "special_handlers", std::move(frozen.special_handlers));
  set_member(
      meta, "frozen_sharded_params",
      Json(JsonArray(frozen.frozen_sharded_params.begin(), frozen.frozen_sharded_params.end())));
  set_member(meta, "boundary_classes", std::move(frozen.boundary_classes));
  set_member(meta, "mesh_dim_names", std::move(frozen.mesh_dim_names));
  return Json(std::move(meta));
}

}  // namespace hpfreeze
