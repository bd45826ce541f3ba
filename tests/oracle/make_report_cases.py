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
    findings: list[tuple[str, str, str, str]] = field(default_factory=list)
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
KNOWN_AXES = ("(the inputs know cp, dp, tp; --replica-axis NAME adds an axis that only holds "
              "replicas)")

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
        findings=[("note", "HPF515", "", "", "--budget 64 is 64 B, under 1 MiB; did you mean 64GiB?")],
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
        findings=[("note", "HPF515", "", "", "--budget 64 is 64 B, under 1 MiB; did you mean 64GiB?")],
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
        findings=[("note", "HPF515", "", "", "--budget 200 is 200 B, under 1 MiB; did you mean 200GiB?")],
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
        # axes dp, cp.
        "unknown_axis", "meta.json --model model.json --mesh TP=2,pp=4 --json",
        {"meta.json": FINDINGS_META, "model.json": FINDINGS_MODEL},
        usage_errors=["--mesh: unknown axis 'TP'; did you mean 'tp'? " + KNOWN_AXES,
                      "--mesh: unknown axis 'pp'; did you mean 'cp'? " + KNOWN_AXES],
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
    params = calc.model_parameters(model if isinstance(model, bytes) else model.encode())
    findings = [dict(zip(("severity", "code", "file", "pointer", "message"), f))
                for f in case.findings]
    run = calc.report_run(meta, params, request, findings)
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
