// run_freeze on the in-memory file system: the stage figures behind -v, and the one-line
// diagnostics for a file of the wrong kind.
#include "hpfreeze/commands/freeze_command.h"

#include <gtest/gtest.h>

#include <string>

#include "hpfreeze/base/concurrency.h"
#include "io/fake_file_system.h"

namespace hpfreeze {
namespace {

// These tests are in the threaded (TSan) set: they give the command a second CPU.
constexpr Concurrency kTwoCpus{2};

// The golden cases' inputs, as the tests name them on the in-memory disk.
const std::string kCases = "cases";

class FreezeCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const char* name : {"plan.json", "model.json", "expected.json"}) {
      const std::string tiny = kCases + "/tiny/" + name;
      disk_.add_copy(tiny, std::string(HPFREEZE_TESTDATA_DIR) + "/" + tiny);
    }
  }

  static std::string path(const std::string& name) { return name; }
  // A file here holding `text`.
  std::string file(const std::string& name, const std::string& text) {
    disk_.add_file(name, text);
    return name;
  }
  std::string read_file(const std::string& name) const {
    return disk_.nodes.at(io_testing::FakeFileSystem::key(name)).bytes;
  }
  bool exists(const std::string& name) const {
    return disk_.nodes.count(io_testing::FakeFileSystem::key(name)) != 0;
  }
  CommandResult run_freeze(FreezeRequest request, FreezeStages* stages = nullptr) {
    request.files = &disk_;
    return hpfreeze::run_freeze(request, stages);
  }
  // The single diagnostic of a run, as "FILE: message".
  std::string only_error(const FreezeRequest& request) {
    CommandResult result = run_freeze(request);
    if (result.diagnostics.size() != 1)
      return std::to_string(result.diagnostics.size()) + " errors";
    const Diagnostic& d = result.diagnostics.front();
    EXPECT_EQ(d.error_class, ErrorClass::kRejected);
    return d.location_and_message();
  }

  io_testing::FakeFileSystem disk_;
};

TEST_F(FreezeCommand, StagesOfASuccessfulRun) {
  FreezeRequest request;
  request.concurrency = kTwoCpus;
  request.plan_path = kCases + "/tiny/plan.json";
  request.model_path = kCases + "/tiny/model.json";
  request.output_path = path("meta.json");
  FreezeStages stages;
  CommandResult result = run_freeze(request, &stages);
  ASSERT_FALSE(result.failed());
  ASSERT_EQ(stages.inputs.size(), 2u);
  EXPECT_EQ(stages.inputs[0].name, request.plan_path);
  EXPECT_EQ(stages.inputs[0].bytes, read_file(request.plan_path).size());
  EXPECT_EQ(stages.inputs[1].bytes, read_file(request.model_path).size());
  EXPECT_TRUE(stages.inputs[0].read && stages.inputs[0].parsed);
  EXPECT_TRUE(stages.inputs[1].read && stages.inputs[1].parsed);
  EXPECT_TRUE(stages.decoded);
  EXPECT_EQ(stages.modules, 1u);  // lin
  EXPECT_EQ(stages.planned_params, 1u);
  EXPECT_EQ(stages.model_modules, 2u);
  EXPECT_EQ(stages.model_parameters, 1u);
  EXPECT_TRUE(stages.frozen);
  EXPECT_EQ(stages.sharded_params, 1u);  // lin.weight
  EXPECT_TRUE(stages.encoded);
  const std::string expected = read_file(kCases + "/tiny/expected.json");
  EXPECT_EQ(stages.output_bytes, expected.size());
  EXPECT_TRUE(stages.written);
  EXPECT_FALSE(stages.output_unchanged);
  EXPECT_EQ(read_file(request.output_path), expected);

  request.if_changed = true;
  ASSERT_FALSE(run_freeze(request, &stages).failed());
  EXPECT_TRUE(stages.written);
  EXPECT_TRUE(stages.output_unchanged);
  request.if_changed = false;
  ASSERT_FALSE(run_freeze(request, &stages).failed());
  EXPECT_FALSE(stages.output_unchanged);
}

TEST_F(FreezeCommand, StagesStopWhereTheRunFailed) {
  FreezeRequest request;
  request.concurrency = kTwoCpus;
  request.plan_path =
      file("plan.json", R"j({"modules": {"x": {"params": {"w": {"tp": "S(0)"}}}}})j");
  request.model_path = kCases + "/tiny/model.json";
  request.output_path = path("meta.json");
  FreezeStages stages;
  CommandResult result = run_freeze(request, &stages);
  ASSERT_TRUE(result.failed());  // no module 'x' in the model
  EXPECT_TRUE(stages.decoded);
  EXPECT_FALSE(stages.frozen);
  EXPECT_FALSE(stages.encoded);
  EXPECT_FALSE(stages.written);
  EXPECT_FALSE(exists(request.output_path));

  request.plan_path = path("missing.json");
  result = run_freeze(request, &stages);
  ASSERT_TRUE(result.io_failed());
  EXPECT_FALSE(stages.inputs[0].read);
  EXPECT_FALSE(stages.decoded);
}

TEST_F(FreezeCommand, AFileOfTheWrongKindIsNamed) {
  const std::string plan = kCases + "/tiny/plan.json";
  const std::string model = kCases + "/tiny/model.json";
  const std::string meta = kCases + "/tiny/expected.json";
  FreezeRequest request;
  request.concurrency = kTwoCpus;
  request.output_path = path("meta.json");

  request.plan_path = meta;
  request.model_path = model;
  EXPECT_EQ(only_error(request),
            meta +
                ": this looks like a codegen_meta.json; --plan wants a plan dump "
                "(hpfreeze.plan/v1)");
  request.plan_path = model;
  request.model_path = plan;
  EXPECT_EQ(only_error(request), model + ": --plan and --model look swapped: --plan " + model +
                                     " is a model tree dump and --model " + plan +
                                     " is a plan dump");
  request.plan_path = model;
  request.model_path = model;
  EXPECT_EQ(only_error(request),
            model +
                ": this looks like a model tree dump (hpfreeze.model/v1); --plan wants a plan "
                "dump (hpfreeze.plan/v1)");
  request.plan_path = plan;
  request.model_path = plan;
  EXPECT_EQ(only_error(request),
            plan +
                ": this looks like a plan dump (hpfreeze.plan/v1); --model wants a model tree "
                "dump (hpfreeze.model/v1)");
  request.model_path = meta;
  EXPECT_EQ(only_error(request),
            meta +
                ": this looks like a codegen_meta.json; --model wants a model tree dump "
                "(hpfreeze.model/v1)");
  EXPECT_FALSE(exists(request.output_path));
}

// A dump given as --base would put its format, modules or parameters into the meta, which
// check, thaw and diff then refuse: it is named as --plan and --model name theirs.
TEST_F(FreezeCommand, ABaseOfTheWrongKindIsNamed) {
  const std::string plan = kCases + "/tiny/plan.json";
  const std::string model = kCases + "/tiny/model.json";
  FreezeRequest request;
  request.concurrency = kTwoCpus;
  request.plan_path = plan;
  request.model_path = model;
  request.output_path = file("meta.json", "old");
  const std::string plan_dump =
      "this looks like a plan dump (hpfreeze.plan/v1); --base wants a "
      "codegen_meta.json";
  const std::string model_dump =
      "this looks like a model tree dump (hpfreeze.model/v1); --base "
      "wants a codegen_meta.json";
  request.base_path = plan;
  EXPECT_EQ(only_error(request), plan + ": " + plan_dump);
  request.base_path = model;
  EXPECT_EQ(only_error(request), model + ": " + model_dump);
  // By the format tag alone (the meta readers refuse a meta by it), or by the shape alone.
  request.base_path = file("tagged.json", R"j({"format": "hpfreeze.model/v1", "x": 1})j");
  EXPECT_EQ(only_error(request), *request.base_path + ": " + model_dump);
  request.base_path =
      file("odd.json", R"j({"format": "hpfreeze.plan/v1", "modules": {"": "Net"}})j");
  EXPECT_EQ(only_error(request), *request.base_path + ": " + plan_dump);
  request.base_path = file("untagged.json", R"j({"modules": {"lin": {"params": {}}}})j");
  EXPECT_EQ(only_error(request), *request.base_path + ": " + plan_dump);
  request.base_path = file("tree.json", R"j({"modules": {"": "Net"}})j");
  EXPECT_EQ(only_error(request), *request.base_path + ": " + model_dump);
  EXPECT_EQ(read_file(request.output_path), "old");
  // A meta, or any other object, is a base.
  for (const std::string& base :
       {kCases + "/tiny/expected.json", file("empty.json", "{}"),
        file("other.json", R"j({"format": "something/v2", "signature": "s"})j")}) {
    request.base_path = base;
    EXPECT_FALSE(run_freeze(request).failed()) << base;
  }
}

// A damaged dump of the right kind keeps its decoder's own error, even when its `format`
// names the other kind: the shape of `modules` must agree before a mix-up is reported.
TEST_F(FreezeCommand, ADamagedDumpKeepsItsDecoderError) {
  FreezeRequest request;
  request.concurrency = kTwoCpus;
  request.output_path = path("meta.json");
  request.model_path = kCases + "/tiny/model.json";
  request.plan_path =
      file("plan.json", R"j({"format": "hpfreeze.model/v1", "modules": {"lin": {}}})j");
  EXPECT_EQ(only_error(request),
            request.plan_path +
                ": /format: unsupported format 'hpfreeze.model/v1' (expected 'hpfreeze.plan/v1')");
  request.plan_path = file("plan2.json", R"j({"modules": {"lin": {"bogus": 1}}})j");
  EXPECT_EQ(only_error(request),
            request.plan_path + ": /modules/lin/bogus: unknown module-spec field 'bogus'");
  request.plan_path = kCases + "/tiny/plan.json";
  request.model_path = file("model.json", R"j({"modules": {"lin": "Linear", "x": 1}})j");
  EXPECT_EQ(only_error(request),
            request.model_path + ": /modules/x: expected a string, got an integer");
}

// freeze parses both dumps without the duplicate-key walk and leaves the keys to the
// decoders: a repeated key is still a parse error of its file, reported before any decode
// error of either file and beside the other file's parse errors.
TEST_F(FreezeCommand, RepeatedKeysAreReportedAsParseErrors) {
  const std::string good_plan = R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)"}}}}})j";
  const std::string good_model =
      R"j({"modules": {"": "Net", "lin": "Linear"}, "parameters": {"lin.weight": {"shape": [8, 4]}}})j";
  const std::string dup_plan =
      R"j({"modules": {"lin": {"params": {"weight": {"tp": "S(0)", "tp": "R"}}}}})j";
  const std::string dup_model =
      R"j({"modules": {"": "Net", "lin": "Linear", "lin": "Linear"}, "parameters": {"lin.weight": {"shape": [8, 4]}}})j";
  const std::string bad_plan = R"j({"modules": {"lin": {"bogus": 1}}})j";
  const std::string bad_model = R"j({"modules": {"": 1}})j";
  FreezeRequest request;
  request.concurrency = kTwoCpus;
  request.output_path = path("meta.json");

  // The plan's repeat before the model's decode error, and the model's before the plan's.
  request.plan_path = file("dup_plan.json", dup_plan);
  request.model_path = file("bad_model.json", bad_model);
  EXPECT_EQ(only_error(request),
            request.plan_path + ": /modules/lin/params/weight/tp: duplicate key 'tp'");
  request.plan_path = file("bad_plan.json", bad_plan);
  request.model_path = file("dup_model.json", dup_model);
  EXPECT_EQ(only_error(request), request.model_path + ": /modules/lin: duplicate key 'lin'");
  // Beside the other file's syntax error, in file order.
  request.plan_path = file("dup_plan.json", dup_plan);
  request.model_path = file("broken.json", "{");
  CommandResult result = run_freeze(request);
  ASSERT_EQ(result.diagnostics.size(), 2u);
  EXPECT_EQ(result.diagnostics[0].location_and_message(),
            request.plan_path + ": /modules/lin/params/weight/tp: duplicate key 'tp'");
  EXPECT_EQ(result.diagnostics[1].file, request.model_path);
  request.plan_path = file("broken.json", "[");
  request.model_path = file("dup_model.json", dup_model);
  result = run_freeze(request);
  ASSERT_EQ(result.diagnostics.size(), 2u);
  EXPECT_EQ(result.diagnostics[0].file, request.plan_path);
  EXPECT_EQ(result.diagnostics[1].location_and_message(),
            request.model_path + ": /modules/lin: duplicate key 'lin'");
  // Without repeats the same dumps freeze.
  request.plan_path = file("good_plan.json", good_plan);
  request.model_path = file("good_model.json", good_model);
  EXPECT_FALSE(run_freeze(request).failed());
}

}  // namespace
}  // namespace hpfreeze
