// `freeze --check`: the meta is rendered as freeze would write it and compared with the
// file -o names; nothing is written (docs/cli.md, "--check").
#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/stage_clock.h"
#include "commands/freeze_steps.h"
#include "diff/diff.h"
#include "hpfreeze/commands/freeze_command.h"
#include "inputs/inputs.h"
#include "io/io.h"

namespace hpfreeze {
namespace {

Diagnostic differs(const std::string& path, std::string message) {
  return make_error(path, {}, std::move(message));
}

// The meta `text` holds (the file at `path` when it is none), loaded as diff loads a meta.
LoadedInputs load_for_diff(FileSystem& files, const std::string& path,
                           std::optional<std::string_view> text = std::nullopt) {
  const InputSpec meta{"-o", path, InputKind::kMeta, text};
  LoadOptions load;
  load.command = "freeze --check";
  load.meta = MetaReading::kValuesOnly;
  load.check_paths = false;  // nothing is written
  load.files = &files;
  return load_inputs(std::span(&meta, 1), load);
}

// The error for a file that differs: what diff finds between the file (old) and the new
// meta, at most kMaxCheckDifferences lines of it and a line counting the rest; or the file's
// read errors.
Diagnostics difference_error(FileSystem& files, const std::string& path,
                             const std::string& rendered) {
  LoadedInputs old_meta = load_for_diff(files, path);
  if (!old_meta && !old_meta.inputs[0].stage.read) return std::move(old_meta.errors);
  if (!old_meta) {
    Diagnostic d = differs(path,
                           "differs from what freeze would write, and is no meta to compare "
                           "it with");
    d.detail.push_back(old_meta.errors.front().location_and_message());
    return {d};
  }
  LoadedInputs new_meta = load_for_diff(files, "<freeze>", rendered);
  if (!new_meta) {
    // freeze's own output always decodes; were it not to, the bytes still differ.
    return {differs(path, "differs from what freeze would write")};
  }
  std::size_t count = 0;
  std::vector<std::string> lines;
  diff_metas(old_meta.inputs[0].meta(), new_meta.inputs[0].meta(), DiffOptions{},
             [&](const MetaDifference& difference) {
               if (++count > kMaxCheckDifferences) return;
               std::string line;
               append_diff_text(line, difference);
               if (!line.empty() && line.back() == '\n') line.pop_back();
               lines.push_back(std::move(line));
             });
  if (count == 0) {
    return {differs(path,
                    "differs from what freeze would write in its bytes only (key order, "
                    "spacing): diff finds no difference")};
  }
  Diagnostic d =
      differs(path, "differs from what freeze would write: " + plural(count, "difference") +
                        " (hpfreeze diff's lines, the file being OLD)");
  d.detail = std::move(lines);
  if (count > kMaxCheckDifferences) {
    d.detail.push_back("... and " + std::to_string(count - kMaxCheckDifferences) + " more");
  }
  return {d};
}

// Whether the file at `path` holds exactly `bytes`, read in pieces and no further than the
// first difference (a size that differs reads nothing).
Expected<bool> same_bytes(FileSystem& files, const std::string& path, std::string_view bytes) {
  Expected<std::unique_ptr<RegularFile>> file = files.open_regular(path);
  if (!file) return std::move(file.errors());
  if ((*file)->size() != bytes.size()) return false;
  constexpr std::size_t kPiece = std::size_t{1} << 20;
  std::string piece;
  for (std::size_t at = 0; at < bytes.size(); at += piece.size()) {
    if (const int err = (*file)->read_at(at, std::min(kPiece, bytes.size() - at), piece)) {
      return make_io_error(path, "read failed: " + describe_errno(err));
    }
    if (bytes.substr(at, piece.size()) != piece) return false;
  }
  return true;
}

// The usage errors of --check, found before anything is read.
Diagnostics usage_errors(const FreezeRequest& request) {
  Diagnostics errors;
  if (request.output_path == "-") {
    errors.push_back(make_io_error(
        {}, "--check needs -o FILE: it compares FILE with what freeze would write there"));
  }
  if (request.depfile_path) {
    errors.push_back(
        make_io_error(*request.depfile_path, "--check writes nothing: leave out --depfile"));
  }
  return errors;
}

// What is at `path` to compare with: a regular file (or a link to one: nullopt), or nothing
// (the difference that says so). Anything else is an error: a FIFO or a terminal could block.
Expected<std::optional<Diagnostic>> file_to_compare(FileSystem& files, const std::string& path) {
  FileIdentity identity;
  bool shareable = false;
  bool read_once = false;
  if (const int err = files.identify_input(path, &identity, &shareable, &read_once); err != 0) {
    if (err != ENOENT) return make_io_error(path, "cannot check: " + describe_errno(err));
    return std::optional<Diagnostic>(differs(path, "does not exist; freeze would write it"));
  }
  if (const FileKind kind = files.kind_of(path); kind != FileKind::kRegular) {
    return make_io_error(path, kind == FileKind::kDirectory
                                   ? "is a directory"
                                   : "is not a regular file: --check compares with a file");
  }
  return std::optional<Diagnostic>();
}

// Whether the file at `path` holds `bytes`; when it does not, the difference goes to `out`;
// nullopt, with the errors in `out`, when it could not be read. Compared in pieces first: a
// committed meta of any size costs one piece of memory when it matches; only a file that
// differs is read whole, to list the differences.
std::optional<bool> compare_with_file(FileSystem& files, const std::string& path,
                                      const std::string& bytes, Diagnostics& out) {
  Expected<bool> same = same_bytes(files, path, bytes);
  if (!same) {
    out.insert(out.end(), same.errors().begin(), same.errors().end());
    return std::nullopt;
  }
  if (*same) return true;
  const std::size_t on_disk = files.regular_file_size(path);
  if (on_disk >= kMaxInputSize) {
    out.push_back(differs(path, "differs from what freeze would write (" + plural(on_disk, "byte") +
                                    " where freeze writes " + plural(bytes.size(), "byte") +
                                    "); too large to list the differences: diff reads files "
                                    "below 4 GiB"));
    return false;
  }
  Diagnostics differences = difference_error(files, path, bytes);
  const bool read = differences.front().error_class != ErrorClass::kIo;
  out.insert(out.end(), differences.begin(), differences.end());
  if (!read) return std::nullopt;
  return false;
}

// `word` as one shell word: as it is when it holds only bytes no shell reads as syntax,
// else in single quotes, or as $'...' when it holds a control byte (a newline would break
// the diagnostic line, and the reader could not type it).
std::string shell_word(std::string_view word) {
  const auto plain = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           std::string_view("_@%+=:,./-").find(c) != std::string_view::npos;
  };
  if (!word.empty() && std::all_of(word.begin(), word.end(), plain)) return std::string(word);
  const bool control = std::any_of(word.begin(), word.end(), [](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == 0x7f;
  });
  std::string out = control ? "$'" : "'";
  for (const char c : word) {
    const auto byte = static_cast<unsigned char>(c);
    if (control && (byte < 0x20 || byte == 0x7f)) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[byte >> 4];
      out += kHex[byte & 0xf];
    } else if (control && (c == '\\' || c == '\'')) {
      out += '\\';
      out += c;
    } else if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// The next step of a failed check, under its error.
std::string rewrite_hint(const FreezeRequest& request, std::string_view what) {
  return "run without --check to " + std::string(what) + " it: " + freeze_command_line(request);
}

}  // namespace

std::string freeze_command_line(const FreezeRequest& request) {
  std::string command = "hpfreeze freeze --plan " + shell_word(request.plan_path) + " --model " +
                        shell_word(request.model_path);
  if (request.base_path) command += " --base " + shell_word(*request.base_path);
  command += " -o " + shell_word(request.output_path);
  if (!request.options.verify) command += " --no-verify";
  if (request.options.strict) command += " --strict";
  if (request.options.allow_empty) command += " --allow-empty";
  return command;
}

CommandResult run_freeze_check(const FreezeRequest& request, FreezeStages* stages) {
  CommandResult result;
  result.diagnostics = usage_errors(request);
  if (!result.diagnostics.empty()) return result;
  FileSystem& files = file_system_or_real(request.files);
  Expected<std::optional<Diagnostic>> missing = file_to_compare(files, request.output_path);
  if (!missing) {
    result.diagnostics = std::move(missing.errors());
    return result;
  }
  Expected<RenderedMeta> rendered = render_meta(request, stages);
  if (!rendered) {
    result.diagnostics = std::move(rendered.errors());
    return result;
  }
  result.diagnostics = std::move(rendered->warnings);
  const StageClock::time_point start = StageClock::now();
  std::optional<bool> matched = false;
  if (*missing) {
    (*missing)->detail.push_back(rewrite_hint(request, "write"));
    result.diagnostics.push_back(std::move(**missing));
  } else {
    matched = compare_with_file(files, request.output_path, rendered->bytes, result.diagnostics);
    if (matched && !*matched)
      result.diagnostics.back().detail.push_back(rewrite_hint(request, "rewrite"));
  }
  if (!matched) return result;  // the file could not be read
  if (stages != nullptr) {
    stages->checked = true;
    stages->check_matched = *matched;
    stages->check_ms = ms_since(start);
  }
  return result;
}

}  // namespace hpfreeze
