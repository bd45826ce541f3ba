// load_each (load_each.h): the metas of a run of several, each loaded and passed on, on up to
// the run's CPUs.
#include "inputs/load_each.h"

#include <memory>
#include <vector>

#include "base/background_task.h"

namespace hpfreeze {

std::size_t load_each(const EachMetaLoad& load, const std::function<void(std::size_t)>& found,
                      const std::function<void(EachMeta&)>& pass) {
  std::mutex taking;  // the walk, and the order of the metas
  std::size_t taken = 0;
  // The first two are found first: whether the run has several decides how each is loaded
  // (and what the pass says about it).
  std::deque<MetaSource> ahead;
  for (int i = 0; i < 2; ++i) {
    if (std::optional<MetaSource> source = load.next()) ahead.push_back(std::move(*source));
  }
  const bool several = ahead.size() > 1;
  const Concurrency run = load.options.concurrency;
  const Concurrency each = several ? Concurrency{} : run;
  const auto take = [&]() -> std::optional<std::pair<std::size_t, MetaSource>> {
    const std::lock_guard<std::mutex> lock(taking);
    std::optional<MetaSource> source;
    if (!ahead.empty()) {
      source = std::move(ahead.front());
      ahead.pop_front();
    } else {
      source = load.next();
    }
    if (!source) return std::nullopt;
    found(taken);
    return std::pair(taken++, std::move(*source));
  };
  const auto work = [&] {
    while (std::optional<std::pair<std::size_t, MetaSource>> next = take()) {
      MetaSource& source = next->second;
      EachMeta meta{next->first, source, nullptr, several};
      if (source.error) {
        pass(meta);
        continue;
      }
      std::vector<InputSpec> specs{load.meta};
      specs.front().path = source.path;
      specs.front().opened = source.file.get();
      specs.insert(specs.end(), load.beside.begin(), load.beside.end());
      LoadOptions options = load.options;
      options.concurrency = each;
      LoadedInputs loaded = load_inputs(specs, options);
      source.file.reset();  // read: its descriptor goes now, the directory's after the pass
      meta.loaded = &loaded;
      pass(meta);
    }
  };
  using Helper = BackgroundTask<decltype(work)>;
  std::vector<std::unique_ptr<Helper>> helpers;
  for (std::size_t t = 1; several && t < run.cpus; ++t) {
    helpers.push_back(std::make_unique<Helper>(run, work));
  }
  work();
  for (const std::unique_ptr<Helper>& helper : helpers) helper->wait();
  return taken;
}

}  // namespace hpfreeze
