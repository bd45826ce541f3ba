#pragma once
// The report tests' way to a Report: a meta and a model dump from text in memory, decoded and
// built (build_report), every document and decoded value kept alive for the Report's views.

#include <gtest/gtest.h>

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "dumps/plan.h"
#include "json/json_document.h"
#include "meta/meta.h"
#include "report/report.h"
#include "support/documents.h"

namespace hpfreeze::test_support {

inline std::vector<AxisSize> mesh(std::vector<AxisSize> axes) { return axes; }

// The report of the meta text `meta` ("meta.json") and the model dump text `model`
// ("model.json"); a meta that does not decode gives a report whose findings are the
// decoder's errors (what run_report prints instead of a report).
inline Report report_of(const std::string& meta, const std::string& model,
                        const std::optional<std::vector<AxisSize>>& mesh_axes,
                        std::optional<std::size_t> sorted_params = std::nullopt) {
  const JsonDocument& meta_doc = keep(parse_document(meta, "meta.json"));
  const JsonDocument& model_doc = keep(parse_document(model, "model.json"));
  Expected<ModelTree> tree = decode_model_tree(model_doc);
  if (!tree) {
    ADD_FAILURE() << tree.errors().front().message;
    return Report{};
  }
  Expected<FrozenMeta> decoded = decode_meta(meta_doc, "report");
  if (!decoded) {
    Report failed;
    failed.findings = decoded.errors();
    return failed;
  }
  return build_report(keep(std::move(*decoded)), keep(std::move(*tree)), mesh_axes, {},
                      sorted_params);
}

}  // namespace hpfreeze::test_support
