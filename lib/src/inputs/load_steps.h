#pragma once
// The steps of loading one JSON input, private to the loader (inputs.h): read into memory a
// ParseScratch hands on, parse with that scratch, give the text back; and the loader's
// half of the duplicate-key shortcut. Decoding stays with the format's decoder (plan.h,
// meta.h, checkpoint.h).
//
// The duplicate-key shortcut, as one contract: a dump whose decoder walks every object
// (decode_plan_dump, decode_model_tree, a checkpoint's index) is parsed with
// decoder_checks_keys(), so the parse skips its own walk for repeated keys. The decoder then
// checks the keys it walks and, when it fails for any reason, reports the document's first
// repeated key instead, with the second key's pointer (dom_decode.h, decode_dump). A decoder
// that never ran or succeeded says nothing about keys: when the run stops for another
// input's failure, repeated_key() is what the loader asks, so a repeat is reported wherever
// the checked parse would have reported it.

#include <optional>
#include <string>

#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/inputs/load_stage.h"
#include "io/io.h"
#include "json/json_document.h"

namespace hpfreeze {

// Reads `path` through `fs`, or from `opened` when the file is open already (named `path`),
// into `buffer` (memory a scratch handed on: ParseScratch::take_text()); `stage` receives the
// display name, the size and the read time.
Expected<InputFile> read_stage(FileSystem& fs, const std::string& path, LoadStage& stage,
                               std::string buffer, OpenedFile* opened = nullptr);

// Where parse_stage's input text goes once the parse is done.
enum class TextAfterParse {
  kToScratch,  // to the scratch, for the next read (read_stage of scratch.take_text())
  kToSystem,   // back to the system at once: the next input was read already, into memory
               // of its own, so nothing would take it
};

// The document without its input text, which nothing after the parse needs: the text's
// memory (see `text`) and the parser go to `scratch` for the next read and parse, and after
// the `last` parse the scratch is closed, so that this text and the tapes released later go
// back to the system. A text that is some other format is named as such (dump_kind.h:
// options.not_json, not_json_kind when unset). `stage` receives the parse time.
Expected<JsonDocument> parse_stage(Expected<InputFile> input, LoadStage& stage,
                                   ParseScratch& scratch, bool last, ParseOptions options = {},
                                   TextAfterParse text = TextAfterParse::kToScratch);

// The parse options of a dump whose decoder checks its keys (see above).
ParseOptions decoder_checks_keys();

// The first repeated key of a document parsed with decoder_checks_keys() whose decoder did
// not report it (it failed for another input, or did not run); nullopt for a document whose
// keys were checked.
std::optional<Diagnostic> repeated_key(const JsonDocument& document);

}  // namespace hpfreeze
