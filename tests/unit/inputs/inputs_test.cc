// load_inputs (lib/src/inputs/inputs.cc) on the in-memory file system: the order of errors
// of docs/reliability.md ("The order of errors"), row by row, and what each input loads
// into. Every test runs with one CPU and with two (the reads beside the decodes), which
// must give the same result.
#include "inputs/inputs.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <future>
#include <string>
#include <string_view>
#include <vector>

#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

using Lines = std::vector<std::string>;

constexpr std::string_view kPlan =
    R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}}}})j";
constexpr std::string_view kModel =
    R"j({"modules": {"": "Net", "lin": "Linear"}, "parameters": {"lin.weight": {"shape": [8, 4]}}})j";
constexpr std::string_view kMeta =
    R"j({"param_plan": {"lin": {"params": {"weight": {"tp": "S(0)"}}}}, )j"
    R"j("frozen_sharded_params": ["lin.weight"]})j";
// A plan whose decoder fails, and one with a repeated key (the second "tp").
constexpr std::string_view kBadPlan = R"j({"modules": {"lin": {"bogus": 1}}})j";
constexpr std::string_view kDupPlan =
    R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)", "tp": "R"}}}}})j";
constexpr std::string_view kBadModel = R"j({"modules": {"lin": "Linear", "x": 1}})j";
constexpr std::string_view kDupModel =
    R"j({"modules": {"": "Net", "lin": "Linear", "lin": "Linear"}, "parameters": {}})j";
constexpr std::string_view kBroken = "{";

const std::string kPlanDecodeError = "/modules/lin/bogus: unknown module-spec field 'bogus'";
const std::string kPlanRepeat = "/modules/lin/params/weight/tp: duplicate key 'tp'";
const std::string kModelDecodeError = "/modules/x: expected a string, got an integer";
const std::string kModelRepeat = "/modules/lin: duplicate key 'lin'";
const std::string kBrokenError = ":1:2: unexpected end of input";
const std::string kMissing = ": cannot open: No such file or directory";

// A safetensors file: its 8-byte little-endian header length, the header, the data.
std::string safetensors(std::string_view header, std::size_t data) {
  std::string bytes(8, '\0');
  std::uint64_t n = header.size();
  for (std::size_t i = 0; i < 8; ++i, n >>= 8) bytes[i] = static_cast<char>(n & 0xff);
  return bytes + std::string(header) + std::string(data, '\0');
}

class LoadInputs : public ::testing::TestWithParam<std::size_t> {
 protected:
  LoadOptions options(std::string_view command) {
    LoadOptions o;
    o.command = command;
    o.files = &fs;
    o.concurrency = Concurrency{GetParam()};
    return o;
  }
  LoadedInputs load(const std::vector<InputSpec>& specs, const LoadOptions& o) {
    return load_inputs(specs, o);
  }
  LoadedInputs load(const std::vector<InputSpec>& specs, std::string_view command) {
    return load_inputs(specs, options(command));
  }
  static Lines lines(const LoadedInputs& loaded) {
    Lines out;
    for (const Diagnostic& d : loaded.errors) out.push_back(d.location_and_message());
    return out;
  }
  // freeze's three inputs.
  static std::vector<InputSpec> freeze(const std::string& plan, const std::string& model,
                                       const std::string& base = {}) {
    return {{"--plan", plan, InputKind::kPlanDump},
            {"--model", model, InputKind::kModelDump},
            {"--base", base, InputKind::kBaseMeta}};
  }
  Lines loaded_paths() const { return io_testing::with_prefix(fs.log, "load "); }

  io_testing::FakeFileSystem fs;
};

INSTANTIATE_TEST_SUITE_P(Cpus, LoadInputs, ::testing::Values(1, 2));

// ---------------------------------------------------------------------------------------
// What each input loads into

TEST_P(LoadInputs, EachKindDecodesIntoItsValue) {
  fs.add_file("plan.json", std::string(kPlan));
  fs.add_file("model.json", std::string(kModel));
  fs.add_file("base.json", R"j({"signature": "s"})j");
  LoadedInputs loaded = load(freeze("plan.json", "model.json", "base.json"), "freeze");
  ASSERT_TRUE(loaded) << lines(loaded).front();
  ASSERT_EQ(loaded.inputs.size(), 3U);
  EXPECT_EQ(loaded.inputs[0].plan().modules.size(), 1U);
  EXPECT_EQ(loaded.inputs[1].model().parameters.size(), 1U);
  EXPECT_TRUE(loaded.inputs[2].base().find("signature") != nullptr);
  for (const LoadedInput& in : loaded.inputs) {
    EXPECT_TRUE(in.stage.read && in.stage.parsed) << in.path;
    // The values view the strings; the trees are gone.
    EXPECT_TRUE(in.document.has_value()) << in.path;
  }
  EXPECT_TRUE(loaded.inputs[0].document->tree_released());
  EXPECT_TRUE(loaded.inputs[1].document->tree_released());
  EXPECT_EQ(loaded_paths(), (Lines{"load plan.json", "load model.json", "load base.json"}));

  fs.add_file("meta.json", std::string(kMeta));
  loaded = load({{"META", "meta.json", InputKind::kMeta}}, "thaw");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded.inputs[0].meta().boundaries.size(), 1U);
  EXPECT_EQ(loaded.inputs[0].path, "meta.json");
}

// A meta in memory (freeze --check's own) is not read.
TEST_P(LoadInputs, ATextInMemoryIsNotRead) {
  const std::string text(kMeta);
  LoadedInputs loaded = load({{"-o", "<freeze>", InputKind::kMeta, text}}, "freeze --check");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded.inputs[0].meta().file, "<freeze>");
  EXPECT_EQ(loaded_paths(), Lines{});
}

// The model goes first (report, check), whatever the command line's order.
TEST_P(LoadInputs, AModelLoadsFirst) {
  fs.add_file("meta.json", std::string(kMeta));
  fs.add_file("model.json", std::string(kModel));
  LoadedInputs loaded =
      load({{"META", "meta.json", InputKind::kMeta}, {"--model", "model.json", InputKind::kModel}},
           "report");
  ASSERT_TRUE(loaded);
  EXPECT_EQ(loaded_paths(), (Lines{"load model.json", "load meta.json"}));
  EXPECT_EQ(loaded.inputs[1].model().parameters.size(), 1U);
}

// ---------------------------------------------------------------------------------------
// 1. Usage: the path rules, before anything is read

TEST_P(LoadInputs, PathRulesComeBeforeAnyRead) {
  fs.add_file("plan.json", std::string(kPlan));
  fs.add_file("model.json", "{");
  const OutputFile out{"-o", "plan.json", {}, {}};
  LoadOptions o = options("freeze");
  o.outputs = std::span(&out, 1);
  EXPECT_EQ(lines(load(freeze("plan.json", "model.json"), o)),
            Lines{"plan.json: -o and --plan name the same file"});
  EXPECT_EQ(loaded_paths(), Lines{});
  // The output that may replace an input (an in-place update) may.
  o.replaceable_by = "-o";
  EXPECT_EQ(lines(load(freeze("plan.json", "model.json"), o)), Lines{"model.json" + kBrokenError});
  // Without outputs, stdout is the output: it may not be an input.
  fs.add_file("meta.json", std::string(kMeta));
  fs.descriptor_files[1] = "meta.json";
  fs.log.clear();
  EXPECT_EQ(lines(load({{"META", "meta.json", InputKind::kMeta}}, "diff")),
            Lines{"<stdout>: the output and META name the same file"});
  EXPECT_EQ(loaded_paths(), Lines{});
  // Off: the command checks them when it writes.
  o = options("thaw");
  o.check_paths = false;
  EXPECT_TRUE(load({{"META", "meta.json", InputKind::kMeta}}, o));
}

// ---------------------------------------------------------------------------------------
// 2. Every read and parse error, in command-line order; every input is read

TEST_P(LoadInputs, EveryReadAndParseErrorInCommandLineOrder) {
  fs.add_file("broken.json", std::string(kBroken));
  EXPECT_EQ(
      lines(load(freeze("broken.json", "missing.json", "gone.json"), "freeze")),
      (Lines{"broken.json" + kBrokenError, "missing.json" + kMissing, "gone.json" + kMissing}));
  EXPECT_EQ(loaded_paths(), (Lines{"load broken.json", "load missing.json", "load gone.json"}));
  // And for report, whose model loads first.
  EXPECT_EQ(lines(load({{"META", "missing.json", InputKind::kMeta},
                        {"--model", "broken.json", InputKind::kModel}},
                       "report")),
            (Lines{"missing.json" + kMissing, "broken.json" + kBrokenError}));
}

// An empty path names no file: an error of that input (not a crash on a value never
// loaded), in its turn; only a base meta may be absent.
TEST_P(LoadInputs, AnEmptyPathIsAnErrorButForTheBase) {
  fs.add_file("plan.json", std::string(kPlan));
  fs.add_file("model.json", std::string(kModel));
  fs.add_file("meta.json", std::string(kMeta));
  EXPECT_TRUE(load(freeze("plan.json", "model.json", ""), "freeze"));
  EXPECT_EQ(lines(load(freeze("", "model.json"), "freeze")),
            Lines{"--plan: an empty path names no file"});
  EXPECT_EQ(lines(load(freeze("plan.json", "", "missing.json"), "freeze")),
            (Lines{"--model: an empty path names no file", "missing.json" + kMissing}));
  EXPECT_EQ(lines(load({{"OLD", "", InputKind::kMeta},
                        {"NEW", "meta.json", InputKind::kMeta},
                        {"--model", "", InputKind::kModel}},
                       "diff")),
            (Lines{"OLD: an empty path names no file", "--model: an empty path names no file"}));
  EXPECT_EQ(lines(load({{"META", "", InputKind::kMetaKeepGoing}}, "check")),
            Lines{"META: an empty path names no file"});
  // The other inputs are read as ever; "" never is.
  EXPECT_EQ(loaded_paths(), (Lines{"load plan.json", "load model.json", "load model.json",
                                   "load plan.json", "load missing.json", "load meta.json"}));
}

// A decode error waits for the inputs that could not be loaded: those come first, alone.
TEST_P(LoadInputs, LoadErrorsHideDecodeErrors) {
  fs.add_file("bad_plan.json", std::string(kBadPlan));
  EXPECT_EQ(lines(load(freeze("bad_plan.json", "missing.json"), "freeze")),
            Lines{"missing.json" + kMissing});
}

// A dump parsed with its key check left to its decoder lists its repeated key beside the
// other inputs' load errors, where its checked parse would have.
TEST_P(LoadInputs, ARepeatedKeyIsAParseError) {
  fs.add_file("dup_plan.json", std::string(kDupPlan));
  fs.add_file("dup_model.json", std::string(kDupModel));
  fs.add_file("broken.json", std::string(kBroken));
  EXPECT_EQ(lines(load(freeze("dup_plan.json", "broken.json"), "freeze")),
            (Lines{"dup_plan.json: " + kPlanRepeat, "broken.json" + kBrokenError}));
  EXPECT_EQ(lines(load(freeze("broken.json", "dup_model.json"), "freeze")),
            (Lines{"broken.json" + kBrokenError, "dup_model.json: " + kModelRepeat}));
  EXPECT_EQ(lines(load({{"META", "missing.json", InputKind::kMeta},
                        {"--model", "dup_model.json", InputKind::kModel}},
                       "report")),
            (Lines{"missing.json" + kMissing, "dup_model.json: " + kModelRepeat}));
}

// check's decode errors are findings: when an input cannot be read, only the read errors
// (nothing was checked).
TEST_P(LoadInputs, WithFindingsOnlyTheReadErrors) {
  fs.add_file("broken.json", std::string(kBroken));
  LoadOptions o = options("check");
  o.schedule = Schedule::kReadAheadBesideFirst;
  EXPECT_EQ(lines(load({{"META", "broken.json", InputKind::kMetaKeepGoing},
                        {"--model", "missing.json", InputKind::kModel}},
                       o)),
            Lines{"missing.json" + kMissing});
  // Every I/O error, a checkpoint's too (a directory given as --model).
  fs.add_dir("ckpt");
  EXPECT_EQ(lines(load({{"META", "missing.json", InputKind::kMetaKeepGoing},
                        {"--model", "ckpt", InputKind::kModel}},
                       o)),
            (Lines{"missing.json" + kMissing,
                   "ckpt: is a directory; --model takes a file: a model tree dump, a "
                   "checkpoint's model.safetensors or a sharded one's "
                   "model.safetensors.index.json"}));
  fs.add_file("dup_model.json", std::string(kDupModel));
  EXPECT_EQ(lines(load({{"META", "broken.json", InputKind::kMetaKeepGoing},
                        {"--model", "dup_model.json", InputKind::kModel}},
                       o)),
            (Lines{"broken.json" + kBrokenError, "dup_model.json: " + kModelRepeat}));
}

// Every I/O error is a read error, also one found reading the shards an index names.
TEST_P(LoadInputs, AShardThatCannotBeReadIsAReadError) {
  fs.add_file("broken.json", std::string(kBroken));
  fs.add_dir("ck");
  fs.add_file("ck/index.json", R"j({"weight_map": {"w": "a.safetensors"}})j");
  EXPECT_EQ(lines(load({{"META", "broken.json", InputKind::kMeta},
                        {"--model", "ck/index.json", InputKind::kModel}},
                       "report")),
            (Lines{"broken.json" + kBrokenError,
                   "ck/a.safetensors" + kMissing + " (a shard of ck/index.json)"}));
  fs.add_file("ck/a.safetensors",
              safetensors(R"j({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})j", 8));
  fs.add_file("meta.json", std::string(kMeta));
  LoadedInputs loaded = load(
      {{"META", "meta.json", InputKind::kMeta}, {"--model", "ck/index.json", InputKind::kModel}},
      "report");
  ASSERT_TRUE(loaded) << lines(loaded).front();
  EXPECT_EQ(loaded.inputs[1].model().parameters.front().first, "w");
}

// ---------------------------------------------------------------------------------------
// 3. A repeated key a decoder left unreported, before any decode error

TEST_P(LoadInputs, ARepeatedKeyComesBeforeDecodeErrors) {
  fs.add_file("dup_plan.json", std::string(kDupPlan));
  fs.add_file("bad_model.json", std::string(kBadModel));
  fs.add_file("bad_plan.json", std::string(kBadPlan));
  fs.add_file("dup_model.json", std::string(kDupModel));
  EXPECT_EQ(lines(load(freeze("dup_plan.json", "bad_model.json"), "freeze")),
            Lines{"dup_plan.json: " + kPlanRepeat});
  EXPECT_EQ(lines(load(freeze("bad_plan.json", "dup_model.json"), "freeze")),
            Lines{"dup_model.json: " + kModelRepeat});
}

// ---------------------------------------------------------------------------------------
// 4. The wrong-kind or swapped-inputs line of the first input that did not decode

TEST_P(LoadInputs, AFileOfAnotherKindIsNamed) {
  fs.add_file("plan.json", std::string(kPlan));
  fs.add_file("model.json", std::string(kModel));
  fs.add_file("meta.json", std::string(kMeta));
  EXPECT_EQ(lines(load(freeze("meta.json", "model.json"), "freeze")),
            Lines{"meta.json: this looks like a codegen_meta.json; --plan wants a plan dump "
                  "(hpfreeze.plan/v1)"});
  EXPECT_EQ(lines(load(freeze("model.json", "plan.json"), "freeze")),
            Lines{"model.json: --plan and --model look swapped: --plan model.json is a model "
                  "tree dump and --model plan.json is a plan dump"});
  // A positional argument's line names the command.
  EXPECT_EQ(lines(load({{"PLAN", "model.json", InputKind::kPlanDump}}, "expand")),
            Lines{"model.json: this looks like a model tree dump (hpfreeze.model/v1); expand "
                  "wants a plan dump (hpfreeze.plan/v1)"});
  // A meta's is its decoder's.
  EXPECT_EQ(lines(load({{"META", "plan.json", InputKind::kMeta}}, "thaw")),
            Lines{"plan.json: this looks like a plan dump (hpfreeze.plan/v1); thaw wants a "
                  "codegen_meta.json"});
  // Any JSON reader names a safetensors file; freeze's --model, and a checkpoint's index
  // given there, say why a checkpoint will not do and where a model dump comes from.
  fs.add_file("model.safetensors", safetensors("{}", 0));
  EXPECT_EQ(lines(load({{"PLAN", "model.safetensors", InputKind::kPlanDump}}, "expand")),
            Lines{"model.safetensors: this looks like a safetensors checkpoint, not JSON "
                  "(report and check read one as --model FILE, by path)"});
  const std::string why =
      "--model wants a model tree dump (hpfreeze.model/v1): freeze needs the class of every "
      "module (its boundary_classes), which a checkpoint does not hold; hpfreeze-export writes "
      "a model tree dump from the live model (docs/formats.md, \"The Python exporter\"), and "
      "report and check take the checkpoint itself";
  EXPECT_EQ(lines(load(freeze("plan.json", "model.safetensors"), "freeze")),
            Lines{"model.safetensors: this looks like a safetensors checkpoint, not JSON; " + why});
  fs.add_file("model.safetensors.index.json", R"j({"weight_map": {"w": "a.safetensors"}})j");
  EXPECT_EQ(lines(load(freeze("plan.json", "model.safetensors.index.json"), "freeze")),
            Lines{"model.safetensors.index.json: this looks like a sharded checkpoint's index "
                  "(*.safetensors.index.json); " +
                  why});
}

// ---------------------------------------------------------------------------------------
// 5. The decode errors of the first input, in load order, that did not decode

TEST_P(LoadInputs, TheFirstDecodeErrorInLoadOrder) {
  fs.add_file("bad_plan.json", std::string(kBadPlan));
  fs.add_file("bad_model.json", std::string(kBadModel));
  EXPECT_EQ(lines(load(freeze("bad_plan.json", "bad_model.json"), "freeze")),
            Lines{"bad_plan.json: " + kPlanDecodeError});
  // report's model loads first, so its error comes first.
  fs.add_file("bad_meta.json", "{}");
  EXPECT_EQ(lines(load({{"META", "bad_meta.json", InputKind::kMeta},
                        {"--model", "bad_model.json", InputKind::kModel}},
                       "report")),
            Lines{"bad_model.json: " + kModelDecodeError});
  fs.add_file("model.json", std::string(kModel));
  EXPECT_EQ(lines(load({{"META", "bad_meta.json", InputKind::kMeta},
                        {"--model", "model.json", InputKind::kModel}},
                       "report")),
            Lines{"bad_meta.json: missing param_plan: the meta plans no boundary"});
}

// freeze's base meta: the plan's own `meta` is checked first, even when --base replaces it.
TEST_P(LoadInputs, ThePlansMetaBeforeTheBase) {
  fs.add_file("plan.json", R"j({"modules": {"lin": {"params": {}}}, "meta": {"covered": 1}})j");
  fs.add_file("model.json", std::string(kModel));
  fs.add_file("base.json", R"j({"covered": 2})j");
  EXPECT_EQ(lines(load(freeze("plan.json", "model.json", "base.json"), "freeze")),
            Lines{"plan.json: /meta/covered: 'covered' must be an object in a base meta"});
  EXPECT_EQ(lines(load(freeze("plan.json", "model.json"), "freeze")),
            Lines{"plan.json: /meta/covered: 'covered' must be an object in a base meta"});
  fs.add_file("plan2.json", R"j({"modules": {"lin": {"params": {}}}, "meta": {"v": 1}})j");
  EXPECT_EQ(lines(load(freeze("plan2.json", "model.json", "base.json"), "freeze")),
            Lines{"base.json: /covered: 'covered' must be an object in a base meta"});
  LoadedInputs loaded = load(freeze("plan2.json", "model.json"), "freeze");
  ASSERT_TRUE(loaded);
  EXPECT_TRUE(loaded.inputs[2].base().find("v") != nullptr);
}

TEST_P(LoadInputs, AModelWithoutParameters) {
  fs.add_file("meta.json", std::string(kMeta));
  fs.add_file("tree.json", R"j({"modules": {"": "Net"}})j");
  LoadOptions o = options("report");
  o.parameters_needed_by = "a report";
  EXPECT_EQ(lines(load({{"META", "meta.json", InputKind::kMeta},
                        {"--model", "tree.json", InputKind::kModel}},
                       o)),
            Lines{"tree.json: the model tree has no 'parameters'; a report needs their shapes"});
}

// ---------------------------------------------------------------------------------------
// Peers: inputs of one kind, each as if alone

TEST_P(LoadInputs, PeersEachAsIfAlone) {
  fs.add_file("array.json", "[1]");
  fs.add_file("broken.json", std::string(kBroken));
  fs.add_file("meta.json", std::string(kMeta));
  const auto diff = [&](const std::string& old_path, const std::string& new_path) {
    LoadOptions o = options("diff");
    o.meta = MetaReading::kValuesOnly;
    return lines(
        load({{"OLD", old_path, InputKind::kMeta}, {"NEW", new_path, InputKind::kMeta}}, o));
  };
  EXPECT_EQ(diff("array.json", "broken.json"),
            (Lines{"array.json: expected a JSON object (a codegen_meta.json), got an array",
                   "broken.json" + kBrokenError}));
  EXPECT_EQ(diff("missing.json", "array.json"),
            (Lines{"missing.json" + kMissing,
                   "array.json: expected a JSON object (a codegen_meta.json), got an array"}));
  EXPECT_EQ(diff("meta.json", "meta.json"), Lines{});
}

// ---------------------------------------------------------------------------------------
// check's META: decode errors are findings, not load errors

TEST_P(LoadInputs, AKeepGoingMetaKeepsItsFindings) {
  fs.add_file("meta.json", R"j({"param_plan": {"lin": {"params": {"weight": {"tp": "Q"}}}}})j");
  LoadOptions o = options("check");
  o.schedule = Schedule::kReadAheadBesideFirst;
  LoadedInputs loaded = load({{"META", "meta.json", InputKind::kMetaKeepGoing}}, o);
  ASSERT_TRUE(loaded);
  ASSERT_EQ(loaded.inputs[0].findings.size(), 1U);
  EXPECT_EQ(loaded.inputs[0].findings[0].pointer, "/param_plan/lin/params/weight/tp");
  EXPECT_TRUE(loaded.inputs[0].has_value());
  // No meta at all: no value, one finding.
  fs.add_file("array.json", "[]");
  loaded = load({{"META", "array.json", InputKind::kMetaKeepGoing}}, o);
  ASSERT_TRUE(loaded);
  EXPECT_FALSE(loaded.inputs[0].has_value());
  ASSERT_EQ(loaded.inputs[0].findings.size(), 1U);
}

// ---------------------------------------------------------------------------------------
// Several independent metas (check PATH...): each loaded by a call of its own, the same
// whether in turn or from several threads at once, each with the path it came from

TEST_P(LoadInputs, SeveralMetasEachOnItsOwnFromSeveralThreads) {
  std::vector<std::string> paths;
  for (int i = 0; i < 8; ++i) {
    paths.push_back("m" + std::to_string(i) + ".json");
    fs.add_file(paths.back(), i % 3 == 1 ? std::string(kBroken) : std::string(kMeta));
  }
  paths.push_back("missing.json");
  LoadOptions o = options("check");
  o.check_paths = false;  // checked once, for every path, before
  const auto load_one = [&o](const std::string& path) {
    LoadedInputs loaded =
        load_inputs(std::vector<InputSpec>{{"META", path, InputKind::kMetaKeepGoing}}, o);
    Lines out{loaded.inputs[0].path};
    for (const Diagnostic& d : loaded.errors) out.push_back(d.location_and_message());
    if (loaded.inputs[0].has_value()) {
      out.push_back(std::to_string(loaded.inputs[0].meta().boundaries.size()) + " boundary");
    }
    return out;
  };
  std::vector<Lines> in_turn;
  for (const std::string& path : paths) in_turn.push_back(load_one(path));
  EXPECT_EQ(in_turn[0], (Lines{"m0.json", "1 boundary"}));
  EXPECT_EQ(in_turn[1], (Lines{"m1.json", "m1.json" + kBrokenError}));
  EXPECT_EQ(in_turn.back(), (Lines{"missing.json", "missing.json" + kMissing}));
  std::vector<std::future<Lines>> at_once;
  for (const std::string& path : paths) {
    at_once.push_back(std::async(std::launch::async, load_one, path));
  }
  for (std::size_t i = 0; i < paths.size(); ++i) EXPECT_EQ(at_once[i].get(), in_turn[i]);
}

}  // namespace
}  // namespace hpfreeze
