#pragma once
// The finding codes as the command line names them: check's and report's --silence
// (docs/cli.md, "Finding codes"; the table is lib/src/spec/findings.h).

#include <string>
#include <string_view>
#include <vector>

#include "hpfreeze/base/diagnostic.h"

namespace hpfreeze {

// The codes of `list`, a comma list, each a code of the findings table as it is written
// there ("HPF406"). Else a usage error (kIo) about the first item that is none: "unknown
// finding code 'HPF4O6'; did you mean 'HPF406'?" (the nearest code, ignoring case, or the
// code of the rule of that name), or "empty finding code in 'HPF101,'".
Expected<std::vector<std::string>> parse_finding_codes(std::string_view list);

}  // namespace hpfreeze
