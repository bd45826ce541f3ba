#include "cli_tester.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "run_cli.h"

extern char** environ;

namespace hpfreeze::cli::testing {
namespace {

[[noreturn]] void fail(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), "CliTester: " + what);
}

std::map<std::string, std::string> environment() {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view entry = *e;
    const std::size_t eq = entry.find('=');
    if (eq == std::string_view::npos) continue;
    vars.emplace(entry.substr(0, eq), entry.substr(eq + 1));
  }
  return vars;
}

void set_environment(const std::string& name, const std::optional<std::string>& value) {
  const int rc = value ? ::setenv(name.c_str(), value->c_str(), 1) : ::unsetenv(name.c_str());
  if (rc != 0) fail("cannot set $" + name);
}

// The process state a run of the front end may change, taken when made and put back when
// destroyed: the environment, umask, every signal's disposition and the signal mask,
// spdlog's default logger and levels, the working directory and the iostreams' state.
// (CLI11 keeps no state outside its App objects; the front end's own statics, the message
// format and the -q count, are set anew by every run_cli.)
class ProcessState {
 public:
  ProcessState()
      : env_(environment()),
        umask_(::umask(0)),
        logger_(spdlog::default_logger()),
        level_(spdlog::get_level()),
        cwd_(::open(".", O_PATH | O_DIRECTORY | O_CLOEXEC)),
        cout_(std::cout.rdstate()),
        cerr_(std::cerr.rdstate()),
        cin_(std::cin.rdstate()) {
    ::umask(umask_);
    for (int sig = 1; sig < NSIG; ++sig) {
      struct sigaction action {};
      if (::sigaction(sig, nullptr, &action) == 0) actions_.emplace_back(sig, action);
    }
    ::sigprocmask(SIG_SETMASK, nullptr, &mask_);
    if (cwd_ < 0) fail("cannot open the working directory");
  }
  ~ProcessState() {
    std::map<std::string, std::string> now = environment();
    for (const auto& [name, value] : now) {
      if (env_.count(name) == 0) ::unsetenv(name.c_str());
    }
    for (const auto& [name, value] : env_) {
      if (auto it = now.find(name); it == now.end() || it->second != value) {
        ::setenv(name.c_str(), value.c_str(), 1);
      }
    }
    ::umask(umask_);
    for (const auto& [sig, action] : actions_) ::sigaction(sig, &action, nullptr);
    ::sigprocmask(SIG_SETMASK, &mask_, nullptr);
    spdlog::set_default_logger(logger_);
    // No per-logger levels (SPDLOG_LEVEL's): the test process sets none of its own.
    spdlog::details::registry::instance().set_levels({}, &level_);
    if (::fchdir(cwd_) != 0) std::perror("CliTester: cannot return to the working directory");
    ::close(cwd_);
    std::cout.clear(cout_);
    std::cerr.clear(cerr_);
    std::cin.clear(cin_);
  }
  ProcessState(const ProcessState&) = delete;
  ProcessState& operator=(const ProcessState&) = delete;

 private:
  std::map<std::string, std::string> env_;
  mode_t umask_;
  std::vector<std::pair<int, struct sigaction>> actions_;
  sigset_t mask_{};
  std::shared_ptr<spdlog::logger> logger_;
  spdlog::level::level_enum level_;
  int cwd_;
  std::ios::iostate cout_, cerr_, cin_;
};

void flush_streams() {
  std::cout.flush();
  std::cerr.flush();
  std::fflush(stdout);
  std::fflush(stderr);
}

// Descriptors 0, 1 and 2 replaced for one run and put back when destroyed (a descriptor
// that was closed is closed again).
class StandardDescriptors {
 public:
  StandardDescriptors(int in, int out, int err) {
    flush_streams();  // what the test itself wrote goes where it was going
    const int fresh[3] = {in, out, err};
    for (int fd = 0; fd < 3; ++fd) {
      saved_[fd] = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
      if (::dup2(fresh[fd], fd) < 0) fail("cannot replace descriptor " + std::to_string(fd));
    }
  }
  ~StandardDescriptors() {
    flush_streams();  // what the run left in a stdio buffer is its output
    for (int fd = 0; fd < 3; ++fd) {
      if (saved_[fd] < 0) {
        ::close(fd);
        continue;
      }
      ::dup2(saved_[fd], fd);
      ::close(saved_[fd]);
    }
  }
  StandardDescriptors(const StandardDescriptors&) = delete;
  StandardDescriptors& operator=(const StandardDescriptors&) = delete;

 private:
  int saved_[3] = {-1, -1, -1};
};

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

void write_all(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n <= 0) fail("cannot write stdin's bytes");
    bytes.remove_prefix(static_cast<std::size_t>(n));
  }
}

std::string read_from_start(int fd) {
  std::string bytes;
  char buf[65536];
  for (off_t at = 0;;) {
    const ssize_t n = ::pread(fd, buf, sizeof buf, at);
    if (n < 0) fail("cannot read a captured stream");
    if (n == 0) return bytes;
    bytes.append(buf, static_cast<std::size_t>(n));
    at += n;
  }
}

std::string make_temp_dir(const char* what) {
  std::string pattern = (std::filesystem::temp_directory_path() / what).string() + ".XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) fail("cannot make a temporary directory");
  return pattern;
}

}  // namespace

CliTester::CliTester() : dir_(make_temp_dir("hpfreeze-cli-test")) {
  env_["SPDLOG_LEVEL"] = std::nullopt;
  env_["HPFREEZE_MESSAGE_FORMAT"] = std::nullopt;
  env_["NO_COLOR"] = "1";
}

CliTester::~CliTester() {
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

void CliTester::set_stdin(std::string bytes, Stdin kind) {
  stdin_bytes_ = std::move(bytes);
  stdin_kind_ = kind;
}

void CliTester::set_env(const std::string& name, std::optional<std::string> value) {
  env_[name] = std::move(value);
}

std::string CliTester::write_file(const std::string& name, const std::string& bytes) const {
  const std::string path = dir_ + "/" + name;
  std::ofstream out(path, std::ios::binary);
  out << bytes;
  if (!out.flush()) fail("cannot write " + path);
  return path;
}

CliRun CliTester::run(const std::vector<std::string>& args) {
  // The captured streams are files of their own, outside dir(), gone after the run.
  const std::string captures = make_temp_dir("hpfreeze-cli-capture");
  const auto open_capture = [&captures](const char* name) {
    const int fd =
        ::open((captures + "/" + name).c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0) fail(std::string("cannot create the capture of ") + name);
    return fd;
  };
  int in_fd = -1;
  if (stdin_kind_ == Stdin::kClosed) {
    in_fd = ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
  } else if (stdin_kind_ == Stdin::kPipe) {
    int ends[2];
    if (::pipe2(ends, O_CLOEXEC) != 0) fail("cannot make stdin's pipe");
    const Fd write_end(ends[1]);
    if (stdin_bytes_.size() > 65536)
      throw std::length_error("CliTester: a stdin pipe holds 64 KiB");
    write_all(write_end.get(), stdin_bytes_);
    in_fd = ends[0];
  } else {
    in_fd = open_capture("stdin");
    write_all(in_fd, stdin_bytes_);
    if (::lseek(in_fd, 0, SEEK_SET) != 0) fail("cannot rewind stdin");
  }
  const Fd in(in_fd);
  const Fd out(stdout_path_ ? ::open(stdout_path_->c_str(), O_WRONLY | O_CLOEXEC)
                            : open_capture("stdout"));
  const Fd err(open_capture("stderr"));
  if (in.get() < 0 || out.get() < 0) fail("cannot open stdin or stdout");

  std::vector<std::string> words{"hpfreeze"};
  words.insert(words.end(), args.begin(), args.end());
  std::vector<const char*> argv;
  for (const std::string& w : words) argv.push_back(w.c_str());
  argv.push_back(nullptr);

  CliRun result;
  {
    const ProcessState state;
    for (const auto& [name, value] : env_) set_environment(name, value);
    const StandardDescriptors standard(in.get(), out.get(), err.get());
    result.exit_code = run_cli(static_cast<int>(words.size()), argv.data());
  }
  if (!stdout_path_) result.out = read_from_start(out.get());
  result.err = read_from_start(err.get());
  std::error_code ignored;
  std::filesystem::remove_all(captures, ignored);
  return result;
}

void PrintTo(const CliRun& run, std::ostream* os) {
  const auto quoted = [os](const std::string& bytes) {
    *os << '"';
    for (const char c : bytes) {
      if (c == '\n') {
        *os << "\\n";
      } else if (c == '"' || c == '\\') {
        *os << '\\' << c;
      } else {
        *os << c;
      }
    }
    *os << '"';
  };
  *os << "{exit " << run.exit_code << ", out ";
  quoted(run.out);
  *os << ", err ";
  quoted(run.err);
  *os << "}";
}

std::string testdata(const std::string& relative) {
  return std::string(HPFREEZE_TESTDATA_DIR) + "/" + relative;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace hpfreeze::cli::testing
