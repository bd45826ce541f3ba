#include "hpfreeze/commands/message_format.h"

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "io/io.h"
#include "json/diagnostic_json.h"
#include "json/json_pointer_locator.h"

namespace hpfreeze {

namespace {

// How much of a file the locator holds at once, whatever the file's size.
constexpr std::uint64_t kPieceSize = std::uint64_t{1} << 20;

// The runner's escaping of a workflow command: in the message (data) % CR LF, in a
// property value also : and ,. Other control bytes are shown as a text line shows them.
void append_github_escaped(std::string& out, std::string_view text, bool property) {
  for (const char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '%') {
      out += "%25";
    } else if (ch == '\r') {
      out += "%0D";
    } else if (ch == '\n') {
      out += "%0A";
    } else if (property && ch == ':') {
      out += "%3A";
    } else if (property && ch == ',') {
      out += "%2C";
    } else if (c < 0x20 || c == 0x7f) {
      out += escape_control(std::string_view(&ch, 1));
    } else {
      out += ch;
    }
  }
}

// How each level is named in the text and github formats, one row per MessageLevel in its
// order: the text word and its colour (spdlog's ansicolor_sink colours, which text mode has
// always used), and the workflow command.
struct LevelNames {
  std::string_view text;
  std::string_view color;
  std::string_view github;
};
constexpr LevelNames kLevelNames[] = {
    {"error", "\033[31m\033[1m", "error"},      // kError
    {"warning", "\033[33m\033[1m", "warning"},  // kWarning
    {"note", "\033[32m", "notice"},             // kNote
    {"debug", "\033[36m", "debug"},             // kDebug
    {"trace", "\033[37m", "debug"},             // kTrace
};
static_assert(std::size(kLevelNames) == static_cast<std::size_t>(MessageLevel::kTrace) + 1);

const LevelNames& names_of(MessageLevel level) {
  return kLevelNames[static_cast<std::size_t>(level)];
}

// The json format's "severity": check --json's names, "info" below a note.
std::string_view json_severity(MessageLevel level) {
  switch (level) {
    case MessageLevel::kError:
      return severity_name(Severity::kError);
    case MessageLevel::kWarning:
      return severity_name(Severity::kWarning);
    case MessageLevel::kNote:
      return severity_name(Severity::kNote);
    case MessageLevel::kDebug:
    case MessageLevel::kTrace:
      break;
  }
  return "info";
}

// A finding's code at the end of its line (of its first line, before any detail lines):
// " [HPF406]", which grep, and the eye, find after a message of any length.
void append_code(std::string& out, const Diagnostic& d) {
  if (d.code.empty()) return;
  out += " [";
  out += d.code;
  out += ']';
}

std::string format_text(MessageLevel level, const Diagnostic& d, bool color) {
  std::string out = "hpfreeze: ";
  if (color) out += names_of(level).color;
  out += names_of(level).text;
  if (color) out += "\033[m";
  out += ": ";
  out += d.location_and_message();
  append_code(out, d);
  out += '\n';
  for (const std::string& line : d.detail) {
    out += "  ";
    out += escape_control(line);
    out += '\n';
  }
  return out;
}

std::string format_github(MessageLevel level, const Diagnostic& d) {
  std::string out = "::";
  out += names_of(level).github;
  const char* separator = " ";
  const auto property = [&](std::string_view name, std::string_view value) {
    out += separator;
    out += name;
    out += '=';
    append_github_escaped(out, value, true);
    separator = ",";
  };
  // Stdin is no file of the repository: its name and position start the message instead.
  // So do a meta's, when the annotation goes on the generated file a finding is about
  // (check --bundle): the line and column are the meta's, no properties of that file.
  const bool elsewhere = !d.annotate_file.empty();
  const bool in_file = !elsewhere && !d.file.empty() && d.file != "<stdin>";
  std::string message;
  if (elsewhere) property("file", d.annotate_file);
  if (in_file) {
    property("file", d.file);
    if (d.line != 0) {
      property("line", std::to_string(d.line));
      if (d.column != 0) property("col", std::to_string(d.column));
    }
  } else if (!d.file.empty()) {
    message = escape_control(d.file);  // as the text format shows a file's name
    if (d.line != 0) message += ":" + std::to_string(d.line);
    if (d.line != 0 && d.column != 0) message += ":" + std::to_string(d.column);
    message += ": ";
  }
  out += "::";
  if (!d.pointer.empty()) {
    message += shorten_for_diagnostic(d.pointer);
    message += ": ";
  }
  message += d.message;
  append_code(message, d);
  for (const std::string& line : d.detail) {
    message += '\n';
    message += line;
  }
  append_github_escaped(out, message, false);
  out += '\n';
  return out;
}

}  // namespace

void add_pointer_positions(Diagnostics& diagnostics, FileSystem* files) {
  FileSystem& disk = file_system_or_real(files);
  // The files to read, in the order first named, each with its diagnostics.
  std::map<std::string_view, std::size_t> index;
  std::vector<std::pair<std::string, std::vector<Diagnostic*>>> named;
  for (Diagnostic& d : diagnostics) {
    if (d.line != 0 || d.pointer.empty() || d.file.empty() || d.file == "<stdin>") continue;
    const auto [it, added] = index.try_emplace(d.file, named.size());
    if (added) named.push_back({d.file, {}});
    named[it->second].second.push_back(&d);
  }
  for (auto& [file, located] : named) {
    // Never a FIFO or a device (nothing is waited on), and no further than its size.
    Expected<std::unique_ptr<RegularFile>> opened = disk.open_regular(file);
    if (!opened) continue;
    RegularFile& text = **opened;
    std::uint64_t offset = 0;
    std::string piece;
    const TextPieces next = [&]() -> std::string_view {
      const std::uint64_t n = std::min<std::uint64_t>(kPieceSize, text.size() - offset);
      if (n == 0 || text.read_at(offset, n, piece) != 0) return {};
      offset += n;
      return piece;
    };
    std::vector<std::string_view> pointers;
    pointers.reserve(located.size());
    for (const Diagnostic* d : located) pointers.push_back(d->pointer);
    const std::vector<std::optional<TextPosition>> at = locate_pointers(next, pointers);
    for (std::size_t i = 0; i < located.size(); ++i) {
      if (!at[i]) continue;
      located[i]->line = at[i]->line;
      located[i]->column = at[i]->column;
    }
  }
}

std::optional<MessageFormat> parse_message_format(std::string_view name) {
  if (name == "text") return MessageFormat::kText;
  if (name == "github") return MessageFormat::kGithub;
  if (name == "json") return MessageFormat::kJson;
  return std::nullopt;
}

MessageLevel message_level(Severity severity) {
  switch (severity) {
    case Severity::kError:
      return MessageLevel::kError;
    case Severity::kWarning:
      return MessageLevel::kWarning;
    case Severity::kNote:
      break;
  }
  return MessageLevel::kNote;
}

std::string format_message(MessageFormat format, MessageLevel level, const Diagnostic& d,
                           bool color) {
  switch (format) {
    case MessageFormat::kText:
      return format_text(level, d, color);
    case MessageFormat::kGithub:
      return format_github(level, d);
    case MessageFormat::kJson:
      break;
  }
  std::string out;
  append_finding_json_line(out, d, json_severity(level));
  return out;
}

}  // namespace hpfreeze
