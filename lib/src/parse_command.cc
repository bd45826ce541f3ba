#include "hpfreeze/parse_command.h"

#include "hpfreeze/encode.h"
#include "hpfreeze/json.h"
#include "hpfreeze/placement.h"

namespace hpfreeze {

ParseResult run_parse(std::span<const ParseInput> inputs, const ParseOptions& options) {
  ParseResult result;
  for (const ParseInput& input : inputs) {
    Expected<Placement> parsed = parse_placement(input.text);
    if (!parsed) {
      Diagnostic d = std::move(parsed.errors().front());
      d.file = input.origin;
      d.line = input.line;
      result.errors.push_back(std::move(d));
      continue;
    }
    const std::string canonical = to_canonical(*parsed);
    if (options.check && canonical != input.text) {
      Diagnostic d = make_error(input.origin, {},
                                "placement " + quote_for_diagnostic(input.text) +
                                    " is not canonical (canonical form: " +
                                    quote_for_diagnostic(canonical) + ")");
      d.line = input.line;
      result.errors.push_back(std::move(d));
    }
    if (options.json) {
      Json dump = placement_to_dump(*parsed);
      dump.as_object().push_back({"canonical", Json(std::string_view(canonical))});
      result.output += encode_compact_json(dump);
    } else {
      result.output += canonical;
    }
    result.output += '\n';
  }
  return result;
}

std::vector<ParseInput> split_stdin_lines(std::string_view text, const std::string& origin) {
  std::vector<ParseInput> inputs;
  std::size_t line = 0;
  while (!text.empty()) {
    const std::size_t nl = text.find('\n');
    std::string_view current = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    if (current.ends_with('\r')) current.remove_suffix(1);
    inputs.push_back(ParseInput{current, origin, ++line});
  }
  return inputs;
}

}  // namespace hpfreeze
