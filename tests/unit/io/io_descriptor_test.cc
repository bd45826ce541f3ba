// Outputs on the real disk around descriptors and limits (docs/reliability.md): names of our
// own descriptors, other processes' descriptors, outputs written in place compared with the
// inputs and the other outputs, --if-changed without write access, and EFBIG.
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <atomic>
#include <csignal>
#include <string>
#include <thread>
#include <vector>

#include "io/io.h"
#include "io_test_support.h"

namespace hpfreeze {
namespace {

using namespace io_testing;

// Runs body in a child whose stdout appends to `log`.
template <class Body>
void with_stdout_appending_to(const std::string& log, Body body) {
  expect_child_succeeds([&]() -> std::string {
    const int fd = ::open(log.c_str(), O_WRONLY | O_APPEND);
    if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "cannot redirect stdout";
    ::close(fd);
    return body();
  });
}

// "" when result is the one error (file, message), else what it is.
template <class T>
std::string one_error(const Expected<T>& result, const std::string& file,
                      const std::string& message) {
  if (result.ok()) return "no error where '" + message + "' was expected";
  const Diagnostics& errors = result.errors();
  if (errors.size() != 1 || errors[0].file != file || errors[0].message != message ||
      errors[0].error_class != ErrorClass::kIo) {
    return "got '" + errors[0].location_and_message() + "' for '" + file + ": " + message + "'";
  }
  return "";
}

std::string one_error(const Diagnostics& errors, const std::string& file,
                      const std::string& message) {
  if (errors.size() == 1 && errors[0].file == file && errors[0].message == message) return "";
  return "got " + std::to_string(errors.size()) + " errors" +
         (errors.empty() ? "" : ", first '" + errors[0].location_and_message() + "'") + " for '" +
         file + ": " + message + "'";
}

// Unshares the mount namespace of this (child) process and makes every mount in it
// private, so that nothing it mounts is seen outside it.
bool enter_private_mount_namespace() {
  return ::unshare(CLONE_NEWNS) == 0 &&
         ::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) == 0;
}

// Whether this process may make a private mount namespace and mount a file system of this
// type on `where` in it (a child tries; nothing outside the child sees the mount).
bool can_mount_privately(const std::string& where, const char* type = "tmpfs") {
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid == 0) {
    const bool ok =
        enter_private_mount_namespace() && ::mount("none", where.c_str(), type, 0, nullptr) == 0;
    ::_exit(ok ? 0 : 1);
  }
  int status = 0;
  return pid > 0 && ::waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
         WEXITSTATUS(status) == 0;
}

using DescriptorNameTest = TempDirTest;

TEST_F(DescriptorNameTest, OnlyCanonicalNumbersNameADescriptor) {
  // The kernel lists descriptors as "N" only: every other spelling is not found, and
  // nothing is written anywhere.
  const std::string log = path("build.log");
  spit(log, "earlier\n");
  with_stdout_appending_to(log, [&]() -> std::string {
    for (const std::string dir : {"/dev/fd/", "/proc/self/fd/", "/proc/thread-self/fd//"}) {
      for (const std::string name :
           {"01", "00", "+1", "-1", "1 ", " 1", "0x1", "1.0", "1e0", "99999999999", "\xd9\xa1"}) {
        const std::string p = dir + name;
        const std::string problem =
            one_error(write_output(p, "x\n", {}), p, "cannot write: No such file or directory");
        if (!problem.empty()) return p + ": " + problem;
      }
    }
    return "";
  });
  EXPECT_EQ(slurp(log), "earlier\n");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"build.log"});
}

TEST_F(DescriptorNameTest, ClosedOrReadOnlyDescriptorsAreRefusedBeforeAnythingIsWritten) {
  const std::string log = path("build.log");
  spit(log, "earlier\n");
  const std::string created = path("new.json");
  expect_child_succeeds([&]() -> std::string {
    // 7 closed, 8 open for reading only, 9 a placeholder that is open on nothing (O_PATH).
    const int ro = ::open(log.c_str(), O_RDONLY);
    const int placeholder = ::open("/", O_PATH | O_DIRECTORY);
    if (ro < 0 || placeholder < 0 || ::dup2(ro, 8) < 0 || ::dup2(placeholder, 9) < 0) {
      return "setup";
    }
    if (ro != 8) ::close(ro);
    if (placeholder != 9) ::close(placeholder);
    ::close(7);
    for (const std::string name : {"/dev/fd/7", "/dev/fd/8", "/proc/self/fd/9"}) {
      const std::vector<OutputFile> outs = {OutputFile{"-o", created, "meta", {}},
                                            OutputFile{"--depfile", name, "dep", {}}};
      const std::string problem =
          one_error(write_outputs(outs), name, "cannot write: Bad file descriptor");
      if (!problem.empty()) return name + ": " + problem;
    }
    // Stdout open for reading only is found as early.
    if (::dup2(8, STDOUT_FILENO) < 0) return "setup";
    const std::vector<OutputFile> outs = {OutputFile{"-o", created, "meta", {}},
                                          OutputFile{"--model-out", "-", "model", {}}};
    return one_error(write_outputs(outs), "", "cannot write to stdout: Bad file descriptor");
  });
  EXPECT_EQ(slurp(log), "earlier\n");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"build.log"});
}

TEST_F(DescriptorNameTest, OurOtherThreadsDescriptorDirectoriesAreOurs) {
  const std::string log = path("build.log");
  spit(log, "earlier\n");
  with_stdout_appending_to(log, [&]() -> std::string {
    std::atomic<pid_t> tid{0};
    std::atomic<bool> done{false};
    std::thread other([&] {
      tid = ::gettid();
      while (!done) std::this_thread::yield();
    });
    while (tid == 0) std::this_thread::yield();
    const std::string pid = std::to_string(::getpid()), t = std::to_string(tid);
    std::string problem;
    for (const std::string& name :
         {"/proc/" + t + "/fd/1", "/proc/self/task/" + t + "/fd/1",
          "/proc/" + pid + "/task/" + t + "/fd/1", "/proc/" + t + "/task/" + pid + "/fd/1"}) {
      auto result = write_output(name, "line\n", {});
      if (!result.ok()) problem = name + ": " + result.errors()[0].message;
    }
    done = true;
    other.join();
    return problem;
  });
  EXPECT_EQ(slurp(log), "earlier\nline\nline\nline\nline\n");
  EXPECT_EQ(entries(dir_), std::vector<std::string>{"build.log"});
}

TEST_F(DescriptorNameTest, AProcMountedElsewhereLeadsToOurDescriptorsToo) {
  const std::string proc = path("proc");
  ASSERT_EQ(::mkdir(proc.c_str(), 0755), 0);
  if (!can_mount_privately(proc, "proc")) {
    GTEST_SKIP() << "needs a private mount namespace (root, or CAP_SYS_ADMIN) for a second "
                    "/proc";
  }
  const std::string log = path("build.log");
  spit(log, "earlier\n");
  with_stdout_appending_to(log, [&]() -> std::string {
    if (!enter_private_mount_namespace() || ::mount("none", proc.c_str(), "proc", 0, nullptr)) {
      return "mount";
    }
    const std::string pid = std::to_string(::getpid());
    for (const std::string& name :
         {proc + "/self/fd/1", proc + "/" + pid + "/task/" + pid + "/fd/1"}) {
      auto result = write_output(name, "line\n", {});
      if (!result.ok()) return name + ": " + result.errors()[0].message;
    }
    return "";
  });
  EXPECT_EQ(slurp(log), "earlier\nline\nline\n");
}

TEST_F(DescriptorNameTest, AnotherProcessesDescriptorsAreRefused) {
  const std::string victim_log = path("victim.log");
  spit(victim_log, "the other process's log\n");
  int ready[2];
  ASSERT_EQ(::pipe(ready), 0);
  std::fflush(nullptr);
  const pid_t victim = ::fork();
  ASSERT_GE(victim, 0);
  if (victim == 0) {
    const int fd = ::open(victim_log.c_str(), O_WRONLY | O_APPEND);
    if (fd >= 0) ::dup2(fd, STDOUT_FILENO);
    ::close(ready[0]);
    ::close(ready[1]);  // tells the parent that stdout is in place
    ::pause();
    ::_exit(0);
  }
  ::close(ready[1]);
  char byte;
  ASSERT_EQ(::read(ready[0], &byte, 1), 0);
  ::close(ready[0]);
  const std::string v = std::to_string(victim);
  ASSERT_EQ(::symlink(("/proc/" + v + "/fd").c_str(), path("fds").c_str()), 0);
  ASSERT_EQ(::symlink(("/proc/" + v + "/fd/1").c_str(), path("out.json").c_str()), 0);
  for (const std::string& name : {"/proc/" + v + "/fd/1", "/proc/" + v + "/task/" + v + "/fd/1",
                                  "/proc/" + v + "/fd/../fd//1", "/proc/" + v + "/fd/01",
                                  path("fds") + "/1", path("out.json")}) {
    EXPECT_EQ(one_error(write_output(name, "overwritten\n", {}), name,
                        "cannot write: a descriptor of another process"),
              "");
  }
  ::kill(victim, SIGKILL);
  ::waitpid(victim, nullptr, 0);
  EXPECT_EQ(slurp(victim_log), "the other process's log\n");
}

TEST_F(DescriptorNameTest, AnyOtherNameIsAFileReplacedAtomicallyEvenWhenStdoutIsOpenOnIt) {
  // `-o build.log >> build.log`: a file, named; /proc/self/cwd leads to a real directory.
  const std::string log = path("build.log");
  spit(log, "earlier\n");
  ASSERT_EQ(::symlink("build.log", path("link.log").c_str()), 0);
  const std::string directory = dir_;
  with_stdout_appending_to(log, [&]() -> std::string {
    if (::chdir(directory.c_str()) != 0) return "chdir";
    for (const std::string name : {"build.log", "/proc/self/cwd/build.log", "link.log"}) {
      struct stat before {
      }, after{};
      if (::fstat(STDOUT_FILENO, &before) != 0) return "fstat";
      auto result = write_output(name, name + "\n", {});
      if (!result.ok()) return name + ": " + result.errors()[0].message;
      if (::stat("build.log", &after) != 0 || after.st_ino == before.st_ino) {
        return name + " was written in place";
      }
      if (slurp("build.log") != name + "\n") return name + ": " + slurp("build.log");
      // Stdout follows: the next name replaces the file just written.
      const int fd = ::open("build.log", O_WRONLY | O_APPEND);
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "redirect";
      ::close(fd);
    }
    return "";
  });
  EXPECT_EQ(entries(dir_), (std::vector<std::string>{"build.log", "link.log"}));
}

TEST_F(DescriptorNameTest, TrailingSlashAndTheDirectoryItselfAreDirectories) {
  const std::string log = path("build.log");
  spit(log, "earlier\n");
  with_stdout_appending_to(log, [&]() -> std::string {
    for (const std::string name : {"/dev/fd/1/", "/dev/fd/", "/dev/fd", "/dev/fd/.",
                                   "/proc/self/fd/..", "/proc/thread-self/fd"}) {
      const std::string problem = one_error(write_output(name, "x", {}), name, "is a directory");
      if (!problem.empty()) return name + ": " + problem;
    }
    return "";
  });
  EXPECT_EQ(slurp(log), "earlier\n");
}

// -- outputs written in place against the inputs and the other outputs --------------------

using InPlaceSameFileTest = TempDirTest;

TEST_F(InPlaceSameFileTest, ADescriptorOpenOnAnInputOrAnotherOutputIsRefused) {
  const std::string plan = path("plan.json"), out = path("out.json");
  spit(plan, "{\"modules\": {}}");
  spit(out, "old meta");
  ASSERT_EQ(::symlink("plan.json", path("link.json").c_str()), 0);
  const std::vector<InputPath> inputs = {{"--plan", path("link.json"), "-o"},
                                         {"--model", "/dev/null", "-o"}};
  expect_child_succeeds([&]() -> std::string {
    // Kept at numbers of their own: 3 and stdout are rewired below.
    const int rw = ::dup2(::open(plan.c_str(), O_RDWR), 20);
    const int append = ::dup2(::open(out.c_str(), O_WRONLY | O_APPEND), 21);
    if (rw < 0 || append < 0 || ::dup2(rw, 3) < 0 || ::dup2(rw, STDOUT_FILENO) < 0) {
      return "setup";
    }
    FileSystem& real = real_file_system();
    // `--depfile /dev/fd/3 3<>plan.json`, and `-o - 1<>plan.json`: -o may replace its input
    // by a new file, never by writing into it.
    for (const std::string name : {"/dev/fd/3", "/proc/self/fd/3", "-"}) {
      const std::string flag = name == "-" ? "-o" : "--depfile";
      const std::vector<OutputFile> outs = {OutputFile{flag, name, "", {}}};
      const std::string shown = name == "-" ? "<stdout>" : name;
      const std::string problem = one_error(check_distinct_paths(real, outs, inputs), shown,
                                            flag + " and --plan name the same file");
      if (!problem.empty()) return name + ": " + problem;
    }
    // The same file as another output: `thaw META -o - --model-out m.json > m.json`.
    if (::dup2(append, STDOUT_FILENO) < 0) return "setup";
    const std::vector<OutputFile> outs = {OutputFile{"-o", "-", "plan", {}},
                                          OutputFile{"--model-out", out, "model", {}}};
    std::string problem =
        one_error(write_outputs(outs), out, "-o and --model-out name the same file");
    if (!problem.empty()) return problem;
    // Two descriptors open on one file (separately opened: not the same number).
    const std::vector<OutputFile> both = {OutputFile{"-o", "/dev/fd/3", "plan", {}},
                                          OutputFile{"--model-out", "/dev/fd/1", "model", {}}};
    if (::dup2(::open(out.c_str(), O_WRONLY | O_APPEND), 3) < 0) return "setup";
    problem = one_error(write_outputs(both), "/dev/fd/1", "-o and --model-out name the same file");
    if (!problem.empty()) return problem;
    // A command whose output is stdout, reading the file stdout is open on.
    if (::dup2(rw, STDOUT_FILENO) < 0) return "setup";
    const std::vector<InputPath> meta = {{"META", plan, {}}};
    return one_error(check_stdout_apart(meta), "<stdout>",
                     "the output and META name the same file");
  });
  EXPECT_EQ(slurp(plan), "{\"modules\": {}}");
  EXPECT_EQ(slurp(out), "old meta");
}

TEST_F(InPlaceSameFileTest, AFifoIsOneFileUnderAnyName) {
  // Written in place like a descriptor: two writers, or a reader of it, would interleave.
  const std::string fifo = path("pipe");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  ASSERT_EQ(::symlink("pipe", path("link").c_str()), 0);
  const std::vector<OutputFile> outs = {OutputFile{"-o", fifo, "", {}},
                                        OutputFile{"--depfile", path("link"), "", {}}};
  expect_one_io_error(check_distinct_paths(real_file_system(), outs, {}), path("link"),
                      "-o and --depfile name the same file");
  const std::vector<InputPath> ins = {{"--plan", dir_ + "/./pipe", "-o"}};
  expect_one_io_error(check_distinct_paths(real_file_system(), std::span(outs.data(), 1), ins),
                      fifo, "-o and --plan name the same file");
}

TEST_F(InPlaceSameFileTest, CharacterDevicesAndSocketsMayBeShared) {
  expect_child_succeeds([&]() -> std::string {
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0 || ::dup2(null, STDOUT_FILENO) < 0 || ::dup2(null, STDIN_FILENO) < 0) {
      return "setup";
    }
    const std::vector<OutputFile> outs = {OutputFile{"-o", "-", "", {}},
                                          OutputFile{"--depfile", "/dev/null", "", {}}};
    const std::vector<InputPath> ins = {{"--plan", "-", "-o"}, {"--model", "/dev/null", {}}};
    Diagnostics errors = check_distinct_paths(real_file_system(), outs, ins);
    if (!errors.empty()) return "/dev/null: " + errors[0].location_and_message();
    // Reading and writing one socket (an inetd-style service) touch different streams.
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0 || ::dup2(pair[0], STDIN_FILENO) < 0 ||
        ::dup2(pair[0], STDOUT_FILENO) < 0) {
      return "setup";
    }
    const std::vector<InputPath> in = {{"stdin", "-", {}}};
    errors = check_stdout_apart(in);
    return errors.empty() ? "" : "socket: " + errors[0].location_and_message();
  });
}

TEST_F(InPlaceSameFileTest, StdinAndStdoutOnOneFileOrOnePipeAreRefused) {
  const std::string file = path("plan.json");
  spit(file, "S(0)\n");
  expect_child_succeeds([&]() -> std::string {
    const std::vector<InputPath> in = {{"stdin", "-", {}}};
    const int rw = ::open(file.c_str(), O_RDWR);
    if (rw < 0 || ::dup2(rw, STDIN_FILENO) < 0 || ::dup2(rw, STDOUT_FILENO) < 0) return "setup";
    std::string problem =
        one_error(check_stdout_apart(in), "<stdout>", "the output and stdin name the same file");
    if (!problem.empty()) return "file: " + problem;
    int fds[2];
    if (::pipe(fds) != 0 || ::dup2(fds[0], STDIN_FILENO) < 0 || ::dup2(fds[1], STDOUT_FILENO) < 0) {
      return "setup";
    }
    problem =
        one_error(check_stdout_apart(in), "<stdout>", "the output and stdin name the same file");
    return problem.empty() ? "" : "pipe: " + problem;
  });
  EXPECT_EQ(slurp(file), "S(0)\n");
}

// -- --if-changed without write access ------------------------------------------------------

using IfChangedAccessTest = TempDirTest;

// Runs body as nobody when root (whom modes do not bind), else as the caller.
template <class Body>
void as_someone_modes_bind(Body body) {
  if (::geteuid() == 0) {
    as_nobody(body);
  } else {
    expect_child_succeeds(body);
  }
}

// The cases of --if-changed on `out`, which holds "same" and may not be replaced: the same
// bytes leave it alone, anything else is refused with `reason`.
std::string if_changed_cases(const std::string& out, const std::string& reason) {
  struct stat before {
  }, after{};
  if (::stat(out.c_str(), &before) != 0) return "stat";
  RealFileSystem real;
  auto same = write_output_file(real, out, "same", {.if_changed = true});
  if (!same.ok()) return "same bytes: " + same.errors()[0].message;
  if (*same != WriteOutcome::kUnchanged) return "same bytes were written";
  for (const auto& [bytes, if_changed] : {std::pair{"other", true}, std::pair{"same", false}}) {
    const std::string problem =
        one_error(write_output_file(real, out, bytes, {.if_changed = if_changed}), out,
                  "cannot write: " + reason);
    if (!problem.empty()) return std::string(bytes) + ": " + problem;
  }
  if (::stat(out.c_str(), &after) != 0 || after.st_ino != before.st_ino ||
      after.st_mtim.tv_nsec != before.st_mtim.tv_nsec ||
      after.st_mtim.tv_sec != before.st_mtim.tv_sec) {
    return "the file was touched";
  }
  return "";
}

TEST_F(IfChangedAccessTest, ReadOnlyFileOrDirectoryHoldingTheBytesIsLeftAlone) {
  ASSERT_EQ(::chmod(dir_.c_str(), 0755), 0);
  const std::string file = path("ro-file.json");
  spit(file, "same");
  ASSERT_EQ(::chmod(file.c_str(), 0444), 0);
  ASSERT_EQ(::mkdir(path("ro-dir").c_str(), 0755), 0);
  const std::string in_dir = path("ro-dir/meta.json");
  spit(in_dir, "same");
  ASSERT_EQ(::chmod(in_dir.c_str(), 0666), 0);  // writable: only the directory refuses
  ASSERT_EQ(::chmod(path("ro-dir").c_str(), 0555), 0);
  as_someone_modes_bind([&]() -> std::string {
    std::string problem = if_changed_cases(file, "Permission denied");
    if (!problem.empty()) return "0444 file: " + problem;
    RealFileSystem real;
    auto same = write_output_file(real, in_dir, "same", {.if_changed = true});
    if (!same.ok() || *same != WriteOutcome::kUnchanged) return "0555 directory: not left alone";
    return one_error(write_output_file(real, in_dir, "other", {.if_changed = true}), in_dir,
                     "cannot write: Permission denied");
  });
  EXPECT_EQ(slurp(file), "same");
  EXPECT_EQ(slurp(in_dir), "same");
  EXPECT_EQ(entries(path("ro-dir")), std::vector<std::string>{"meta.json"});
}

TEST_F(IfChangedAccessTest, ReadOnlyFileSystemHoldingTheBytesIsLeftAloneElseNamed) {
  const std::string mount_point = path("ro");
  ASSERT_EQ(::mkdir(mount_point.c_str(), 0755), 0);
  if (!can_mount_privately(mount_point)) {
    GTEST_SKIP() << "needs a private mount namespace (root, or CAP_SYS_ADMIN) for a read-only "
                    "file system";
  }
  expect_child_succeeds([&]() -> std::string {
    if (!enter_private_mount_namespace() ||
        ::mount("none", mount_point.c_str(), "tmpfs", 0, "size=64k") != 0) {
      return "mount";
    }
    const std::string out = mount_point + "/meta.json";
    spit(out, "same");
    if (::mount(nullptr, mount_point.c_str(), nullptr, MS_REMOUNT | MS_RDONLY, nullptr) != 0) {
      return "remount read-only";
    }
    std::string problem = if_changed_cases(out, "Read-only file system");
    if (!problem.empty()) return problem;
    RealFileSystem real;
    return one_error(write_output_file(real, mount_point + "/new.json", "x", {}),
                     mount_point + "/new.json", "cannot write: Read-only file system");
  });
}

// -- EFBIG --------------------------------------------------------------------------------

using FileSizeLimitTest = TempDirTest;

TEST_F(FileSizeLimitTest, AWriteBeyondTheLimitFailsAndLeavesTheOldFileAndNoTemporaryFile) {
  const std::string out = path("out.json");
  for (const auto temps :
       {RealFileSystem::TempFiles::kUnnamedWherePossible, RealFileSystem::TempFiles::kNamed}) {
    spit(out, "old bytes");
    expect_child_succeeds([&]() -> std::string {
      // As hpfreeze's main does: the write fails with EFBIG instead of killing the process.
      ::signal(SIGXFSZ, SIG_IGN);
      const rlimit limit{4096, 4096};
      if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return "setrlimit";
      RealFileSystem real(temps);
      const std::string big = pattern(100'000);
      std::string problem =
          one_error(write_output_file(real, out, big, {}), out, "cannot write: File too large");
      if (!problem.empty()) return problem;
      // Both outputs or neither: the second one's failure puts nothing in place.
      const std::vector<OutputFile> outs = {OutputFile{"-o", path("small.json"), "small", {}},
                                            OutputFile{"--model-out", out, big, {}}};
      problem = one_error(write_outputs(real, outs), out, "cannot write: File too large");
      if (!problem.empty()) return problem;
      // Stdout on a file: the same error, named as stdout.
      const int fd = ::open(path("stdout.log").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (fd < 0 || ::dup2(fd, STDOUT_FILENO) < 0) return "setup";
      return one_error(write_stdout(big), "", "cannot write to stdout: File too large");
    });
    EXPECT_EQ(slurp(out), "old bytes");
    EXPECT_EQ(entries(dir_), (std::vector<std::string>{"out.json", "stdout.log"}));
    ::unlink(path("stdout.log").c_str());
  }
}

}  // namespace
}  // namespace hpfreeze
