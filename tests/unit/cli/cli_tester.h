#pragma once
// The front end run in-process (in the spirit of protoc's CommandLineInterfaceTester):
// run_cli() with an argv, a fake stdin, stdout and stderr captured and the exit status
// returned, no binary spawned. The library reads and writes the standard descriptors
// themselves (descriptor 0 for '-', 1 for output, 2 for diagnostics), so a run puts files
// in their place and back; every piece of process state a run may change (the descriptors,
// the environment, umask, signal dispositions and mask, spdlog's default logger and level,
// the working directory, the iostreams' state) is as it was when run() returns, so tests
// are independent of each other and of their order.

#include <map>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace hpfreeze::cli::testing {

struct CliRun {
  int exit_code = -1;
  std::string out;  // what the run wrote to stdout
  std::string err;  // what the run wrote to stderr

  bool operator==(const CliRun&) const = default;
  // The usage error line of the text format, as docs/cli.md writes it.
  static std::string usage_error(const std::string& message) {
    return "hpfreeze: error: " + message + "\n";
  }
  // A usage error's run: exit status 2, nothing on stdout, this on stderr.
  static CliRun trouble(std::string err) { return {2, "", std::move(err)}; }
};
// For GoogleTest's messages.
void PrintTo(const CliRun& run, std::ostream* os);

// What a run's standard input is.
enum class Stdin {
  kBytes,   // a regular file holding stdin_bytes()
  kPipe,    // a pipe holding stdin_bytes(), its write end closed
  kClosed,  // closed, as `<&-` leaves it (an O_PATH placeholder, as the library's guard)
};

class CliTester {
 public:
  // Every run starts from the environment of the e2e tests (tests/CMakeLists.txt):
  // SPDLOG_LEVEL and HPFREEZE_MESSAGE_FORMAT unset, NO_COLOR=1.
  CliTester();
  ~CliTester();
  CliTester(const CliTester&) = delete;
  CliTester& operator=(const CliTester&) = delete;

  // Runs `hpfreeze ARGS...` (argv[0] is "hpfreeze").
  CliRun run(const std::vector<std::string>& args);

  void set_stdin(std::string bytes, Stdin kind = Stdin::kBytes);
  void close_stdin() { set_stdin({}, Stdin::kClosed); }
  // stdout is a file of its own unless this names one to open for writing (/dev/full).
  void set_stdout_path(std::string path) { stdout_path_ = std::move(path); }
  // For the next runs: set (a value) or unset (nullopt) an environment variable.
  void set_env(const std::string& name, std::optional<std::string> value);

  // A fresh directory for the tester's files, removed with it.
  const std::string& dir() const { return dir_; }
  // Writes `bytes` to dir()/name and returns the path.
  std::string write_file(const std::string& name, const std::string& bytes) const;

 private:
  std::string dir_;
  std::string stdin_bytes_;
  Stdin stdin_kind_ = Stdin::kBytes;
  std::optional<std::string> stdout_path_;
  std::map<std::string, std::optional<std::string>> env_;
};

// Where the test data lives (testdata/ of the source tree).
std::string testdata(const std::string& relative);
// The bytes of a file (empty when it cannot be read).
std::string read_file(const std::string& path);

}  // namespace hpfreeze::cli::testing
