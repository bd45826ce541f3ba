#include "json/json_document.h"

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <exception>
#include <new>
#include <optional>
#include <vector>

#include "base/huge_pages.h"
#include "base/name_index.h"
#include "json/json_syntax_locator.h"

namespace hpfreeze {

namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// Inputs from this size on get huge pages for their DOM.
constexpr std::size_t kLargeDocument = std::size_t{4} << 20;

// A problem simdjson lets through.
struct DomProblem {
  enum class Kind { kDuplicateKey, kTooDeep };
  Kind kind;
  std::string pointer;   // duplicate key: of the repeated key's value
  std::string_view key;  // duplicate key
};

// Finds the first problem, in document order, that the DOM parse accepts: a key repeating an
// earlier key of the same object, or a container at nesting level kMaxJsonDepth + 1 (simdjson
// gets one more level than we allow because it counts a scalar in the innermost container as
// a level; only an empty container can get that deep). One iterative pass over the DOM:
// small objects compare keys pairwise, large ones use an open-addressing table, so a
// million-key object costs a million hash probes.
class DomChecker {
 public:
  std::optional<DomProblem> find(element root) {
    enter(root);
    while (!stack_.empty()) {
      Frame& frame = stack_.back();
      if (frame.is_object) {
        if (frame.object_it == frame.object_end) {
          leave_object(frame);
          continue;
        }
        // The key travels in registers: reading it back from `frame` right after storing
        // it stalled on store-to-load forwarding.
        const std::string_view key = frame.object_it.key();
        frame.key = key;
        if (is_repeated(frame, key)) {
          return DomProblem{DomProblem::Kind::kDuplicateKey, current_pointer(), key};
        }
        keys_.push_back(key);
        const element value = frame.object_it.value();
        ++frame.object_it;
        // May reallocate stack_: `frame` is not used after this.
        if (!enter(value)) return DomProblem{DomProblem::Kind::kTooDeep, {}, {}};
      } else {
        if (frame.array_it == frame.array_end) {
          stack_.pop_back();
          continue;
        }
        const element value = *frame.array_it;
        ++frame.array_it;
        ++frame.index;
        if (!enter(value)) return DomProblem{DomProblem::Kind::kTooDeep, {}, {}};
      }
    }
    return std::nullopt;
  }

 private:
  static constexpr std::size_t kPairwiseLimit = 16;
  static constexpr std::size_t kNoTable = static_cast<std::size_t>(-1);
  // Keys hashed ahead of their insertion so that their slots are already being fetched: a
  // large table does not fit in cache and each probe would otherwise wait for memory.
  static constexpr std::size_t kLookahead = 16;

  struct Frame {
    simdjson::dom::object::iterator object_it;
    simdjson::dom::object::iterator object_end;
    simdjson::dom::array::iterator array_it;
    simdjson::dom::array::iterator array_end;
    std::string_view key;          // objects: key of the member being visited
    std::size_t index = 0;         // arrays: 1 + index of the element being visited
    std::size_t first_key = 0;     // objects: their keys so far are keys_[first_key..]
    std::size_t table = kNoTable;  // large objects: their table in tables_
    bool is_object = false;
  };

  // Slots hold (32 hash bits << 32) | (key number within the object + 1); 0 is empty.
  struct KeyTable {
    std::vector<std::uint64_t> slots;
    std::size_t used = 0;
    simdjson::dom::object::iterator ahead;  // next key to hash
    simdjson::dom::object::iterator end;
    std::array<std::uint64_t, kLookahead> hashes{};  // of key number n at [n % kLookahead]
    std::size_t hashed = 0;
  };

  // Pushes a frame for a non-empty container; false if `e` is a container nested too deep.
  bool enter(element e) {
    const element_type type = e.type();
    if (type != element_type::OBJECT && type != element_type::ARRAY) return true;
    if (stack_.size() == kMaxJsonDepth) return false;
    if (type == element_type::OBJECT) {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      Frame frame;
      frame.object_it = object.begin();
      frame.object_end = object.end();
      if (frame.object_it == frame.object_end) return true;
      frame.is_object = true;
      frame.first_key = keys_.size();
      // size() saturates at 2^24 - 1; the table grows past that if needed.
      if (object.size() > kPairwiseLimit) {
        frame.table = open_table(object);
        keys_.reserve(keys_.size() + object.size());
      }
      stack_.push_back(frame);
    } else {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      Frame frame;
      frame.array_it = array.begin();
      frame.array_end = array.end();
      // Leading scalars need no visit (shapes, name lists): skip them here, and the frame
      // altogether when nothing but scalars follows.
      for (; frame.array_it != frame.array_end; ++frame.array_it, ++frame.index) {
        const element_type item = (*frame.array_it).type();
        if (item == element_type::OBJECT || item == element_type::ARRAY) break;
      }
      if (frame.array_it == frame.array_end) return true;
      stack_.push_back(frame);
    }
    return true;
  }

  void leave_object(const Frame& frame) {
    keys_.resize(frame.first_key);
    if (frame.table != kNoTable) --open_tables_;
    stack_.pop_back();
  }

  std::size_t open_table(const simdjson::dom::object& object) {
    if (open_tables_ == tables_.size()) tables_.emplace_back();
    KeyTable& table = tables_[open_tables_];
    table.slots.assign(std::bit_ceil(object.size() * 2), 0);
    table.used = 0;
    table.ahead = object.begin();
    table.end = object.end();
    table.hashed = 0;
    while (table.hashed < kLookahead && table.ahead != table.end) hash_ahead(table);
    return open_tables_++;
  }

  static void hash_ahead(KeyTable& table) {
    const std::uint64_t hash = hash_name(table.ahead.key());
    table.hashes[table.hashed % kLookahead] = hash;
    __builtin_prefetch(&table.slots[static_cast<std::size_t>(hash) & (table.slots.size() - 1)]);
    ++table.hashed;
    ++table.ahead;
  }

  bool is_repeated(const Frame& frame, std::string_view key) {
    if (frame.table == kNoTable) {
      return std::find(keys_.begin() + static_cast<std::ptrdiff_t>(frame.first_key), keys_.end(),
                       key) != keys_.end();
    }
    KeyTable& table = tables_[frame.table];
    if ((table.used + 1) * 2 > table.slots.size()) grow(table, frame.first_key);
    const std::size_t number = keys_.size() - frame.first_key;
    const std::uint64_t hash = table.hashes[number % kLookahead];
    if (table.ahead != table.end) hash_ahead(table);  // overwrites the entry just read
    const std::uint64_t tag = hash & 0xffff'ffff'0000'0000u;
    const std::size_t mask = table.slots.size() - 1;
    for (std::size_t i = static_cast<std::size_t>(hash) & mask;; i = (i + 1) & mask) {
      const std::uint64_t slot = table.slots[i];
      if (slot == 0) {
        table.slots[i] = tag | (number + 1);
        ++table.used;
        return false;
      }
      if ((slot & 0xffff'ffff'0000'0000u) == tag &&
          keys_[frame.first_key + (slot & 0xffff'ffffu) - 1] == key) {
        return true;
      }
    }
  }

  void grow(KeyTable& table, std::size_t first_key) {
    std::vector<std::uint64_t> old = std::move(table.slots);
    table.slots.assign(old.size() * 2, 0);
    const std::size_t mask = table.slots.size() - 1;
    for (const std::uint64_t slot : old) {
      if (slot == 0) continue;
      const std::string_view key = keys_[first_key + (slot & 0xffff'ffffu) - 1];
      std::size_t i = static_cast<std::size_t>(hash_name(key)) & mask;
      while (table.slots[i] != 0) i = (i + 1) & mask;
      table.slots[i] = slot;
    }
  }

  std::string current_pointer() const {
    std::string pointer;
    for (const Frame& frame : stack_) {
      if (frame.is_object) {
        append_pointer_token(pointer, frame.key);
      } else {
        append_pointer_token(pointer, std::to_string(frame.index - 1));
      }
    }
    return pointer;
  }

  std::vector<Frame> stack_;
  std::vector<std::string_view> keys_;  // keys seen so far in each open object, outermost first
  std::vector<KeyTable> tables_;        // reused; tables_[0..open_tables_) are in use
  std::size_t open_tables_ = 0;
};

}  // namespace

std::pair<std::size_t, std::size_t> line_column(std::string_view bytes, std::size_t offset) {
  offset = std::min(offset, bytes.size());
  const std::string_view before = bytes.substr(0, offset);
  const auto line = static_cast<std::size_t>(std::count(before.begin(), before.end(), '\n')) + 1;
  const std::size_t last_newline = before.rfind('\n');
  const std::size_t line_start = last_newline == std::string_view::npos ? 0 : last_newline + 1;
  return {line, offset - line_start + 1};
}

namespace {

Diagnostic duplicate_key_error(std::string name, DomProblem problem) {
  return make_error(std::move(name), std::move(problem.pointer),
                    "duplicate key " + quote_for_diagnostic(problem.key));
}

// The depth check alone, as one pass over simdjson's tape (a word per value, two for a
// number; containers open with '[' or '{' and close with ']' or '}'): true when a container
// sits at nesting level kMaxJsonDepth + 1 (see DomChecker).
bool too_deep(const simdjson::dom::document& doc) {
  const std::uint64_t* tape = doc.tape.get();
  const std::size_t end = static_cast<std::size_t>(tape[0] & simdjson::internal::JSON_VALUE_MASK);
  std::size_t depth = 0;
  for (std::size_t i = 1; i < end; ++i) {
    switch (static_cast<char>(tape[i] >> 56)) {
      case '[':
      case '{':
        if (++depth > kMaxJsonDepth) return true;
        break;
      case ']':
      case '}':
        --depth;
        break;
      case 'l':
      case 'u':
      case 'd':
        ++i;  // the number's second word
        break;
      default:
        break;
    }
  }
  return false;
}

// Running out of memory says nothing about the input: it is an I/O-class failure (exit 2),
// never a rejection.
Diagnostic out_of_memory(std::string name, std::size_t size) {
  return make_io_error(std::move(name),
                       "out of memory while parsing (" + std::to_string(size) + " bytes)");
}

// simdjson's failure to allocate, told apart from what it says about the text.
Diagnostic simdjson_failure(std::string name, std::size_t size, simdjson::error_code error) {
  if (error == simdjson::MEMALLOC) return out_of_memory(std::move(name), size);
  return make_error(std::move(name), {}, simdjson::error_message(error));
}

// What one parse works with: a parser (new, or a ParseScratch's), a kept tape if any, and
// the capacity to allocate for.
struct ParseMemory {
  std::unique_ptr<simdjson::dom::parser> parser;
  std::unique_ptr<std::uint64_t[]> tape;
  std::size_t tape_capacity = 0;
  std::size_t expected_input = 0;
};

// The parsed document, or the errors; `bytes` gets its padding here.
Expected<std::unique_ptr<simdjson::dom::document>> parse_unguarded(std::string& display_name,
                                                                   std::string& bytes,
                                                                   const ParseOptions& options,
                                                                   ParseMemory& memory) {
  const std::size_t size = bytes.size();
  if (size > simdjson::SIMDJSON_MAXSIZE_BYTES) {
    return make_error(std::move(display_name), {}, "input larger than 4 GiB");
  }
  if (std::string_view(bytes).starts_with("\xEF\xBB\xBF")) {
    return syntax_error(display_name, bytes, 0, "byte-order mark is not allowed");
  }
  if (std::all_of(bytes.begin(), bytes.end(), is_json_whitespace)) {
    return syntax_error(display_name, bytes, size, "empty input");
  }

  // simdjson reads up to SIMDJSON_PADDING bytes past the end; reserve exactly (resize alone
  // may double a large buffer) and zero the padding so those reads see initialised memory.
  if (bytes.capacity() < size + simdjson::SIMDJSON_PADDING) {
    bytes.reserve(size + simdjson::SIMDJSON_PADDING);
  }
  bytes.resize(size + simdjson::SIMDJSON_PADDING);
  bytes.resize(size);

  if (!memory.parser) memory.parser = std::make_unique<simdjson::dom::parser>();
  simdjson::dom::parser& parser = *memory.parser;
  const std::size_t least = std::max(size, std::size_t{simdjson::dom::MINIMAL_DOCUMENT_CAPACITY});
  // Never below what the parser has: a smaller capacity would reallocate its index. A
  // scratch's expected input makes the first of several parses allocate for the largest;
  // when that much cannot be had (it is only a hint: a 4 GiB file that will be refused,
  // too little memory), the parse allocates for its own input alone.
  const std::size_t index_before = parser.capacity();
  std::size_t capacity = std::max({least, memory.expected_input, index_before});
  // The parse fills the DOM's tape and string buffer at once: for large inputs they get
  // huge pages too (huge_pages.h), so the document is allocated here, before the parse
  // would. For `capacity` input bytes simdjson holds capacity + 3 tape words (rounded up)
  // and 5 * capacity / 3 string bytes (its document::allocate says why): these ranges lie
  // inside its allocations. A kept tape of at least that capacity replaces the new one,
  // which nothing has touched yet.
  auto doc = std::make_unique<simdjson::dom::document>();
  // First with simdjson's depth limit at ours: a document it accepts then is certainly not
  // too deep (simdjson counts at least every container as a level), and needs no depth
  // check of its own. Only a document that reaches the limit is parsed again with one level
  // more (simdjson counts a scalar in the innermost container as a level too, see
  // DomChecker) and has its containers counted.
  simdjson::error_code allocated = parser.allocate(capacity, kMaxJsonDepth);
  if (!allocated) allocated = doc->allocate(capacity);
  if (allocated && capacity > least) {
    capacity = least;
    allocated = parser.allocate(capacity, kMaxJsonDepth);
    if (!allocated) allocated = doc->allocate(capacity);
  }
  if (allocated) return simdjson_failure(std::move(display_name), size, allocated);
  const bool fresh_index = capacity != index_before;
  const bool large = capacity >= kLargeDocument;
  if (memory.tape && memory.tape_capacity >= capacity) {
    doc->tape = std::move(memory.tape);
    memory.tape_capacity = 0;
  } else if (large) {
    advise_huge_pages(doc->tape.get(), (capacity + 1) * sizeof(std::uint64_t));
  }
  if (large) {
    advise_huge_pages(doc->string_buf.get(), 5 * capacity / 3);
    // Stage 1's structural index too: a 32-bit offset per structural character, written
    // in order (set_capacity gives room for one per input byte). It was a third of the
    // page faults of a freeze. simdjson exposes its implementation "for benchmarking".
    if (fresh_index && parser.implementation) {
      advise_huge_pages(parser.implementation->structural_indexes.get(),
                        capacity * sizeof(std::uint32_t));
    }
  }
  element root;
  simdjson::error_code error =
      parser.parse_into_document(*doc, bytes.data(), size, false).get(root);
  const bool at_depth_limit = error == simdjson::DEPTH_ERROR;
  if (at_depth_limit) {
    error = parser.allocate(capacity, kMaxJsonDepth + 1);
    if (error) return simdjson_failure(std::move(display_name), size, error);
    error = parser.parse_into_document(*doc, bytes.data(), size, false).get(root);
  }
  if (error) {
    if (error == simdjson::MEMALLOC) return out_of_memory(std::move(display_name), size);
    if (options.not_json != nullptr) {
      if (std::optional<std::string> what = options.not_json(bytes)) {
        return make_error(display_name, "", std::move(*what));
      }
    }
    return locate_syntax_error(display_name, bytes, simdjson::error_message(error));
  }
  if (!options.check_duplicate_keys) {
    if (at_depth_limit && too_deep(*doc)) {
      return locate_syntax_error(display_name, bytes, "nesting too deep");
    }
  } else if (auto problem = DomChecker().find(root)) {
    if (problem->kind == DomProblem::Kind::kDuplicateKey) {
      return duplicate_key_error(std::move(display_name), std::move(*problem));
    }
    return locate_syntax_error(display_name, bytes, "nesting too deep");
  }
  // The document lives on the heap and never moves: elements hold its address.
  return doc;
}

}  // namespace

Expected<JsonDocument> parse_json_document(std::string display_name, std::string bytes,
                                           ParseOptions options) {
  const std::size_t size = bytes.size();
  ParseScratch* const scratch =
      options.scratch != nullptr && !options.scratch->closed_ ? options.scratch : nullptr;
  try {
    ParseMemory memory;
    if (scratch != nullptr) {
      memory.parser = std::move(scratch->parser_);
      memory.tape = std::move(scratch->tape_);
      memory.tape_capacity = std::exchange(scratch->tape_capacity_, 0);
      memory.expected_input = scratch->expected_input_;
    }
    Expected<std::unique_ptr<simdjson::dom::document>> document =
        parse_unguarded(display_name, bytes, options, memory);
    if (scratch != nullptr) {
      scratch->parser_ = std::move(memory.parser);
      scratch->tape_ = std::move(memory.tape);
      scratch->tape_capacity_ = memory.tape_capacity;
    }
    if (!document) return std::move(document.errors());
    return JsonDocument(std::move(display_name), std::move(bytes), std::move(*document),
                        options.check_duplicate_keys);
  } catch (const std::bad_alloc&) {
    // The padding, the parser's index, the duplicate-key tables or the syntax scan.
    return out_of_memory(std::move(display_name), size);
  }
}

ParseScratch::ParseScratch() = default;
ParseScratch::~ParseScratch() = default;

std::string ParseScratch::take_text() {
  std::string text = std::move(text_);
  if (closed_) return text;
  const std::size_t room = expected_input_ + simdjson::SIMDJSON_PADDING;
  if (expected_input_ > 0 && expected_input_ <= simdjson::SIMDJSON_MAXSIZE_BYTES &&
      text.capacity() < room) {
    try {
      text.reserve(room);
    } catch (const std::exception&) {
      // A hint only: the read allocates what its input needs.
    }
  }
  return text;
}

void ParseScratch::close() {
  closed_ = true;
  parser_.reset();
  tape_.reset();
  tape_capacity_ = 0;
  std::string().swap(text_);
}

void JsonDocument::release_tree(ParseScratch& scratch) {
  if (!scratch.closed_ && document_->tape && document_->capacity() > scratch.tape_capacity_) {
    scratch.tape_ = std::move(document_->tape);
    scratch.tape_capacity_ = document_->capacity();
  }
  release_tree();
}

std::optional<Diagnostic> find_duplicate_key(const JsonDocument& document) {
  std::optional<DomProblem> problem = DomChecker().find(document.root());
  // Too deep cannot happen here: every parse checks the depth.
  if (!problem || problem->kind != DomProblem::Kind::kDuplicateKey) return std::nullopt;
  return duplicate_key_error(document.name(), std::move(*problem));
}

bool has_repeated_key(element e) {
  const std::optional<DomProblem> problem = DomChecker().find(e);
  return problem && problem->kind == DomProblem::Kind::kDuplicateKey;
}

Json json_from_dom(element e) {
  switch (e.type()) {
    case element_type::ARRAY: {
      const simdjson::dom::array array = e.get_array().value_unsafe();
      JsonArray out;
      out.reserve(array.size());
      for (const element item : array) out.push_back(json_from_dom(item));
      return Json(std::move(out));
    }
    case element_type::OBJECT: {
      const simdjson::dom::object object = e.get_object().value_unsafe();
      JsonObject out;
      out.reserve(object.size());
      for (auto it = object.begin(); it != object.end(); ++it) {
        out.push_back(JsonMember{it.key(), json_from_dom(it.value())});
      }
      return Json(std::move(out));
    }
    case element_type::STRING:
      return Json(e.get_string().value_unsafe());
    case element_type::INT64:
      return Json(e.get_int64().value_unsafe());
    case element_type::UINT64:
      return Json(e.get_uint64().value_unsafe());
    case element_type::DOUBLE:
      return Json(e.get_double().value_unsafe());
    case element_type::BOOL:
      return Json(e.get_bool().value_unsafe());
    case element_type::NULL_VALUE:
      break;
  }
  return Json(nullptr);
}

std::string_view json_type_article(element e) {
  switch (e.type()) {
    case element_type::ARRAY:
      return "an array";
    case element_type::OBJECT:
      return "an object";
    case element_type::STRING:
      return "a string";
    case element_type::INT64:
    case element_type::UINT64:
      return "an integer";
    case element_type::DOUBLE:
      return "a float";
    case element_type::BOOL:
      return "a boolean";
    case element_type::NULL_VALUE:
      break;
  }
  return "null";
}

std::string json_type_name(element e) {
  const std::string_view article = json_type_article(e);
  return std::string(article.substr(article.find(' ') + 1));  // "null" has no article
}

}  // namespace hpfreeze
