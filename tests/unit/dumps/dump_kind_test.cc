// Which kind of file a document is, by each reader's rule (dump_kind.h).
#include "dumps/dump_kind.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "json/json_document.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

constexpr test_support::DocumentParser parse{"in.json"};

DumpKind meta_reader(std::string text) { return meta_lookalike_kind(parse(std::move(text))); }
DumpKind base_reader(std::string text) { return base_meta_lookalike_kind(parse(std::move(text))); }

TEST(DumpKind, MetaReadersGoByTheTagThenByModulesWithoutParamPlan) {
  EXPECT_EQ(meta_reader(R"j({"format": "hpfreeze.plan/v1", "param_plan": {}})j"), DumpKind::kPlan);
  EXPECT_EQ(meta_reader(R"j({"format": "hpfreeze.model/v1"})j"), DumpKind::kModel);
  EXPECT_EQ(meta_reader(R"j({"modules": {}})j"), DumpKind::kPlan);
  EXPECT_EQ(meta_reader(R"j({"modules": [], "parameters": 1})j"), DumpKind::kModel);
  EXPECT_EQ(meta_reader(R"j({"modules": {}, "param_plan": {}})j"), DumpKind::kUnknown);
  EXPECT_EQ(meta_reader(R"j({"param_plan": {}})j"), DumpKind::kUnknown);
  EXPECT_EQ(meta_reader(R"j({"weight_map": {}})j"), DumpKind::kUnknown);
  EXPECT_EQ(meta_reader(R"j({"format": "other"})j"), DumpKind::kUnknown);
  EXPECT_EQ(meta_reader("[]"), DumpKind::kUnknown);
}

TEST(DumpKind, BaseGoesByTheTagThenByTheGuess) {
  EXPECT_EQ(base_reader(R"j({"format": "hpfreeze.model/v1", "modules": {"": {}}})j"),
            DumpKind::kModel);  // the tag wins where the guess sees a contradiction
  EXPECT_EQ(guess_dump_kind(parse(R"j({"format": "hpfreeze.model/v1", "modules": {"": {}}})j")),
            DumpKind::kUnknown);
  EXPECT_EQ(base_reader(R"j({"modules": {"": "Net"}})j"), DumpKind::kModel);
  EXPECT_EQ(base_reader(R"j({"modules": []})j"), DumpKind::kUnknown);
  EXPECT_EQ(base_reader(R"j({"weight_map": {}})j"), DumpKind::kCheckpointIndex);
  EXPECT_EQ(base_reader(R"j({"signature": "s"})j"), DumpKind::kUnknown);
}

TEST(DumpKind, WrongKindErrorNamesBothKinds) {
  JsonDocument doc = parse(R"j({"modules": {"": "Net"}})j");
  std::optional<Diagnostic> wrong =
      wrong_kind_error(doc, meta_lookalike_kind(doc), DumpKind::kMeta, "thaw");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(wrong->location_and_message(),
            "in.json: this looks like a plan dump (hpfreeze.plan/v1); thaw wants a "
            "codegen_meta.json");
  EXPECT_FALSE(wrong_kind_error(doc, DumpKind::kUnknown, DumpKind::kMeta, "thaw").has_value());
  EXPECT_FALSE(wrong_kind_error(doc, DumpKind::kMeta, DumpKind::kMeta, "thaw").has_value());
}

TEST(DumpKind, ACheckpointWhereFreezeWantsAModelDumpSaysWhyAndWhereOneComesFrom) {
  const std::string why =
      "--model wants a model tree dump (hpfreeze.model/v1): freeze needs the class of every "
      "module (its boundary_classes), which a checkpoint does not hold; hpfreeze-export writes "
      "a model tree dump from the live model (docs/formats.md, \"The Python exporter\"), and "
      "report and check take the checkpoint itself";
  JsonDocument index = parse(R"j({"weight_map": {"w": "model-00001.safetensors"}})j");
  std::optional<Diagnostic> wrong =
      wrong_kind_error(index, guess_dump_kind(index), DumpKind::kModel, "--model");
  ASSERT_TRUE(wrong.has_value());
  EXPECT_EQ(
      wrong->location_and_message(),
      "in.json: this looks like a sharded checkpoint's index (*.safetensors.index.json); " + why);
  // Another kind where a model dump is wanted, or an index elsewhere, says only the kinds.
  JsonDocument plan = parse(R"j({"modules": {"": {}}})j");
  EXPECT_EQ(wrong_kind_error(plan, guess_dump_kind(plan), DumpKind::kModel, "--model")
                ->location_and_message(),
            "in.json: this looks like a plan dump (hpfreeze.plan/v1); --model wants a model tree "
            "dump (hpfreeze.model/v1)");
  EXPECT_EQ(wrong_kind_error(index, DumpKind::kCheckpointIndex, DumpKind::kPlan, "--plan")
                ->location_and_message(),
            "in.json: this looks like a sharded checkpoint's index (*.safetensors.index.json); "
            "--plan wants a plan dump (hpfreeze.plan/v1)");

  // A whole safetensors file (length, header, data) as a model dump's text.
  const std::string header = R"j({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})j";
  std::string file(8, '\0');
  file[0] = static_cast<char>(header.size());
  file += header + std::string(4, '\0');
  EXPECT_EQ(not_json_model_dump_kind(file),
            "this looks like a safetensors checkpoint, not JSON; " + why);
  EXPECT_EQ(not_json_kind(file),
            "this looks like a safetensors checkpoint, not JSON (report and "
            "check read one as --model FILE, by path)");
  EXPECT_FALSE(not_json_model_dump_kind("{\"modules\": 1").has_value());
  EXPECT_FALSE(not_json_model_dump_kind(file.substr(0, 20)).has_value());  // cut short
}

}  // namespace
}  // namespace hpfreeze
