// run_cli() is the whole program but the process around it (main.cc): it builds the
// command line from the command table (commands.cc), names every usage mistake, writes
// --help and --version like any other output (a failed write is exit status 2), and is the
// one place where an exception that escapes a command becomes a diagnostic instead of an
// abort.

#include "run_cli.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <csignal>
#include <cstddef>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cli.h"
#include "hpfreeze/base/suggest.h"
#include "hpfreeze/base/version.h"
#include "hpfreeze/commands/message_format.h"
#include "hpfreeze/io/standard_streams.h"

namespace hpfreeze::cli {
namespace {

Outcome usage_error(const std::string& message) {
  report_usage_error(message);
  return kExitTrouble;
}

constexpr std::string_view kMessageFormatFlag = "--message-format";
constexpr std::string_view kMessageFormatEnv = "HPFREEZE_MESSAGE_FORMAT";

// The --message-format of the command line (the last one before any "--", on either side
// of the command word), else $HPFREEZE_MESSAGE_FORMAT when set and not empty, else text.
// Read before the parse, so that its own mistakes as well as CLI11's come out in it; a
// value that names no format is a usage error, printed in text.
Expected<MessageFormat> message_format_of(int argc, const char* const* argv) {
  std::optional<std::string> value;
  std::string from(kMessageFormatFlag);
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg == kMessageFormatFlag) {
      if (i + 1 == argc) {
        return make_io_error({}, from + " needs a value: text, github or json");
      }
      value = argv[++i];
    } else if (arg.size() > kMessageFormatFlag.size() &&
               arg.substr(0, arg.find('=')) == kMessageFormatFlag) {
      value = std::string(arg.substr(kMessageFormatFlag.size() + 1));
    }
  }
  if (!value) {
    const char* env = std::getenv(std::string(kMessageFormatEnv).c_str());
    if (env == nullptr || *env == '\0') return MessageFormat::kText;
    value = env;
    from = kMessageFormatEnv;
  }
  if (std::optional<MessageFormat> format = parse_message_format(*value)) return *format;
  return make_io_error({}, from + ": unknown message format " + quote_for_diagnostic(*value) +
                               " (text, github or json)");
}

std::vector<std::string> command_names() {
  std::vector<std::string> names;
  for (const Command& c : commands()) names.emplace_back(c.name);
  return names;
}

Outcome unknown_command(const std::string& word) {
  if (std::optional<std::string> near = nearest(word, command_names())) {
    return usage_error("unknown command '" + word + "'; did you mean '" + *near + "'?");
  }
  return usage_error("unknown command '" + word + "' (see 'hpfreeze --help')");
}

std::vector<std::string> option_names(const CLI::App& app) {
  std::vector<std::string> names;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& l : opt->get_lnames()) names.push_back("--" + l);
    for (const std::string& s : opt->get_snames()) names.push_back("-" + s);
  }
  return names;
}

std::string help_hint(const CLI::App* sub) {
  return sub == nullptr ? "(see 'hpfreeze --help')"
                        : "(see 'hpfreeze " + sub->get_name() + " --help')";
}

// After a failed parse: the first word CLI11 could not place is the mistake to name, since
// what it reports instead (a required option missing) is often only its consequence.
Outcome parse_failure(const CLI::App& app, const CLI::ParseError& e) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  const CLI::App* sub = parsed.empty() ? nullptr : parsed.front();
  for (const CLI::App* where : {&app, sub}) {
    if (where == nullptr) continue;
    const std::vector<std::string> extras = where->remaining();
    if (extras.empty()) continue;
    const std::string& word = extras.front();
    if (word.size() > 1 && word[0] == '-') {
      const std::string name = word.substr(0, word.find('='));
      std::optional<std::string> near;
      if (name.size() > 2) near = nearest(name, option_names(*where));
      if (near) return usage_error("unknown option '" + name + "'; did you mean '" + *near + "'?");
      return usage_error("unknown option '" + name + "' " + help_hint(sub));
    }
    return usage_error("unexpected argument '" + word + "' " + help_hint(sub));
  }
  if (sub == nullptr && e.get_name() == "RequiredError") {
    return usage_error("no command given " + help_hint(nullptr));
  }
  return usage_error(std::string(e.what()) + " " + help_hint(sub));
}

// --help and --version text goes to stdout like any data: a failed write is an I/O error.
Outcome print(const std::string& text) {
  if (Expected<WriteOutcome> written = write_stdout(text); !written) {
    report(written.errors());
    return kExitTrouble;
  }
  return kExitOk;
}

// The global flags, declared on hpfreeze itself and again on every command, so that they
// work on either side of the command word and every command's --help lists them.
struct GlobalFlags {
  CLI::Option* verbose;
  CLI::Option* quiet;
  CLI::Option* message_format;
};
GlobalFlags add_global_flags(CLI::App& app, const char* quiet_help = nullptr) {
  app.set_version_flag("--version", std::string("hpfreeze ") + hpfreeze::kVersion,
                       "Print the version and exit");
  const std::string verbose_help = "More diagnostics on stderr (repeatable)";
  const std::string quiet_text =
      quiet_help != nullptr ? quiet_help : "Fewer diagnostics: -q errors only, -qq none";
  // Its value was read and checked before the parse (message_format_of); declared for
  // --help, the man pages and completion, which list its choices.
  CLI::Option* message_format =
      app.add_option(std::string(kMessageFormatFlag),
                     "How stderr lines are written: text (default), github (workflow "
                     "commands) or json (JSON Lines); also $HPFREEZE_MESSAGE_FORMAT")
          ->type_name("FORMAT")
          ->check(CLI::IsMember({"text", "github", "json"}))
          ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast);
  return {app.add_flag("-v,--verbose", verbose_help), app.add_flag("-q,--quiet", quiet_text),
          message_format};
}

bool is_help_flag(std::string_view arg) {
  return arg == "--help" || (arg.size() > 1 && arg[0] == '-' && arg[1] != '-' &&
                             arg.find('h') != std::string_view::npos);
}

// The first option before the command word that is not one of hpfreeze's own flags, with
// its position: nullopt when there is none.
std::optional<std::pair<int, std::string>> foreign_option(int argc, const char* const* argv,
                                                          const CLI::App& app) {
  const std::vector<std::string> own = option_names(app);
  const auto is_own = [&own](const std::string& name) {
    if (std::find(own.begin(), own.end(), name) != own.end()) return true;
    // Combined short flags: -vv, -qq, -vq.
    return name.size() > 2 && name[1] != '-' &&
           std::all_of(name.begin() + 1, name.end(), [&own](char c) {
             return std::find(own.begin(), own.end(), std::string{'-', c}) != own.end();
           });
  };
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--" || arg.size() < 2 || arg[0] != '-') return std::nullopt;
    std::string name(arg.substr(0, arg.find('=')));
    if (!is_own(name)) return std::pair{i, std::move(name)};
    if (arg == kMessageFormatFlag) ++i;  // its value
  }
  return std::nullopt;
}

// hpfreeze's own flags (but --message-format) take no value, so in
// `hpfreeze --plan p.json freeze` the parser would
// take p.json for the command: the option is named instead, with where it belongs when a
// later word is a command that takes it.
Outcome misplaced_option(const std::pair<int, std::string>& option, int argc,
                         const char* const* argv, const CLI::App& app,
                         const std::vector<CLI::App*>& subs) {
  const std::string& name = option.second;
  for (int j = option.first + 1; j < argc; ++j) {
    for (const CLI::App* sub : subs) {
      if (sub->get_name() != argv[j]) continue;
      const std::vector<std::string> its = option_names(*sub);
      if (std::find(its.begin(), its.end(), name) == its.end()) break;
      return usage_error("'" + name + "' is an option of '" + sub->get_name() +
                         "': put it after the command word (hpfreeze " + sub->get_name() + " " +
                         name + " ...)");
    }
  }
  const std::vector<std::string> own = option_names(app);
  if (std::optional<std::string> near = name.size() > 2 ? nearest(name, own) : std::nullopt) {
    return usage_error("unknown option '" + name + "'; did you mean '" + *near + "'?");
  }
  return usage_error("unknown option '" + name + "' " + help_hint(nullptr));
}

// A flag given a value ("--quiet=1", "--json=0"), named; nullopt when there is none. CLI11
// would take the value as the flag's own ("--json=0" turning --json off), where a flag
// takes none. `at` is the command word's position in `args`, whose options are its.
std::optional<std::string> flag_with_value(const std::vector<std::string>& args,
                                           std::optional<int> at, const CLI::App& app) {
  const CLI::App* command = nullptr;
  if (at) {
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->get_name() == args[static_cast<std::size_t>(*at)]) command = sub;
    }
  }
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& arg = args[i];
    if (arg == "--") break;
    const std::size_t equals = arg.find('=');
    if (!arg.starts_with("--") || equals == std::string::npos) continue;
    const std::string name = arg.substr(0, equals);
    const bool after_word = at && i > static_cast<std::size_t>(*at) && command != nullptr;
    const CLI::Option* option = (after_word ? command : &app)->get_option_no_throw(name);
    if (option != nullptr && option->get_items_expected_max() == 0) {
      return "'" + arg + "': " + name + " takes no value " +
             help_hint(after_word ? command : nullptr);
    }
  }
  return std::nullopt;
}

// The command word: the first argument that is not a flag or the value of
// --message-format (hpfreeze's other flags take no value), if any.
std::optional<int> command_index(int argc, const char* const* argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg == "--") return i + 1 < argc ? std::optional<int>(i + 1) : std::nullopt;
    if (arg.empty() || arg[0] != '-') return i;
    if (arg == kMessageFormatFlag) ++i;
  }
  return std::nullopt;
}

Outcome run(int argc, const char* const* argv) {
  // A run starts from the defaults, whatever a run before it in this process set: text
  // (also for a bad --message-format's own error), and the default level until the
  // command line is read (for errors writing --help).
  set_message_format(MessageFormat::kText);
  setup_logging(0, 0);
  Expected<MessageFormat> format = message_format_of(argc, argv);
  if (!format) return usage_error(format.errors().front().message);
  set_message_format(*format);
  CLI::App app{
      "hpfreeze: freeze a HyperParallel sharding plan into a byte-stable codegen_meta.json"};
  app.name("hpfreeze");
  const GlobalFlags global = add_global_flags(app);
  app.require_subcommand(1);
  app.footer(
      "Run 'hpfreeze help COMMAND' or 'hpfreeze COMMAND --help' for a command's options.\n\n" +
      help_footer("success",
                  "the inputs were read and rejected: invalid content, a failed check, "
                  "differences found",
                  "hpfreeze freeze --plan plan.json --model model.json -o codegen_meta.json"));

  struct Entry {
    CLI::App* app;
    GlobalFlags global;
    Runner run;
  };
  // Declaring a command's options is most of the start-up's own work, so a plain command
  // line (own flags other than --help, then a command word) declares only its command;
  // hpfreeze's --help, `help` and the mistakes that name other commands see them all.
  const std::optional<std::pair<int, std::string>> foreign = foreign_option(argc, argv, app);
  const std::optional<int> at = command_index(argc, argv);
  const std::vector<std::string> names = command_names();
  std::optional<std::string_view> only;
  if (!foreign && at && std::find(names.begin(), names.end(), argv[*at]) != names.end() &&
      std::none_of(argv + 1, argv + *at, [](const char* a) { return is_help_flag(a); })) {
    only = argv[*at];
  }
  std::vector<Entry> entries;
  for (const Command& command : commands()) {
    if (only && *only != command.name) continue;
    CLI::App* sub = app.add_subcommand(command.name, command.description);
    Runner runner = command.declare(*sub);
    entries.push_back({sub, add_global_flags(*sub, command.quiet_help), std::move(runner)});
  }
  if (foreign) {
    std::vector<CLI::App*> subs;
    for (const Entry& entry : entries) subs.push_back(entry.app);
    return misplaced_option(*foreign, argc, argv, app, subs);
  }

  std::vector<std::string> args(argv, argv + argc);
  if (at) {
    const std::string word = args[static_cast<std::size_t>(*at)];
    if (word == "help") {
      // `hpfreeze help [COMMAND]`: the same text as `hpfreeze [COMMAND] --help`.
      const int rest = argc - *at - 1;
      if (rest > 1) return usage_error("help takes at most one command (see 'hpfreeze --help')");
      args.erase(args.begin() + *at, args.end());
      if (rest == 1) {
        const std::string topic = argv[*at + 1];
        if (std::find(names.begin(), names.end(), topic) == names.end()) {
          return unknown_command(topic);
        }
        args.push_back(topic);
      }
      args.emplace_back("--help");
    } else if (std::find(names.begin(), names.end(), word) == names.end()) {
      return unknown_command(word);
    }
  }

  if (std::optional<std::string> flag = flag_with_value(args, at, app)) {
    return usage_error(*flag);
  }

  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend() - 1);  // CLI11's order
    app.parse(reversed);
  } catch (const CLI::CallForHelp& e) {
    std::ostringstream out;
    std::ostringstream err;
    app.exit(e, out, err);
    return print(out.str());
  } catch (const CLI::CallForVersion& e) {
    return print(std::string(e.what()) + "\n");
  } catch (const CLI::ParseError& e) {
    return parse_failure(app, e);
  }
  for (const Entry& entry : entries) {
    if (!entry.app->parsed()) continue;
    const auto count = [](const GlobalFlags& g, CLI::Option* GlobalFlags::*flag) {
      return static_cast<int>((g.*flag)->count());
    };
    setup_logging(count(global, &GlobalFlags::verbose) + count(entry.global, &GlobalFlags::verbose),
                  count(global, &GlobalFlags::quiet) + count(entry.global, &GlobalFlags::quiet));
    return entry.run();
  }
  return usage_error("no command given (see 'hpfreeze --help')");
}

}  // namespace

int run_cli(int argc, const char* const* argv) {
  // Past `ulimit -f` a write fails with EFBIG and is reported like any failed write, instead
  // of the process dying with no word (SIGXFSZ's default). SIGPIPE keeps its default: a
  // reader that went away ends the process quietly, as it ends coreutils.
  ::signal(SIGXFSZ, SIG_IGN);
  try {
    return exit_status(run(argc, argv));
  } catch (const std::bad_alloc&) {
    report_out_of_memory();
  } catch (const std::exception& e) {
    report_internal_error(e.what());
  } catch (...) {
    report_internal_error("unknown exception");
  }
  return exit_status(kExitTrouble);
}

}  // namespace hpfreeze::cli
