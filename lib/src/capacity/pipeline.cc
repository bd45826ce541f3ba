// The layer stack and the stage split (pipeline.h).
#include "capacity/pipeline.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "capacity/chunk_geometry.h"
#include "capacity/usage_error.h"

namespace hpfreeze {
namespace {

// A layer number: decimal digits without a leading zero ("0", "61"), below 2^63.
std::optional<std::uint64_t> layer_number(std::string_view part) {
  if (part.empty() || part.size() > 18 || (part.size() > 1 && part[0] == '0')) return std::nullopt;
  std::uint64_t out = 0;
  for (char c : part) {
    if (c < '0' || c > '9') return std::nullopt;
    out = out * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return out;
}

// L when `numbers` (any order, repeats allowed) are every number from 0 to L-1 and no
// other; else the first missing one, as the second.
std::pair<std::optional<std::uint64_t>, std::uint64_t> run_length(
    std::vector<std::uint64_t>& numbers) {
  std::sort(numbers.begin(), numbers.end());
  numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    if (numbers[i] != i) return {std::nullopt, i};
  }
  return {numbers.size(), 0};
}

struct Run {
  std::vector<std::uint64_t> numbers;
  std::uint64_t elements = 0;
  std::size_t depth = 0;  // dotted components of the prefix
  std::size_t first = 0;  // the order the runs were first named in
};

}  // namespace

std::optional<LayerStack> find_layer_stack(std::span<const TreeName> names) {
  std::unordered_map<std::string_view, Run> runs;
  for (const TreeName& n : names) {
    // The first numbered component: its prefix names a run; anything deeper lies inside a
    // numbered module, and so is nested.
    std::size_t start = 0;
    for (std::size_t depth = 0;; ++depth) {
      const std::size_t end = n.name.find('.', start);
      const std::optional<std::uint64_t> number =
          layer_number(n.name.substr(start, end == std::string_view::npos ? end : end - start));
      if (number) {
        if (start == 0) break;  // a number first: no prefix
        auto [it, fresh] = runs.try_emplace(n.name.substr(0, start - 1));
        if (fresh) it->second = Run{{}, 0, depth, runs.size()};
        it->second.numbers.push_back(*number);
        chunking::saturating_add(it->second.elements, n.elements);
        break;
      }
      if (end == std::string_view::npos) break;
      start = end + 1;
    }
  }
  std::optional<LayerStack> best;
  const Run* chosen = nullptr;
  for (auto& [prefix, run] : runs) {
    const std::optional<std::uint64_t> layers = run_length(run.numbers).first;
    if (!layers) continue;
    const bool better = chosen == nullptr || run.depth < chosen->depth ||
                        (run.depth == chosen->depth &&
                         (run.elements > chosen->elements ||
                          (run.elements == chosen->elements && run.first < chosen->first)));
    if (!better) continue;
    chosen = &run;
    best = LayerStack{std::string(prefix), *layers, false};
  }
  return best;
}

Expected<LayerStack> named_layer_stack(std::span<const TreeName> names, std::string_view prefix) {
  std::vector<std::uint64_t> numbers;
  for (const TreeName& n : names) {
    if (n.name.size() <= prefix.size() || !n.name.starts_with(prefix) ||
        n.name[prefix.size()] != '.') {
      continue;
    }
    const std::string_view rest = n.name.substr(prefix.size() + 1);
    if (const std::optional<std::uint64_t> number = layer_number(rest.substr(0, rest.find('.')))) {
      numbers.push_back(*number);
    }
  }
  const std::string quoted = quote_for_diagnostic(prefix);
  if (numbers.empty()) {
    return capacity_detail::usage_error("--pp-stack: the model has no layer " +
                                        quote_for_diagnostic(std::string(prefix) + ".0") +
                                        " (no module or parameter is named " + quoted + ".N)");
  }
  const auto [layers, missing] = run_length(numbers);
  if (!layers) {
    return capacity_detail::usage_error(
        "--pp-stack: the layers of " + quoted + " are not numbered 0 to " +
        std::to_string(numbers.size() - 1) + ": " +
        quote_for_diagnostic(std::string(prefix) + "." + std::to_string(missing)) + " is missing");
  }
  return LayerStack{std::string(prefix), *layers, true};
}

std::optional<std::uint64_t> stack_layer(const LayerStack& stack, std::string_view name) {
  const std::string_view prefix = stack.prefix;
  if (name.size() <= prefix.size() || !name.starts_with(prefix) || name[prefix.size()] != '.') {
    return std::nullopt;
  }
  const std::string_view rest = name.substr(prefix.size() + 1);
  const std::optional<std::uint64_t> number = layer_number(rest.substr(0, rest.find('.')));
  if (!number || *number >= stack.layers) return std::nullopt;
  return number;
}

StagePosition::Side checkpoint_side(std::string_view name) {
  static constexpr std::array<std::string_view, 4> kEmbeddings{"embed", "wte", "wpe",
                                                               "word_embeddings"};
  const bool embedding = std::any_of(kEmbeddings.begin(), kEmbeddings.end(), [name](auto word) {
    return name.find(word) != std::string_view::npos;
  });
  return embedding ? StagePosition::Side::kBefore : StagePosition::Side::kAfter;
}

StageSplit::StageSplit(std::uint64_t layers, std::uint64_t pp,
                       const std::vector<std::uint64_t>& given) {
  std::uint64_t end = 0;
  if (!given.empty()) {
    for (std::uint64_t n : given) ends_.push_back(end += n);
    return;
  }
  const std::uint64_t stages = std::max<std::uint64_t>(pp, 1);
  for (std::uint64_t s = 0; s < stages; ++s) {
    ends_.push_back(end += layers / stages + (s < layers % stages ? 1 : 0));
  }
}

std::size_t StageSplit::stage_of(const StagePosition& at) const {
  switch (at.side) {
    case StagePosition::Side::kBefore:
      return 0;
    case StagePosition::Side::kAfter:
      return ends_.size() - 1;
    case StagePosition::Side::kLayer:
      break;
  }
  const auto it = std::upper_bound(ends_.begin(), ends_.end(), at.layer);
  return std::min(static_cast<std::size_t>(it - ends_.begin()), ends_.size() - 1);
}

std::optional<std::pair<std::uint64_t, std::uint64_t>> StageSplit::layers(std::size_t stage) const {
  const std::uint64_t begin = stage == 0 ? 0 : ends_[stage - 1];
  if (ends_[stage] == begin) return std::nullopt;
  return std::pair{begin, ends_[stage] - 1};
}

}  // namespace hpfreeze
