#pragma once
// The diff pass's options: what `hpfreeze diff --ignore` sets (docs/cli.md).

#include <string>
#include <vector>

namespace hpfreeze {

struct DiffOptions {
  // The --ignore items as given: each a top-level key or, starting with '/', a JSON Pointer
  // as diff prints them; items may be comma lists. A difference at or under one is left out.
  std::vector<std::string> ignored_fields;
};

}  // namespace hpfreeze
