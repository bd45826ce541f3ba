#pragma once
// Diagnostics are values: the library returns them, only the app prints them.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace hpfreeze {

enum class Severity { kError, kWarning, kNote };

// What an error means for the exit code: rejected content exits 1, a failed read or
// write (missing file, full disk) exits 2.
enum class ErrorClass { kRejected, kIo };

struct Diagnostic {
  Severity severity = Severity::kError;
  std::string file;        // display name of the input; empty when not about a file
  std::string pointer;     // RFC 6901 JSON Pointer of the offending value; empty for none/root
  std::size_t line = 0;    // 1-based; 0 when unknown
  std::size_t column = 0;  // 1-based byte column; 0 when unknown
  std::string message;     // lowercase, no final period
  // A finding's code ("HPF406"): a view of the findings table's row (spec/findings.h),
  // static storage. Empty for a line that is no finding (a read or usage error, an input
  // that cannot be checked at all, a summary line).
  std::string_view code;
  ErrorClass error_class = ErrorClass::kRejected;
  // Lines shown under the message, each as it is (freeze --check's differences); no LF.
  std::vector<std::string> detail;
  // The file a GitHub annotation goes on when it is not `file`: the generated file a
  // finding of check --bundle is about, where the user has to act (`file` stays the meta,
  // which `pointer`, `line` and `column` locate). Empty: `file`. Only --message-format
  // github reads it: `::error file=ANNOTATE_FILE::` and then location_and_message() as the
  // message (`line`/`col` belong to `file`, so they are not properties); text and JSON
  // output leave it out.
  std::string annotate_file;

  // "FILE[:LINE:COL]: POINTER: message", each part only when known; not the detail.
  [[nodiscard]] std::string location_and_message() const;
};

Diagnostic make_error(std::string file, std::string pointer, std::string message);
Diagnostic make_warning(std::string file, std::string pointer, std::string message);
Diagnostic make_note(std::string file, std::string pointer, std::string message);
Diagnostic make_io_error(std::string file, std::string message);

using Diagnostics = std::vector<Diagnostic>;

// Either a value or the errors that prevented it.
template <class T>
class Expected {
 public:
  Expected(T value) : v_(std::move(value)) {}  // NOLINT(google-explicit-constructor)
  Expected(Diagnostic error) : v_(Diagnostics{std::move(error)}) {}  // NOLINT
  Expected(Diagnostics errors) : v_(std::move(errors)) {}            // NOLINT

  [[nodiscard]] bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T& operator*() { return value(); }
  const T& operator*() const { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  const Diagnostics& errors() const { return std::get<1>(v_); }
  Diagnostics& errors() { return std::get<1>(v_); }

 private:
  std::variant<T, Diagnostics> v_;
};

// Appends one reference token to a JSON Pointer, escaping '~' as ~0 and '/' as ~1.
void append_pointer_token(std::string& pointer, std::string_view token);
std::string pointer_join(std::string_view pointer, std::string_view token);
// The pointer to element `index` of the array at `pointer`.
std::string index_pointer(std::string_view pointer, std::size_t index);

// `text` with its control characters (and DEL) escaped as a diagnostic line shows them:
// \n, \r, \t, \xNN; every other byte as it is.
std::string escape_control(std::string_view text);

// Renders arbitrary bytes for a diagnostic: printable ASCII as is, the rest as \xNN,
// quoted with single quotes ('S(x)'). A text longer than kMaxDiagnosticText bytes is
// shortened as shorten_for_diagnostic does.
std::string quote_for_diagnostic(std::string_view text);

// "[4096, 128]": a tensor shape as messages and tables show it.
std::string shape_text(std::span<const std::uint64_t> shape);

// "1 placement", "3 placements".
std::string plural(std::size_t count, std::string_view noun);

// How many diagnostics of each severity, for the summaries of report and check.
struct SeverityCounts {
  std::size_t errors = 0;
  std::size_t warnings = 0;
  std::size_t notes = 0;
  // "1 error, 0 warnings, 2 notes".
  [[nodiscard]] std::string text() const;
  SeverityCounts& operator+=(const SeverityCounts& other) {
    errors += other.errors;
    warnings += other.warnings;
    notes += other.notes;
    return *this;
  }
};
SeverityCounts count_severities(const Diagnostics& diagnostics);

// Names and pointers in a diagnostic longer than this many bytes are shortened.
inline constexpr std::size_t kMaxDiagnosticText = 160;

// `text` itself when it has at most `limit` bytes; else its head and tail (cut at UTF-8
// character boundaries) around "...[N characters left out]...", so that one huge name
// cannot flood a terminal or a CI log.
std::string shorten_for_diagnostic(std::string_view text, std::size_t limit = kMaxDiagnosticText);

}  // namespace hpfreeze
