#!/usr/bin/env python3
"""Generates the golden cases of `hpfreeze report` in testdata/report/ (the folders with `args`).

    make_report_cases.py [--out DIR] [--check]

Each case is written whole: `args`, its inputs (their text below, as a reader would write
them; the safetensors file from its header), `expected.out`, `expected.err` and
`expected.status`. expected.out is what tests/e2e/capacity_model.py (the independent
calculator, which shares no code with hpfreeze) makes of the inputs and the command line:
with --json the report document laid out as docs/formats.md documents it (json.dumps with
indent 2 and a newline), else the text view of docs/cli.md and docs/capacity.md. The findings are
the case's own, written by hand from the documented texts (docs/cli.md, "report"), in the
order the report emits them, each with its code (docs/cli.md, "Finding codes"); expected.err
is their lines (`hpfreeze: SEVERITY: FILE: POINTER: message [CODE]`), errors first, then the
summary line. A case of usage errors (exit 2)
prints them alone. Every case is also checked against values worked out by hand
(`hand`), so a calculator bug cannot silently become a golden expectation. hpfreeze is
never run. `--check` regenerates into a temporary directory and fails if a byte of DIR
differs, or DIR holds a case folder this script does not make.
"""

from __future__ import annotations

import argparse
import json
import shutil
import struct
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "e2e"))
import capacity_model as calc  # noqa: E402

EXPECTED = ("expected.out", "expected.err", "expected.status")


@dataclass
class Case:
    name: str
    args: str  # the words after `hpfreeze report`, run inside the case folder
    inputs: dict[str, str | bytes]
    # (severity, code, file, pointer, message), in the order the report emits them.
    findings: list[tuple[str, str, str, str, str]] = field(default_factory=list)
    usage_errors: list[str] = field(default_factory=list)  # exit 2, nothing on stdout
    # Values worked out by hand: a path into the report document
    # ("meshes.0.max_rank_bytes") and what it must be; and lines the text view must have.
    hand: dict[str, object] = field(default_factory=dict)
    hand_lines: list[str] = field(default_factory=list)


def safetensors(tensors: list[tuple[str, str, list[int]]]) -> bytes:
    """A safetensors file: the 8-byte little-endian header length, json.dumps of the header
    (__metadata__, then each tensor at the next data offsets), then zero bytes of data."""
    header: dict[str, object] = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, code, shape in tensors:
        size = calc.DTYPES[calc.SAFETENSORS_DTYPES[code]][0]
        for d in shape:
            size *= d
        header[name] = {"dtype": code, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    text = json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + bytes(offset)


FINDINGS_META = """\
{
  "mesh_dim_names": ["tp"],
  "param_plan": {
    "attn": {"params": {"qkv": {"tp": "S(0)"}, "out": {"tp": "S(1)", "cp": "R"}}},
    "mlp": {"params": {"up": {"tp": "S(0)"}, "gone": {"tp": "R"}}}
  }
}
"""
FINDINGS_MODEL = """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net", "attn": "Attention", "mlp": "MLP"},
  "parameters": {
    "attn.qkv": {"shape": [6, 4], "dtype": "bfloat16"},
    "attn.out": {"shape": [4, 6]},
    "mlp.up": {"shape": [5, 4], "dtype": "float32"},
    "norm.w": {"shape": [4], "dtype": "float32"}
  }
}
"""
SWEEP_META = """\
{
  "mesh_dim_names": ["tp"],
  "param_plan": {
    "embed": {"params": {"weight": {"tp": "S(0)"}}},
    "proj": {"params": {"weight": {"tp": "S(1)"}}},
    "norm": {"params": {"weight": {"tp": "R"}}}
  }
}
"""
SWEEP_MODEL = """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net", "embed": "Embedding", "proj": "Linear", "norm": "Norm"},
  "parameters": {
    "embed.weight": {"shape": [8, 4], "dtype": "bfloat16"},
    "proj.weight": {"shape": [6, 4], "dtype": "float32"},
    "norm.weight": {"shape": [4], "dtype": "bfloat16"}
  }
}
"""
KNOWN_AXES = ("(the inputs know cp, dp, pp, tp; --replica-axis NAME adds an axis that only holds "
              "replicas)")


def deepseek_small() -> tuple[str, str]:
    """A DeepSeek-V3-like model dump and its meta, small: an embedding, a stack of 5 layers
    (layer 0 dense, 1-3 with 4 stacked experts split on ep, 4 an MTP block numbered in the
    stack with its own embedding, projection and head), a norm and a head; ep folded into
    the dense region (mesh_dim_names names tp only), dp=2 tp=2 ep=2 pp=1."""
    modules = {"": "DeepseekV3ForCausalLM", "model": "DeepseekV3Model",
               "model.embed_tokens": "Embedding", "model.layers": "ModuleList"}
    params: dict[str, dict] = {"model.embed_tokens.weight": {"shape": [64, 16]}}
    plan: dict[str, dict] = {"model.embed_tokens": {"params": {"weight": {"tp": "S(0)"}}}}
    for i in range(5):
        layer = f"model.layers.{i}"
        modules[layer] = "DeepseekV3DecoderLayer"
        modules[f"{layer}.self_attn"] = "Attention"
        modules[f"{layer}.mlp"] = "MLP" if i == 0 else "MoE"
        params[f"{layer}.self_attn.q_proj.weight"] = {"shape": [16, 16]}
        plan[f"{layer}.self_attn"] = {"params": {"q_proj.weight": {"tp": "S(0)"}}}
        if i == 0:
            params[f"{layer}.mlp.up_proj.weight"] = {"shape": [32, 16]}
            plan[f"{layer}.mlp"] = {"params": {"up_proj.weight": {"tp": "S(0)"}}}
        else:
            params[f"{layer}.mlp.gate.weight"] = {"shape": [4, 16]}
            params[f"{layer}.mlp.experts.gate_up_proj"] = {"shape": [4, 32, 16]}
            plan[f"{layer}.mlp"] = {"params": {"gate.weight": {"tp": "R"},
                                               "experts.gate_up_proj": {"ep": "S(0)"}}}
    mtp = "model.layers.4"
    for name, shape in (("embed_tokens.weight", [64, 16]), ("eh_proj.weight", [16, 32]),
                        ("shared_head.head.weight", [64, 16])):
        params[f"{mtp}.{name}"] = {"shape": shape}
        plan.setdefault(mtp, {"params": {}})["params"][name] = {"tp": "S(0)"}
    modules.update({"model.norm": "RMSNorm", "lm_head": "Linear"})
    params["model.norm.weight"] = {"shape": [16]}
    params["lm_head.weight"] = {"shape": [64, 16]}
    plan["model.norm"] = {"params": {"weight": {"tp": "R"}}}
    plan["lm_head"] = {"params": {"weight": {"tp": "S(0)"}}}
    for p in params.values():
        p["dtype"] = "bfloat16"
    meta = {"mesh_dim_names": ["tp"],
            "parallel_dims": {"dp_size": 2, "tp_size": 2, "ep_size": 2, "pp_size": 1},
            "param_plan": plan}
    model = {"format": "hpfreeze.model/v1", "modules": modules, "parameters": params}
    return json.dumps(meta, indent=1) + "\n", json.dumps(model, indent=1) + "\n"


DEEPSEEK_META, DEEPSEEK_MODEL = deepseek_small()
TIED_META = """\
{
  "mesh_dim_names": ["tp"],
  "tied_pairs": [["transformer.wte.weight", "lm_head.weight"]],
  "param_plan": {
    "transformer.wte": {"params": {"weight": {"tp": "S(0)"}}},
    "transformer.h.0.attn": {"params": {"w": {"tp": "S(0)"}}},
    "transformer.h.1.attn": {"params": {"w": {"tp": "S(0)"}}},
    "transformer.h.2.attn": {"params": {"w": {"tp": "S(0)"}}},
    "transformer.ln_f": {"params": {"weight": {"tp": "R"}}}
  }
}
"""
BIG_MODEL = """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net"},
  "parameters": {
    "w": {"shape": [65536, 65536], "dtype": "bfloat16"},
    "b": {"shape": [65536], "dtype": "float32"}
  }
}
"""
EXPERTS_META = """\
{
  "mesh_dim_names": ["tp"],
  "param_plan": {
    "x": {"params": {"w": {"ep": "S(0)"}}},
    "z": {"params": {"e": {"tp": "R"}}}
  }
}
"""
EXPERTS_MODEL = """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net", "x": "Experts", "z": "Empty"},
  "parameters": {
    "x.w": {"shape": [4, 6], "dtype": "bfloat16"},
    "z.e": {"shape": [0, 0], "dtype": "bfloat16"}
  }
}
"""

CASES = [
    Case(
        # Every severity of finding, a dim that does not divide, a parameter not in the model,
        # a missing dtype, an uncovered trainable parameter, an axis not in the mesh; no answer
        # while an error stands (exit 1).
        "findings", "meta.json --model model.json --mesh tp=2 --json",
        {"meta.json": FINDINGS_META, "model.json": FINDINGS_MODEL},
        findings=[
            ("note", "HPF503", "meta.json", "/param_plan/attn/params/out/cp",
             "axis 'cp' is not in the mesh (--mesh); its placements change nothing"),
            ("error", "HPF501", "meta.json", "/param_plan/mlp/params/up/tp",
             "parameter 'mlp.up' dim 0 (size 5) is not divisible by 2: S(0) on axis 'tp' of "
             "size 2"),
            ("error", "HPF303", "meta.json", "/param_plan/mlp/params/gone",
             "parameter 'mlp.gone' is not in the model (model.json)"),
            ("warning", "HPF511", "model.json", "/parameters/attn.out",
             "1 parameter has no dtype, counted as bfloat16 (2 bytes); the first is "
             "'attn.out'"),
            ("error", "HPF305", "model.json", "",
             "1 model parameter is not covered by any planned key (16 B at full size, 1 "
             "trainable); it stays whole on every rank"),
        ],
        # tp=2: attn.qkv [6,4] bf16 S(0) -> [3,4], 24 of 48 B; attn.out [4,6] (bf16) S(1) ->
        # [4,3], 24 of 48 B; mlp.up [5,4] f32 S(0): torch.chunk(5, 2) = 3, 2 -> [3,4], 48 of
        # 80 B; norm.w [4] f32 uncovered, 16 B. Rank 0: 24+24+48+16 = 112, rank 1: 96.
        hand={"rank0_bytes": 96, "unsharded_bytes": 176, "uncovered_bytes": 16,
              "params.0.local_shape": [3, 4], "meshes.0.max_rank_bytes": 112,
              "meshes.0.min_rank_bytes": 96, "meshes.0.indivisible.size": 5, "answer": None},
    ),
    Case(
        # A sweep in device order, a budget and its fits, an indivisible mesh, the answer, the
        # note on a budget without a unit, --top cutting params only.
        "sweep_budget",
        "meta.json --model model.json --sweep tp=4,1,3,2 --budget 64 --top 2 --json",
        {"meta.json": SWEEP_META, "model.json": SWEEP_MODEL},
        findings=[("note", "HPF515",
                   "", "", "--budget 64 is 64 B, under 1 MiB; did you mean 64GiB?")],
        # The table counts swept tp as size 1: 64 + 96 + 8 = 168 B. tp=1: 168 (over by 104);
        # tp=2: 32+48+8 = 88 (over by 24); tp=3: embed 8 rows by 3 = 3, 3, 2 -> rank 0
        # 24+48+8 = 80, rank 2 16+0+8 = 24, indivisible, over by 16; tp=4: 16+24+8 = 48, fits.
        hand={"rank0_bytes": 168, "meshes.0.over_by_bytes": 104, "meshes.1.over_by_bytes": 24,
              "meshes.2.max_rank_bytes": 80, "meshes.2.min_rank_bytes": 24,
              "meshes.3.max_rank_bytes": 48, "answer.devices": 4, "counts.planned_params": 3},
    ),
    Case(
        # docs/capacity.md's folded worked example: ep folded into the dense region, the
        # expert view, ZeRO-3 over dp x cp and over edp, the mesh from parallel_dims.
        "folded_zero3", "meta.json --model model.json --optimizer adam --zero 3 --json",
        {"meta.json": """\
{
  "mesh_dim_names": ["tp"],
  "parallel_dims": {"dp_size": 1, "cp_size": 1, "tp_size": 4, "ep_size": 2, "pp_size": 1},
  "param_plan": {
    "m": {"params": {"a": {"tp": "S(0)"}}},
    "x": {"params": {"w": {"ep": "S(0)", "tp": "R"}}}
  }
}
""", "model.json": """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net", "m": "Linear", "x": "Experts"},
  "parameters": {
    "m.a": {"shape": [8, 4], "dtype": "bfloat16"},
    "x.w": {"shape": [4, 6, 2], "dtype": "bfloat16"}
  }
}
"""},
        # adam bf16: 16 B an element, all split at stage 3. m.a [8,4] tp=4 -> [2,4], group
        # dp x cp = 1: 8 x 16 = 128 of 512; x.w [4,6,2] ep=2 -> [2,6,2], group edp = tp 4 /
        # ep 2 = 2 -> [1,6,2]: 12 x 16 = 192 of 768. Every rank 320.
        hand={"rank0_bytes": 320, "unsharded_bytes": 1280, "meshes.0.max_rank_bytes": 320,
              "meshes.0.min_rank_bytes": 320, "meshes.0.expert_mesh.edp": 2,
              "zero.expert_axis": "edp"},
    ),
    Case(
        # A safetensors checkpoint as the model (dtype codes, a non-float tensor frozen), the
        # axis layout (mesh_dim_names names ep), ZeRO-1 over dp, an uncovered frozen
        # parameter as a warning.
        "checkpoint_zero1",
        "meta.json --model model.safetensors --mesh tp=2,ep=2,dp=2 --optimizer adamw --zero 1 "
        "--zero-axis dp --json",
        {"meta.json": """\
{
  "mesh_dim_names": ["tp", "ep"],
  "param_plan": {
    "m": {"params": {"w": {"tp": "S(0)", "ep": "R"}, "b": {"tp": "R"}}},
    "ex": {"params": {"w": {"ep": "S(0)"}}}
  }
}
""", "model.safetensors": safetensors([("m.w", "BF16", [8, 4]), ("m.b", "F32", [8]),
                                       ("ex.w", "BF16", [4, 2]), ("step", "I64", [1])])},
        findings=[("warning", "HPF305", "model.safetensors", "",
                   "1 model parameter is not covered by any planned key (8 B at full size, 0 "
                   "trainable); it stays whole on every rank but for the ZeRO split")],
        # adamw, stage 1 splits the state over dp=2: m.w [8,4] bf16 tp=2 -> [4,4]: 16 x 4 +
        # 8 x 12 = 160 of 512; m.b [8] f32: 8 x 8 + 4 x 8 = 96 of 128; ex.w [4,2] bf16 ep=2 ->
        # [2,2]: 4 x 4 + 2 x 12 = 40 of 128; step [1] int64, frozen: 8. Every rank 304.
        hand={"params.0.rank0_bytes": 160, "params.1.rank0_bytes": 96,
              "params.2.rank0_bytes": 40, "uncovered.0.bytes": 8,
              "meshes.0.max_rank_bytes": 304, "meshes.0.min_rank_bytes": 304},
    ),
    Case(
        # No META: every parameter replicated and uncovered, no finding about it; ZeRO-2
        # over a swept dp.
        "no_meta_zero2", "--model model.json --sweep dp=2,1 --optimizer adam --zero 2 --json",
        {"model.json": """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net"},
  "parameters": {
    "w": {"shape": [6, 4], "dtype": "bfloat16"},
    "b": {"shape": [6], "dtype": "float32"},
    "frozen": {"shape": [3], "dtype": "bfloat16", "requires_grad": false}
  }
}
"""},
        # adam: w [6,4] bf16 24 x 16 = 384, b [6] f32 6 x 16 = 96, frozen [3] bf16 6: 486 on
        # dp=1. dp=2 splits gradients and state: w 24 x 2 + 12 x 14 = 216, b 6 x 4 + 3 x 12 =
        # 60, frozen 6: 282.
        hand={"plan": "replicated", "meshes.0.max_rank_bytes": 486,
              "meshes.1.max_rank_bytes": 282, "uncovered_bytes": 486},
    ),
    Case(
        # sweep_budget's run as the text view: the mesh line and the rank-0 block of a sweep,
        # the meshes table with its bars (a log scale from 48 B to 168 B, '|' at 64 B), the
        # answer, --top cutting boundaries ("... 1 more") and params.
        "sweep_budget_text", "meta.json --model model.json --sweep tp=4,1,3,2 --budget 64 --top 2",
        {"meta.json": SWEEP_META, "model.json": SWEEP_MODEL},
        findings=[("note", "HPF515",
                   "", "", "--budget 64 is 64 B, under 1 MiB; did you mean 64GiB?")],
        hand={"meshes.3.max_rank_bytes": 48},
        hand_lines=["smallest mesh that fits: tp=4 (4 devices, worst rank 48 B of 64 B)",
                    "rank 0 total                                 3  168 B    168",
                    "  ... 1 more, 8 B"],
    ),
    Case(
        # docs/capacity.md's hand example in the text view, swept over dp with ZeRO-3 and a
        # 200-byte budget: the ZeRO words of the header, the parameter ZeRO-3 gathers, the
        # rank-0 line of a ZeRO run whose mesh has no dp.
        "zero3_text",
        "meta.json --model model.json --mesh tp=2 --sweep dp=1,2,4 --optimizer adam --zero 3 "
        "--budget 200",
        {"meta.json": """\
{
  "mesh_dim_names": ["tp", "dp"],
  "param_plan": {
    "": {"params": {"a": {"tp": "S(0)"}, "b": {"tp": "R"}, "c": {"tp": "S(-1)"}}}
  }
}
""", "model.json": """\
{
  "format": "hpfreeze.model/v1",
  "modules": {"": "Net"},
  "parameters": {
    "a": {"shape": [8, 4], "dtype": "bfloat16"},
    "b": {"shape": [6], "dtype": "float32"},
    "c": {"shape": [3, 2], "dtype": "bfloat16"}
  }
}
"""},
        findings=[("note", "HPF515",
                   "", "", "--budget 200 is 200 B, under 1 MiB; did you mean 200GiB?")],
        # 16 B an element with adam, all split at stage 3: dp=1 holds a [4,4], b [6], c [2,2]
        # on tp rank 0: 16 x 16 + 6 x 16 + 4 x 16 = 416; dp=4 chunks dim 0 of each: 4 x 16 +
        # 2 x 16 + 2 x 16 = 128, and its best rank 64 (docs/capacity.md, "ZeRO").
        hand={"meshes.0.max_rank_bytes": 416, "meshes.2.max_rank_bytes": 128,
              "meshes.2.min_rank_bytes": 64, "unsharded_bytes": 704},
        # docs/capacity.md, "Text view".
        hand_lines=[
            "3 params, 704 B whole on one device, optimizer adam, ZeRO stage 3 (the weights, "
            "gradients and optimizer state split over dp, 1 to 4 ranks), budget 200 B",
            "fits counts weights, gradients and optimizer state only: no activations, "
            "all-gather and bucket buffers or allocator slack, nor the parameter ZeRO-3 "
            "gathers whole for compute (on tp=2 dp=4 the largest, a, is 32 B)",
            "smallest mesh that fits: tp=2 dp=4 (8 devices, worst rank 128 B of 200 B)",
            "MESH       DEVICES  WORST RANK  BEST RANK  BAR                                VERDICT",
            "tp=2 dp=1        2       416 B      384 B  #############|###################  over "
            "by 216 B",
            "tp=2 dp=2        4       208 B      176 B  #############|#..................  over "
            "by 8 B",
            "tp=2 dp=4        8       128 B       64 B  #............|...................  fits",
            "BAR: the worst rank, log scale from 1 '#' at 128 B to 32 at 416 B; '|' marks the "
            "budget"],
    ),
    Case(
        # Axes the inputs do not know: a usage error per axis with the nearest known one
        # (equal ignoring case first, else one edit for a short name, the first of equals),
        # exit 2, no report. The known axes: mesh_dim_names tp, the placements' cp, the ZeRO
        # axes dp, cp, and pp, which splits the layer stack.
        "unknown_axis", "meta.json --model model.json --mesh TP=2,pp=4,ccp=2 --json",
        {"meta.json": FINDINGS_META, "model.json": FINDINGS_MODEL},
        usage_errors=["--mesh: unknown axis 'TP'; did you mean 'tp'? " + KNOWN_AXES,
                      "--mesh: unknown axis 'ccp'; did you mean 'cp'? " + KNOWN_AXES],
    ),
    Case(
        # Without a META no plan shards anything: an axis the inputs lack says so, rather than
        # guessing a near name; one equal to a known axis but for case still gets the guess.
        "no_meta_unknown_axis", "--model model.json --mesh tp=8,DP=2,pp=2",
        {"model.json": FINDINGS_MODEL},
        usage_errors=["--mesh: unknown axis 'tp': without a META every parameter is replicated: "
                      "tp shards nothing; give the plan's meta",
                      "--mesh: unknown axis 'DP'; did you mean 'dp'? (the inputs know cp, dp, pp; "
                      "--replica-axis NAME adds an axis that only holds replicas)"],
    ),
    Case(
        # A DeepSeek-V3-like model over pp 1, 2, 3: the stack model.layers found in the model
        # tree (the MTP block model.layers.4 one of its 5 layers; the numbered experts inside
        # a layer are no stack), split 3 | 2 and 2 | 2 | 1, the embedding on the first stage,
        # the norm and the head on the last; the answer's stages, the meshes table's STAGE.
        "stages_deepseek_text",
        "meta.json --model model.json --sweep pp=1,2,3 --optimizer adam --zero 1 --budget 32KiB",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        findings=[("note", "HPF515",
                   "", "", "--budget 32KiB is 32.0 KiB, under 1 MiB; did you mean "
                   "32GiB?")],
        # tp=2 dp=2 ep=2, adam 16 B an element, ZeRO-1 over dp (edp = dp x tp / ep = 2 for
        # the experts): per rank embed [32,16] 512 elements, q [8,16] 128, up [16,16] 256, gate
        # [4,16] 64, experts [2,32,16] 1024, the MTP block's embed and head 512 each and
        # eh_proj [8,32] 256, norm 16, head 512; 4 B kept, 12 B split in halves (dim 0 even),
        # so 10 B an element. pp=3 (2 | 2 | 1): the last stage holds layer 4 (q, gate,
        # experts, MTP) + norm + head = 128 + 64 + 1024 + 1280 + 16 + 512 = 3024 elements,
        # 30,240 B, the worst; pp=1 holds 7568 elements, 75,680 B.
        hand={"meshes.0.max_rank_bytes": 75680, "meshes.2.max_rank_bytes": 30240,
              "meshes.0.stages.0.layers": [0, 4], "meshes.1.stages.1.layers": [3, 4],
              "meshes.2.stages.2.layers": [4, 4], "pipeline.layers": 5,
              "pipeline.first_stage": ["model.embed_tokens.weight"],
              "pipeline.last_stage": ["model.norm.weight", "lm_head.weight"]},
        hand_lines=["layer stack: model.layers, 5 layers (found in the model); before it, on "
                    "the first stage: model.embed_tokens.weight; after it, on the last: "
                    "model.norm.weight, lm_head.weight"],
    ),
    Case(
        # --pp-layers 2,3 on pp=2, the JSON: each mesh's stages, the pipeline member.
        "stages_deepseek_json",
        "meta.json --model model.json --mesh dp=2,tp=2,ep=2,pp=2 --pp-layers 2,3 --optimizer "
        "adam --zero 1 --json",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        hand={"meshes.0.stages.0.layers": [0, 1], "meshes.0.stages.1.layers": [2, 4],
              "pipeline.stack": "model.layers", "pipeline.from": "model"},
    ),
    Case(
        # A checkpoint: no order, so the embedding (wte) goes first and the final norm last;
        # the head is the embedding's tied other name (tied_pairs) and the checkpoint holds
        # the embedding alone: the last stage holds it too.
        "stages_tied_checkpoint",
        "meta.json --model model.safetensors --mesh tp=2,pp=2 --optimizer sgd --json",
        {"meta.json": TIED_META,
         "model.safetensors": safetensors([("transformer.h.0.attn.w", "BF16", [8, 8]),
                                           ("transformer.h.1.attn.w", "BF16", [8, 8]),
                                           ("transformer.h.2.attn.w", "BF16", [8, 8]),
                                           ("transformer.ln_f.weight", "F32", [8]),
                                           ("transformer.wte.weight", "BF16", [32, 8])])},
        # sgd: bf16 2 + 2 + 4 = 8 B an element, f32 4 + 4 = 8. tp=2: wte [16,8] 1024 B, each
        # layer [4,8] 256 B, ln_f 64 B. Split 2 | 1: stage 0 wte + h.0 + h.1 = 1536 B; stage 1
        # h.2 + ln_f + wte (tied) = 1344 B.
        hand={"meshes.0.stages.0.max_rank_bytes": 1536, "meshes.0.stages.1.max_rank_bytes": 1344,
              "pipeline.first_stage": ["transformer.wte.weight"],
              "pipeline.last_stage": ["transformer.ln_f.weight"]},
    ),
    Case(
        # pp > 1 and no stack in the model: such a mesh cannot be laid out, and the run is in
        # error (exit 1).
        "stages_without_a_stack", "meta.json --model model.json --sweep pp=1,2 --json",
        {"meta.json": SWEEP_META, "model.json": SWEEP_MODEL},
        findings=[("error", "HPF517", "model.json", "",
                   "pp > 1 splits the layer stack into pipeline stages, and the model has none "
                   "(no modules PREFIX.0 .. PREFIX.N outside a numbered module); --pp-stack "
                   "PREFIX names one"),
                  ("note", "HPF503", "meta.json", "/param_plan/embed/params/weight/tp",
                   "axis 'tp' is not in the mesh (parallel_dims); its placements change "
                   "nothing")],
        hand={"meshes.1.indivisible.axis": "pp", "meshes.1.stages": None},
    ),
    Case(
        "pp_layers_wrong_sum",
        "meta.json --model model.json --mesh pp=2 --pp-layers 2,2",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        usage_errors=["--pp-layers: the numbers sum to 4; the stack model.layers has 5 layers"],
    ),
    Case(
        "pp_layers_with_a_sweep",
        "meta.json --model model.json --sweep pp=1,2 --pp-layers 5",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        usage_errors=["--pp-layers: --sweep pp has 2 sizes; one split is for one pp size"],
    ),
    Case(
        "pp_stack_not_in_the_model",
        "meta.json --model model.json --mesh pp=2 --pp-stack model.blocks",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        usage_errors=["--pp-stack: the model has no layer 'model.blocks.0' (no module or "
                      "parameter is named 'model.blocks'.N)"],
    ),
    Case(
        "replica_axis_pp", "meta.json --model model.json --replica-axis pp",
        {"meta.json": SWEEP_META, "model.json": SWEEP_MODEL},
        usage_errors=["--replica-axis: pp is no replica axis: it splits the layer stack into "
                      "pipeline stages; give pp in --mesh or --sweep as it is (see 'hpfreeze "
                      "report --help')"],
    ),
    Case(
        # ZeRO-1 keeps weights and gradients whole: no dp can fit, and the answer says so.
        "zero1_never_fits",
        "--model model.json --sweep dp=1,8,64 --optimizer adam --zero 1 --budget 16GiB",
        {"model.json": BIG_MODEL},
        findings=[("error", "HPF514",
                   "", "", "no mesh fits the 16.0 GiB budget; closest: dp=64 (64 "
                   "devices, worst rank 16.8 GiB, over by 768.5 MiB); ZeRO-1 keeps weights and "
                   "gradients whole: at least 16.0 GiB a rank at any dp; shard the model (tp, "
                   "ep, pp) or use --zero 3")],
        # w [65536, 65536] bf16: 2^32 elements, 4 B kept (weight, gradient) = 16 GiB, and
        # 12 B split; b [65536] f32 kept 8 B. At any dp over 16 GiB.
        hand={"meshes.2.max_rank_bytes": (1 << 34) + 12 * (1 << 32) // 64 + 8 * 65536
              + 8 * 1024},
        hand_lines=["no mesh fits the 16.0 GiB budget; closest: dp=64 (64 devices, worst rank "
                    "16.8 GiB, over by 768.5 MiB); ZeRO-1 keeps weights and gradients whole: at "
                    "least 16.0 GiB a rank at any dp; shard the model (tp, ep, pp) or use --zero "
                    "3"],
    ),
    Case(
        # A budget in powers of 1000 (a note with its GiB reading), a reserve kept from it,
        # and an answer within 5 % of what model states may use (a note).
        "budget_reserve_near",
        "--model model.json --mesh dp=2 --optimizer adam --zero 3 --budget 36GB --reserve 1GiB",
        {"model.json": BIG_MODEL},
        # 36 x 10^9 B less 2^30 is 34,926,258,176 B (32.5 GiB) for model states; dp=2 holds
        # half of 16 B x (2^32 + 2^16) elements: 34,360,262,656 B, 98.3 % of it, 565,995,520 B
        # (539.8 MiB) left.
        findings=[("note", "HPF518",
                   "", "", "--budget 36GB is 36 x 10^9 bytes, 33.5 GiB; a device sold "
                   "as 36 GB mostly has 36 GiB: write 36GiB"),
                  ("note", "HPF519",
                   "", "", "the answer, dp=2, uses 98.3 % of the 32.5 GiB model states "
                   "may use on its worst rank: 539.8 MiB is left for activations and buffers, "
                   "which fits does not count")],
        hand={"reserve_bytes": 1 << 30, "budget_bytes": 36 * 10**9,
              "meshes.0.max_rank_bytes": 34360262656},
    ),
    Case(
        # --recipe megatron, its distributed optimizer (--zero 1) over pp 1 and 2: the header
        # names the recipe.
        "recipe_megatron_text",
        "meta.json --model model.json --sweep pp=1,2 --optimizer adam --recipe megatron --zero 1 "
        "--budget 96KiB",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        findings=[("note", "HPF515",
                   "", "", "--budget 96KiB is 96.0 KiB, under 1 MiB; did you mean "
                   "96GiB?")],
        # tp=2 dp=2 ep=2: 7568 elements a rank at pp=1 (stages_deepseek_text), each a bf16
        # weight (2 B) and an fp32 main gradient (4 B) whole, and 12 B of master and moments
        # in flat shares over dp = 2 (dense) or edp = 2 (experts): 12 B an element, 90,816 B.
        # pp=2 (3 | 2): the last stage layers 3-4, the norm and the head: q 2 x 128, gate 2 x
        # 64, experts 2 x 1024, the MTP block 1280, norm 16, head 512 = 4240 elements, 50,880 B.
        hand={"meshes.0.max_rank_bytes": 90816, "meshes.1.stages.1.max_rank_bytes": 50880,
              "recipe": "megatron"},
        # Whole: 14,864 elements of 18 B (2 + 4 + 4 + 8), 267,552 B.
        hand_lines=["20 params, 261.3 KiB whole on one device, optimizer adam, recipe megatron, "
                    "ZeRO stage 1 (the optimizer state split over dp, 2 ranks; expert parameters "
                    "over edp, 2 ranks), budget 96.0 KiB"],
    ),
    Case(
        # --recipe fsdp2 at ZeRO-3 where an expert's dim 0 (one local expert) is smaller than
        # its edp group: a note, and the padded chunks every rank allocates.
        "recipe_fsdp2_idle_experts",
        "meta.json --model model.json --mesh dp=4,tp=2,ep=4 --optimizer adam --recipe fsdp2 "
        "--zero 3 --json",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        findings=[("note", "HPF520", "", "", "1 of 2 ranks of the expert group hold none of "
                   "model.layers.1.mlp.experts.gate_up_proj's optimizer state (3 more expert "
                   "tensors split so); --expert-zero-dim 1 spreads it")],
        # experts [4,32,16] by ep=4: [1,32,16], 512 elements; over edp = 8 / 4 = 2 the first
        # rank holds it whole, the second none of its master and moments (12 B) but the padded
        # weight and gradient (4 B): 512 x 16 = 8192 B on edp 0, 512 x 4 = 2048 B on edp 1.
        hand={"params.0.rank0_bytes": 8192, "recipe": "fsdp2"},
    ),
    Case(
        # The same with --expert-zero-dim 1: dim 1 (32 rows) splits 16 | 16, no note; the
        # header says where the experts are chunked.
        "recipe_fsdp2_expert_dim",
        "meta.json --model model.json --mesh dp=4,tp=2,ep=4 --optimizer adam --recipe fsdp2 "
        "--zero 3 --expert-zero-dim 1 --top 0",
        {"meta.json": DEEPSEEK_META, "model.json": DEEPSEEK_MODEL},
        # 16 B an element, all split at ZeRO-3 over dp = 4 (dense, every dim 0 even) and edp
        # = 2 (experts [1,32,16] on dim 1: 16 rows): embed 128, q 5 x 32, up 64, gate 4 x 16,
        # experts 4 x 256, the MTP block 128 + 64 + 128, norm 4, head 128 elements: 1892 x 16
        # = 30,272 B on every rank; whole 14,864 x 16 = 237,824 B.
        hand={"zero.expert_dim": 1, "meshes.0.max_rank_bytes": 30272,
              "meshes.0.min_rank_bytes": 30272},
        hand_lines=["20 params, 232.3 KiB whole on one device, optimizer adam, recipe fsdp2, ZeRO "
                    "stage 3 (the weights, gradients and optimizer state split over dp, 4 ranks; "
                    "expert parameters over edp, 2 ranks, on dim 1), no budget"],
    ),
    Case(
        # DeepSpeed's estimator at ZeRO-3 on a replicated model: 18 B an element split
        # evenly, and 4 B an element of the module owning the most, on every rank.
        "recipe_deepspeed_zero3_text",
        "--model model.json --sweep dp=1,2,4 --optimizer adam --recipe deepspeed --zero 3 "
        "--budget 1KiB",
        {"model.json": SWEEP_MODEL},
        findings=[("note", "HPF515",
                   "", "", "--budget 1KiB is 1.0 KiB, under 1 MiB; did you mean 1GiB?")],
        # embed [8,4] bf16 2 + 4 + 4 + 8 = 18 B x 32 = 576; proj [6,4] f32 4 + 4 + 8 = 16 B x
        # 24 = 384; norm [4] bf16 18 x 4 = 72: 1032 B over dp, and 4 x 32 (embed) = 128 B:
        # dp=1 1160, dp=2 644, dp=4 386.
        hand={"meshes.0.max_rank_bytes": 1160, "meshes.1.max_rank_bytes": 644,
              "meshes.2.max_rank_bytes": 386, "answer.devices": 2},
        hand_lines=["fits counts weights, gradients and optimizer state, and what ZeRO-3 gathers "
                    "for compute as DeepSpeed's estimator does (4 B an element of the module "
                    "owning the most): no activations, all-gather and bucket buffers or "
                    "allocator slack",
                    "rank 0 below counts weights, gradients and optimizer state (adam, recipe "
                    "deepspeed), after ZeRO stage 3 over no axis of the mesh; LOCAL is the plan's "
                    "piece before it, as the meshes table does but for what ZeRO-3 gathers"],
    ),
    Case(
        # DeepSpeed's estimator at ZeRO-2: 2P whole and 18P/N for bf16 (a 16-bit and an fp32
        # gradient), 4 whole and 12 split for float32; a flat share that rounds down.
        "recipe_deepspeed_zero2_json",
        "--model model.json --sweep dp=1,3 --optimizer adam --recipe deepspeed --zero 2 --json",
        {"model.json": SWEEP_MODEL},
        # dp=1: embed 20 x 32 = 640, proj 16 x 24 = 384, norm 20 x 4 = 80: 1104. dp=3: whole
        # 2 x 32 + 4 x 24 + 2 x 4 = 168, flat (18 x 32 + 12 x 24 + 18 x 4) / 3 = 936 / 3 = 312:
        # 480.
        hand={"meshes.0.max_rank_bytes": 1104, "meshes.1.max_rank_bytes": 480,
              "recipe": "deepspeed"},
    ),
    Case(
        # Megatron-LM's accounting has no ZeRO stage past its distributed optimizer.
        "recipe_megatron_zero2",
        "meta.json --model model.json --recipe megatron --zero 2",
        {"meta.json": SWEEP_META, "model.json": SWEEP_MODEL},
        usage_errors=["--zero 2: --recipe megatron has ZeRO stages 0 without its distributed "
                      "optimizer and 1 with it (the optimizer state split)"],
    ),
    Case(
        # A plan of experts only (and a zero-sized parameter, which holds nothing): the ZeRO
        # words name edp, its one group; the zero-sized one changes nothing.
        "experts_only_zero1",
        "meta.json --model model.json --mesh ep=2,dp=4 --optimizer adam --zero 1",
        {"meta.json": EXPERTS_META, "model.json": EXPERTS_MODEL},
        findings=[("note", "HPF503", "meta.json", "/param_plan/z/params/e/tp",
                   "axis 'tp' is not in the mesh (--mesh); its placements change nothing")],
        hand_lines=["2 params, 384 B whole on one device, optimizer adam, ZeRO stage 1 (the "
                    "optimizer state of the expert parameters split over edp, 2 ranks), no "
                    "budget",
                    "rank 0 below counts weights, gradients and optimizer state (adam), after "
                    "ZeRO stage 1 over the experts' edp, 2 ranks; LOCAL is the plan's piece "
                    "before it, as the meshes table does"],
    ),
]


def plural(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def diagnostic_line(severity: str, file: str, pointer: str, message: str, code: str = "") -> str:
    """A text line (docs/cli.md, "Output conventions"); a finding's code ends it: " [HPF501]"."""
    where = "".join(f"{part}: " for part in (file, pointer) if part)
    return f"hpfreeze: {severity}: {where}{message}" + (f" [{code}]" if code else "") + "\n"


def at(doc: object, path: str) -> object:
    for key in path.split("."):
        doc = doc[int(key)] if isinstance(doc, list) else doc[key]
    return doc


def expected_of(case: Case) -> tuple[bytes, bytes, int]:
    """expected.out, expected.err and the exit status of one case."""
    if case.usage_errors:
        err = "".join(diagnostic_line("error", "", "", m) for m in case.usage_errors)
        return b"", err.encode(), 2
    request = calc.report_request(case.args)
    meta = json.loads(case.inputs[request["meta"]]) if request["meta"] else None
    model = case.inputs[request["model"]]
    raw = model if isinstance(model, bytes) else model.encode()
    params = calc.model_parameters(raw)
    findings = [dict(zip(("severity", "code", "file", "pointer", "message"), f))
                for f in case.findings]
    run = calc.report_run(meta, params, request, findings, calc.model_tree(raw))
    doc, planner_exit = run["doc"], run["exit"]
    for path, value in case.hand.items():
        if at(doc, path) != value:
            raise SystemExit(f"{case.name}: the calculator says {path} = {at(doc, path)!r}, "
                             f"worked out by hand: {value!r}")
    if request["json"]:
        out = json.dumps(doc, indent=2) + "\n"
    else:
        out = calc.report_text(run, 10 if request["top"] is None else request["top"])
    for line in case.hand_lines:
        if line not in out.splitlines():
            raise SystemExit(f"{case.name}: the calculator's text lacks the line {line!r}")
    err = "".join(diagnostic_line(f["severity"], f["file"], f["pointer"], f["message"], f["code"])
                  for f in doc["findings"])
    if doc["findings"]:
        counts = [sum(f["severity"] == s for f in doc["findings"]) for s in calc.SEVERITIES]
        err += diagnostic_line("note", "", "", "report: " + ", ".join(
            plural(n, s) for n, s in zip(counts, calc.SEVERITIES)))
    errors = any(f["severity"] == "error" for f in doc["findings"])
    status = 1 if errors or planner_exit else 0
    return out.encode(), err.encode(), status


def write_case(root: Path, case: Case) -> None:
    folder = root / case.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "args").write_text(case.args + "\n", encoding="utf-8")
    for name, content in case.inputs.items():
        data = content if isinstance(content, bytes) else content.encode()
        (folder / name).write_bytes(data)
    out, err, status = expected_of(case)
    if out:  # a run refused with a usage error prints nothing
        (folder / "expected.out").write_bytes(out)
    (folder / "expected.err").write_bytes(err)
    (folder / "expected.status").write_text(f"{status}\n", encoding="utf-8")


def stale_cases(fresh: Path, out: Path) -> list[str]:
    """The cases whose folder in `out` differs from `fresh` in a byte or a file, and the case
    folders of `out` (those with args) no case makes."""
    stale = []
    names = {c.name for c in CASES}
    for case in CASES:
        ours, theirs = fresh / case.name, out / case.name
        files = sorted(p.name for p in ours.iterdir())
        if not theirs.is_dir() or sorted(p.name for p in theirs.iterdir()) != files or any(
                (ours / f).read_bytes() != (theirs / f).read_bytes() for f in files):
            stale.append(case.name)
    stale += [f"{p.name} (no case makes it)" for p in sorted(out.iterdir())
              if p.is_dir() and (p / "args").exists() and p.name not in names]
    return stale


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "testdata" / "report")
    parser.add_argument("--check", action="store_true",
                        help="fail if the generated cases differ from those in --out")
    args = parser.parse_args()
    if not args.check:
        for case in CASES:
            write_case(args.out, case)
        print(f"wrote {len(CASES)} report cases to {args.out}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            write_case(Path(tmp), case)
        stale = stale_cases(Path(tmp), args.out)
    for name in stale:
        print(f"stale: {name} (run tests/oracle/make_report_cases.py)")
    print(f"{len(CASES)} report cases, {len(stale)} stale")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
