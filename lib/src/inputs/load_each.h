#pragma once
// The schedule of a run of several independent metas (check PATH...): each meta a MetaFinder
// gives (io/meta_tree.h) is loaded by load_inputs as if it were the run's only input and
// handed to the pass, in turn or on several threads, one meta on each at a time: read,
// checked, released. The walk runs on whichever thread needs the next meta, one at a time,
// so a meta is opened at its turn and only the metas being checked are held open. Only
// commands/ includes this layer.

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "inputs/inputs.h"
#include "io/meta_tree.h"

namespace hpfreeze {

// One meta of the run, as the pass gets it.
struct EachMeta {
  std::size_t index = 0;  // in the order the metas were found: the output's order
  MetaSource& source;     // an error of the walk, or a meta (source.file: open, to be read)
  // What loading the meta (and the inputs beside it) gave; null for a source that is an error.
  LoadedInputs* loaded = nullptr;
  bool several = false;  // the run has more than one meta or error
};

// What a run of several is made of: where its metas come from, how each is loaded.
struct EachMetaLoad {
  std::function<std::optional<MetaSource>()> next;  // the next meta, nullopt after the last
  InputSpec meta;                     // the meta's spec: its flag and kind (path, opened: each)
  std::span<const InputSpec> beside;  // loaded with every meta, after it (check's --model)
  LoadOptions options;                // options.concurrency: the CPUs of the whole run
};

// Loads every meta of `load` and runs `pass` on each. One meta alone is loaded with the
// run's CPUs (its read beside the model's); several are spread over them, one CPU each. `found`
// is called in order, on one thread at a time, as each meta is taken (for the caller's place
// to put what `pass` gives); `pass` on any thread, for distinct metas at once. Returns how
// many metas (and errors) there were.
std::size_t load_each(const EachMetaLoad& load, const std::function<void(std::size_t)>& found,
                      const std::function<void(EachMeta&)>& pass);

// load_each with the pass's results in the order the metas were found.
template <class Outcome>
std::vector<Outcome> load_each(const EachMetaLoad& load,
                               const std::function<Outcome(EachMeta&)>& pass) {
  std::deque<Outcome> outcomes;  // grows at the end only: a slot stays where it is
  std::mutex growing;
  load_each(
      load,
      [&](std::size_t) {
        const std::lock_guard<std::mutex> lock(growing);
        outcomes.emplace_back();
      },
      [&](EachMeta& meta) {
        Outcome outcome = pass(meta);
        const std::lock_guard<std::mutex> lock(growing);
        outcomes[meta.index] = std::move(outcome);
      });
  return {std::make_move_iterator(outcomes.begin()), std::make_move_iterator(outcomes.end())};
}

}  // namespace hpfreeze
