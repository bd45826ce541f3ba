#include "spec/placement.h"

#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>

namespace hpfreeze {
namespace {

std::string canonical_of(std::string_view text) {
  Expected<Placement> p = parse_placement(text);
  EXPECT_TRUE(p.ok()) << text;
  return p ? to_canonical(*p) : std::string("<error>");
}

std::string error_of(std::string_view text) {
  Expected<Placement> p = parse_placement(text);
  EXPECT_FALSE(p.ok()) << text;
  return p ? std::string("<ok>") : p.errors().front().message;
}

TEST(PlacementConformance, EveryPublicCase) {
  std::ifstream in(std::string(HPFREEZE_TESTDATA_DIR) + "/placements.jsonl");
  ASSERT_TRUE(in) << "testdata/placements.jsonl missing";
  simdjson::dom::parser parser;
  std::string line;
  int cases = 0;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    simdjson::dom::element e = parser.parse(line);
    const std::string input{std::string_view(e["input"])};
    Expected<Placement> p = parse_placement(input);
    if (e["canonical"].is_null()) {
      EXPECT_FALSE(p.ok()) << "must be rejected: " << input;
    } else {
      ASSERT_TRUE(p.ok()) << input;
      EXPECT_EQ(to_canonical(*p), std::string_view(e["canonical"])) << input;
    }
    ++cases;
  }
  EXPECT_GE(cases, 24);
}

TEST(PlacementCanonical, Serializes) {
  EXPECT_EQ(to_canonical(Placement::replicate()), "R");
  EXPECT_EQ(to_canonical(Placement::shard(0)), "S(0)");
  EXPECT_EQ(to_canonical(Placement::shard(1, true)), "S(-2)");
  EXPECT_EQ(to_canonical(Placement::shard(0, true)), "S(-1)");
  EXPECT_EQ(to_canonical(Placement::shard(-1)), "S(-1)");  // the known ambiguity
  EXPECT_EQ(to_canonical(Placement::strided_shard(0, 2)), "SS(0,2)");
  EXPECT_EQ(to_canonical(Placement::strided_shard(3, 4, true)), "SS(-4,4)");
  EXPECT_EQ(to_canonical(Placement::partial()), "P(sum)");
  EXPECT_EQ(to_canonical(Placement::partial("max")), "P(max)");
  EXPECT_EQ(to_canonical(Placement::shard(std::numeric_limits<std::int64_t>::max(), true)),
            "S(-9223372036854775808)");
  EXPECT_EQ(to_canonical(Placement::shard(std::numeric_limits<std::int64_t>::min())),
            "S(-9223372036854775808)");
}

TEST(PlacementParse, Spellings) {
  EXPECT_EQ(canonical_of("SS( 0 , 2 )"), "SS(0,2)");
  EXPECT_EQ(canonical_of("S(+3)"), "S(3)");
  EXPECT_EQ(canonical_of("S(-0)"), "S(0)");
  EXPECT_EQ(canonical_of("S(007)"), "S(7)");
  EXPECT_EQ(canonical_of("S(1_0)"), "S(10)");
  EXPECT_EQ(canonical_of("S(1_000_000)"), "S(1000000)");
  EXPECT_EQ(canonical_of("S(0_0)"), "S(0)");
  EXPECT_EQ(canonical_of("S(\t5\r)"), "S(5)");
  EXPECT_EQ(canonical_of("S(\x0b"
                         "5\x0c)"),
            "S(5)");
  EXPECT_EQ(canonical_of("S(\x1c"
                         "5\x1f)"),
            "S(5)");  // Python's isspace() includes 0x1c-0x1f
  EXPECT_EQ(canonical_of("SS(+1,+2)"), "SS(1,2)");
  EXPECT_EQ(canonical_of("SS(-1,3)"), "SS(-1,3)");
  EXPECT_EQ(canonical_of("P( sum )"), "P( sum )");  // reduce_op is verbatim
  EXPECT_EQ(canonical_of("P(a,b)"), "P(a,b)");
  EXPECT_EQ(canonical_of("P(a)b)"), "P(a)b)");
  EXPECT_EQ(canonical_of("P(\r)"), "P(\r)");
  EXPECT_EQ(canonical_of("P(()"), "P(()");
}

TEST(PlacementParse, Fields) {
  Expected<Placement> p = parse_placement("S(-2)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PlacementKind::kShard);
  EXPECT_EQ(p->dim, 1);
  EXPECT_TRUE(p->uneven_shard);
  p = parse_placement("SS(-1,8)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PlacementKind::kStridedShard);
  EXPECT_EQ(p->dim, 0);
  EXPECT_TRUE(p->uneven_shard);
  EXPECT_EQ(p->split_factor, 8);
  p = parse_placement("P(avg)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->kind, PlacementKind::kPartial);
  EXPECT_EQ(p->reduce_op, "avg");
}

TEST(PlacementParse, SixtyFourBitLimits) {
  EXPECT_EQ(canonical_of("S(9223372036854775807)"), "S(9223372036854775807)");
  EXPECT_EQ(canonical_of("S(-9223372036854775808)"), "S(-9223372036854775808)");
  Expected<Placement> p = parse_placement("S(-9223372036854775808)");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->dim, std::numeric_limits<std::int64_t>::max());
  EXPECT_TRUE(p->uneven_shard);
  EXPECT_EQ(canonical_of("SS(0,9223372036854775807)"), "SS(0,9223372036854775807)");
  EXPECT_EQ(canonical_of("S(9_223_372_036_854_775_807)"), "S(9223372036854775807)");
  EXPECT_EQ(error_of("S(9223372036854775808)"),
            "invalid placement 'S(9223372036854775808)': dim does not fit in a signed 64-bit "
            "integer");
  EXPECT_EQ(error_of("S(-9223372036854775809)"),
            "invalid placement 'S(-9223372036854775809)': dim does not fit in a signed 64-bit "
            "integer");
  EXPECT_EQ(error_of("S(99999999999999999999999999)"),
            "invalid placement 'S(99999999999999999999999999)': dim does not fit in a signed "
            "64-bit integer");
  EXPECT_EQ(error_of("SS(0,9223372036854775808)"),
            "invalid placement 'SS(0,9223372036854775808)': split_factor does not fit in a "
            "signed 64-bit integer");
}

TEST(PlacementParse, ErrorMessages) {
  EXPECT_EQ(error_of(""), "invalid placement '': empty string");
  EXPECT_EQ(error_of("Shard(0)"),
            "invalid placement 'Shard(0)': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of(" R"),
            "invalid placement ' R': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of("R "),
            "invalid placement 'R ': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of("s(0)"),
            "invalid placement 's(0)': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of("S(0"),
            "invalid placement 'S(0': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of("S"),
            "invalid placement 'S': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of("S(x)"), "invalid placement 'S(x)': dim 'x' is not an integer");
  EXPECT_EQ(error_of("S()"), "invalid placement 'S()': dim '' is not an integer");
  EXPECT_EQ(error_of("S( )"), "invalid placement 'S( )': dim '' is not an integer");
  EXPECT_EQ(error_of("S(1.0)"), "invalid placement 'S(1.0)': dim '1.0' is not an integer");
  EXPECT_EQ(error_of("S(0x1)"), "invalid placement 'S(0x1)': dim '0x1' is not an integer");
  EXPECT_EQ(error_of("S(1_)"), "invalid placement 'S(1_)': dim '1_' is not an integer");
  EXPECT_EQ(error_of("S(_1)"), "invalid placement 'S(_1)': dim '_1' is not an integer");
  EXPECT_EQ(error_of("S(1__0)"), "invalid placement 'S(1__0)': dim '1__0' is not an integer");
  EXPECT_EQ(error_of("S(+_1)"), "invalid placement 'S(+_1)': dim '+_1' is not an integer");
  EXPECT_EQ(error_of("S(+-1)"), "invalid placement 'S(+-1)': dim '+-1' is not an integer");
  EXPECT_EQ(error_of("S(+)"), "invalid placement 'S(+)': dim '+' is not an integer");
  EXPECT_EQ(error_of("S(1 0)"), "invalid placement 'S(1 0)': dim '1 0' is not an integer");
  EXPECT_EQ(error_of("S(0,)"), "invalid placement 'S(0,)': S(dim) takes 1 argument, got 2");
  EXPECT_EQ(error_of("S(0,1)"), "invalid placement 'S(0,1)': S(dim) takes 1 argument, got 2");
  EXPECT_EQ(error_of("SS(0)"),
            "invalid placement 'SS(0)': SS(dim,factor) takes 2 arguments, got 1");
  EXPECT_EQ(error_of("SS(0,2,3)"),
            "invalid placement 'SS(0,2,3)': SS(dim,factor) takes 2 arguments, got 3");
  EXPECT_EQ(error_of("SS(,2)"), "invalid placement 'SS(,2)': dim '' is not an integer");
  EXPECT_EQ(error_of("SS(0,)"), "invalid placement 'SS(0,)': split_factor '' is not an integer");
  EXPECT_EQ(error_of("SS(0,x)"), "invalid placement 'SS(0,x)': split_factor 'x' is not an integer");
  EXPECT_EQ(error_of("SS(0,0)"), "invalid placement 'SS(0,0)': split_factor must be >= 1, got 0");
  EXPECT_EQ(error_of("SS(0,-2)"),
            "invalid placement 'SS(0,-2)': split_factor must be >= 1, got -2");
  EXPECT_EQ(error_of("P()"), "invalid placement 'P()': missing reduce_op in P(...)");
  EXPECT_EQ(error_of("P(a\nb)"), "invalid placement 'P(a\\nb)': newline inside the parentheses");
  EXPECT_EQ(error_of("S(1\n)"), "invalid placement 'S(1\\n)': newline inside the parentheses");
  EXPECT_EQ(error_of("S(0)\n"),
            "invalid placement 'S(0)\\n': unknown form, expected R, S(dim), SS(dim,factor) or "
            "P(reduce_op)");
  EXPECT_EQ(error_of("P(s\xc3\xbcm)"), "invalid placement 'P(s\\xc3\\xbcm)': non-ASCII character");
  EXPECT_EQ(error_of("S(\xd9\xa3)"), "invalid placement 'S(\\xd9\\xa3)': non-ASCII character");
  EXPECT_EQ(error_of(std::string_view("S(\0)", 4)),
            "invalid placement 'S(\\x00)': dim '\\x00' is not an integer");
}

// The chunking of a sharded dim, which capacity and report both lay out: n x factor
// chunks of torch.chunk, the factor a StridedShard's alone.
TEST(PlacementChunkFactor, StridedShardsAlone) {
  EXPECT_EQ(Placement::shard(0).chunk_factor(), 1u);
  EXPECT_EQ(Placement::shard(2, true).chunk_factor(), 1u);
  EXPECT_EQ(Placement::strided_shard(0, 3).chunk_factor(), 3u);
  EXPECT_EQ(Placement::strided_shard(1, 1, true).chunk_factor(), 1u);
  EXPECT_EQ(Placement::replicate().chunk_factor(), 1u);
  EXPECT_EQ(Placement::partial().chunk_factor(), 1u);
  // A factor a dump cannot hold (the decoders refuse < 1) still chunks once.
  Placement odd = Placement::strided_shard(0, 2);
  odd.split_factor = 0;
  EXPECT_EQ(odd.chunk_factor(), 1u);
}

// One name per kind, in the enum's order.
TEST(PlacementKinds, EveryKindHasItsDumpName) {
  const std::string_view names[] = {"Shard", "StridedShard", "Replicate", "Partial"};
  ASSERT_EQ(std::size(names), kPlacementKinds);
  for (std::size_t k = 0; k < kPlacementKinds; ++k) {
    EXPECT_EQ(placement_type_name(static_cast<PlacementKind>(k)), names[k]);
  }
}

TEST(PythonInt, Grammar) {
  std::int64_t v = 0;
  bool overflow = false;
  EXPECT_TRUE(parse_python_int("  -12_3 ", v, overflow));
  EXPECT_EQ(v, -123);
  EXPECT_FALSE(overflow);
  EXPECT_TRUE(parse_python_int("000", v, overflow));
  EXPECT_EQ(v, 0);
  EXPECT_FALSE(parse_python_int("", v, overflow));
  EXPECT_FALSE(parse_python_int("-", v, overflow));
  EXPECT_FALSE(parse_python_int("1-", v, overflow));
  EXPECT_TRUE(parse_python_int("18446744073709551616", v, overflow));
  EXPECT_TRUE(overflow);
}

// parse(to_canonical(p)) == p for every placement with a non-negative real dim (negative
// real dims are the documented ambiguity and are tested above).
TEST(PlacementProperty, CanonicalRoundTrip) {
  std::mt19937_64 rng(20261129);
  const std::string ops[] = {"sum", "avg", "max", "min", "prod",   "x",
                             "a b", "(",   ")",   ",",   "P(sum)", " sum "};
  auto random_dim = [&]() -> std::int64_t {
    switch (rng() % 4) {
      case 0:
        return static_cast<std::int64_t>(rng() % 8);
      case 1:
        return std::numeric_limits<std::int64_t>::max() - static_cast<std::int64_t>(rng() % 3);
      default:
        return static_cast<std::int64_t>(rng() >> 1);
    }
  };
  for (int i = 0; i < 20000; ++i) {
    Placement p;
    switch (rng() % 4) {
      case 0:
        p = Placement::shard(random_dim(), rng() % 2 == 0);
        break;
      case 1:
        p = Placement::strided_shard(random_dim(), 1 + static_cast<std::int64_t>(rng() % 1000000),
                                     rng() % 2 == 0);
        break;
      case 2:
        p = Placement::replicate();
        break;
      default:
        p = Placement::partial(ops[rng() % std::size(ops)]);
        break;
    }
    const std::string text = to_canonical(p);
    Expected<Placement> back = parse_placement(text);
    ASSERT_TRUE(back.ok()) << text;
    EXPECT_EQ(*back, p) << text;
  }
}

// to_canonical(parse(s)) == s for random canonical strings (any int64 dim, factor >= 1).
TEST(PlacementProperty, StringRoundTrip) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 20000; ++i) {
    const auto dim = static_cast<std::int64_t>(rng());
    const auto factor = 1 + static_cast<std::int64_t>(rng() >> 2);
    // Built with append(): GCC 12 warns falsely (-Wrestrict) on chained operator+ here.
    std::string s;
    switch (rng() % 4) {
      case 0:
        s.append("S(").append(std::to_string(dim)).append(")");
        break;
      case 1:
        s.append("SS(").append(std::to_string(dim)).append(",");
        s.append(std::to_string(factor)).append(")");
        break;
      case 2:
        s = "R";
        break;
      default: {
        s = "P(";
        const std::size_t n = 1 + rng() % 6;
        for (std::size_t k = 0; k < n; ++k) s += static_cast<char>(0x20 + rng() % 0x5f);
        s += ')';
      }
    }
    EXPECT_EQ(canonical_of(s), s);
  }
}

}  // namespace
}  // namespace hpfreeze
