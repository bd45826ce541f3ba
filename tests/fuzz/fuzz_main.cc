// libFuzzer entry point, compiled once per target with HPFREEZE_FUZZ_CHECK naming one of
// the check_* functions of fuzz_harness.h. A violated property aborts, which libFuzzer
// reports like any crash (the input is saved as crash-<sha1>).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_checkpoint_harness.h"
#include "fuzz_meta_harness.h"
#include "fuzz_walk_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string failure =
      hpfreeze::fuzz::HPFREEZE_FUZZ_CHECK({reinterpret_cast<const char*>(data), size});
  if (!failure.empty()) {
    std::fprintf(stderr, "hpfreeze fuzz: property violated: %s\n", failure.c_str());
    std::abort();
  }
  return 0;
}
