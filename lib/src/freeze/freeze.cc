// The freeze passes (freeze.h): the plan-only part, then what needs the model; the meta
// assembly is in meta_assembly.cc, the sort by name in sort_by_name.h.
#include "freeze/freeze.h"

#include <algorithm>
#include <array>
#include <bit>
#include <bitset>
#include <cstdint>
#include <cstring>
#include <unordered_map>

#include "base/huge_pages.h"
#include "base/name_index.h"
#include "dumps/coverage.h"
#include "freeze/sort_by_name.h"
#include "spec/findings.h"

namespace hpfreeze {

namespace {

using freeze_detail::sort_by_name;

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

  // Kind, unevenness, dim and split factor packed into one number, each in bits of its own:
  // the kind in as many as the kinds need (2 for four), then the uneven bit, dim +
  // kFieldLimit in 29 bits, the split factor in 28. kNoKey for Partial and for numbers too
  // large to pack.
  static constexpr int kKindBits = std::bit_width(kPlacementKinds - 1);
  static constexpr int kDimShift = kKindBits + 1;
  static constexpr int kSplitShift = kDimShift + 29;
  static_assert(kSplitShift + 28 <= 64, "a placement's value key no longer fits in 64 bits");
  static std::uint64_t value_key(const Placement& p) {
    if (p.kind == PlacementKind::kPartial) return kNoKey;
    if (p.kind == PlacementKind::kReplicate) return 0;
    if (p.dim < -kFieldLimit || p.dim >= kFieldLimit || p.split_factor < 0 ||
        p.split_factor >= kFieldLimit) {
      return kNoKey;
    }
    return static_cast<std::uint64_t>(p.kind) | (std::uint64_t{p.uneven_shard} << kKindBits) |
           (static_cast<std::uint64_t>(p.dim + kFieldLimit) << kDimShift) |
           (static_cast<std::uint64_t>(p.split_factor) << kSplitShift);
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
// `planned` flags each model parameter found here, for the coverage rule; returns how many.
std::size_t verify_against_model(const PlanDump& plan, const ModelTree& model, ErrorList& errors,
                                 std::vector<std::uint8_t>& planned) {
  planned.assign(model.parameters.size(), 0);
  std::size_t found = 0;
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
      // A hit leaves the cursor after it; two keys may join to one name.
      found += planned[cursor - 1] == 0 ? 1 : 0;
      planned[cursor - 1] = 1;
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
  return found;
}

// How many of the uncovered parameters the warning names.
constexpr std::size_t kUncoveredNamed = 3;

// The one line about the trainable parameters no planned key covers, at the first of them
// in the model (check --model lists each, counted the same way).
Diagnostic uncovered_warning(const PlanDump& plan, const ModelTree& model,
                             const std::vector<std::size_t>& uncovered) {
  const std::size_t n = uncovered.size();
  std::string message = plural(n, "trainable parameter") + (n == 1 ? " is" : " are") +
                        " not covered by any planned parameter of " + plan.file +
                        (n == 1 ? ": " : ", first here: ");
  for (std::size_t k = 0; k < std::min(n, kUncoveredNamed); ++k) {
    if (k > 0) message += ", ";
    message += quote_for_diagnostic(model.parameters[uncovered[k]].first);
  }
  if (n > kUncoveredNamed) message += " and " + std::to_string(n - kUncoveredNamed) + " more";
  message += n == 1 ? " (upstream's preflight refuses it at run time)"
                    : " (upstream's preflight refuses them at run time)";
  // Check's rule (HPF305), counted once: a warning in freeze (--strict makes it an error).
  Diagnostic d = make_finding(finding_rule("HPF305"), model.file,
                              model.parameter_pointer(model.parameters[uncovered[0]].first),
                              std::move(message));
  d.severity = Severity::kWarning;
  return d;
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
  if (options.verify && model.has_parameters) {
    std::vector<std::uint8_t> planned;
    // When every parameter is a planned key itself, none is uncovered.
    if (verify_against_model(plan, model, checks.errors, planned) < model.parameters.size()) {
      checks.uncovered = uncovered_trainable_parameters(
          model, [&plan] { return CoverageIndex(planned_keys(plan)); }, planned);
    }
  }
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
  if (!checks.uncovered.empty()) {
    Diagnostic uncovered = uncovered_warning(plan, model, checks.uncovered);
    if (options_.strict) {
      uncovered.severity = Severity::kError;
      uncovered.message += " (--strict makes this an error)";
      errors_->add(std::move(uncovered));
    } else {
      result_.warnings.push_back(std::move(uncovered));
    }
  }
  if (!errors_->empty()) return errors_->take(plan.file);
  frozen.boundary_classes = Json(std::move(boundary_classes));
  return std::move(result_);
}

std::vector<std::string> expand_sharded_params(const PlanDump& plan) {
  StringArena arena;
  const std::vector<std::string_view> fqns = sharded_param_fqns(plan, arena);
  return {fqns.begin(), fqns.end()};
}

}  // namespace hpfreeze
