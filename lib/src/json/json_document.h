#pragma once
// Reading a JSON document: simdjson DOM parse plus the checks the DOM parser does not make
// (byte-order mark, empty input, duplicate keys), with line:column for every syntax error.

#include <simdjson.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "hpfreeze/base/diagnostic.h"
#include "json/json.h"

namespace hpfreeze {

// Objects and arrays nested deeper than this are rejected ("nesting deeper than 1024
// levels"); a document of exactly this depth is accepted.
inline constexpr std::size_t kMaxJsonDepth = 1024;

class JsonDocument;
class ParseScratch;

struct ParseOptions {
  // false: the parse leaves the duplicate-key check to a decoder that visits every object
  // anyway (one walk over the document instead of two); the document then says so in
  // keys_checked(), and find_duplicate_key() makes the full check. Everything else is
  // checked either way.
  bool check_duplicate_keys = true;
  // Memory to take the parser and the tape from, instead of fresh memory (ParseScratch).
  ParseScratch* scratch = nullptr;
  // Names what a text that is no JSON is instead (the loader asks dump_kind.h's
  // not_json_kind): its message, when it has one, replaces the syntax error.
  std::optional<std::string> (*not_json)(std::string_view bytes) = nullptr;
};

// Memory that one step of a command hands on to the next instead of back to the system:
// the parser (its structural index, 4 bytes per structural character), a released
// document's tape and a released input text. Fresh memory costs the kernel a page fault
// and a zeroed page per page touched, which was a third of a freeze's time on 100 MB of
// dumps (docs/performance.md, "Where the time goes"). A command that parses several documents in
// turn passes one ParseScratch to each parse and release; what it holds between two steps
// is what the next step would have allocated anyway, so the peak does not grow as long as
// the next step is at least as large. After the last parse, close() gives everything back,
// and whatever is handed to a closed scratch goes back to the system at once: the steps
// hand their memory on the same way whether or not another parse follows.
class ParseScratch {
 public:
  ParseScratch();
  ParseScratch(const ParseScratch&) = delete;
  ParseScratch& operator=(const ParseScratch&) = delete;
  ~ParseScratch();

  // The largest input a parse with this scratch will see: the first parse allocates for it,
  // so that a larger second input does not need all of its memory afresh.
  void expect_input(std::size_t bytes) { expected_input_ = std::max(expected_input_, bytes); }
  // A buffer to read the next input into: the largest text given back (or a new string),
  // with room for the expected input when that much can be had, so that a larger second
  // input is not read into fresh memory. Only the pages a read fills count.
  [[nodiscard]] std::string take_text();
  void keep_text(std::string text) {
    if (!closed_ && text.capacity() > text_.capacity()) text_ = std::move(text);
  }
  // Once no parse is to come: gives the parser, the tape and the text back to the system,
  // and keeps nothing handed in later. A parse with a closed scratch parses as without one.
  void close();

 private:
  friend class JsonDocument;
  friend Expected<JsonDocument> parse_json_document(std::string display_name, std::string bytes,
                                                    ParseOptions options);

  std::size_t expected_input_ = 0;
  std::unique_ptr<simdjson::dom::parser> parser_;
  std::unique_ptr<std::uint64_t[]> tape_;
  std::size_t tape_capacity_ = 0;  // in input bytes, as simdjson::dom::document::capacity()
  std::string text_;
  bool closed_ = false;
};

// A parsed, validated JSON document. Move-only; string views taken from its elements (and
// Json values built by json_from_dom) stay valid as long as the document lives, moves
// included.
class JsonDocument {
 public:
  JsonDocument(JsonDocument&&) noexcept = default;
  JsonDocument& operator=(JsonDocument&&) noexcept = default;
  JsonDocument(const JsonDocument&) = delete;
  JsonDocument& operator=(const JsonDocument&) = delete;
  ~JsonDocument() = default;

  // Display name used in diagnostics ("plan.json", "<stdin>").
  [[nodiscard]] const std::string& name() const { return name_; }
  [[nodiscard]] simdjson::dom::element root() const { return root_; }
  // The input as given (without the parser's padding); empty after release_bytes().
  [[nodiscard]] std::string_view bytes() const { return bytes_; }
  // Frees the input text. The parsed document does not need it (its strings live in the
  // parser), so a caller done with bytes() can lower its peak memory by the input's size.
  void release_bytes() { std::string().swap(bytes_); }
  // The same, handing the buffer to `scratch` for the next read or output.
  void release_bytes(ParseScratch& scratch) { scratch.keep_text(std::move(bytes_)); }
  // False when parsed with ParseOptions::check_duplicate_keys off (until release_tree()).
  [[nodiscard]] bool keys_checked() const { return keys_checked_; }
  // Frees the document's structure (simdjson's tape, 8 to 16 bytes per value) and keeps
  // its strings, which are all that views taken from it (decoded structs, Json values)
  // point into. For a caller whose decoder accepted the whole document, keys included:
  // root() must not be used afterwards, and keys_checked() is then true.
  [[nodiscard]] bool tree_released() const { return !document_->tape; }
  void release_tree() {
    document_->tape.reset();
    root_ = simdjson::dom::element();
    keys_checked_ = true;
  }
  // The same, handing the tape to `scratch` for the next parse.
  void release_tree(ParseScratch& scratch);

 private:
  friend Expected<JsonDocument> parse_json_document(std::string display_name, std::string bytes,
                                                    ParseOptions options);
  JsonDocument(std::string name, std::string bytes,
               std::unique_ptr<simdjson::dom::document> document, bool keys_checked)
      : name_(std::move(name)),
        bytes_(std::move(bytes)),
        document_(std::move(document)),
        root_(document_->root()),
        keys_checked_(keys_checked) {}

  std::string name_;
  std::string bytes_;
  // Only the parsed document is kept, not the parser: its structural index (4 bytes per
  // input byte) is garbage once the parse is done. Elements point at the document object,
  // so it lives on the heap and never moves.
  std::unique_ptr<simdjson::dom::document> document_;
  simdjson::dom::element root_;
  bool keys_checked_ = true;
};

// Parses and validates `bytes`. Rejects invalid JSON or UTF-8, a byte-order mark, empty
// input, lone surrogate escapes, NaN/Infinity, integers outside [-2^63, 2^64-1], floats
// that overflow a double, trailing content, nesting deeper than kMaxJsonDepth, inputs of
// 4 GiB or more and duplicate keys in one object. Syntax errors carry line and column (the
// first byte at which the text stops being the start of a valid document); a duplicate
// key carries the JSON Pointer of its second occurrence. Running out of memory is not a
// rejection: it gives "out of memory while parsing", ErrorClass::kIo. Pass `bytes` with
// simdjson::SIMDJSON_PADDING spare capacity to avoid a copy.
Expected<JsonDocument> parse_json_document(std::string display_name, std::string bytes,
                                           ParseOptions options = {});

// The first key, in document order, that repeats an earlier key of its object: the same
// diagnostic parse_json_document gives with the check on. For documents parsed without
// it, after a decoder found a problem (so that a duplicate key is reported as such).
std::optional<Diagnostic> find_duplicate_key(const JsonDocument& document);

// Whether some object in the subtree `e` repeats a key: for decoders that copy a subtree
// of a document parsed without the check instead of walking it.
bool has_repeated_key(simdjson::dom::element e);

// Converts a DOM subtree to the Json model. Strings and keys are views into the document
// that owns `e`; numbers keep simdjson's int64 / uint64 / double split.
Json json_from_dom(simdjson::dom::element e);

// "object", "array", "string", "integer", "float", "boolean" or "null", for messages such
// as "expected an object, got array".
std::string json_type_name(simdjson::dom::element e);
// The same with its article ("an object", "a string", "null"), as json_type_article of json.h
// gives for a Json value.
std::string_view json_type_article(simdjson::dom::element e);

// 1-based line and 1-based byte column of `offset` in `bytes` (lines end at '\n'; offsets
// past the end are clamped to the end).
std::pair<std::size_t, std::size_t> line_column(std::string_view bytes, std::size_t offset);

}  // namespace hpfreeze
