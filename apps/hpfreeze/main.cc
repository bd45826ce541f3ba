// hpfreeze: freeze a HyperParallel sharding plan into codegen_meta.json.
#include <spdlog/spdlog.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <utility>
#include <vector>

#include "cli.h"
#include "hpfreeze/version.h"

namespace hpfreeze::cli {

std::vector<CommandInfo>& command_registry() {
  static std::vector<CommandInfo> registry;
  return registry;
}

bool add_command(const CommandInfo& info) {
  command_registry().push_back(info);
  return true;
}

}  // namespace hpfreeze::cli

int main(int argc, char** argv) {
  using namespace hpfreeze::cli;
  CLI::App app{
      "hpfreeze: freeze a HyperParallel sharding plan into a byte-stable codegen_meta.json"};
  app.name("hpfreeze");
  app.set_version_flag("--version", std::string("hpfreeze ") + hpfreeze::kVersion,
                       "Print the version and exit");
  int verbose = 0;
  int quiet = 0;
  app.add_flag("-v,--verbose", verbose, "More diagnostics on stderr (repeatable)");
  app.add_flag("-q,--quiet", quiet, "Fewer diagnostics on stderr (repeatable)");
  app.require_subcommand(1);
  app.failure_message([](const CLI::App* failed, const CLI::Error& e) {
    // Point at the help of the subcommand being parsed, when there is one.
    std::string where;
    for (const CLI::App* sub : failed->get_subcommands()) where = sub->get_name() + " ";
    return "hpfreeze: error: " + std::string(e.what()) + " (see 'hpfreeze " + where +
           "--help')\n";
  });

  std::vector<CommandInfo> infos = command_registry();
  std::sort(infos.begin(), infos.end(),
            [](const CommandInfo& a, const CommandInfo& b) { return a.order < b.order; });
  std::vector<std::pair<CLI::App*, Runner>> commands;
  for (const CommandInfo& info : infos) {
    CLI::App* sub = app.add_subcommand(info.name, info.description);
    commands.emplace_back(sub, info.registrar(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? kExitOk : kExitTrouble;  // CLI11's own codes (100+) are usage errors
  }
  setup_logging(verbose, quiet);
  for (auto& [sub, run] : commands) {
    if (sub->parsed()) return run();
  }
  return kExitTrouble;
}
