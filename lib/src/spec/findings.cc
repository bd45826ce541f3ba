#include "spec/findings.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "hpfreeze/base/suggest.h"
#include "hpfreeze/spec/finding_codes.h"

namespace hpfreeze {

const FindingRule* find_finding_rule(std::string_view code) {
  const auto* it = std::find_if(std::begin(kFindingRules), std::end(kFindingRules),
                                [code](const FindingRule& rule) { return rule.code == code; });
  return it == std::end(kFindingRules) ? nullptr : it;
}

std::string finding_anchor(const FindingRule& rule) {
  std::string anchor;
  for (const char c : rule.code)
    anchor += static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  anchor += '-';
  anchor += rule.name;
  return anchor;
}

Diagnostic make_finding(const FindingRule& rule, std::string file, std::string pointer,
                        std::string message) {
  Diagnostic d = make_error(std::move(file), std::move(pointer), std::move(message));
  d.severity = rule.severity;
  d.code = rule.code;
  return d;
}

bool is_silenced(std::string_view code, std::span<const std::string> codes) {
  return !code.empty() && std::find(codes.begin(), codes.end(), code) != codes.end();
}

void drop_silenced(Diagnostics& diagnostics, std::span<const std::string> codes) {
  if (codes.empty()) return;
  std::erase_if(diagnostics, [codes](const Diagnostic& d) { return is_silenced(d.code, codes); });
}

namespace {

// What was meant by `item`, which is no code: the code of the rule named so, or the nearest.
std::optional<std::string> meant(std::string_view item) {
  std::vector<std::string> codes;
  for (const FindingRule& rule : kFindingRules) {
    if (rule.name == item) return std::string(rule.code);
    codes.emplace_back(rule.code);
  }
  return nearest_ignoring_case(item, codes);
}

}  // namespace

std::optional<Diagnostic> unknown_finding_code(std::span<const std::string> codes) {
  for (const std::string& code : codes) {
    Expected<std::vector<std::string>> parsed = parse_finding_codes(code);
    if (parsed && parsed->size() == 1) continue;
    if (!parsed) {
      Diagnostic error = std::move(parsed.errors().front());
      error.message = "--silence: " + error.message;
      return error;
    }
    return make_io_error({}, "--silence: " + quote_for_diagnostic(code) + " is not one code");
  }
  return std::nullopt;
}

Expected<std::vector<std::string>> parse_finding_codes(std::string_view list) {
  std::vector<std::string> codes;
  for (std::size_t pos = 0;;) {
    const std::size_t comma = std::min(list.find(',', pos), list.size());
    const std::string_view item = list.substr(pos, comma - pos);
    if (item.empty()) {
      return make_io_error({}, "empty finding code in " + quote_for_diagnostic(list));
    }
    if (find_finding_rule(item) == nullptr) {
      std::string message = "unknown finding code " + quote_for_diagnostic(item);
      if (std::optional<std::string> near = meant(item)) {
        message += "; did you mean " + quote_for_diagnostic(*near) + "?";
      } else {
        message += "; docs/cli.md, \"Finding codes\", lists them";
      }
      return make_io_error({}, std::move(message));
    }
    codes.emplace_back(item);
    if (comma == list.size()) break;
    pos = comma + 1;
  }
  return codes;
}

}  // namespace hpfreeze
