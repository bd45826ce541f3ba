// run_diff: read and decode both metas, then stream diff_metas' differences as text or
// JSON Lines (or, with quiet, only whether there are any).
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "io/inputs.h"
#include "hpfreeze/diff_command.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"

namespace hpfreeze {

CommandResult run_diff(const DiffRequest& request) {
  CommandResult result;
  result.errors_are_trouble = true;
  if (std::optional<Diagnostic> twice =
          stdin_twice_error({&request.old_path, &request.new_path}, "the two metas")) {
    result.diagnostics.push_back(std::move(*twice));
    return result;
  }
  // A malformed --ignore is a usage error, found before any file is read.
  Expected<std::vector<IgnoredPointer>> ignored = ignored_pointers(request.options);
  if (!ignored) {
    result.diagnostics = std::move(ignored.errors());
    return result;
  }
  const InputPath inputs[] = {{"OLD", request.old_path, {}}, {"NEW", request.new_path, {}}};
  result.diagnostics = check_stdout_apart(inputs);
  if (!result.diagnostics.empty()) return result;
  // Both files are read and decoded before either error is returned, so one run names both.
  Diagnostics& errors = result.diagnostics;
  std::vector<JsonDocument> documents;
  std::vector<std::optional<FrozenMeta>> metas(2);  // optional: FrozenMeta is move-only
  std::size_t decoded = 0;
  documents.reserve(2);
  // diff compares the documents' values (validated by the decoder), never decoded params.
  MetaDecodeOptions no_params;
  no_params.keep_params = false;
  // The first file's text, parser and tape go on to the second's read and parse
  // (ParseScratch).
  ParseScratch scratch;
  scratch.expect_input(
      std::max(regular_file_size(request.old_path), regular_file_size(request.new_path)));
  LoadStage stage;  // diff shows no stages
  for (const std::string* path : {&request.old_path, &request.new_path}) {
    const bool last = path == &request.new_path;
    Expected<JsonDocument> doc = load_document(*path, stage, scratch, last);
    if (!doc) {
      errors.insert(errors.end(), doc.errors().begin(), doc.errors().end());
      continue;
    }
    documents.push_back(std::move(*doc));
    Expected<FrozenMeta> meta = decode_meta(documents.back(), "diff", no_params);
    if (!meta) {
      errors.insert(errors.end(), meta.errors().begin(), meta.errors().end());
      continue;
    }
    // The decoded meta views only the document's strings: its structure goes before the
    // next file is parsed.
    documents.back().release_tree(scratch);
    metas[decoded++] = std::move(*meta);
  }
  if (!errors.empty()) return result;
  errors = check_ignored(*ignored, *metas[0], *metas[1]);
  if (!errors.empty()) return result;
  diff_metas(*metas[0], *metas[1], request.options, [&](const MetaDifference& d) {
    result.negative = true;
    if (request.quiet) return;
    if (request.json) {
      append_diff_json_line(result.output, d);
    } else {
      append_diff_text(result.output, d);
    }
  });
  return result;
}

}  // namespace hpfreeze
