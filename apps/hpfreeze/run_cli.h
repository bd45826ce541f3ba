#pragma once
// The front end as a function: what the hpfreeze binary does, but the process around it.

namespace hpfreeze::cli {

// Runs the command line argv[0..argc) (argv[0] the program's name) and returns the exit
// status, 0, 1 or 2 (docs/cli.md, "Exit codes"); nothing escapes it. Reads what the binary
// reads: descriptor 0, $HPFREEZE_MESSAGE_FORMAT, $SPDLOG_LEVEL and $NO_COLOR, and writes
// descriptors 1 and 2. It sets the process state the binary needs, which a caller that
// runs it more than once restores (tests/unit/cli/cli_tester.h): SIGXFSZ is ignored and
// spdlog's default logger replaced; the rest of the front end's state is set anew on
// every call.
int run_cli(int argc, const char* const* argv);

}  // namespace hpfreeze::cli
