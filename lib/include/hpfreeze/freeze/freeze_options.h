#pragma once
// The freeze pass's options: what `hpfreeze freeze`'s flags set (docs/cli.md).

namespace hpfreeze {

struct FreezeOptions {
  bool verify = true;        // check planned params against the model's `parameters`
  bool strict = false;       // warnings (negative dims, uncovered parameters) become errors
  bool allow_empty = false;  // accept a plan without modules
};

}  // namespace hpfreeze
