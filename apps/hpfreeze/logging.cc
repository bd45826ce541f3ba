#include <spdlog/cfg/env.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <cstdlib>

#include "cli.h"

namespace hpfreeze::cli {

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
  logger->set_pattern("hpfreeze: %^%l%$: %v");
  logger->set_level(spdlog::level::warn);
  logger->flush_on(spdlog::level::trace);
  spdlog::set_default_logger(logger);

  if (verbose == 0 && quiet == 0) {
    spdlog::cfg::load_env_levels();  // SPDLOG_LEVEL, when set
    return;
  }
  const int level = static_cast<int>(spdlog::level::warn) - verbose + quiet;
  const int clamped = std::max(static_cast<int>(spdlog::level::trace),
                               std::min(level, static_cast<int>(spdlog::level::off)));
  spdlog::set_level(static_cast<spdlog::level::level_enum>(clamped));
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

int exit_code_for(const Diagnostics& errors) {
  for (const Diagnostic& d : errors) {
    if (d.error_class == ErrorClass::kIo) return kExitTrouble;
  }
  return kExitRejected;
}

}  // namespace hpfreeze::cli
