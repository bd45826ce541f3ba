// `freeze --check`: the meta is rendered as freeze would write it and compared with the
// file -o names; nothing is written (docs/cli.md, "--check").
#include <sys/stat.h>

#include <cerrno>
#include <optional>
#include <string>
#include <utility>

#include "base/stage_clock.h"
#include "hpfreeze/diff.h"
#include "hpfreeze/freeze_command.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/meta.h"
#include "io/inputs.h"

namespace hpfreeze {
namespace {

Diagnostic differs(const std::string& path, std::string message) {
  return make_error(path, {}, std::move(message));
}

// The file's meta, or why the file is no meta diff could compare (its first error).
Expected<FrozenMeta> decode_for_diff(const JsonDocument& document) {
  MetaDecodeOptions no_params;
  no_params.keep_params = false;
  return decode_meta(document, "freeze --check", no_params);
}

// The error for a file that differs: what diff finds between the file (old) and the new
// meta, at most kMaxCheckDifferences lines of it and a line counting the rest. Both are
// parsed by the loader's parse stage (io/inputs.h) with a closed scratch: one parse each,
// its text given back as soon as it is parsed.
Diagnostic difference_error(const std::string& path, InputFile existing,
                            const std::string& rendered) {
  ParseScratch scratch;
  scratch.close();
  LoadStage stage;  // --check's stage is timed as a whole (FreezeStages::check_ms)
  Expected<JsonDocument> old_doc = parse_stage(std::move(existing), stage, scratch, true);
  std::optional<Expected<FrozenMeta>> old_meta;
  if (old_doc) old_meta = decode_for_diff(*old_doc);
  if (!old_doc || !*old_meta) {
    const Diagnostic& why = old_doc ? old_meta->errors().front() : old_doc.errors().front();
    Diagnostic d = differs(path,
                           "differs from what freeze would write, and is no meta to compare "
                           "it with");
    d.detail.push_back(why.location_and_message());
    return d;
  }
  Expected<JsonDocument> new_doc =
      parse_stage(InputFile{"<freeze>", "<freeze>", rendered}, stage, scratch, true);
  Expected<FrozenMeta> new_meta =
      new_doc ? decode_for_diff(*new_doc) : Expected<FrozenMeta>(new_doc.errors());
  if (!new_meta) {
    // freeze's own output always decodes; were it not to, the bytes still differ.
    return differs(path, "differs from what freeze would write");
  }
  std::size_t count = 0;
  std::vector<std::string> lines;
  diff_metas(**old_meta, *new_meta, DiffOptions{}, [&](const MetaDifference& difference) {
    if (++count > kMaxCheckDifferences) return;
    std::string line;
    append_diff_text(line, difference);
    if (!line.empty() && line.back() == '\n') line.pop_back();
    lines.push_back(std::move(line));
  });
  if (count == 0) {
    return differs(path,
                   "differs from what freeze would write in its bytes only (key order, spacing): "
                   "diff finds no difference");
  }
  Diagnostic d =
      differs(path, "differs from what freeze would write: " + plural(count, "difference") +
                        " (hpfreeze diff's lines, the file being OLD)");
  d.detail = std::move(lines);
  if (count > kMaxCheckDifferences) {
    d.detail.push_back("... and " + std::to_string(count - kMaxCheckDifferences) + " more");
  }
  return d;
}

// Whether the file at `path` holds exactly `bytes`, read in pieces and no further than the
// first difference (a size that differs reads nothing).
Expected<bool> same_bytes(const std::string& path, std::string_view bytes) {
  Expected<FilePieces> file = FilePieces::open(path);
  if (!file) return std::move(file.errors());
  if (file->size() != bytes.size()) return false;
  std::size_t at = 0;
  for (;;) {
    Expected<std::string_view> piece = file->next();
    if (!piece) return std::move(piece.errors());
    if (piece->empty()) return at == bytes.size();
    if (piece->size() > bytes.size() - at || bytes.substr(at, piece->size()) != *piece) {
      return false;  // differs, or the file grew since its size was read
    }
    at += piece->size();
  }
}

}  // namespace

CommandResult run_freeze_check(const FreezeRequest& request, FreezeStages* stages) {
  CommandResult result;
  // Usage errors first, before any input is read.
  if (request.output_path == "-") {
    result.diagnostics.push_back(make_io_error(
        {}, "--check needs -o FILE: it compares FILE with what freeze would write there"));
  }
  if (request.depfile_path) {
    result.diagnostics.push_back(
        make_io_error(*request.depfile_path, "--check writes nothing: leave out --depfile"));
  }
  if (!result.diagnostics.empty()) return result;
  const std::string& path = request.output_path;
  // Only a regular file (or a link to one) is read: a FIFO or a terminal could block.
  struct stat st {};
  std::optional<Diagnostic> missing;
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT) {
      result.diagnostics.push_back(make_io_error(path, "cannot check: " + describe_errno(err)));
      return result;
    }
    missing = differs(path, "does not exist; freeze would write it");
  } else if (!S_ISREG(st.st_mode)) {
    result.diagnostics.push_back(make_io_error(
        path, S_ISDIR(st.st_mode) ? "is a directory"
                                  : "is not a regular file: --check compares with a file"));
    return result;
  }
  Expected<RenderedMeta> rendered = render_meta(request, stages);
  if (!rendered) {
    result.diagnostics = std::move(rendered.errors());
    return result;
  }
  result.diagnostics = std::move(rendered->warnings);
  const StageClock::time_point start = StageClock::now();
  bool matched = false;
  if (missing) {
    result.diagnostics.push_back(std::move(*missing));
  } else {
    // Compared in pieces first: a committed meta of any size costs one piece of memory
    // when it matches; only a file that differs is read whole, to list the differences.
    Expected<bool> same = same_bytes(path, rendered->bytes);
    if (!same) {
      result.diagnostics.insert(result.diagnostics.end(), same.errors().begin(),
                                same.errors().end());
      return result;
    }
    matched = *same;
    const std::size_t on_disk = matched ? 0 : regular_file_size(path);
    if (!matched && on_disk >= kMaxInputSize) {
      result.diagnostics.push_back(
          differs(path, "differs from what freeze would write (" + plural(on_disk, "byte") +
                            " where freeze writes " + plural(rendered->bytes.size(), "byte") +
                            "); too large to list the differences: diff reads files below 4 GiB"));
    } else if (!matched) {
      LoadStage stage;
      Expected<InputFile> existing = read_stage(path, stage, std::string());
      if (!existing) {
        result.diagnostics.insert(result.diagnostics.end(), existing.errors().begin(),
                                  existing.errors().end());
        return result;
      }
      result.diagnostics.push_back(difference_error(path, std::move(*existing), rendered->bytes));
    }
  }
  if (stages != nullptr) {
    stages->checked = true;
    stages->check_matched = matched;
    stages->check_ms = ms_since(start);
  }
  return result;
}

}  // namespace hpfreeze
