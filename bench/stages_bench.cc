// Micro-benchmarks of each freeze stage on one pair of dumps made by bench/gen:
//
//   bench/gen deepseek -o /tmp/ds
//   hpfreeze_stages_bench --inputs=/tmp/ds [--benchmark_filter=...]
//
// (or HPFREEZE_BENCH_INPUTS=/tmp/ds). Byte rates are over the stage's input (both dumps
// for the whole pipeline, the meta for encoding and writing); item rates count planned
// params.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

#include "commands/freeze_steps.h"
#include "dumps/plan.h"
#include "freeze/freeze.h"
#include "freeze/reference.h"
#include "hpfreeze/base/concurrency.h"
#include "hpfreeze/commands/freeze_command.h"
#include "io/io.h"
#include "json/encode.h"
#include "json/json_document.h"

namespace hpfreeze {
namespace {

// The stages run as hpfreeze runs them: on the CPUs this process may use (`taskset -c 0`
// for one).
const Concurrency kCpus = Concurrency::of_this_process();

std::string g_inputs;  // directory holding plan.json and model.json

template <class T>
T take(Expected<T> result, std::string_view what) {
  if (!result) {
    throw std::runtime_error(std::string(what) + ": " +
                             result.errors().front().location_and_message());
  }
  return std::move(*result);
}

JsonDocument load(const std::string& path) {
  InputFile input = take(read_input(path), "read");
  return take(parse_json_document(input.display_name, std::move(input.bytes)), "parse");
}

// Everything the stages start from, built once.
struct Fixture {
  std::string plan_path = g_inputs + "/plan.json";
  std::string model_path = g_inputs + "/model.json";
  std::string out_path = g_inputs + "/bench_out.json";
  std::string plan_bytes = take(read_input(plan_path), "read").bytes;
  std::string model_bytes = take(read_input(model_path), "read").bytes;
  JsonDocument plan_doc = load(plan_path);
  JsonDocument model_doc = load(model_path);
  PlanDump plan = take(decode_plan_dump(plan_doc, kCpus), "decode plan");
  ModelTree model = take(decode_model_tree(model_doc), "decode model");
  std::int64_t params = count_params(plan);
  std::string meta_bytes = render();

  static std::int64_t count_params(const PlanDump& p) {
    std::int64_t n = 0;
    for (const ModuleSpec& m : p.modules) {
      if (m.params) n += static_cast<std::int64_t>(m.params->size());
    }
    return n;
  }
  [[nodiscard]] std::int64_t input_size() const {
    return static_cast<std::int64_t>(plan_bytes.size() + model_bytes.size());
  }
  [[nodiscard]] std::string render() const {
    FreezeResult frozen = take(freeze_plan(plan, model, {}), "freeze");
    return encode_meta(frozen.frozen, meta_defaults_and_base(plan.meta ? &*plan.meta : nullptr),
                       kCpus);
  }
  [[nodiscard]] FreezeRequest request() const {
    FreezeRequest r;
    r.concurrency = kCpus;
    r.plan_path = plan_path;
    r.model_path = model_path;
    r.output_path = out_path;
    return r;
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_ReadInputs(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    InputFile plan = take(read_input(f.plan_path), "read");
    InputFile model = take(read_input(f.model_path), "read");
    benchmark::DoNotOptimize(plan.bytes.data());
    benchmark::DoNotOptimize(model.bytes.data());
  }
  state.SetBytesProcessed(state.iterations() * f.input_size());
}

// simdjson DOM parse plus the duplicate-key and depth walk, on bytes already in memory.
void BM_ParseDocuments(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    state.PauseTiming();
    std::string plan = f.plan_bytes;
    std::string model = f.model_bytes;
    plan.reserve(plan.size() + kInputPadding);
    model.reserve(model.size() + kInputPadding);
    state.ResumeTiming();
    JsonDocument p = take(parse_json_document("plan.json", std::move(plan)), "parse");
    JsonDocument m = take(parse_json_document("model.json", std::move(model)), "parse");
    benchmark::DoNotOptimize(p.root());
    benchmark::DoNotOptimize(m.root());
  }
  state.SetBytesProcessed(state.iterations() * f.input_size());
}

// Reference for BM_ParseDocuments: the bare simdjson DOM parse the raw baseline does
// (fresh parsers, no checks of ours).
void BM_SimdjsonParse(benchmark::State& state) {
  Fixture& f = fixture();
  const simdjson::padded_string plan(f.plan_bytes);
  const simdjson::padded_string model(f.model_bytes);
  for (auto _ : state) {
    simdjson::dom::parser plan_parser;
    simdjson::dom::parser model_parser;
    if (plan_parser.parse(plan).error() || model_parser.parse(model).error()) {
      state.SkipWithError("parse failed");
    }
  }
  state.SetBytesProcessed(state.iterations() * f.input_size());
}

void BM_DecodePlan(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    PlanDump plan = take(decode_plan_dump(f.plan_doc, kCpus), "decode plan");
    benchmark::DoNotOptimize(plan.modules.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.plan_bytes.size()));
  state.SetItemsProcessed(state.iterations() * f.params);
}

void BM_DecodeModel(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    ModelTree model = take(decode_model_tree(f.model_doc), "decode model");
    benchmark::DoNotOptimize(model.parameters.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.model_bytes.size()));
  state.SetItemsProcessed(state.iterations() * f.params);
}

// The freeze passes (canonical strings, param_plan, injections, boundary classes, the
// checks against the model, frozen_sharded_params), then the meta's defaults and base, as
// freeze runs them.
void BM_FreezePasses(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    FreezeResult frozen = take(freeze_plan(f.plan, f.model, {}), "freeze");
    JsonObject top = meta_defaults_and_base(f.plan.meta ? &*f.plan.meta : nullptr);
    benchmark::DoNotOptimize(&frozen);
    benchmark::DoNotOptimize(&top);
  }
  state.SetItemsProcessed(state.iterations() * f.params);
}

void BM_EncodeMeta(benchmark::State& state) {
  Fixture& f = fixture();
  FreezeResult frozen = take(freeze_plan(f.plan, f.model, {}), "freeze");
  const JsonObject top = meta_defaults_and_base(f.plan.meta ? &*f.plan.meta : nullptr);
  for (auto _ : state) {
    std::string bytes = encode_meta(frozen.frozen, top, kCpus);
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.meta_bytes.size()));
  state.SetItemsProcessed(state.iterations() * f.params);
}

void BM_WriteOutput(benchmark::State& state) {
  Fixture& f = fixture();
  for (auto _ : state) {
    Expected<WriteOutcome> written = write_output(f.out_path, f.meta_bytes, {});
    if (!written) state.SkipWithError("write failed");
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(f.meta_bytes.size()));
}

// Read, parse, decode, freeze, assemble, encode: everything but the write.
void BM_RenderMeta(benchmark::State& state) {
  Fixture& f = fixture();
  const FreezeRequest request = f.request();
  for (auto _ : state) {
    RenderedMeta rendered = take(render_meta(request), "render");
    benchmark::DoNotOptimize(rendered.bytes.data());
  }
  state.SetBytesProcessed(state.iterations() * f.input_size());
  state.SetItemsProcessed(state.iterations() * f.params);
}

// What `hpfreeze freeze --plan P --model M -o OUT` does after parsing its flags.
void BM_Pipeline(benchmark::State& state) {
  Fixture& f = fixture();
  const FreezeRequest request = f.request();
  for (auto _ : state) {
    const CommandResult result = run_freeze(request);
    if (result.failed()) state.SkipWithError("freeze failed");
  }
  state.SetBytesProcessed(state.iterations() * f.input_size());
  state.SetItemsProcessed(state.iterations() * f.params);
}

BENCHMARK(BM_ReadInputs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SimdjsonParse)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ParseDocuments)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodePlan)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DecodeModel)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_FreezePasses)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_EncodeMeta)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_WriteOutput)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_RenderMeta)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Pipeline)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace hpfreeze

int main(int argc, char** argv) {
  // Our own flag first; Google Benchmark rejects flags it does not know.
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.starts_with("--inputs=")) {
      hpfreeze::g_inputs = std::string(arg.substr(9));
    } else {
      argv[kept++] = argv[i];
    }
  }
  argc = kept;
  if (hpfreeze::g_inputs.empty()) {
    if (const char* env = std::getenv("HPFREEZE_BENCH_INPUTS")) hpfreeze::g_inputs = env;
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  if (hpfreeze::g_inputs.empty()) {
    std::fprintf(stderr,
                 "usage: hpfreeze_stages_bench --inputs=DIR [benchmark flags]\n"
                 "DIR holds plan.json and model.json, e.g. from `bench/gen deepseek -o DIR`\n");
    return 2;
  }
  try {
    hpfreeze::fixture();
  } catch (const std::exception& e) {
    std::fprintf(stderr, "hpfreeze_stages_bench: %s\n", e.what());
    return 1;
  }
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
