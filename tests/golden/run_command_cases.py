#!/usr/bin/env python3
"""Golden cases of the commands other than freeze: one folder per case.

    run_command_cases.py --binary PATH DIR... [--only NAME]...
    run_command_cases.py --expected-only DIR... [--only NAME]...

Each DIR is testdata/<command>: its name is the command run. A case is a folder of DIR
holding `args`: the command line after `hpfreeze COMMAND`, one line split as the shell
splits it (shlex), with file names relative to the case folder, where the command runs (so
diagnostics do not depend on where the repository is). Beside it: the input files,
`expected.status` (the exit status, decimal) and `expected.out` and `expected.err` (stdout
and stderr, byte for byte; a missing file stands for an empty stream). A folder without
`args` holds inputs of other tests (testdata/report/tiny) and is left alone, unless it holds
an expected.* file: then the case is malformed. The environment is scrubbed as for the
end-to-end tests (NO_COLOR=1, no SPDLOG_LEVEL).

The expected bytes never come from hpfreeze: testdata/<command>/README.md says how each
file was made. Before any run, every `report --json` case whose status is not 2 is checked
against tests/e2e/capacity_model.py, the capacity planner's independent calculator: every
byte count of expected.out (totals, boundaries, params, uncovered, meshes, the answer, the
budget), each parameter's local shape, the counts, the mesh and the placement order. A
case that disagrees fails without running the binary. `--expected-only` does only that.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "e2e"))
import capacity_model as model  # noqa: E402
from run_golden import first_difference, run_in  # noqa: E402

EXPECTED = ("expected.out", "expected.err", "expected.status")


def read_or_empty(path: Path) -> bytes:
    return path.read_bytes() if path.is_file() else b""


def run_case(case: Path, command: list[str], env: dict[str, str]) -> str | None:
    """Runs one case; None when it passes, else the reason it failed."""
    argv = command + shlex.split((case / "args").read_text(encoding="utf-8"))
    ran = run_in(case, argv, env)
    if isinstance(ran, str):
        return ran
    returncode, stdout, stderr = ran
    status = int((case / "expected.status").read_text(encoding="utf-8"))
    if returncode != status:
        return (f"exit status {returncode}, expected {status} (stderr: "
                f"{stderr.decode('utf-8', 'replace').strip()[:300]!r})")
    for what, actual, name in (("stdout", stdout, "expected.out"),
                               ("stderr", stderr, "expected.err")):
        expected = read_or_empty(case / name)
        if actual != expected:
            return first_difference(actual, expected, what)
    return None


# ---- report --json against the independent calculator ----

# The safetensors dtype codes and the torch names they stand for (docs/formats.md).
SAFETENSORS_DTYPES = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
    "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu"}


def model_parameters(path: Path) -> list[dict]:
    """[{fqn, shape, dtype (None when missing), requires_grad}] in the model's order: a model
    tree dump, or a safetensors file's header (a floating-point tensor is trainable)."""
    raw = path.read_bytes()
    if 0 in raw[:8]:
        (length,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + length])
        out = []
        for name, tensor in header.items():
            if name == "__metadata__":
                continue
            dtype = SAFETENSORS_DTYPES[tensor["dtype"]]
            out.append({"fqn": name, "shape": tensor["shape"], "dtype": dtype,
                        "requires_grad": model.DTYPES[dtype][1]})
        return out
    tree = json.loads(raw)
    return [{"fqn": fqn, "shape": p["shape"], "dtype": p.get("dtype"),
             "requires_grad": p.get("requires_grad", True)}
            for fqn, p in tree["parameters"].items()]


def report_request(words: list[str]) -> dict:
    """The report command line as the calculator needs it."""
    parser = argparse.ArgumentParser(prog="report", add_help=False)
    parser.add_argument("meta", nargs="?")
    parser.add_argument("--model", required=True)
    parser.add_argument("--mesh")
    parser.add_argument("--sweep", action="append", default=[])
    parser.add_argument("--budget")
    parser.add_argument("--optimizer", default="none")
    parser.add_argument("--zero", type=int, default=0)
    parser.add_argument("--zero-axis")
    parser.add_argument("--expert-parallel")
    parser.add_argument("--replica-axis", action="append", default=[])
    parser.add_argument("--allow-uncovered", action="store_true")
    parser.add_argument("--fits-only", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--top", type=int)
    return vars(parser.parse_args(words))


def sizes_of(text: str) -> list[tuple[str, int]]:
    return [(a, int(n)) for a, n in (item.split("=") for item in text.split(","))]


def planned_fqn(boundary: str, name: str) -> str:
    return name if not boundary else boundary if not name else f"{boundary}.{name}"


def is_shard(text: str) -> bool:
    return model.parse_placement(text)[0] in ("S", "SS")


def expected_report(case: Path, request: dict) -> dict:
    """What the calculator says of every field report --json checks here."""
    meta = json.loads((case / request["meta"]).read_text()) if request["meta"] else {}
    params = model_parameters(case / request["model"])
    by_fqn = {p["fqn"]: p for p in params}
    names = meta.get("mesh_dim_names") or []
    listed = list(dict.fromkeys(names))
    plan = [(b, planned_fqn(b, n), axes) for b, spec in meta.get("param_plan", {}).items()
            for n, axes in (spec.get("params") or {}).items()]
    placed = sorted({a for _, _, axes in plan for a in axes} - set(listed))
    order = listed + placed
    layout = request["expert_parallel"] or ("axis" if "ep" in names else "folded")
    if request["mesh"]:
        fixed = sizes_of(request["mesh"])
    else:
        fixed = [(k[:-5], v) for k, v in (meta.get("parallel_dims") or {}).items()
                 if k.endswith("_size") and type(v) is int and 1 <= v < 2**63]
    sweeps = [(a, [int(n) for n in sizes.split(",")])
              for a, sizes in (s.split("=") for s in request["sweep"])]
    swept = {a for a, _ in sweeps}
    mesh = sorted((a, n) for a, n in fixed if a not in swept)
    zero_axes = request["zero_axis"].split(",") if request["zero_axis"] else ["dp", "cp"]
    stage, optimizer = request["zero"], request["optimizer"]
    at = {a: 0 for a, _ in mesh}
    sizes = dict(mesh)

    def usable(p: dict, placements: list[tuple[str, str]]) -> bool:
        """Every sharded dim exists and, folded, an expert is split on ep alone: what the
        planner is given."""
        shards = {a: model.parse_placement(t) for a, t in placements if is_shard(t)}
        if any(pl[1] >= len(p["shape"]) for pl in shards.values()):
            return False
        expert = layout == "folded" and "ep" in shards
        return not expert or all(a == "ep" or t == "R" for a, t in placements)

    def measured(p: dict, placements: list[tuple[str, str]]) -> dict:
        """rank-0 local shape and bytes, full bytes, of one parameter with its placements
        (the ones whose dim exists)."""
        placements = [(a, t) for a, t in placements
                      if not is_shard(t) or model.parse_placement(t)[1] < len(p["shape"])]
        dtype = p["dtype"] or "bfloat16"
        entry = model.prepared_params(
            [{**p, "dtype": dtype, "placements": placements}], optimizer, layout, stage,
            zero_axes)[0]
        local = list(p["shape"])
        for a, text in placements:
            pl = model.parse_placement(text)
            if pl[0] in ("S", "SS") and sizes.get(a, 1) > 1:
                local[pl[1]] = model.local_size(local[pl[1]], pl, sizes[a], 0)
        return {"local_shape": local, "rank0_bytes": model.param_bytes_at(
                    entry, order, mesh, at, (0, 0)),
                "full_bytes": math.prod(p["shape"]) * model.cost_per_element(
                    dtype, p["requires_grad"], optimizer)}

    out_params, planner, boundaries, seen = [], [], {}, set()
    for boundary, fqn, axes in plan:
        b = boundaries.setdefault(boundary, {"fqn": boundary, "rank0_bytes": 0, "params": 0})
        b["params"] += 1
        p = by_fqn.get(fqn)
        if fqn in seen or p is None or (p["dtype"] or "bfloat16") not in model.DTYPES:
            seen.add(fqn)
            continue
        seen.add(fqn)
        applied = [(a, axes[a]) for a in order if a in axes]
        m = measured(p, applied)
        out_params.append({"fqn": fqn, "shape": p["shape"], "dtype": p["dtype"], **m,
                           "boundary": boundary, "placements": dict(applied),
                           "replicated": not any(is_shard(t) and sizes.get(a, 1) > 1
                                                 for a, t in applied)})
        b["rank0_bytes"] += m["rank0_bytes"]
        if usable(p, applied):
            planner.append({**p, "dtype": p["dtype"] or "bfloat16", "placements": applied})
    uncovered = []
    for p in params:
        if any(p["fqn"] == f or p["fqn"].startswith(f + ".") for f in seen):
            continue
        if (p["dtype"] or "bfloat16") not in model.DTYPES:
            continue
        m = measured(p, [])
        uncovered.append({"fqn": p["fqn"], "shape": p["shape"], "dtype": p["dtype"],
                          "bytes": m["full_bytes"], "rank0_bytes": m["rank0_bytes"]})
        planner.append({**p, "dtype": p["dtype"] or "bfloat16", "placements": []})

    calc_case = {"axis_order": order, "fixed": mesh, "sweeps": sweeps, "optimizer": optimizer,
                 "budget": request["budget"], "zero": (stage, zero_axes), "layout": layout,
                 "params": planner}
    planned_doc = model.expected(calc_case)[0]
    meshes = planned_doc["meshes"]
    if request["fits_only"]:
        meshes = [m for m in meshes if m["divisible"] and m["fits"] is not False]
    by_bytes = lambda x: (-x["rank0_bytes"], x["fqn"].encode())  # noqa: E731
    return {
        "mesh": dict(mesh),
        "placement_order": order,
        "counts": {"planned_params": len(out_params),
                   "replicated_params": sum(p["replicated"] for p in out_params),
                   "uncovered_params": len(uncovered), "boundaries": len(boundaries)},
        "rank0_bytes": sum(p["rank0_bytes"] for p in out_params),
        "replicated_bytes": sum(p["rank0_bytes"] for p in out_params if p["replicated"]),
        "unsharded_bytes": sum(p["full_bytes"] for p in out_params),
        "uncovered_bytes": sum(u["rank0_bytes"] for u in uncovered),
        "boundaries": sorted(boundaries.values(), key=by_bytes),
        "params": sorted(out_params, key=by_bytes)[:request["top"]],
        "uncovered": [{k: u[k] for k in ("fqn", "shape", "dtype", "bytes")} for u in
                      sorted(uncovered, key=lambda u: (-u["bytes"], u["fqn"].encode()))],
        "optimizer": optimizer,
        "budget_bytes": planned_doc["budget_bytes"],
        "zero": planned_doc["zero"],
        "layout": layout,
        "answer": planned_doc["answer"],
        "meshes": meshes,
    }


def check_report_expected(case: Path) -> str | None:
    """None when expected.out agrees with the calculator, else the first disagreement."""
    request = report_request(shlex.split((case / "args").read_text(encoding="utf-8")))
    if not request["json"] or (case / "expected.status").read_text().strip() == "2":
        return None
    doc = json.loads((case / "expected.out").read_text(encoding="utf-8"))
    want = expected_report(case, request)
    errors = any(f["severity"] == "error" for f in doc["findings"])
    for key, value in want.items():
        if key == "layout":
            got = doc["expert_parallel"]["layout"]
        elif key == "answer" and errors:
            value, got = None, doc["answer"]  # withheld while an error finding stands
        else:
            got = doc[key]
        # Key order too: json.loads keeps the file's.
        if json.dumps(got) != json.dumps(value):
            return (f"expected.out's {key!r} is {json.dumps(got)}; the calculator says "
                    f"{json.dumps(value)}")
    return None


CROSS_CHECKS = {"report": check_report_expected}


def cases_of(directory: Path, only: list[str]) -> tuple[list[Path], list[str]]:
    cases, problems = [], []
    for folder in sorted(p for p in directory.iterdir() if p.is_dir()):
        if only and folder.name not in only:
            continue
        if not (folder / "args").is_file():
            if any((folder / name).exists() for name in EXPECTED):
                problems.append(f"malformed case {folder}: expected files but no args")
            continue
        if not (folder / "expected.status").is_file():
            problems.append(f"malformed case {folder}: no expected.status")
            continue
        cases.append(folder)
    return cases, problems


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--binary", help="path of the hpfreeze executable")
    source.add_argument("--expected-only", action="store_true",
                        help="only check the expected files against the calculator")
    parser.add_argument("dirs", nargs="+", type=Path, metavar="DIR")
    parser.add_argument("--only", action="append", default=[], metavar="NAME",
                        help="run only this case (repeatable)")
    args = parser.parse_args()
    env = dict(os.environ)
    env.pop("SPDLOG_LEVEL", None)
    env["NO_COLOR"] = "1"

    failed = passed = 0
    for directory in args.dirs:
        if not directory.is_dir():
            print(f"run_command_cases: {directory} is not a directory", file=sys.stderr)
            return 2
        command = directory.resolve().name
        cases, problems = cases_of(directory, args.only)
        for problem in problems:
            print(f"FAIL {problem}")
        failed += len(problems)
        if not cases and not args.only:
            print(f"FAIL no cases in {directory}")
            failed += 1
        for case in cases:
            cross_check = CROSS_CHECKS.get(command)
            reason = cross_check(case) if cross_check else None
            if reason is None and not args.expected_only:
                reason = run_case(case, [str(Path(args.binary).resolve()), command], env)
            if reason is None:
                passed += 1
            else:
                failed += 1
                print(f"FAIL {command}/{case.name}: {reason}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
