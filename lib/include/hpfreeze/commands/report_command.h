#pragma once
// `hpfreeze report`: what a frozen plan puts on each rank of a mesh (docs/cli.md, "report").

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "hpfreeze/base/command_result.h"
#include "hpfreeze/capacity/capacity_args.h"
#include "hpfreeze/io/file_system.h"
#include "hpfreeze/report/report_options.h"

namespace hpfreeze {

struct ReportRequest {
  std::string meta_path;   // "-" for stdin; empty: no META, every parameter replicated
  std::string model_path;  // "-" for stdin; empty: not given (an error that says why)
  std::optional<std::vector<AxisSize>> mesh;
  bool json = false;
  std::optional<std::size_t> top;  // text default 10; JSON default all
  ReportPlanOptions plan;
  bool reserve_given = false;  // --reserve, even of 0 bytes: it needs --budget
  bool quiet = false;  // -q: the text has no findings line (the findings it counts are not shown)
  // The files it reads and writes: the real disk when null (the library's tests give an
  // in-memory one).
  FileSystem* files = nullptr;
};

// Reads, decodes and reports. First the usage errors of the request itself (kIo, exit 2;
// the first one only), before anything is read: an axis swept twice, an axis in both
// `mesh` and a sweep (for each sweep in turn), --reserve without --budget or not less than
// it, no META and neither a mesh nor a sweep, META and --model both "-", then no --model (META is
// read to say when it is a model itself). The output is the table (or with `json`, the JSON
// object); empty when an input could not be read or decoded. The diagnostics are the read and
// decode errors, the usage errors the inputs reveal, or the findings (at most
// kMaxReportedErrors, then one line counting the rest, then the summary line). No
// evaluated mesh usable (capacity_exit_code) is an error finding that says why.
CommandResult run_report(const ReportRequest& request);

}  // namespace hpfreeze
