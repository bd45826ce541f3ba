// The findings table (spec/findings.h): its rows' form, a finding made from a row, silencing,
// and the codes the command line names (hpfreeze/spec/finding_codes.h). That every row is
// emitted is tests/unit/commands/finding_codes_test.cc's; that docs/cli.md lists exactly the
// table's codes is tests/findings/check_findings.py's (ctest findings.docs).
#include "spec/findings.h"

#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <string>
#include <vector>

#include "hpfreeze/spec/finding_codes.h"

namespace hpfreeze {
namespace {

TEST(FindingRules, CodesAreHpfAndThreeDigitsInOrderAndUnique) {
  const std::regex code("HPF[1-9][0-9][0-9]");
  std::string previous;
  for (const FindingRule& rule : kFindingRules) {
    EXPECT_TRUE(std::regex_match(std::string(rule.code), code)) << rule.code;
    EXPECT_LT(previous, rule.code) << "rows are in code order, each code once";
    previous = rule.code;
  }
}

TEST(FindingRules, NamesAreKebabCaseAndUnique) {
  const std::regex name("[a-z0-9]+(-[a-z0-9]+)*");
  std::set<std::string_view> names;
  for (const FindingRule& rule : kFindingRules) {
    EXPECT_TRUE(std::regex_match(std::string(rule.name), name)) << rule.name;
    EXPECT_TRUE(names.insert(rule.name).second) << rule.name << " twice";
  }
}

TEST(FindingRules, TheFamiliesOfTheHundreds) {
  // 1 schema, 2 plan, 3 model, 4 bundle, 5 report: every family has rows, no other does.
  std::set<char> families;
  for (const FindingRule& rule : kFindingRules) families.insert(rule.code[3]);
  EXPECT_EQ(families, (std::set<char>{'1', '2', '3', '4', '5'}));
}

TEST(FindingRules, FoundAtCompileTimeAndAtRunTime) {
  constexpr const FindingRule& drift = finding_rule("HPF406");
  static_assert(drift.severity == Severity::kError);
  EXPECT_EQ(drift.name, "hash-drift");
  EXPECT_EQ(find_finding_rule("HPF406"), &drift);
  EXPECT_EQ(find_finding_rule("HPF999"), nullptr);
  EXPECT_EQ(find_finding_rule("hpf406"), nullptr);
  EXPECT_EQ(find_finding_rule(""), nullptr);
}

TEST(FindingRules, AnchorIsTheHeadingsAsGitHubMakesIt) {
  EXPECT_EQ(finding_anchor(finding_rule("HPF101")), "hpf101-identity-type");
  EXPECT_EQ(finding_anchor(finding_rule("HPF514")), "hpf514-no-usable-mesh");
}

TEST(MakeFinding, TakesTheRowsCodeAndSeverity) {
  const Diagnostic d = make_finding(finding_rule("HPF202"), "m.json", "/p", "not canonical");
  EXPECT_EQ(d.code, "HPF202");
  EXPECT_EQ(d.severity, Severity::kWarning);
  EXPECT_EQ(d.error_class, ErrorClass::kRejected);
  EXPECT_EQ(d.location_and_message(), "m.json: /p: not canonical");  // the code is the renderers'
}

TEST(Silence, DropsTheCodesNamedAndNothingElse) {
  Diagnostics ds = {make_finding(finding_rule("HPF202"), "m", "/a", "x"),
                    make_error("m", "", "no finding"),
                    make_finding(finding_rule("HPF204"), "m", "/b", "y"),
                    make_finding(finding_rule("HPF202"), "m", "/c", "z")};
  const std::vector<std::string> codes = {"HPF202"};
  drop_silenced(ds, codes);
  ASSERT_EQ(ds.size(), 2U);
  EXPECT_EQ(ds[0].message, "no finding");
  EXPECT_EQ(ds[1].code, "HPF204");
  EXPECT_FALSE(is_silenced("", codes));  // a line that is no finding stays
  EXPECT_TRUE(is_silenced("HPF202", codes));
}

TEST(ParseFindingCodes, ACommaList) {
  const Expected<std::vector<std::string>> codes = parse_finding_codes("HPF406,HPF101");
  ASSERT_TRUE(codes);
  EXPECT_EQ(*codes, (std::vector<std::string>{"HPF406", "HPF101"}));
}

std::string error_of(std::string_view list) {
  const Expected<std::vector<std::string>> codes = parse_finding_codes(list);
  if (codes) return "<ok>";
  EXPECT_EQ(codes.errors().front().error_class, ErrorClass::kIo);  // a usage error
  return codes.errors().front().message;
}

TEST(ParseFindingCodes, AnUnknownCodeIsNamedWithTheNearest) {
  EXPECT_EQ(error_of("HPF4O6"), "unknown finding code 'HPF4O6'; did you mean 'HPF406'?");
  EXPECT_EQ(error_of("hpf406"), "unknown finding code 'hpf406'; did you mean 'HPF406'?");
  EXPECT_EQ(error_of("HPF101,HPF10"), "unknown finding code 'HPF10'; did you mean 'HPF101'?");
  // A rule's name is not its code, but says which code was meant.
  EXPECT_EQ(error_of("hash-drift"), "unknown finding code 'hash-drift'; did you mean 'HPF406'?");
  EXPECT_EQ(error_of("E501"),
            "unknown finding code 'E501'; docs/cli.md, \"Finding codes\", lists them");
}

TEST(ParseFindingCodes, AnEmptyItem) {
  EXPECT_EQ(error_of(""), "empty finding code in ''");
  EXPECT_EQ(error_of("HPF101,"), "empty finding code in 'HPF101,'");
  EXPECT_EQ(error_of(",HPF101"), "empty finding code in ',HPF101'");
}

TEST(UnknownFindingCode, OfARequestItsFirstWithTheFlag) {
  EXPECT_EQ(unknown_finding_code(std::vector<std::string>{}), std::nullopt);
  EXPECT_EQ(unknown_finding_code(std::vector<std::string>{"HPF101", "HPF406"}), std::nullopt);
  const std::optional<Diagnostic> bad =
      unknown_finding_code(std::vector<std::string>{"HPF101", "HPF4O6", "x"});
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->error_class, ErrorClass::kIo);
  EXPECT_EQ(bad->message, "--silence: unknown finding code 'HPF4O6'; did you mean 'HPF406'?");
  // A request holds codes, not the command line's comma lists.
  EXPECT_EQ(unknown_finding_code(std::vector<std::string>{"HPF101,HPF406"})->message,
            "--silence: 'HPF101,HPF406' is not one code");
}

}  // namespace
}  // namespace hpfreeze
