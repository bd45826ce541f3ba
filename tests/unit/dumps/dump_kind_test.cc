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

}  // namespace
}  // namespace hpfreeze
