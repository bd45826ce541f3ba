// Every line hpfreeze writes to stderr goes through here, rendered by format_message in
// the --message-format of the command line.
#include <spdlog/cfg/env.h>
#include <spdlog/details/os.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cli.h"
#include "hpfreeze/io/standard_streams.h"

namespace hpfreeze::cli {
namespace {

MessageFormat g_format = MessageFormat::kText;
bool g_color = false;
int g_quiet = 0;
// Rendered ahead, when memory is still there to render it.
std::string g_out_of_memory_line;

constexpr std::string_view kOutOfMemory =
    "out of memory (the inputs need more memory than the process may use)";

spdlog::level::level_enum spdlog_level(MessageLevel level) {
  switch (level) {
    case MessageLevel::kError:
      return spdlog::level::err;
    case MessageLevel::kWarning:
      return spdlog::level::warn;
    case MessageLevel::kNote:
      return spdlog::level::info;
    case MessageLevel::kDebug:
      return spdlog::level::debug;
    case MessageLevel::kTrace:
      break;
  }
  return spdlog::level::trace;
}

void emit(MessageLevel level, const Diagnostic& d, bool color = g_color) {
  write_stderr(format_message(g_format, level, d, color));
}

}  // namespace

void write_stderr(std::string_view text) {
  while (!text.empty()) {
    const ssize_t n = ::write(STDERR_FILENO, text.data(), text.size());
    if (n <= 0) return;
    text.remove_prefix(static_cast<std::size_t>(n));
  }
}

void set_message_format(MessageFormat format) {
  g_format = format;
  // Colour only for text on a colour terminal, as spdlog's console sink decides it.
  const char* no_color = std::getenv("NO_COLOR");
  g_color = format == MessageFormat::kText && isatty(STDERR_FILENO) != 0 &&
            (no_color == nullptr || *no_color == '\0') && spdlog::details::os::is_color_terminal();
  g_out_of_memory_line =
      format_message(format, MessageLevel::kError, make_error({}, {}, std::string(kOutOfMemory)));
}

MessageFormat message_format() { return g_format; }

int quiet_count() { return g_quiet; }

void setup_logging(int verbose, int quiet) {
  g_quiet = quiet;
  // The logger only holds the level (-v/-q, else SPDLOG_LEVEL); it has no sink: emit()
  // writes every line. Nothing may go to stdout, which carries data only.
  auto logger = std::make_shared<spdlog::logger>("hpfreeze", spdlog::sinks_init_list{});
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);

  if (verbose == 0 && quiet == 0) {
    spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL, when set
    return;
  }
  // Default: notes and up. -q: errors only, -qq: nothing. -v: debug, -vv: trace.
  spdlog::level::level_enum level = spdlog::level::info;
  if (quiet == 1) {
    level = spdlog::level::err;
  } else if (quiet > 1) {
    level = spdlog::level::off;
  } else if (verbose == 1) {
    level = spdlog::level::debug;
  } else if (verbose > 1) {
    level = spdlog::level::trace;
  }
  spdlog::set_level(level);
}

bool should_log(MessageLevel level) {
  return spdlog::default_logger_raw()->should_log(spdlog_level(level));
}

void log_line(MessageLevel level, std::string message) {
  if (!should_log(level)) return;
  emit(level, make_error({}, {}, std::move(message)));
}

void report(const Diagnostic& d) {
  const MessageLevel level = message_level(d.severity);
  if (should_log(level)) emit(level, d);
}

void report(const Diagnostics& ds) {
  if (g_format != MessageFormat::kGithub) {
    for (const Diagnostic& d : ds) report(d);
    return;
  }
  // An annotation lands on the line of the value its pointer names: the files are read
  // again for the lines, for the diagnostics printed only.
  Diagnostics shown;
  for (const Diagnostic& d : ds) {
    if (should_log(message_level(d.severity))) shown.push_back(d);
  }
  add_pointer_positions(shown);
  for (const Diagnostic& d : shown) emit(message_level(d.severity), d);
}

// Usage errors and run_cli()'s last words have never been coloured: text keeps their bytes.
void report_usage_error(std::string message) {
  emit(MessageLevel::kError, make_error({}, {}, std::move(message)), false);
}

void report_out_of_memory() noexcept {
  if (g_out_of_memory_line.empty()) {
    write_stderr("hpfreeze: error: ");
    write_stderr(kOutOfMemory);
    write_stderr("\n");
    return;
  }
  write_stderr(g_out_of_memory_line);
}

void report_internal_error(std::string_view what) noexcept {
  try {
    report_usage_error("internal error: " + std::string(what));
  } catch (...) {
    write_stderr("hpfreeze: error: internal error: ");
    write_stderr(what);
    write_stderr("\n");
  }
}

Outcome finish(const CommandResult& result) {
  if (!result.output.empty()) {
    if (Expected<WriteOutcome> written = write_stdout(result.output); !written) {
      report(result.diagnostics);
      report(written.errors());
      return kExitTrouble;
    }
  }
  report(result.diagnostics);
  return result.outcome();
}

}  // namespace hpfreeze::cli
