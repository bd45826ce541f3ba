#include <spdlog/cfg/env.h>
#include <spdlog/pattern_formatter.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include "cli.h"
#include "hpfreeze/io.h"

namespace hpfreeze::cli {
namespace {

// %L prints our level names: spdlog's "info" is what diagnostics call a "note".
class LevelNameFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm& /*tm*/,
              spdlog::memory_buf_t& dest) override {
    std::string_view name;
    switch (msg.level) {
      case spdlog::level::trace:
        name = "trace";
        break;
      case spdlog::level::debug:
        name = "debug";
        break;
      case spdlog::level::info:
        name = "note";
        break;
      case spdlog::level::warn:
        name = "warning";
        break;
      case spdlog::level::err:
        name = "error";
        break;
      default:
        name = "fatal";
        break;
    }
    dest.append(name.data(), name.data() + name.size());
  }
  [[nodiscard]] std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<LevelNameFlag>();
  }
};

}  // namespace

void setup_logging(int verbose, int quiet) {
  // spdlog's default logger writes to stdout, which carries data only: replace it.
  const char* no_color = std::getenv("NO_COLOR");
  const bool color = isatty(STDERR_FILENO) != 0 && (no_color == nullptr || *no_color == '\0');
  spdlog::sink_ptr sink;
  if (color) {
    sink = std::make_shared<spdlog::sinks::stderr_color_sink_st>();
  } else {
    sink = std::make_shared<spdlog::sinks::stderr_sink_st>();
  }
  auto logger = std::make_shared<spdlog::logger>("hpfreeze", std::move(sink));
  auto formatter = std::make_unique<spdlog::pattern_formatter>();
  formatter->add_flag<LevelNameFlag>('L').set_pattern("hpfreeze: %^%L%$: %v");
  logger->set_formatter(std::move(formatter));
  logger->set_level(spdlog::level::info);
  logger->flush_on(spdlog::level::trace);
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

void report(const Diagnostic& d) {
  switch (d.severity) {
    case Severity::kError:
      spdlog::error("{}", d.location_and_message());
      break;
    case Severity::kWarning:
      spdlog::warn("{}", d.location_and_message());
      break;
    case Severity::kNote:
      spdlog::info("{}", d.location_and_message());
      break;
  }
}

void report(const Diagnostics& ds) {
  for (const Diagnostic& d : ds) report(d);
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
