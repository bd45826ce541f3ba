// The text and JSON forms of a report (render_report_text, render_report_json; report.h),
// of a report built from inputs made in memory; the byte counts are worked out by hand
// beside each test.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "report/report.h"
#include "report/report_of.h"
#include "support/documents.h"

namespace hpfreeze {
namespace {

using test_support::mesh;
using test_support::model_json;
using test_support::report_of;

Report small_report() {
  return report_of(
      R"j({"mesh_dim_names": ["tp"], "param_plan": {"a": {"params": {"x": {"tp": "S(0)"}}},)j"
      R"j( "b": {"params": {"w": {"tp": "S(0)"}, "r": {"tp": "R"}}}}})j",
      model_json({{"b.w", "[4, 2]", "bfloat16"},
                  {"b.r", "[2]", "float32"},
                  {"a.x", "[2]", nullptr},
                  {"c.u", "[3]", "int8"}}),
      mesh({{"tp", 2}}));
}

TEST(RenderReport, Json) {
  // b.w: [2, 2] x 2 = 8; b.r: 2 x 4 = 8 (replicated); a.x: [1] x 2 = 2; c.u uncovered: 3.
  // Every rank holds the same: 8 + 8 + 2 + 3 = 21 on each of the 2 ranks. No answer while
  // the uncovered trainable c.u is an error. mesh_dim_names does not name ep: folded.
  const std::string out = render_report_json(small_report(), std::nullopt);
  for (const char* piece : {
           R"j({
  "mesh": {
    "tp": 2
  },
  "mesh_source": "--mesh",
  "plan": "meta",
  "placement_order": [
    "tp"
  ],
  "pipeline": {
    "stack": null,
    "layers": 0,
    "from": null,
    "first_stage": [],
    "last_stage": []
  },
  "counts": {
    "planned_params": 3,
    "replicated_params": 1,
    "uncovered_params": 1,
    "boundaries": 2
  },
  "rank0_bytes": 18,
  "replicated_bytes": 8,
  "unsharded_bytes": 28,
  "uncovered_bytes": 3,
  "boundaries": [
    {
      "fqn": "b",
      "rank0_bytes": 16,
      "params": 2
    },
    {
      "fqn": "a",
      "rank0_bytes": 2,
      "params": 1
    }
  ],
  "params": [
    {
      "fqn": "b.r",
      "shape": [
        2
      ],
      "dtype": "float32",
      "local_shape": [
        2
      ],
      "rank0_bytes": 8,
      "full_bytes": 8,
      "boundary": "b",
      "placements": {
        "tp": "R"
      },
      "replicated": true
    },)j",
           R"j(  "uncovered": [
    {
      "fqn": "c.u",
      "shape": [
        3
      ],
      "dtype": "int8",
      "bytes": 3
    }
  ],
  "optimizer": "none",
  "budget_bytes": null,
  "reserve_bytes": null,
  "zero": {
    "stage": 0,
    "axes": [
      "dp",
      "cp"
    ],
    "expert_axis": null
  },
  "expert_parallel": {
    "layout": "folded",
    "from": "meta"
  },
  "swept": false,
  "answer": null,
  "meshes": [
    {
      "mesh": {
        "tp": 2
      },
      "devices": 2,
      "max_rank_bytes": 21,
      "min_rank_bytes": 21,
      "max_rank": {
        "tp": 0
      },
      "min_rank": {
        "tp": 0
      },
      "stages": [
        {
          "stage": 0,
          "layers": null,
          "max_rank_bytes": 21,
          "min_rank_bytes": 21,
          "max_rank": {
            "tp": 0
          },
          "min_rank": {
            "tp": 0
          }
        }
      ],
      "divisible": true,
      "indivisible": null,
      "refused": null,
      "fits": null,
      "over_by_bytes": null
    }
  ],
  "findings": [
    {
      "severity": "error",
      "code": "HPF305",
      "file": "model.json",
      "pointer": "",
      "message": "1 model parameter is not covered by any planned key (3 B at full size, 1 trainable); it stays whole on every rank"
    },
    {
      "severity": "warning",
      "code": "HPF511",
      "file": "model.json",
      "pointer": "/parameters/a.x",
      "message": "1 parameter has no dtype, counted as bfloat16 (2 bytes); the first is 'a.x'"
    }
  ]
}
)j"}) {
    EXPECT_NE(out.find(piece), std::string::npos) << piece << "\nnot in\n" << out;
  }
  EXPECT_TRUE(out.starts_with("{\n  \"mesh\": {"));
}

TEST(RenderReport, JsonTopCutsParamsOnly) {
  const std::string out = render_report_json(small_report(), 1);
  EXPECT_NE(out.find(R"j("fqn": "b.r")j"), std::string::npos);
  EXPECT_EQ(out.find(R"j("fqn": "b.w")j"), std::string::npos);
  EXPECT_NE(out.find(R"j("fqn": "a",)j"), std::string::npos);  // boundaries stay complete
  EXPECT_NE(render_report_json(small_report(), 0).find("\"params\": []"), std::string::npos);
}

TEST(RenderReport, Text) {
  EXPECT_EQ(render_report_text(small_report(), 10),
            "mesh: tp=2 (from --mesh)\n"
            "no answer: the inputs have 1 error (on stderr)\n"  // the answer first
            "placement order: tp\n"
            "\n"
            "                                        PARAMS  BYTES  EXACT\n"
            "rank 0, planned params                       3   18 B     18\n"
            "  of which replicated                        1    8 B      8\n"
            "planned params at full size                  3   28 B     28\n"
            "uncovered params (whole on every rank)       1    3 B      3\n"
            "rank 0 total                                 4   21 B     21\n"
            "\n"
            // The planner: 16 + 8 + 4 + 3 = 31 B whole; every rank of tp=2 holds 21 B.
            "meshes (worst and best rank over all ranks; uncovered params included):\n"
            "4 params, 31 B whole on one device, optimizer none, no budget\n"
            "MESH  DEVICES  WORST RANK  BEST RANK  BAR                               VERDICT\n"
            "tp=2        2        21 B       21 B  ################################  divides\n"
            "BAR: the worst rank, full at 21 B\n"
            "\n"
            "boundaries (all 2, by rank-0 bytes):\n"
            "  BYTES  PARAMS  BOUNDARY\n"
            "   16 B       2  b\n"
            "    2 B       1  a\n"
            "\n"
            "params (all 3, by rank-0 bytes; BYTES: rank 0's weights only):\n"
            "  BYTES  DTYPE     SHAPE   LOCAL   PLACEMENTS  PARAM\n"
            "    8 B  float32   [2]     [2]     tp=R        b.r\n"
            "    8 B  bfloat16  [4, 2]  [2, 2]  tp=S(0)     b.w\n"
            "    2 B  -         [2]     [1]     tp=S(0)     a.x\n"
            "\n"
            "uncovered params (all 1, by bytes):\n"
            "  BYTES  DTYPE  SHAPE  PARAM\n"
            "    3 B  int8   [3]    c.u\n"
            "\n"
            "findings: 1 error, 1 warning, 0 notes (on stderr)\n");
}

TEST(RenderReport, TextTopCutsListsAndCountsTheRest) {
  const std::string out = render_report_text(small_report(), 1);
  EXPECT_NE(out.find("boundaries (top 1 of 2, by rank-0 bytes):\n"
                     "  BYTES  PARAMS  BOUNDARY\n"
                     "   16 B       2  b\n"
                     "  ... 1 more, 2 B\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("params (top 1 of 3, by rank-0 bytes; BYTES: rank 0's weights only):\n"),
            std::string::npos);
  EXPECT_EQ(out.find("b.w"), std::string::npos);
  const std::string none = render_report_text(small_report(), 0);
  EXPECT_EQ(none.find("boundaries"), std::string::npos);
  EXPECT_EQ(none.find("\nparams ("), std::string::npos);
  EXPECT_EQ(none.find("by bytes"), std::string::npos);  // the uncovered list
}

TEST(RenderReport, TextWithoutMeshAndRootBoundary) {
  const Report r = report_of(R"j({"param_plan": {"": {"params": {"w": {}}}}})j",
                             model_json({{"w", "[2]", "bfloat16"}}), std::nullopt);
  const std::string out = render_report_text(r, 10);
  EXPECT_EQ(out.substr(0, 40), "mesh: none, every axis counts as size 1\n");
  EXPECT_NE(out.find("    4 B       1  (root)\n"), std::string::npos) << out;
  EXPECT_NE(out.find("    4 B  bfloat16  [2]    [2]    -           w\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace hpfreeze
