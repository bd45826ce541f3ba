#pragma once
// Shared pieces of the front end: exit codes, diagnostics output, subcommand registry.

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "hpfreeze/diagnostic.h"

namespace hpfreeze::cli {

inline constexpr int kExitOk = 0;
inline constexpr int kExitRejected = 1;  // inputs read and rejected
inline constexpr int kExitTrouble = 2;   // usage error or I/O failure

// A subcommand registers its flags on `app` and returns the function that runs it once
// the command line has been parsed.
using Runner = std::function<int()>;

// Each cmd_*.cc adds itself to the registry during static initialisation:
//   static const bool registered = add_command({"parse", "...", 20, &register_parse});
// `order` places it in --help; the registry is read once main() starts.
struct CommandInfo {
  const char* name;
  const char* description;
  int order;
  Runner (*registrar)(CLI::App& app);
};
bool add_command(const CommandInfo& info);
std::vector<CommandInfo>& command_registry();

// Prints each diagnostic as one `hpfreeze: <level>: ...` line on stderr.
void report(const Diagnostic& d);
void report(const Diagnostics& ds);
// Exit code for a failed library call: 2 when any error was an I/O failure, else 1.
int exit_code_for(const Diagnostics& errors);

// Configures the stderr logger: -v/-q counts win over SPDLOG_LEVEL; default shows notes.
void setup_logging(int verbose, int quiet);

}  // namespace hpfreeze::cli
