// The command-line values of capacity planning (capacity_args.h): exact messages, as the
// front end prints them for a bad --mesh, --sweep or --budget.
#include "hpfreeze/capacity/capacity_args.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "capacity/capacity.h"

namespace hpfreeze {
namespace {

using ::testing::ElementsAre;

TEST(ParseMeshArg, AcceptsAxesInOrder) {
  Expected<std::vector<AxisSize>> m = parse_mesh_arg("tp=2,cp=2,ep=8");
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(*m, ElementsAre(AxisSize{"tp", 2}, AxisSize{"cp", 2}, AxisSize{"ep", 8}));
  m = parse_mesh_arg("dp_shard=08,_x1=9223372036854775807");
  ASSERT_TRUE(m.ok());
  EXPECT_THAT(*m, ElementsAre(AxisSize{"dp_shard", 8}, AxisSize{"_x1", 9223372036854775807u}));
}

TEST(ParseMeshArg, RejectsBadSyntaxWithAClearMessage) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "expected AXIS=N[,AXIS=N...], got an empty value"},
      {"tp", "'tp' is not AXIS=N"},
      {"tp:2", "'tp:2' is not AXIS=N"},
      {"=2", "'=2': the axis name must match [A-Za-z_][A-Za-z0-9_]*"},
      {"1tp=2", "'1tp=2': the axis name must match [A-Za-z_][A-Za-z0-9_]*"},
      {"t-p=2", "'t-p=2': the axis name must match [A-Za-z_][A-Za-z0-9_]*"},
      {"tp =2", "'tp =2': the axis name must match [A-Za-z_][A-Za-z0-9_]*"},
      {"tp=", "'tp=': the size must be a decimal integer >= 1"},
      {"tp=0", "'tp=0': the size must be a decimal integer >= 1"},
      {"tp=-2", "'tp=-2': the size must be a decimal integer >= 1"},
      {"tp=+2", "'tp=+2': the size must be a decimal integer >= 1"},
      {"tp=2.0", "'tp=2.0': the size must be a decimal integer >= 1"},
      {"tp= 2", "'tp= 2': the size must be a decimal integer >= 1"},
      {"tp=2=3", "'tp=2=3': the size must be a decimal integer >= 1"},
      {"tp=9223372036854775808", "'tp=9223372036854775808': the size is larger than 2^63-1"},
      {"tp=99999999999999999999999",
       "'tp=99999999999999999999999': the size is larger than 2^63-1"},
      {"tp=2,", "empty item in 'tp=2,'; expected AXIS=N[,AXIS=N...]"},
      {",tp=2", "empty item in ',tp=2'; expected AXIS=N[,AXIS=N...]"},
      {"tp=2,,cp=2", "empty item in 'tp=2,,cp=2'; expected AXIS=N[,AXIS=N...]"},
      {"tp=2,cp=2,tp=4", "axis 'tp' is given twice"},
  };
  for (const auto& [text, message] : cases) {
    Expected<std::vector<AxisSize>> m = parse_mesh_arg(text);
    ASSERT_FALSE(m.ok()) << text;
    ASSERT_EQ(m.errors().size(), 1u);
    EXPECT_EQ(m.errors()[0].message, message) << text;
    EXPECT_EQ(m.errors()[0].file, "");
    EXPECT_EQ(m.errors()[0].pointer, "");
  }
}

TEST(CapacityArgs, Sweep) {
  Expected<AxisSweep> s = parse_sweep_arg("tp=8,1,4");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->axis, "tp");
  EXPECT_EQ(s->sizes, (std::vector<std::uint64_t>{8, 1, 4}));
  EXPECT_EQ(parse_sweep_arg("tp=2,2").errors().front().message, "'tp=2,2': size 2 is listed twice");
  EXPECT_EQ(parse_sweep_arg("tp=2,,4").errors().front().message,
            "'tp=2,,4': '' is not a size; sizes are decimal integers from 1 to 2^63-1");
  EXPECT_EQ(parse_sweep_arg("1tp=2").errors().front().message,
            "'1tp=2': the axis name must match [A-Za-z_][A-Za-z0-9_]*");
  EXPECT_EQ(parse_sweep_arg("tp").errors().front().message, "'tp' is not AXIS=N1,N2,...");
  EXPECT_EQ(parse_sweep_arg("tp=0").errors().front().message,
            "'tp=0': '0' is not a size; sizes are decimal integers from 1 to 2^63-1");
  EXPECT_EQ(parse_sweep_arg("tp=9223372036854775808").errors().front().message,
            "'tp=9223372036854775808': '9223372036854775808' is not a size; sizes are decimal "
            "integers from 1 to 2^63-1");
  EXPECT_EQ(parse_sweep_arg("tp=9223372036854775807")->sizes,
            (std::vector<std::uint64_t>{9223372036854775807u}));
}

TEST(CapacityBudget, Units) {
  EXPECT_EQ(*parse_byte_size("80GiB"), 85899345920U);  // 80 x 2^30
  EXPECT_EQ(*parse_byte_size("75G"), 75000000000U);
  EXPECT_EQ(*parse_byte_size("75GB"), 75000000000U);
  EXPECT_EQ(*parse_byte_size("1.5TiB"), 1649267441664U);  // 1.5 x 2^40
  EXPECT_EQ(*parse_byte_size("1.3Ki"), 1331U);            // 1331.2, rounded down
  EXPECT_EQ(*parse_byte_size("12345"), 12345U);
  EXPECT_EQ(*parse_byte_size("2kB"), 2000U);
  EXPECT_EQ(*parse_byte_size(".5K"), 500U);
  EXPECT_EQ(parse_byte_size("80 GiB").errors().front().message,
            "'80 GiB': unknown unit; expected B, K, M, G, T, P, E (x1000) or Ki, Mi, Gi, Ti, Pi, "
            "Ei (x1024), optionally followed by B");
  EXPECT_EQ(parse_byte_size("GiB").errors().front().message,
            "'GiB': expected a number of bytes with an optional unit, as 80GiB");
  EXPECT_EQ(parse_byte_size("16EiB").errors().front().message, "'16EiB': more than 2^64-1 bytes");
  EXPECT_FALSE(parse_byte_size("1.2.3G").ok());
  EXPECT_FALSE(parse_byte_size("1kiB").ok());
}

// Every valid decimal is read exactly, however many digits it has: the value is
// floor(number x unit), and only a value above 2^64-1 is too large.
TEST(CapacityBudget, AnyNumberOfDigits) {
  EXPECT_EQ(*parse_byte_size("1.00000000000000000000GiB"), 1073741824U);
  EXPECT_EQ(*parse_byte_size("0000000000000000000000000000001K"), 1000U);
  EXPECT_EQ(*parse_byte_size("18446744073709551615"), 18446744073709551615U);
  EXPECT_EQ(*parse_byte_size("18446744073709551615.99999999999999999999999"),
            18446744073709551615U);
  EXPECT_EQ(*parse_byte_size("1.99999999999999999999999999999999B"), 1U);
  // 16 EiB is 2^64; a hair below it is 2^64-1 bytes, rounded down.
  EXPECT_EQ(*parse_byte_size("15.999999999999999999999999EiB"), 18446744073709551615U);
  EXPECT_EQ(*parse_byte_size("0.000000000000000000000000000001EiB"), 0U);
  EXPECT_EQ(*parse_byte_size("0.0009765625Ki"), 1U);  // 2^-10 KiB
  EXPECT_EQ(*parse_byte_size("5."), 5U);
  for (const char* too_large : {"18446744073709551616", "16EiB", "100000000000000000000",
                                "18446744073709551616.0", "18446744073709551615.5K"}) {
    EXPECT_EQ(parse_byte_size(too_large).errors().front().message,
              "'" + std::string(too_large) + "': more than 2^64-1 bytes");
  }
}

// A number that is not a decimal one (an exponent, a second point, a digit group) is said to
// be so, not taken for a unit.
TEST(CapacityBudget, ExponentsAndOtherNumbersAreNotDecimal) {
  for (const char* text :
       {"1e3", "1e400", "1E3", "2.5e-3G", "1e+3GiB", "1.2.3G", "1,5G", "1..5G", "1.5-G", "8e10"}) {
    EXPECT_EQ(parse_byte_size(text).errors().front().message,
              "'" + std::string(text) +
                  "': not a decimal number; expected digits with at most one '.' and no "
                  "exponent, then an optional unit, as 80GiB or 1.5TiB");
  }
  // An exa prefix or an `e` that starts no exponent is a unit, known or not.
  EXPECT_EQ(*parse_byte_size("1E"), 1000000000000000000U);
  EXPECT_EQ(*parse_byte_size("1EiB"), 1152921504606846976U);
  EXPECT_EQ(parse_byte_size("1e").errors().front().message,
            "'1e': unknown unit; expected B, K, M, G, T, P, E (x1000) or Ki, Mi, Gi, Ti, Pi, Ei "
            "(x1024), optionally followed by B");
}

// The names optimizer_name spells, and only those.
TEST(CapacityArgs, Optimizer) {
  const std::pair<const char*, Optimizer> names[] = {{"none", Optimizer::kNone},
                                                     {"sgd", Optimizer::kSgd},
                                                     {"momentum", Optimizer::kMomentum},
                                                     {"adam", Optimizer::kAdam},
                                                     {"adamw", Optimizer::kAdamW}};
  for (const auto& [name, optimizer] : names) {
    EXPECT_EQ(parse_optimizer(name), optimizer) << name;
    EXPECT_EQ(optimizer_name(optimizer), name);
  }
  for (const char* other : {"", "Adam", "adam ", "adamW", "lion"}) {
    EXPECT_EQ(parse_optimizer(other), std::nullopt) << other;
  }
}

// --optimizer's choices (the front end's IsMember) are the table's names, in enum order.
TEST(CapacityArgs, OptimizerNamesAreTheTable) {
  std::vector<std::string> names;
  for (std::size_t i = 0; i < kOptimizers; ++i) {
    names.emplace_back(optimizer_name(static_cast<Optimizer>(i)));
  }
  EXPECT_EQ(optimizer_names(), names);
  EXPECT_EQ(names, (std::vector<std::string>{"none", "sgd", "momentum", "adam", "adamw"}));
}

TEST(CapacityArgs, ZeroStage) {
  EXPECT_EQ(parse_zero_stage("0"), 0);
  EXPECT_EQ(parse_zero_stage("1"), 1);
  EXPECT_EQ(parse_zero_stage("2"), 2);
  EXPECT_EQ(parse_zero_stage("3"), 3);
  for (const char* other : {"", "4", "-1", "01", "1 ", "x", "/", ":"}) {
    EXPECT_EQ(parse_zero_stage(other), std::nullopt) << other;
  }
}

TEST(CapacityArgs, ZeroAxes) {
  EXPECT_EQ(*parse_zero_axes("dp"), (std::vector<std::string>{"dp"}));
  EXPECT_EQ(*parse_zero_axes("dp,cp"), (std::vector<std::string>{"dp", "cp"}));
  EXPECT_EQ(*parse_zero_axes("cp,dp_shard,fsdp"),
            (std::vector<std::string>{"cp", "dp_shard", "fsdp"}));
  const std::pair<const char*, const char*> bad[] = {
      {"",
       "'': '' is not an axis name; expected AXIS[,AXIS...], each matching "
       "[A-Za-z_][A-Za-z0-9_]*"},
      {"dp,",
       "'dp,': '' is not an axis name; expected AXIS[,AXIS...], each matching "
       "[A-Za-z_][A-Za-z0-9_]*"},
      {"d-p,cp",
       "'d-p,cp': 'd-p' is not an axis name; expected AXIS[,AXIS...], each matching "
       "[A-Za-z_][A-Za-z0-9_]*"},
      {"dp,cp,dp", "'dp,cp,dp': axis 'dp' is listed twice"},
  };
  for (const auto& [text, message] : bad) {
    Expected<std::vector<std::string>> axes = parse_zero_axes(text);
    ASSERT_FALSE(axes.ok()) << text;
    EXPECT_EQ(axes.errors().front().message, message);
  }
}

TEST(CapacityArgs, ExpertLayout) {
  EXPECT_EQ(parse_expert_layout("folded"), ExpertLayout::kFolded);
  EXPECT_EQ(parse_expert_layout("axis"), ExpertLayout::kAxis);
  for (const char* other : {"", "Folded", "fold", "axes", "ep"}) {
    EXPECT_EQ(parse_expert_layout(other), std::nullopt) << other;
  }
  EXPECT_EQ(expert_layout_name(ExpertLayout::kFolded), "folded");
  EXPECT_EQ(expert_layout_name(ExpertLayout::kAxis), "axis");
}

TEST(CapacityArgs, AxisName) {
  for (const char* name : {"tp", "_", "dp_shard", "_x1", "A9"}) EXPECT_TRUE(is_axis_name(name));
  for (const char* name : {"", "1tp", "t-p", "tp ", " tp", "t.p", "\xc3\xa9"}) {
    EXPECT_FALSE(is_axis_name(name)) << name;
  }
}

TEST(CapacityArgs, ExpertZeroDim) {
  EXPECT_EQ(*parse_expert_zero_dim("0"), 0U);
  EXPECT_EQ(*parse_expert_zero_dim("1"), 1U);
  for (std::string_view bad : {"", "-1", "x", "1.5", "99999999999999999999"}) {
    const Expected<std::uint64_t> got = parse_expert_zero_dim(bad);
    ASSERT_FALSE(got.ok()) << bad;
    EXPECT_EQ(got.errors().front().message,
              quote_for_diagnostic(bad) +
                  " is not a dim; expected a decimal integer >= 0 (1: the experts' ZeRO chunks on "
                  "dim 1)");
  }
}

TEST(CapacityArgs, PipelineLayersAndStack) {
  EXPECT_EQ(*parse_pp_layers("16,15,15,15"), (std::vector<std::uint64_t>{16, 15, 15, 15}));
  EXPECT_EQ(*parse_pp_layers("0,61"), (std::vector<std::uint64_t>{0, 61}));
  for (const char* bad : {"", "4,", ",4", "4,a", "-1", "1.5", "4 4", "9223372036854775808"}) {
    Expected<std::vector<std::uint64_t>> layers = parse_pp_layers(bad);
    ASSERT_FALSE(layers.ok()) << bad;
  }
  EXPECT_EQ(parse_pp_layers("4,a").errors().front().message,
            "'4,a': 'a' is not a number of layers; expected N,N,... (the layers of each pipeline "
            "stage, decimal integers)");
  EXPECT_EQ(*parse_pp_stack("model.layers"), "model.layers");
  for (const char* bad : {"", ".layers", "model.", "model..layers"}) {
    EXPECT_FALSE(parse_pp_stack(bad).ok()) << bad;
  }
}

TEST(CapacityArgs, ReserveLeavesTheRestForModelStates) {
  MeshFilter filter;
  EXPECT_EQ(filter.states_budget(), std::nullopt);
  filter.budget = 100;
  filter.reserve = 30;
  EXPECT_EQ(filter.states_budget(), 70U);
}

}  // namespace
}  // namespace hpfreeze
