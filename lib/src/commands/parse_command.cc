#include "hpfreeze/commands/parse_command.h"

#include "json/json.h"
#include "json/json_stream.h"
#include "json/output_name.h"
#include "spec/placement.h"

namespace hpfreeze {
namespace {

// A stdin line is a line of the file "<stdin>"; an argument is no file (no CI annotation
// may name it as one), so its name starts the message instead: "argument 2: ...".
Diagnostic located(Diagnostic d, const ParseInput& input) {
  if (input.line == 0) {
    d.file.clear();
    d.message = input.origin + ": " + d.message;
  } else {
    d.file = input.origin;
    d.line = input.line;
  }
  return d;
}

}  // namespace

CommandResult run_parse(std::span<const ParseInput> inputs, const ParseCommandOptions& options) {
  CommandResult result;
  for (const ParseInput& input : inputs) {
    if (input.too_long) {
      result.diagnostics.push_back(located(
          make_error({}, {}, "line longer than " + std::to_string(kMaxParseLine) + " bytes"),
          input));
      continue;
    }
    Expected<Placement> parsed = parse_placement(input.text);
    if (!parsed) {
      result.diagnostics.push_back(located(std::move(parsed.errors().front()), input));
      continue;
    }
    const std::string canonical = to_canonical(*parsed);
    if (options.check && canonical != input.text) {
      result.diagnostics.push_back(located(
          make_error({}, {},
                     "placement " + quote_for_diagnostic(input.text) +
                         " is not canonical (canonical form: " + quote_for_diagnostic(canonical) +
                         ")"),
          input));
    }
    if (options.json) {
      Json dump = placement_to_dump(*parsed);
      dump.as_object().push_back({"canonical", Json(std::string_view(canonical))});
      JsonStream(result.output, JsonLayout::kOneLine).value(dump);
    } else {
      // A reduce op may hold a control character (P(a\rb)): shown quoted, as names are.
      append_output_name(result.output, canonical);
    }
    result.output += '\n';
  }
  return result;
}

ParseInput LineSplitter::make_line(std::string_view text, bool too_long) {
  if (text.ends_with('\r')) text.remove_suffix(1);
  return ParseInput{too_long ? std::string_view() : text, origin_, ++line_, too_long};
}

std::vector<ParseInput> LineSplitter::feed(std::string_view chunk) {
  // Lines are copied into done_ first, so that every view points into one stable buffer.
  std::vector<std::pair<std::size_t, std::size_t>> spans;
  std::vector<bool> long_lines;
  done_.clear();
  while (!chunk.empty()) {
    const std::size_t nl = chunk.find('\n');
    const std::string_view piece = chunk.substr(0, nl);
    if (!skipping_ && pending_.size() + piece.size() > kMaxParseLine) {
      skipping_ = true;
      pending_.clear();
    }
    if (!skipping_) pending_ += piece;
    if (nl == std::string_view::npos) break;
    chunk.remove_prefix(nl + 1);
    spans.emplace_back(done_.size(), pending_.size());
    long_lines.push_back(skipping_);
    done_ += pending_;
    pending_.clear();
    skipping_ = false;
  }
  std::vector<ParseInput> lines;
  for (std::size_t i = 0; i < spans.size(); ++i) {
    lines.push_back(
        make_line(std::string_view(done_).substr(spans[i].first, spans[i].second), long_lines[i]));
  }
  return lines;
}

std::vector<ParseInput> LineSplitter::finish() {
  std::vector<ParseInput> lines;
  if (!pending_.empty() || skipping_) {
    done_ = std::move(pending_);
    lines.push_back(make_line(done_, skipping_));
  }
  pending_.clear();
  skipping_ = false;
  return lines;
}

}  // namespace hpfreeze
