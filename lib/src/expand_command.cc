#include "hpfreeze/expand_command.h"

#include <utility>

#include "hpfreeze/freeze.h"
#include "hpfreeze/io.h"
#include "hpfreeze/json_document.h"
#include "hpfreeze/plan.h"

namespace hpfreeze {

Expected<std::string> render_expand(const std::string& plan_path) {
  Expected<InputFile> input = read_input(plan_path);
  if (!input) return std::move(input.errors());
  Expected<JsonDocument> document =
      parse_json_document(input->display_name, std::move(input->bytes));
  if (!document) return std::move(document.errors());
  Expected<PlanDump> plan = decode_plan_dump(*document);
  if (!plan) return std::move(plan.errors());
  std::string out;
  for (const std::string& fqn : expand_sharded_params(*plan)) {
    out += fqn;
    out += '\n';
  }
  return out;
}

}  // namespace hpfreeze
