#pragma once
// How every line hpfreeze writes to stderr is rendered: today's text, GitHub Actions
// workflow commands, or JSON Lines (docs/cli.md, "--message-format").

#include <optional>
#include <string>
#include <string_view>

#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/io/file_system.h"

namespace hpfreeze {

enum class MessageFormat { kText, kGithub, kJson };

// "text", "github" or "json"; nullopt for anything else.
std::optional<MessageFormat> parse_message_format(std::string_view name);

// The level of one stderr line: a diagnostic's severity, or a -v (debug) / -vv (trace)
// line.
enum class MessageLevel { kError, kWarning, kNote, kDebug, kTrace };

MessageLevel message_level(Severity severity);

// One line for stderr, ending in '\n' (text: one more line per detail line):
//   text:   hpfreeze: LEVEL: FILE[:LINE[:COL]]: POINTER: message [CODE], each detail line
//           after it indented by two spaces; `color` wraps LEVEL in the ANSI colours of
//           spdlog's console sink;
//   github: ::error file=F,line=L,col=C::POINTER: message [CODE] (::warning, ::notice,
//           ::debug), each property only when known, the detail lines after LFs, escaped for
//           the runner (data: % CR LF; properties also : and ,);
//   json:   check --json's finding object ({"severity"[,"code"],"file","pointer","message"
//           [,"line"[,"column"]]}), severity "info" for debug and trace lines, the detail
//           lines after LFs inside "message".
// [CODE] and "code" only for a finding of a rule (Diagnostic::code, spec/findings.h).
std::string format_message(MessageFormat format, MessageLevel level, const Diagnostic& d,
                           bool color = false);

// For github: gives every diagnostic that has a JSON Pointer into a file but no line the
// line and column (1-based, bytes) where the value the pointer names starts, so that its
// annotation lands on that line. Each such file is read again through `files` (the real
// disk when null), once for all its diagnostics, in pieces (memory stays bounded), only up
// to the last value found and never beyond the size it had when opened; "<stdin>" and
// anything that is no regular file, or no JSON there, are left without. Linear in the
// file's bytes and the pointers (json/json_pointer_locator.h).
void add_pointer_positions(Diagnostics& diagnostics, FileSystem* files = nullptr);

}  // namespace hpfreeze
