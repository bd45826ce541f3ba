#pragma once
// Shared pieces of the front end: outcomes, diagnostics output, the command table.

#include <CLI/CLI.hpp>
#include <functional>
#include <span>
#include <string>
#include <string_view>

#include "hpfreeze/command_result.h"
#include "hpfreeze/diagnostic.h"

namespace hpfreeze::cli {

// A command's run amounts to an Outcome (hpfreeze/command_result.h); main() alone turns it
// into the process exit status, so the 0/1/2 contract lives in one place.
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

// The end of a command's --help: what each exit status means for it, and one example.
inline constexpr std::string_view kTroubleMeaning =
    "usage error, or an input or output could not be read or written";
std::string help_footer(std::string_view ok, std::string_view rejected, std::string_view example,
                        std::string_view trouble = kTroubleMeaning);

// Prints each diagnostic as one `hpfreeze: <level>: ...` line on stderr.
void report(const Diagnostic& d);
void report(const Diagnostics& ds);
// Where every command's result goes: its output to stdout, then its diagnostics to stderr.
// Returns the result's outcome, or trouble when stdout could not be written.
Outcome finish(const CommandResult& result);

// Configures the stderr logger: -v/-q counts win over SPDLOG_LEVEL; default shows notes.
void setup_logging(int verbose, int quiet);

}  // namespace hpfreeze::cli
