#pragma once
// Shared pieces of the front end: outcomes, diagnostics output, the command table.

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/base/diagnostic.h"
#include "hpfreeze/commands/message_format.h"

namespace hpfreeze::cli {

// A command's run amounts to an Outcome (hpfreeze/base/command_result.h); run_cli() alone turns
// it into the exit status, so the 0/1/2 contract lives in one place.
inline constexpr Outcome kExitOk = Outcome::kOk;
inline constexpr Outcome kExitRejected = Outcome::kRejected;
inline constexpr Outcome kExitTrouble = Outcome::kTrouble;
int exit_status(Outcome outcome);

// A command declares its options on `app` and returns the function that runs it once the
// command line has been parsed.
using Runner = std::function<Outcome()>;

// One row per command, in --help order (commands.cc). A plain table rather than
// self-registration by static initialisers, which silently vanish when the object files
// move into a static library.
struct Command {
  const char* name;
  const char* description;
  Runner (*declare)(CLI::App& app);
  // What -q/--quiet does for this command, when more than fewer diagnostics (diff).
  const char* quiet_help = nullptr;
};
std::span<const Command> commands();

Runner declare_freeze(CLI::App& app);
Runner declare_parse(CLI::App& app);
Runner declare_expand(CLI::App& app);
Runner declare_check(CLI::App& app);
Runner declare_diff(CLI::App& app);
Runner declare_thaw(CLI::App& app);
Runner declare_report(CLI::App& app);

// Placeholders of option values in --help (and so in the man pages and completion, which
// read it: completion offers file names only after a FILE).
inline constexpr const char* kFile = "FILE";
// What --model of report and check takes (the loader's one dispatch,
// lib/src/inputs/model_input.cc): one text for both helps and so for the man pages.
inline constexpr std::string_view kModelFormats =
    "a model tree dump (hpfreeze.model/v1), a checkpoint's model.safetensors, or a sharded "
    "one's model.safetensors.index.json (headers only); '-' for stdin (a dump or an index)";

// --silence CODE[,CODE...] of check and report (docs/cli.md, "Finding codes"): declared on
// `app` into `given` (each value checked as the command line is parsed: an unknown code is a
// usage error with the nearest code); silenced_codes() gives the codes of the values.
void add_silence_option(CLI::App& app, std::vector<std::string>& given);
std::vector<std::string> silenced_codes(const std::vector<std::string>& given);

// The end of a command's --help: what each exit status means for it, and one example.
inline constexpr std::string_view kTroubleMeaning =
    "usage error, or an input or output could not be read or written";
std::string help_footer(std::string_view ok, std::string_view rejected, std::string_view example,
                        std::string_view trouble = kTroubleMeaning);

// Every stderr line is rendered in one --message-format (logging.cc), set before anything
// is written: text at the start of every run, then what run_cli.cc reads off the command
// line.
void set_message_format(MessageFormat format);
MessageFormat message_format();

// Configures the diagnostic level: -v/-q counts win over SPDLOG_LEVEL; default shows notes.
void setup_logging(int verbose, int quiet);
// The -q count of the command line (both sides of the command word).
int quiet_count();

// Prints each diagnostic as one line on stderr (`hpfreeze: <level>: ...` in text), when
// the level shows its severity.
void report(const Diagnostic& d);
void report(const Diagnostics& ds);
// A usage error: printed whatever -q and SPDLOG_LEVEL say (docs/cli.md, "Usage errors").
void report_usage_error(std::string message);
// run_cli()'s last words; the first needs no memory.
void report_out_of_memory() noexcept;
void report_internal_error(std::string_view what) noexcept;
// Writes bytes to stderr as they are, without allocating.
void write_stderr(std::string_view text);

// The -v (kDebug) and -vv (kTrace) lines: formatted only when the level shows them.
bool should_log(MessageLevel level);
void log_line(MessageLevel level, std::string message);
template <class... Args>
void log_debug(fmt::format_string<Args...> format, Args&&... args) {
  if (should_log(MessageLevel::kDebug)) {
    log_line(MessageLevel::kDebug, fmt::format(format, std::forward<Args>(args)...));
  }
}
template <class... Args>
void log_trace(fmt::format_string<Args...> format, Args&&... args) {
  if (should_log(MessageLevel::kTrace)) {
    log_line(MessageLevel::kTrace, fmt::format(format, std::forward<Args>(args)...));
  }
}

// Where every command's result goes: its output to stdout, then its diagnostics to stderr.
// Returns the result's outcome, or trouble when stdout could not be written.
Outcome finish(const CommandResult& result);

}  // namespace hpfreeze::cli
