// The raw baseline of bench/run: the least work any freeze must do. It loads and
// DOM-parses each input with simdjson (the same parser hpfreeze uses) and writes
// OUTPUT_BYTES bytes to OUT, so hpfreeze's wall time can be read as a multiple of the
// cost of touching the data at all.
//
//   hpfreeze_raw_baseline OUTPUT_BYTES OUT INPUT...
//
// OUT "-" is stdout. Exit 0, or 1 with a message when an input does not parse.
#include <fcntl.h>
#include <simdjson.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace {

int write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::size_t output_bytes = 0;
  const std::string_view size_arg = argc > 1 ? argv[1] : "";
  if (argc < 4 ||
      std::from_chars(size_arg.data(), size_arg.data() + size_arg.size(), output_bytes).ec !=
          std::errc()) {
    std::fprintf(stderr, "usage: hpfreeze_raw_baseline OUTPUT_BYTES OUT INPUT...\n");
    return 2;
  }
  const std::string out_path = argv[2];

  // Every document stays alive until the output is written, as in a freeze.
  std::vector<std::unique_ptr<simdjson::dom::parser>> parsers;
  std::vector<simdjson::padded_string> inputs;
  for (int i = 3; i < argc; ++i) {
    simdjson::padded_string& text = inputs.emplace_back();
    if (const auto error = simdjson::padded_string::load(argv[i]).get(text); error) {
      std::fprintf(stderr, "%s: %s\n", argv[i], simdjson::error_message(error));
      return 1;
    }
    auto& parser = parsers.emplace_back(std::make_unique<simdjson::dom::parser>());
    if (const auto error = parser->parse(text).error(); error) {
      std::fprintf(stderr, "%s: %s\n", argv[i], simdjson::error_message(error));
      return 1;
    }
  }

  // The bytes themselves do not matter; their count and their destination do.
  const std::string bytes(output_bytes, ' ');
  const int fd = out_path == "-"
                     ? STDOUT_FILENO
                     : ::open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) {
    std::fprintf(stderr, "%s: %s\n", out_path.c_str(), std::strerror(errno));
    return 2;
  }
  if (const int err = write_all(fd, bytes.data(), bytes.size()); err != 0) {
    std::fprintf(stderr, "%s: %s\n", out_path.c_str(), std::strerror(err));
    return 2;
  }
  if (fd != STDOUT_FILENO && ::close(fd) != 0) {
    std::fprintf(stderr, "%s: %s\n", out_path.c_str(), std::strerror(errno));
    return 2;
  }
  return 0;
}
