#!/usr/bin/env python3
"""Independent calculator for the capacity planner (docs/capacity.md) and report --json.

It shares no code with the C++ planner and takes the plain route: every rank of every mesh
is visited, every parameter's local shape is built by chunking one mesh axis after the
other exactly as torch.chunk (padded with empty chunks) does, and the bytes are added up.
From that it writes testdata/report/sweep/cases.json: the inputs of each case, the
planner's members of report --json as one exact JSON line, and the totals (the axis order,
the parameters, their bytes whole), which tests/unit/capacity/capacity_test.cc compares.
report_document() lays out a whole report --json document from the inputs and a command
line as docs/formats.md documents it; tests/oracle/make_report_cases.py writes the report
goldens with it.

    capacity_model.py            rewrite the fixture
    capacity_model.py --check    exit 1 if the committed fixture differs from a fresh one
"""

import argparse
import itertools
import json
import math
import pathlib
import re
import shlex
import struct
import sys
from fractions import Fraction
from functools import lru_cache

FIXTURE = pathlib.Path(__file__).resolve().parents[2] / "testdata/report/sweep/cases.json"

# torch dtype name -> (itemsize, floating point or complex)
DTYPES = {
    "float32": (4, True), "float": (4, True), "float64": (8, True), "double": (8, True),
    "float16": (2, True), "half": (2, True), "bfloat16": (2, True), "bf16": (2, True),
    "complex32": (4, True), "chalf": (4, True), "complex64": (8, True), "cfloat": (8, True),
    "complex128": (16, True), "cdouble": (16, True),
    "float8_e4m3fn": (1, True), "float8_e4m3fnuz": (1, True), "float8_e5m2": (1, True),
    "float8_e5m2fnuz": (1, True), "float8_e8m0fnu": (1, True), "float4_e2m1fn_x2": (1, True),
    "uint8": (1, False), "uint16": (2, False), "uint32": (4, False), "uint64": (8, False),
    "int8": (1, False), "int16": (2, False), "short": (2, False), "int32": (4, False),
    "int": (4, False), "int64": (8, False), "long": (8, False), "bool": (1, False),
    "quint8": (1, False), "qint8": (1, False), "qint32": (4, False), "bits8": (1, False),
    "bits16": (2, False), "bits1x8": (1, False), "bits2x4": (1, False), "bits4x2": (1, False),
}
MOMENTS = {"none": None, "sgd": 0, "momentum": 1, "adam": 2, "adamw": 2}
UNITS = {"": 1, "B": 1}
for i, p in enumerate("KMGTPE"):
    for suffix in ("", "B"):
        UNITS[p + suffix] = 1000 ** (i + 1)
        UNITS[p + "i" + suffix] = 1024 ** (i + 1)
UNITS["k"] = UNITS["kB"] = 1000


def budget_bytes(text):
    m = re.fullmatch(r"(\d*\.?\d*)([A-Za-z]*)", text)
    number, unit = m.group(1), m.group(2)
    whole, _, frac = number.partition(".")
    scaled = int(whole or "0") * UNITS[unit] * 10 ** len(frac) + int(frac or "0") * UNITS[unit]
    return scaled // 10 ** len(frac)


# --recipe (docs/capacity.md, "Recipes"): per ZeRO stage 0..3 what a gradient element costs
# ("dtype": the dtype's size; "fp32": max(4, size); "dtype+fp32": the dtype's and, for one
# narrower than fp32, 4 more), how ZeRO splits the weight and the gradient and how the
# master copy and the moments ("chunks": each rank its own rows of the split dim; "padded":
# every rank the first chunk; "flat": an even share), the highest stage, and the bytes per
# element of the largest module every rank holds at stage 3.
RECIPES = {
    "dtensor": {"grad": ["dtype"] * 4, "weight_grad": "chunks", "state": "chunks", "top": 3,
                "gathered": 0},
    "fsdp2": {"grad": ["dtype"] * 4, "weight_grad": "padded", "state": "chunks", "top": 3,
              "gathered": 0},
    "megatron": {"grad": ["fp32"] * 2, "weight_grad": "flat", "state": "flat", "top": 1,
                 "gathered": 0},
    "deepspeed": {"grad": ["dtype", "dtype", "dtype+fp32", "fp32"], "weight_grad": "flat",
                  "state": "flat", "top": 3, "gathered": 4},
}


class Cost(tuple):
    """Bytes per element: kept whole, and split in chunks, padded chunks or flat shares; the
    dim the chunks are cut on."""
    kept = property(lambda c: c[0])
    chunked = property(lambda c: c[1])
    padded = property(lambda c: c[2])
    flat = property(lambda c: c[3])
    dim = property(lambda c: c[4])
    split = property(lambda c: c[1] + c[2] + c[3])


def cost_per_element(dtype, requires_grad, optimizer, stage=0, recipe="dtensor"):
    return sum(cost_parts(dtype, requires_grad, optimizer, stage, recipe))


def cost_parts(dtype, requires_grad, optimizer, stage, recipe="dtensor"):
    """(kept, chunked, padded, flat): bytes per element every rank of the ZeRO group keeps
    of its local piece, and what ZeRO `stage` splits over it, as the recipe splits it
    (docs/capacity.md, "ZeRO" and "Recipes"): stage 1 the master copy and moments, 2 the
    gradient too, 3 the weight too."""
    size, floating = DTYPES[dtype.removeprefix("torch.")]
    k = MOMENTS[optimizer]
    row = RECIPES[recipe]
    weight = size
    if k is None or not requires_grad or not floating:
        grad = state = 0
    else:
        grad = {"dtype": size, "fp32": max(4, size),
                "dtype+fp32": size + (4 if size < 4 else 0)}[row["grad"][stage]]
        state = (4 if size < 4 else 0) + k * max(4, size)
    kept, parts = 0, {"chunks": 0, "padded": 0, "flat": 0}
    for part, start, how in ((weight, 3, row["weight_grad"]), (grad, 2, row["weight_grad"]),
                             (state, 1, row["state"])):
        if stage >= start:
            parts[how] += part
        else:
            kept += part
    return kept, parts["chunks"], parts["padded"], parts["flat"]


def parse_placement(text):
    """('S', dim, uneven), ('SS', dim, factor, uneven), ('R',) or ('P',)."""
    if text == "R":
        return ("R",)
    if text.startswith("P("):
        return ("P",)
    m = re.fullmatch(r"S\((-?\d+)\)", text)
    if m:
        d = int(m.group(1))
        return ("S", -d - 1, True) if d < 0 else ("S", d, False)
    m = re.fullmatch(r"SS\((-?\d+),(\d+)\)", text)
    d = int(m.group(1))
    return ("SS", -d - 1, int(m.group(2)), True) if d < 0 else ("SS", d, int(m.group(2)), False)


@lru_cache(maxsize=None)
def torch_chunk(length, chunks):
    """Sizes of torch.chunk(x, chunks) along a dim of `length`, padded to `chunks` entries."""
    if length == 0:
        return (0,) * chunks
    size = -(-length // chunks)
    got = [min(size, length - i * size) for i in range(-(-length // size))]
    return tuple(got + [0] * (chunks - len(got)))


def local_size(length, placement, n, coordinate):
    if placement[0] == "S":
        return torch_chunk(length, n)[coordinate]
    factor = placement[2]
    pieces = torch_chunk(length, n * factor)
    return sum(pieces[coordinate + j * n] for j in range(factor))


def devices(mesh, layout):
    """Every axis multiplies the devices, but ep in the folded layout."""
    return math.prod(s for a, s in mesh if layout == "axis" or a != "ep")


def meshes_of(axis_order, fixed, sweeps, layout="axis"):
    choices = dict((a, [s]) for a, s in fixed)
    choices.update((a, list(sizes)) for a, sizes in sweeps)
    order = [a for a in axis_order if a in choices]
    order += sorted(a for a in choices if a not in order)
    meshes = [list(zip(order, combo)) for combo in itertools.product(*(choices[a] for a in order))]
    meshes.sort(key=lambda m: (devices(m, layout), [s for _, s in m]))
    return meshes


def ranks_of(mesh, layout):
    """Every rank in rank order, as (coordinate of each mesh axis, (edp, ep) or None).

    The axis layout numbers ranks row-major in mesh order. The folded layout numbers them
    pp first, then the dense region (every other axis but ep: the others in mesh order,
    then dp, cp, tp) flattened row-major, and re-slices that index as [edp, ep], ep
    fastest; ep's own coordinate is the expert one."""
    if layout == "axis":
        names = [a for a, _ in mesh]
        for coords in itertools.product(*(range(s) for _, s in mesh)):
            yield dict(zip(names, coords)), None
        return
    sizes = dict(mesh)
    ep = sizes.get("ep", 1)
    dense = [a for a, _ in mesh if a not in ("ep", "pp", "dp", "cp", "tp")]
    dense += [a for a in ("dp", "cp", "tp") if a in sizes]
    region = math.prod(sizes[a] for a in dense)
    for g in range(sizes.get("pp", 1) * region):
        stage, r = divmod(g, region)
        at = {"pp": stage} if "pp" in sizes else {}
        rest = r
        for a in reversed(dense):
            rest, at[a] = divmod(rest, sizes[a])
        edp, epc = divmod(r, ep)
        if "ep" in sizes:
            at["ep"] = epc
        yield at, (edp, epc)


def dense_region(mesh):
    sizes = dict(mesh)
    dense = [a for a, _ in mesh if a not in ("ep", "pp", "dp", "cp", "tp")]
    dense += [a for a in ("dp", "cp", "tp") if a in sizes]
    return dense, math.prod(sizes[a] for a in dense)


def prepared_params(params, optimizer, layout, stage, zero_axes, recipe="dtensor", expert_dim=0):
    """Each parameter with its parsed placements, its Cost per element and its ZeRO group."""
    out = []
    for p in params:
        placements = dict((a, parse_placement(t)) for a, t in p["placements"])
        parts = list(cost_parts(p["dtype"], p["requires_grad"], optimizer, stage, recipe))
        sharded = {a for a, q in placements.items() if q[0] in ("S", "SS")}
        expert = layout == "folded" and "ep" in sharded
        # The ZeRO group: edp for a folded expert, else the listed axes (each once) the
        # plan does not shard it on; never a 0-dim parameter.
        group = "edp" if expert else [a for i, a in enumerate(zero_axes)
                                      if a not in zero_axes[:i] and a not in sharded]
        if not p["shape"] or not group:
            parts = [sum(parts), 0, 0, 0]
        # --expert-zero-dim: a folded expert is chunked on that dim, when it has it.
        dim = expert_dim if expert and expert_dim < len(p["shape"]) else 0
        out.append((p, placements, Cost(parts + [dim]), group))
    return out


def plan_piece(entry, order, sizes, at):
    """The shape the plan leaves of one prepared parameter on the rank at `at`, its
    placements applied in `order`."""
    p, placements, _, _ = entry
    shape = list(p["shape"])
    for axis in order:
        pl = placements.get(axis)
        if pl is None or pl[0] not in ("S", "SS") or sizes.get(axis, 1) == 1:
            continue
        shape[pl[1]] = local_size(shape[pl[1]], pl, sizes[axis], at[axis])
    return shape


def param_bytes_at(entry, order, mesh, at, expert_at):
    """The bytes of one prepared parameter on the rank at coordinates `at` (and, folded,
    `expert_at` = (edp, ep)) of `mesh`, its placements applied in `order`: an int, or a
    Fraction when a flat share does not come out even (a rank rounds its sum down)."""
    _, _, cost, group = entry
    sizes = dict(mesh)
    shape = plan_piece(entry, order, sizes, at)
    total = math.prod(shape) * cost.kept
    if cost.split:
        # ZeRO: what the plan left on this rank, over its group: edp, or the listed axes the
        # mesh has, row-major in the listed order.
        if group == "edp":
            n, c = dense_region(mesh)[1] // sizes.get("ep", 1), expert_at[0]
        else:
            n, c = 1, 0
            for a in group:
                n, c = n * sizes.get(a, 1), c * sizes.get(a, 1) + at.get(a, 0)
        own, first = list(shape), list(shape)
        own[cost.dim] = torch_chunk(shape[cost.dim], n)[c]
        first[cost.dim] = torch_chunk(shape[cost.dim], n)[0]
        total += math.prod(own) * cost.chunked + math.prod(first) * cost.padded
        if cost.flat:
            share = Fraction(math.prod(shape) * cost.flat, n)
            total += share.numerator if share.denominator == 1 else share
    return total


def kept_bytes_at(entry, order, mesh, at):
    """What ZeRO never splits of one prepared parameter on the rank at `at`: its kept part
    of the piece the plan leaves, and all of it when it has no group."""
    return math.prod(plan_piece(entry, order, dict(mesh), at)) * entry[2].kept


def module_of(fqn):
    """The module that owns a parameter directly: its name up to the last dot."""
    return fqn.rpartition(".")[0]


def gathered_module(held, order, stage_sizes, at):
    """The most elements one module owns directly among `held`, each parameter's piece as
    the plan leaves it on the stage's first rank (coordinate 0 everywhere)."""
    origin = {a: 0 for a in at}
    owned = {}
    for e in held:
        if 0 in e[0]["shape"]:
            continue
        owned[module_of(e[0]["fqn"])] = owned.get(module_of(e[0]["fqn"]), 0) + math.prod(
            plan_piece(e, order, stage_sizes, origin))
    return max(owned.values(), default=0)


def stage_counts(layers, pp, given):
    """Layers per pipeline stage: `given` (--pp-layers) when it has pp numbers, else as even
    as possible, the first layers % pp stages one longer (docs/capacity.md)."""
    if given and len(given) == pp:
        return list(given)
    return [layers // pp + (1 if s < layers % pp else 0) for s in range(pp)]


def stage_of(position, counts):
    """The stage a position lands on: before the stack the first, after it the last, a layer
    the stage whose layers hold it."""
    if position[0] == "before":
        return 0
    if position[0] == "after":
        return len(counts) - 1
    end = 0
    for s, n in enumerate(counts):
        end += n
        if position[1] < end:
            return s
    return len(counts) - 1


def stage_members(case, counts):
    """The indexes of the parameters each stage holds: by each one's position, and a tied
    tensor also on every stage another of its names lands on, when no counted name of it
    is there already."""
    members = [[] for _ in counts]
    for i, p in enumerate(case["params"]):
        members[stage_of(p.get("stage", ["before"]), counts)].append(i)
    for tied in case.get("tied", []):
        holding = {stage_of(case["params"][i].get("stage", ["before"]), counts)
                   for i in tied["params"]}
        for at in tied["elsewhere"]:
            s = stage_of(at, counts)
            if s not in holding:
                holding.add(s)
                members[s] = sorted(members[s] + [tied["params"][0]])
    return [set(m) for m in members]


def unsplittable(case, mesh, why):
    """A mesh with no rank to count: ep does not divide the dense region, or pp cannot
    split the stack."""
    budget = case["budget_bytes"]
    out = {"mesh": dict(mesh), "devices": devices(mesh, case.get("layout", "axis"))}
    if case.get("layout", "axis") == "folded" and "ep" in case["resolved_axis_order"]:
        out["expert_mesh"] = None
    out.update({"max_rank_bytes": None, "min_rank_bytes": None, "max_rank": None})
    if "expert_mesh" in out:
        out["max_rank_expert"] = None
    out["min_rank"] = None
    if "expert_mesh" in out:
        out["min_rank_expert"] = None
    out.update({"stages": None, "divisible": False, "indivisible": why, "refused": None,
                "fits": None if budget is None else False,
                "over_by_bytes": None if budget is None else 0})
    return out


def first_indivisible(params, order, sizes):
    """The first parameter, then the first axis in placement order, whose dim does not
    divide for some rank; the size is the largest such local size."""
    for p, placements, _, _ in params:
        shape = p["shape"]
        if 0 in shape:
            continue
        for axis in order:
            pl = placements.get(axis)
            n = sizes.get(axis, 1)
            if pl is None or pl[0] not in ("S", "SS") or n == 1 or pl[-1]:
                continue
            d = pl[1]
            factor = pl[2] if pl[0] == "SS" else 1
            earlier = [a for a in order[: order.index(axis)] if a in placements]
            seen = set()
            for coords in itertools.product(*(range(sizes.get(a, 1)) for a in earlier)):
                length = shape[d]
                for a, c in zip(earlier, coords):
                    q = placements[a]
                    if q[0] in ("S", "SS") and q[1] == d and sizes.get(a, 1) > 1:
                        length = local_size(length, q, sizes[a], c)
                seen.add(length)
            bad = sorted((v for v in seen if v % (n * factor) != 0), reverse=True)
            if bad:
                return {"param": p["fqn"], "dim": d, "size": bad[0], "axis": axis,
                        "axis_size": n, "split_factor": factor}
    return None


def evaluate(case, mesh):
    """The planner's JSON of one mesh (docs/capacity.md, "JSON")."""
    return measure(case, mesh)[0]


def dense_zero(case):
    """Whether some dense parameter has a ZeRO group: one that holds something, has a dim,
    and is not sharded on every listed axis."""
    stage, zero_axes = case.get("zero", (0, ["dp", "cp"]))
    entries = prepared_params(case["params"], case["optimizer"], case.get("layout", "axis"),
                              stage, zero_axes)
    return any(group and group != "edp" and p["shape"] and 0 not in p["shape"]
               for p, _, _, group in entries)


def measure(case, mesh):
    """evaluate()'s JSON of one mesh, and what the worst rank keeps that ZeRO never splits
    (the text view's floor), every rank walked."""
    optimizer = case["optimizer"]
    layout = case.get("layout", "axis")
    # Without ep in the run the folded layout changes nothing, and shows no expert view.
    expert_view = layout == "folded" and "ep" in case["resolved_axis_order"]
    stage, zero_axes = case.get("zero", (0, ["dp", "cp"]))
    sizes = dict(mesh)
    axes = [a for a, _ in mesh]
    dense_axes, region = dense_region(mesh)
    ep_size = sizes.get("ep", 1)
    if layout == "folded" and region % ep_size != 0:
        return unsplittable(case, mesh, {"param": None, "dim": None, "size": region, "axis": "ep",
                                         "axis_size": ep_size, "split_factor": 1,
                                         "dense_axes": dense_axes or ["(none)"]}), 0
    # pp splits the layer stack: each stage holds its layers and what sits beside them.
    pp, stack = sizes.get("pp", 1), case.get("stack")
    layers = stack["layers"] if stack else 0
    given = case.get("pp_layers", [])
    if pp > 1 and (not stack or (len(given) != pp and pp > layers)):
        return unsplittable(case, mesh, {"param": None, "dim": None, "size": layers, "axis": "pp",
                                         "axis_size": pp, "split_factor": 1,
                                         "stack": stack["prefix"] if stack else None}), 0
    counts = stage_counts(layers, pp, given) if pp > 1 else [layers]
    members = stage_members(case, counts) if pp > 1 else [set(range(len(case["params"])))]
    recipe = case.get("recipe", "dtensor")
    params = prepared_params(case["params"], optimizer, layout, stage, zero_axes, recipe,
                             case.get("expert_dim", 0))
    order = case["resolved_axis_order"]
    # A stage's ranks are the other axes: pp shards nothing.
    stage_sizes = {**sizes, "pp": 1} if "pp" in sizes else sizes
    stage_mesh = list(stage_sizes.items())
    indivisible = first_indivisible(params, order, stage_sizes)
    # What ZeRO-3 gathers, as the recipe counts it: every rank of a stage alike.
    unit = RECIPES[recipe]["gathered"] if stage == 3 else 0
    gathered = {}

    best = worst = None
    stages = [None] * len(members)
    unsplit = 0
    for at, expert_at in ranks_of(mesh, layout):
        s = at.get("pp", 0)
        held = [params[i] for i in sorted(members[s])]
        if unit and s not in gathered:
            gathered[s] = unit * gathered_module(held, order, stage_sizes, at)
        # The flat shares of a rank are summed, then rounded down once.
        total = math.floor(sum(param_bytes_at(e, order, stage_mesh, at, expert_at)
                               for e in held)) + gathered.get(s, 0)
        # What ZeRO never splits: the kept part of every piece, before ZeRO's split.
        unsplit = max(unsplit, sum(kept_bytes_at(e, order, stage_mesh, at) for e in held))
        if worst is None or total > worst[0]:
            worst = (total, at, expert_at)
        if best is None or total < best[0]:
            best = (total, at, expert_at)
        one = stages[s] or {"max": (total, at), "min": (total, at)}
        one = {"max": max(one["max"], (total, at), key=lambda x: x[0]),
               "min": min(one["min"], (total, at), key=lambda x: x[0])}
        stages[s] = one

    budget = case["budget_bytes"]
    if budget is not None and case.get("reserve"):
        budget -= budget_bytes(case["reserve"])
    fits = None if budget is None else (indivisible is None and worst[0] <= budget)
    out = {"mesh": dict(mesh), "devices": devices(mesh, layout)}
    if expert_view:
        out["expert_mesh"] = {"edp": region // ep_size, "ep": ep_size}
    out["max_rank_bytes"] = worst[0]
    out["min_rank_bytes"] = best[0]

    def coords(at):
        return {a: at[a] for a in axes if not expert_view or a != "ep"}
    for key, (_, at, expert_at) in (("max_rank", worst), ("min_rank", best)):
        out[key] = coords(at)
        if expert_view:
            out[key + "_expert"] = {"edp": expert_at[0], "ep": expert_at[1]}
    first = 0
    out["stages"] = []
    for s, one in enumerate(stages):
        out["stages"].append({
            "stage": s, "layers": [first, first + counts[s] - 1] if counts[s] else None,
            "max_rank_bytes": one["max"][0], "min_rank_bytes": one["min"][0],
            "max_rank": coords(one["max"][1]), "min_rank": coords(one["min"][1])})
        first += counts[s]
    out.update({
        "divisible": indivisible is None,
        "indivisible": indivisible,
        "refused": None,
        "fits": fits,
        "over_by_bytes": None if budget is None else max(0, worst[0] - budget),
    })
    return out, unsplit


def expected(case):
    listed = []
    for a in case["axis_order"]:
        if a not in listed:
            listed.append(a)
    # One order of axes: the listed ones, then the axes a placement names, by name, then
    # the axes only a mesh has, by name.
    placed = {a for p in case["params"] for a, _ in p["placements"]} - set(listed)
    listed += sorted(placed)
    rest = {a for a, _ in case["fixed"]} | {a for a, _ in case["sweeps"]}
    layout = case.get("layout", "axis")
    stage, zero_axes = case.get("zero", (0, ["dp", "cp"]))
    case["resolved_axis_order"] = listed + sorted(rest - set(listed))
    case["budget_bytes"] = None if case["budget"] is None else budget_bytes(case["budget"])
    measured = [measure(case, m)
                for m in meshes_of(listed, case["fixed"], case["sweeps"], layout)]
    meshes = [m for m, _ in measured]
    full = sum(math.prod(p["shape"]) * cost_per_element(p["dtype"], p["requires_grad"],
                                                         case["optimizer"], stage,
                                                         case.get("recipe", "dtensor"))
               for p in case["params"])
    usable = [m for m in meshes if m["divisible"] and m["fits"] is not False]
    answer = None
    if usable:
        answer = {k: usable[0][k] for k in ("mesh", "devices", "max_rank_bytes")}
        answer["ties"] = sum(1 for m in usable[1:] if m["devices"] == usable[0]["devices"])
    # The planner's members of report --json (docs/formats.md), in their order; the meshes
    # all of them (report --fits-only shows the usable ones only).
    doc = {"optimizer": case["optimizer"]}
    if case.get("recipe", "dtensor") != "dtensor":  # only when another recipe counts
        doc["recipe"] = case["recipe"]
    doc.update({
           "budget_bytes": case["budget_bytes"],
           "reserve_bytes": None if case["budget_bytes"] is None else budget_bytes(
               case.get("reserve") or "0"),
           "zero": {"stage": stage, "axes": zero_axes,
                    "expert_axis": "edp" if layout == "folded" and "ep" in case[
                        "resolved_axis_order"] else None},
           "expert_parallel": {"layout": layout, "from": case.get("layout_from", "meta")},
           "swept": bool(case["sweeps"]),
           "answer": answer,
           "meshes": meshes})
    if case.get("expert_dim"):  # only when --expert-zero-dim moves it
        doc["zero"]["expert_dim"] = case["expert_dim"]
    # What the text view needs beside the JSON: each mesh's unsplit bytes (out of the JSON)
    # and the least of them, when ZeRO-1 or -2 and no placement shards a ZeRO axis.
    unsplit = [u for _, u in measured]
    sharded_zero = any(a in zero_axes and _is_shard(t) for p in case["params"]
                       for a, t in p["placements"])
    laid = [u for m, u in zip(meshes, unsplit) if m["max_rank_bytes"] is not None]
    totals = {"axis_order": case["resolved_axis_order"], "params": len(case["params"]),
              "full_bytes": full,
              "unsplit_floor": min(laid) if stage in (1, 2) and not sharded_zero and laid
              else None}
    exit_code = 0 if usable else 1
    del case["resolved_axis_order"], case["budget_bytes"]
    return doc, totals, exit_code


# ---- report --json (docs/formats.md, "report --json") ----

# The safetensors dtype codes and the torch names they stand for (docs/formats.md).
SAFETENSORS_DTYPES = {
    "BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "U16": "uint16",
    "I32": "int32", "U32": "uint32", "I64": "int64", "U64": "uint64", "F16": "float16",
    "BF16": "bfloat16", "F32": "float32", "F64": "float64", "C64": "complex64",
    "F8_E4M3": "float8_e4m3fn", "F8_E5M2": "float8_e5m2", "F8_E8M0": "float8_e8m0fnu"}
SEVERITIES = ("error", "warning", "note")


def model_parameters(raw):
    """[{fqn, shape, dtype (None when missing), requires_grad}] in the model's order: a model
    tree dump, or a safetensors file's header (a floating-point tensor is trainable)."""
    if 0 in raw[:8]:
        (length,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8:8 + length])
        out = []
        for name, tensor in header.items():
            if name == "__metadata__":
                continue
            dtype = SAFETENSORS_DTYPES[tensor["dtype"]]
            out.append({"fqn": name, "shape": tensor["shape"], "dtype": dtype,
                        "requires_grad": DTYPES[dtype][1]})
        return out
    tree = json.loads(raw)
    return [{"fqn": fqn, "shape": p["shape"], "dtype": p.get("dtype"),
             "requires_grad": p.get("requires_grad", True)}
            for fqn, p in tree["parameters"].items()]


def model_tree(raw):
    """(module names, checkpoint) of a model: a model tree dump's modules in its order, or
    none for a safetensors file (a checkpoint, whose names have no order)."""
    if 0 in raw[:8]:
        return [], True
    return list(json.loads(raw).get("modules") or {}), False


def _layer_number(part):
    """A layer number: decimal digits without a leading zero, at most 18 of them."""
    return int(part) if re.fullmatch(r"0|[1-9][0-9]{0,17}", part) else None


def find_stack(names):
    """The layer stack (docs/capacity.md, "Pipeline stages") of a model whose names, in its
    order, are `names` [(name, elements)]: the runs of sibling modules PREFIX.0 .. PREFIX.(L-1)
    that lie inside no numbered module, the outermost (fewest dotted components), then the
    one holding the most elements, then the first named; None without one."""
    runs = {}
    for name, elements in names:
        parts = name.split(".")
        for k, part in enumerate(parts):
            number = _layer_number(part)
            if number is None:
                continue
            if k > 0:
                run = runs.setdefault(".".join(parts[:k]),
                                      {"numbers": set(), "elements": 0, "depth": k})
                run["numbers"].add(number)
                run["elements"] += elements
            break
    valid = [(prefix, run, i) for i, (prefix, run) in enumerate(runs.items())
             if run["numbers"] == set(range(len(run["numbers"])))]
    if not valid:
        return None
    prefix, run, _ = min(valid, key=lambda v: (v[1]["depth"], -v[1]["elements"], v[2]))
    return {"prefix": prefix, "layers": len(run["numbers"]), "named": False}


def named_stack(names, prefix):
    """--pp-stack PREFIX: the stack it names, or the usage error's message."""
    numbers = set()
    for name, _ in names:
        if name.startswith(prefix + "."):
            number = _layer_number(name[len(prefix) + 1:].split(".")[0])
            if number is not None:
                numbers.add(number)
    if not numbers:
        return (f"--pp-stack: the model has no layer '{prefix}.0' (no module or parameter is "
                f"named '{prefix}'.N)")
    missing = min(set(range(len(numbers) + 1)) - numbers)
    if missing < len(numbers):
        return (f"--pp-stack: the layers of '{prefix}' are not numbered 0 to "
                f"{len(numbers) - 1}: '{prefix}.{missing}' is missing")
    return {"prefix": prefix, "layers": len(numbers), "named": True}


def stack_position(stack, name, index, first_in_stack, checkpoint):
    """Where `name` sits: ["layer", N] in the stack; outside it, before or after it by the
    model's order (`index` against the first parameter in the stack), or, for a checkpoint
    or a name the model lacks (index None), before it when the name holds an embedding's
    word (embed, wte, wpe, word_embeddings) and after it otherwise."""
    if stack:
        prefix = stack["prefix"] + "."
        if name.startswith(prefix):
            number = _layer_number(name[len(prefix):].split(".")[0])
            if number is not None and number < stack["layers"]:
                return ["layer", number]
    else:
        return ["before"]
    if checkpoint or index is None:
        words = ("embed", "wte", "wpe", "word_embeddings")
        return ["before"] if any(w in name for w in words) else ["after"]
    return ["before"] if index < first_in_stack else ["after"]


def place_in_stack(params, modules, checkpoint, named=None):
    """The stack of a model (its parameters [{fqn, shape}] and module names, in order) and
    the position of each parameter; `named`, --pp-stack's. Returns (stack or None or the
    usage error's message, positions by FQN, first_in_stack)."""
    names = [(m, 0) for m in modules] + [(p["fqn"], math.prod(p["shape"])) for p in params]
    stack = named_stack(names, named) if named else find_stack(names)
    if isinstance(stack, str):
        return stack, {}, 0
    first = next((i for i, p in enumerate(params)
                  if stack and stack_position(stack, p["fqn"], 0, 0, False)[0] == "layer"),
                 len(params))
    positions = {p["fqn"]: stack_position(stack, p["fqn"], i, first, checkpoint)
                 for i, p in enumerate(params)}
    return stack, positions, first


def report_request(args):
    """A report command line (the words after `hpfreeze report`) as the calculator needs it."""
    parser = argparse.ArgumentParser(prog="report", add_help=False)
    parser.add_argument("meta", nargs="?")
    parser.add_argument("--model", required=True)
    parser.add_argument("--mesh")
    parser.add_argument("--sweep", action="append", default=[])
    parser.add_argument("--budget")
    parser.add_argument("--optimizer", default="none")
    parser.add_argument("--zero", type=int, default=0)
    parser.add_argument("--zero-axis")
    parser.add_argument("--recipe", default="dtensor")
    parser.add_argument("--expert-zero-dim", type=int, default=0)
    parser.add_argument("--expert-parallel")
    parser.add_argument("--pp-stack")
    parser.add_argument("--pp-layers")
    parser.add_argument("--reserve")
    parser.add_argument("--replica-axis", action="append", default=[])
    parser.add_argument("--allow-uncovered", action="store_true")
    parser.add_argument("--fits-only", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--top", type=int)
    return vars(parser.parse_args(shlex.split(args)))


def _sizes_of(text):
    return [(a, int(n)) for a, n in (item.split("=") for item in text.split(","))]


def _planned_fqn(boundary, name):
    return name if not boundary else boundary if not name else f"{boundary}.{name}"


def _is_shard(text):
    return parse_placement(text)[0] in ("S", "SS")


def report_document(meta, params, request, findings):
    """The report --json document, keys in the documented order, of a decoded meta (None
    without META), the model's parameters (model_parameters) and a command line
    (report_request); `findings` [{severity, code, file, pointer, message}] are the case's own,
    in the order the report emits them (sorted here by severity, stably). Returns the
    document and the planner's exit code (1: no mesh usable)."""
    run = report_run(meta, params, request, findings)
    return run["doc"], run["exit"]


def report_run(meta, params, request, findings, model=([], False)):
    """report_document's document and exit code ("doc", "exit"), and what the text view
    needs beside them: the planner's parameters and totals, the planned parameters the
    model lacks, the folded expert parameters and the ZeRO groups at rank 0. `model`: the
    model's module names and whether it is a checkpoint (model_tree)."""
    meta = meta or {}
    stack, positions, _ = place_in_stack(params, *model, named=request["pp_stack"])
    by_fqn = {p["fqn"]: p for p in params}
    names = meta.get("mesh_dim_names") or []
    listed = list(dict.fromkeys(names))
    plan = [(b, _planned_fqn(b, n), axes) for b, spec in meta.get("param_plan", {}).items()
            for n, axes in (spec.get("params") or {}).items()]
    order = listed + sorted({a for _, _, axes in plan for a in axes} - set(listed))
    layout = request["expert_parallel"] or ("axis" if "ep" in names else "folded")
    dims = meta.get("parallel_dims")
    if request["mesh"]:
        fixed, source = _sizes_of(request["mesh"]), "--mesh"
    else:
        fixed = [(k[:-5], v) for k, v in (dims if isinstance(dims, dict) else {}).items()
                 if k.endswith("_size") and type(v) is int and 1 <= v < 2**63]
        source = "parallel_dims" if isinstance(dims, dict) else "none"
    sweeps = [(a, [int(n) for n in sizes.split(",")])
              for a, sizes in (s.split("=") for s in request["sweep"])]
    swept = {a for a, _ in sweeps}
    mesh = sorted((a, n) for a, n in fixed if a not in swept)
    zero_axes = request["zero_axis"].split(",") if request["zero_axis"] else ["dp", "cp"]
    stage, optimizer = request["zero"], request["optimizer"]
    recipe, expert_dim = request["recipe"], request["expert_zero_dim"]
    at = {a: 0 for a, _ in mesh}
    sizes = dict(mesh)

    def usable(p, placements):
        """Every sharded dim exists and, folded, an expert is split on ep alone: what the
        planner is given."""
        shards = {a: parse_placement(t) for a, t in placements if _is_shard(t)}
        if any(pl[1] >= len(p["shape"]) for pl in shards.values()):
            return False
        expert = layout == "folded" and "ep" in shards
        return not expert or all(a == "ep" or t == "R" for a, t in placements)

    def measured(p, placements):
        """rank-0 local shape and bytes, full bytes, of one parameter with its placements
        (the ones whose dim exists)."""
        placements = [(a, t) for a, t in placements
                      if not _is_shard(t) or parse_placement(t)[1] < len(p["shape"])]
        dtype = p["dtype"] or "bfloat16"
        entry = prepared_params([{**p, "dtype": dtype, "placements": placements}], optimizer,
                                layout, stage, zero_axes, recipe, expert_dim)[0]
        local = list(p["shape"])
        for a, text in placements:
            pl = parse_placement(text)
            if pl[0] in ("S", "SS") and sizes.get(a, 1) > 1:
                local[pl[1]] = local_size(local[pl[1]], pl, sizes[a], 0)
        return {"local_shape": local,
                # A flat share alone rounds down here.
                "rank0_bytes": math.floor(param_bytes_at(entry, order, mesh, at, (0, 0))),
                "full_bytes": math.prod(p["shape"]) * cost_per_element(
                    dtype, p["requires_grad"], optimizer, stage, recipe)}

    out_params, planner, boundaries, seen = [], [], {}, set()
    missing = experts = 0
    for boundary, fqn, axes in plan:
        b = boundaries.setdefault(boundary, {"fqn": boundary, "rank0_bytes": 0, "params": 0})
        b["params"] += 1
        p = by_fqn.get(fqn)
        missing += fqn not in seen and p is None
        if fqn in seen or p is None or (p["dtype"] or "bfloat16") not in DTYPES:
            seen.add(fqn)
            continue
        seen.add(fqn)
        applied = [(a, axes[a]) for a in order if a in axes]
        m = measured(p, applied)
        out_params.append({"fqn": fqn, "shape": p["shape"], "dtype": p["dtype"], **m,
                           "boundary": boundary, "placements": dict(applied),
                           "replicated": not any(_is_shard(t) and sizes.get(a, 1) > 1
                                                 for a, t in applied)})
        b["rank0_bytes"] += m["rank0_bytes"]
        if layout == "folded" and any(a == "ep" and _is_shard(t) for a, t in applied):
            experts += all(a == "ep" or t == "R" for a, t in applied)
        if usable(p, applied):
            planner.append({**p, "dtype": p["dtype"] or "bfloat16", "placements": applied})
    uncovered = []
    for p in params:
        if any(p["fqn"] == f or p["fqn"].startswith(f + ".") for f in seen):
            continue
        if (p["dtype"] or "bfloat16") not in DTYPES:
            continue
        m = measured(p, [])
        uncovered.append({"fqn": p["fqn"], "shape": p["shape"], "dtype": p["dtype"],
                          "bytes": m["full_bytes"], "rank0_bytes": m["rank0_bytes"]})
        planner.append({**p, "dtype": p["dtype"] or "bfloat16", "placements": []})

    for q in planner:
        q["stage"] = positions.get(q["fqn"], ["before"])
    # A tied tensor the planner counts under some of its names sits where the others do too.
    index = {q["fqn"]: i for i, q in reversed(list(enumerate(planner)))}
    tied = []
    for pair in meta.get("tied_pairs") or [] if stack else []:
        group = {"params": [index[n] for n in pair if n in index],
                 "elsewhere": [stack_position(stack, n, None, 0, True) for n in pair
                               if n not in index]}
        if group["params"] and group["elsewhere"]:
            tied.append(group)
    calc_case = {"axis_order": order, "fixed": mesh, "sweeps": sweeps, "optimizer": optimizer,
                 "recipe": recipe, "expert_dim": expert_dim,
                 "budget": request["budget"], "zero": (stage, zero_axes), "layout": layout,
                 "layout_from": "flag" if request["expert_parallel"] else "meta",
                 "params": planner, "stack": stack, "tied": tied, "reserve": request["reserve"],
                 "pp_layers": [int(n) for n in request["pp_layers"].split(",")]
                 if request["pp_layers"] else []}
    planned, totals, exit_code = expected(calc_case)
    all_meshes = planned["meshes"]
    if request["fits_only"]:
        planned["meshes"] = [m for m in planned["meshes"]
                             if m["divisible"] and m["fits"] is not False]
    findings = sorted(findings, key=lambda f: SEVERITIES.index(f["severity"]))
    if any(f["severity"] == "error" for f in findings):
        planned["answer"] = None  # withheld while an error finding stands
    by_bytes = lambda x: (-x["rank0_bytes"], x["fqn"].encode())  # noqa: E731
    doc = {
        "mesh": dict(mesh),
        "mesh_source": source,
        "plan": "meta" if request["meta"] else "replicated",
        "placement_order": order,
        "pipeline": {"stack": stack["prefix"] if stack else None,
                     "layers": stack["layers"] if stack else 0,
                     "from": ("--pp-stack" if stack["named"] else "model") if stack else None,
                     "first_stage": [p["fqn"] for p in params
                                     if stack and positions[p["fqn"]] == ["before"]],
                     "last_stage": [p["fqn"] for p in params
                                    if stack and positions[p["fqn"]] == ["after"]]},
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
        **planned,
        "findings": [{k: f[k] for k in ("severity", "code", "file", "pointer", "message")}
                     for f in findings],
    }
    listed = [a for i, a in enumerate(zero_axes) if a not in zero_axes[:i]]
    region = math.prod(n for a, n in mesh if a not in ("ep", "pp"))
    return {"doc": doc, "exit": exit_code, "totals": totals, "planner": planner,
            "meshes": all_meshes,
            "missing": missing, "expert_params": experts, "layout": layout,
            "zero_axes": zero_axes, "stage": stage,
            "rank0_zero": (math.prod(sizes.get(a, 1) for a in listed),
                           region // sizes.get("ep", 1)
                           if layout == "folded" and region % sizes.get("ep", 1) == 0 else 1),
            "without_meta": not request["meta"], "flag_layout": bool(request["expert_parallel"]),
            "stack": stack, "request": request, "dense_zero": dense_zero(calc_case),
            "case": calc_case}


# ---- the report's text view (docs/cli.md, "hpfreeze report"; docs/capacity.md, "Text view") ----

BAR_WIDTH = 32


def byte_size(n):
    """"512 B", "1.5 KiB": binary units, one decimal rounded half up, the largest unit that
    keeps the rounded value below 1024."""
    if n < 1024:
        return f"{n} B"
    units = ("KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    for k, unit in enumerate(units):
        size = 1024 ** (k + 1)
        r10 = n % size * 10
        tenths = n // size * 10 + r10 // size + (1 if r10 % size >= size - r10 % size else 0)
        if tenths < 10240 or k == len(units) - 1:
            return f"{tenths // 10}.{tenths % 10} {unit}"


def plural(n, noun):
    return f"{n} {noun}" + ("" if n == 1 else "s")


def table(align, rows, indent=""):
    """Columns two spaces apart, each as wide as its widest cell, "L"eft or "R"ight aligned;
    no trailing blanks."""
    widths = [max(len(r[i]) for r in rows) for i in range(len(align))]
    out = ""
    for row in rows:
        cells = [c.rjust(w) if a == "R" else c.ljust(w) for c, a, w in zip(row, align, widths)]
        out += (indent + "  ".join(cells)).rstrip(" ") + "\n"
    return out


def mesh_text(mesh):
    return " ".join(f"{a}={n}" for a, n in mesh.items()) or "(no axes)"


def indivisible_text(x):
    if x["param"] is None and x["axis"] == "pp":
        if x["stack"] is None:
            return (f"no layer stack to split by pp={x['axis_size']} (the model has no modules "
                    "PREFIX.0 .. PREFIX.N; --pp-stack names one)")
        return f"the {plural(x['size'], 'layer')} of {x['stack']} by pp={x['axis_size']}"
    if x["param"] is None:
        return (f"the dense region {' x '.join(x['dense_axes'])} ({plural(x['size'], 'rank')}) "
                f"by {x['axis']}={x['axis_size']}")
    factor = f" x split factor {x['split_factor']}" if x["split_factor"] != 1 else ""
    return f"{x['param']} dim {x['dim']} by {x['axis']}={x['axis_size']}{factor}"


def usable_mesh(m):
    return m["divisible"] and m["fits"] is not False


def states_budget(doc):
    """What model states may use: the budget less the reserve; None without a budget."""
    if doc["budget_bytes"] is None:
        return None
    return doc["budget_bytes"] - (doc["reserve_bytes"] or 0)


def worst_stage(m):
    """The first stage whose worst rank is the mesh's."""
    return next(i for i, s in enumerate(m["stages"]) if s["max_rank_bytes"] == m["max_rank_bytes"])


def stage_words(m):
    """", on stage 3 of 16": where the worst rank of a mesh of several stages is."""
    if not m["stages"] or len(m["stages"]) < 2:
        return ""
    return f", on stage {worst_stage(m)} of {len(m['stages'])}"


def unsplit_words(run, budget):
    """Why no data-parallel size can help: ZeRO-1 (-2) keeps weights and gradients (weights)
    whole, and the least the run's meshes keep so is over the budget."""
    floor = run["totals"]["unsplit_floor"]
    if budget is None or floor is None or floor <= budget:
        return ""
    kept = {1: "weights and gradients", 2: "weights"}[run["stage"]]
    axes = " x ".join(dict.fromkeys(a for a in run["zero_axes"]
                                    if any(a in m["mesh"] for m in run["meshes"])))
    return (f"; ZeRO-{run['stage']} keeps {kept} whole: at least {byte_size(floor)} a rank at "
            f"any {axes or 'data-parallel size'}; shard the model (tp, ep, pp) or use --zero 3")


def answer_text(run, budget):
    """The answer line of the meshes table, or why there is none; `budget` what model states
    may use."""
    doc, meshes = run["doc"], run["meshes"]
    errors = sum(f["severity"] == "error" for f in doc["findings"])
    usable = [m for m in meshes if usable_mesh(m)]
    devices = lambda m: plural(m["devices"], "device")  # noqa: E731
    if usable and errors:
        missing = run["missing"]
        return "no answer: " + (
            f"{plural(missing, 'planned parameter')} {'is' if missing == 1 else 'are'} not in "
            "the model" if missing else f"the inputs have {plural(errors, 'error')} (on stderr)")
    if usable:
        m = usable[0]
        ties = sum(1 for u in usable[1:] if u["devices"] == m["devices"])
        return ("smallest mesh that fits: " if budget is not None else
                "smallest mesh that divides: ") + mesh_text(m["mesh"]) + (
            f" ({devices(m)}, worst rank {byte_size(m['max_rank_bytes'])}"
            + (f" of {byte_size(budget)}" if budget is not None else "") + stage_words(m) + ")"
            + (f", and {ties} more with {devices(m)}" if ties else ""))
    divisible = [m for m in meshes if m["divisible"]]
    if divisible:
        m = min(divisible, key=lambda m: m["over_by_bytes"])
        reserve = " for model states" if doc["reserve_bytes"] else ""
        return (f"no mesh fits the {byte_size(budget)} budget{reserve}; closest: "
                f"{mesh_text(m['mesh'])} ({devices(m)}, worst rank "
                f"{byte_size(m['max_rank_bytes'])}, over by {byte_size(m['over_by_bytes'])}"
                f"{stage_words(m)})" + unsplit_words(run, budget))
    x = meshes[0]["indivisible"]
    head = ("the mesh does not divide: " if len(meshes) == 1 else
            f"no mesh divides; the first, {mesh_text(meshes[0]['mesh'])}, fails on ")
    if x["param"] is None:
        return head + indivisible_text(x)
    factor = f" x split factor {x['split_factor']}" if x["split_factor"] != 1 else ""
    return head + (f"{x['param']} dim {x['dim']} (size {x['size']}) by "
                   f"{x['axis']}={x['axis_size']}{factor}")


def answer_lines(run):
    """The answer line, then, when the mesh it names has several stages, their table."""
    doc, meshes = run["doc"], run["meshes"]
    budget = states_budget(doc)
    out = answer_text(run, budget) + "\n"
    errors = any(f["severity"] == "error" for f in doc["findings"])
    usable = [m for m in meshes if usable_mesh(m)]
    divisible = [m for m in meshes if m["divisible"]]
    named = (None if errors and usable else usable[0] if usable else
             min(divisible, key=lambda m: m["over_by_bytes"]) if divisible else None)
    if named is None or len(named["stages"] or []) < 2:
        return out

    def layers(s):
        if s["layers"] is None:
            return "-"
        first, last = s["layers"]
        return str(first) if first == last else f"{first}-{last}"
    return out + table("RLRR", [["STAGE", "LAYERS", "WORST RANK", "BEST RANK"]] + [
        [str(s["stage"]), layers(s), byte_size(s["max_rank_bytes"]),
         byte_size(s["min_rank_bytes"])] for s in named["stages"]], "  ")


def zero_groups(run, mesh):
    """(dense, expert): the largest ZeRO group some parameter is split over on `mesh`, and
    edp when a folded expert is; 1 when none."""
    sizes = dict(mesh)
    entries = prepared_params(run["planner"], run["doc"]["optimizer"], run["layout"],
                              run["stage"], run["zero_axes"]) if run["stage"] else []
    dense = expert = 1
    for p, _, _, group in entries:
        if not p["shape"] or 0 in p["shape"] or not group:
            continue
        if group == "edp":
            region = dense_region(mesh)[1]
            if region % sizes.get("ep", 1) == 0:
                expert = region // sizes.get("ep", 1)
        else:
            dense = max(dense, math.prod(sizes.get(a, 1) for a in group))
    return dense, expert


def zero_words(run, shown):
    """"ZeRO stage 3 (the weights, gradients and optimizer state split over dp x cp, 4
    ranks; expert parameters over edp, 2 ranks)": the group sizes over the meshes shown."""
    split = ("", "the optimizer state", "the gradients and optimizer state",
             "the weights, gradients and optimizer state")[run["stage"]]
    meshes = run["meshes"]
    axes = " x ".join(a for a in run["zero_axes"] if any(a in m["mesh"] for m in meshes))
    groups = [zero_groups(run, list(m["mesh"].items())) for m in shown
              if m["max_rank_bytes"] is not None]
    experts = any(zero_groups(run, list(m["mesh"].items()))[1] > 1 for m in meshes)

    def sizes(k):
        if not groups:
            return "no rank"
        least, most = min(g[k] for g in groups), max(g[k] for g in groups)
        return plural(most, "rank") if least == most else f"{least} to {plural(most, 'rank')}"
    dim = run["case"]["expert_dim"]
    edp = f"edp, {sizes(1)}" + (f", on dim {dim}" if dim else "")
    if experts and not run["dense_zero"]:  # a plan of experts only: edp is its one group
        return f"ZeRO stage {run['stage']} ({split} of the expert parameters split over {edp})"
    over = f"{axes}, {sizes(0)}" if axes and run["dense_zero"] else ""
    if experts:
        over += ("; " if over else "") + "expert parameters over " + edp
    return f"ZeRO stage {run['stage']} ({split} split over {over or 'no axis of the meshes'})"


def largest_gathered(run, named):
    """The largest weight alone ZeRO-3 gathers on the worst rank of the mesh `named` (its
    dtype size times its piece under the plan at coordinate 0), among the parameters of
    the worst rank's stage: (bytes, FQN), the first of equals in parameter order, those the
    planner keeps whole (no placement shards them, and ZeRO leaves them a kept part) first."""
    mesh = list(named["mesh"].items())
    sizes = dict(mesh)
    order = run["totals"]["axis_order"]
    case = run["case"]
    held = set(range(len(run["planner"])))
    if sizes.get("pp", 1) > 1:
        counts = stage_counts(case["stack"]["layers"], sizes["pp"], case["pp_layers"])
        held = stage_members(case, counts)[worst_stage(named)]
    entries = prepared_params(run["planner"], run["doc"]["optimizer"], run["layout"],
                              run["stage"], run["zero_axes"], run["case"]["recipe"],
                              run["case"]["expert_dim"])
    best = (0, None)
    for constant_pass in (True, False):
        for i, (p, placements, cost, _) in enumerate(entries):
            kept, split = cost.kept, cost.split
            if 0 in p["shape"] or i not in held:
                continue
            sharding = [a for a, q in placements.items() if q[0] in ("S", "SS")]
            constant = not sharding and (split == 0 or kept > 0)
            if constant != constant_pass:
                continue
            shape = list(p["shape"])
            for axis in order:
                q = placements.get(axis)
                if q and q[0] in ("S", "SS") and sizes.get(axis, 1) > 1 and axis != "pp":
                    shape[q[1]] = local_size(shape[q[1]], q, sizes[axis], 0)
            value = DTYPES[p["dtype"].removeprefix("torch.")][0] * math.prod(shape)
            if value > best[0]:
                best = (value, p["fqn"])
    return best


def meshes_text(run):
    """The planner's part of the text view: header, answer, one row per mesh, the bar line."""
    doc, totals = run["doc"], run["totals"]
    budget, meshes = states_budget(doc), run["meshes"]
    shown = doc["meshes"]  # all, or with --fits-only the usable ones
    budget_words = ("no budget" if budget is None else f"budget {byte_size(doc['budget_bytes'])}"
                    + (f" less a {byte_size(doc['reserve_bytes'])} reserve"
                       if doc["reserve_bytes"] else ""))
    out = (f"{plural(totals['params'], 'param')}, {byte_size(totals['full_bytes'])} whole on "
           f"one device, optimizer {doc['optimizer']}"
           + (f", recipe {doc['recipe']}" if "recipe" in doc else "")
           + (f", {zero_words(run, shown)}" if run["stage"] else "") + f", {budget_words}\n")
    if "ep" in totals["axis_order"]:
        folded = run["layout"] == "folded"
        source = ("--expert-parallel" if run["flag_layout"] else
                  "mesh_dim_names does not name ep" if folded else "mesh_dim_names names ep")
        out += (f"expert parallel: folded ({source}): experts split over ep inside the dense "
                "region, edp their data-parallel group; ep does not multiply the devices\n"
                if folded else
                f"expert parallel: axis ({source}): ep is a mesh axis and multiplies the "
                "devices\n")
    gathered = RECIPES[run["case"]["recipe"]]["gathered"] if run["stage"] == 3 else 0
    if budget is not None and gathered:
        weights = doc["optimizer"] == "none"
        out += (("fits counts the weights" if weights else
                 "fits counts weights, gradients and optimizer state")
                + ", and what ZeRO-3 gathers for compute as DeepSpeed's estimator does "
                f"({gathered} B an element of the module owning the most): no "
                + ("gradients or optimizer state (--optimizer), " if weights else "")
                + "activations, all-gather and bucket buffers or allocator slack\n")
    elif budget is not None:
        out += ("fits counts the weights only: no gradients or optimizer state (--optimizer), "
                "activations, all-gather and bucket buffers or allocator slack"
                if doc["optimizer"] == "none" else
                "fits counts weights, gradients and optimizer state only: no activations, "
                "all-gather and bucket buffers or allocator slack")
        usable = [m for m in meshes if usable_mesh(m)]
        divisible = [m for m in meshes if m["divisible"]]
        named = usable[0] if usable else (min(divisible, key=lambda m: m["over_by_bytes"])
                                          if divisible else None)
        if run["stage"] == 3 and named is not None:
            value, fqn = largest_gathered(run, named)
            if value:
                out += (f", nor the parameter ZeRO-3 gathers whole for compute (on "
                        f"{mesh_text(named['mesh'])} the largest, {fqn}, is {byte_size(value)})")
        out += "\n"
    drawn = [v for v in [budget] + [m["max_rank_bytes"] for m in shown] if v]
    least, largest = (min(drawn), max(drawn)) if drawn else (0, 0)

    def cells(v):
        if not v or not least:
            return 0
        if largest == least:
            return BAR_WIDTH
        at = math.log(v / least) / math.log(largest / least)
        return 1 + int(math.floor((BAR_WIDTH - 1) * at + 0.5))
    # Some mesh shown has several stages: a column says which holds the worst rank.
    staged = any(len(m["stages"] or []) > 1 for m in shown)
    rows = [["MESH", "DEVICES", "WORST RANK"] + (["STAGE"] if staged else [])
            + ["BEST RANK", "BAR", "VERDICT"]]
    for m in shown:
        bar = "#" * cells(m["max_rank_bytes"]) + "." * (BAR_WIDTH - cells(m["max_rank_bytes"]))
        if budget is not None:
            bar = bar[:cells(budget)] + "|" + bar[cells(budget):]
        verdict = ("does not divide: " + indivisible_text(m["indivisible"]) if m["indivisible"]
                   else "divides" if m["fits"] is None else "fits" if m["fits"] else
                   "over by " + byte_size(m["over_by_bytes"]))
        laid = m["max_rank_bytes"] is not None
        rows.append([mesh_text(m["mesh"]), str(m["devices"]),
                     byte_size(m["max_rank_bytes"]) if laid else "-"]
                    + ([str(worst_stage(m)) if laid else "-"] if staged else [])
                    + [byte_size(m["min_rank_bytes"]) if laid else "-", bar, verdict])
    out += table("LRRRRLL" if staged else "LRRRLL", rows)
    if least:
        out += "BAR: the worst rank, " + (
            f"full at {byte_size(largest)}" if largest == least else
            f"log scale from 1 '#' at {byte_size(least)} to {BAR_WIDTH} at {byte_size(largest)}")
        out += ("\n" if budget is None else "; '|' marks the budget less the reserve\n"
                if doc["reserve_bytes"] else "; '|' marks the budget\n")
    return out


def stack_line(run):
    """The layer stack and the parameters outside it, when stages are in play: some mesh
    has pp > 1, or --pp-stack or --pp-layers is given."""
    request, pipeline = run["request"], run["doc"]["pipeline"]
    staged = any(m["mesh"].get("pp", 1) > 1 for m in run["meshes"])
    if not (staged or request["pp_stack"] or request["pp_layers"]):
        return ""
    if pipeline["stack"] is None:
        return ("layer stack: none in the model (no modules PREFIX.0 .. PREFIX.N); --pp-stack "
                "names one\n")

    def some(names):
        return ", ".join(names[:4]) + (f", and {len(names) - 4} more" if len(names) > 4 else "")
    out = (f"layer stack: {pipeline['stack']}, {plural(pipeline['layers'], 'layer')} "
           + ("(--pp-stack)" if pipeline["from"] == "--pp-stack" else "(found in the model)"))
    if pipeline["first_stage"]:
        out += "; before it, on the first stage: " + some(pipeline["first_stage"])
    if pipeline["last_stage"]:
        out += "; after it, on the last: " + some(pipeline["last_stage"])
    return out + "\n"


def report_text(run, top=10):
    """The report's text view of report_run's result, lists cut to `top`."""
    doc = run["doc"]
    out = "plan: none (no META): every parameter replicated\n" if run["without_meta"] else ""
    if doc["mesh"]:
        out += f"mesh: {mesh_text(doc['mesh'])} (from " + (
            "--mesh" if doc["mesh_source"] == "--mesh" else "parallel_dims") + ")\n"
    else:
        out += "mesh: " + ("none fixed" if doc["swept"] else
                           "none, every axis counts as size 1") + "\n"
    if run["meshes"]:
        out += answer_lines(run)  # the answer first
    out += stack_line(run)
    pp = doc["mesh"].get("pp", 1) > 1
    if run["meshes"] and (doc["swept"] or pp):
        # The rank-0 block is of the fixed axes with the swept ones and pp at size 1.
        shown = {a: 1 if a == "pp" else doc["mesh"].get(a, 1) for a in run["meshes"][0]["mesh"]}
        why = (("the fixed axes above, the swept axes" if doc["mesh"] else
                "no axis fixed, the swept axes") if doc["swept"] else "the mesh above with pp")
        out += (f"rank 0 below is of {mesh_text(shown)}: {why}"
                + (" and pp" if doc["swept"] and pp else "") + " at size 1"
                + (" (every stage's parameters)" if pp else "") + "; the meshes table has "
                + ("every swept mesh" if doc["swept"] else "its stages") + "\n")
    if doc["optimizer"] != "none" or run["stage"]:
        recipe = f"recipe {doc['recipe']}" if "recipe" in doc else ""
        out += "rank 0 below counts " + (
            "the weights" + (f" ({recipe})" if recipe else "") if doc["optimizer"] == "none" else
            f"weights, gradients and optimizer state ({doc['optimizer']}"
            + (f", {recipe}" if recipe else "") + ")")
        if run["stage"] and run["meshes"]:
            names = " x ".join(dict.fromkeys(a for a in run["zero_axes"] if a in doc["mesh"]))
            dense, expert = run["rank0_zero"]
            groups = f"{names}, {plural(dense, 'rank')}" if names else "no axis of the mesh"
            if run["expert_params"]:
                groups += f"; experts over edp, {plural(expert, 'rank')}"
            if run["expert_params"] and not run["dense_zero"]:  # a plan of experts only
                groups = f"the experts' edp, {plural(expert, 'rank')}"
            out += (f", after ZeRO stage {run['stage']} over {groups}; LOCAL is the plan's "
                    "piece before it")
        gathers = run["stage"] == 3 and RECIPES[run["case"]["recipe"]]["gathered"]
        out += ", as the meshes table does" + (" but for what ZeRO-3 gathers" if gathers else
                                               "") + "\n"
    if doc["placement_order"]:
        out += "placement order: " + ", ".join(doc["placement_order"]) + "\n"
    planned, uncovered = doc["counts"]["planned_params"], doc["counts"]["uncovered_params"]

    def row(label, count, n):
        return [label, str(count), byte_size(n), str(n)]
    uncovered_label = ("model params, all replicated (no META)" if run["without_meta"] else
                       "uncovered params (whole but for ZeRO)" if run["stage"] else
                       "uncovered params (whole on every rank)")
    out += "\n" + table("LRRR", [
        ["", "PARAMS", "BYTES", "EXACT"],
        row("rank 0, planned params", planned, doc["rank0_bytes"]),
        row("  of which replicated", doc["counts"]["replicated_params"],
            doc["replicated_bytes"]),
        row("planned params at full size", planned, doc["unsharded_bytes"]),
        row(uncovered_label, uncovered, doc["uncovered_bytes"]),
        row("rank 0 total", planned + uncovered, doc["rank0_bytes"] + doc["uncovered_bytes"])])
    if run["meshes"]:
        out += "\nmeshes (worst and best rank over all ranks; uncovered params included):\n"
        out += meshes_text(run)

    def heading(name, shown, total, order, more=""):
        count = f"all {total}" if shown == total else f"top {shown} of {total}"
        return f"\n{name} ({count}, {order}{more}):\n"
    boundaries = doc["boundaries"]
    if boundaries[:top]:
        out += heading("boundaries", len(boundaries[:top]), len(boundaries), "by rank-0 bytes")
        out += table("RRL", [["BYTES", "PARAMS", "BOUNDARY"]] + [
            [byte_size(b["rank0_bytes"]), str(b["params"]), b["fqn"] or "(root)"]
            for b in boundaries[:top]], "  ")
        if top < len(boundaries):
            rest = sum(b["rank0_bytes"] for b in boundaries[top:])
            out += f"  ... {len(boundaries) - top} more, {byte_size(rest)}\n"
    params = doc["params"]
    if params[:top]:
        counts = ("weights only" if doc["optimizer"] == "none" else
                  f"weights, gradients and optimizer state ({doc['optimizer']})")
        after = f", after ZeRO stage {run['stage']}" if run["stage"] and run["meshes"] else ""
        out += heading("params", len(params[:top]), planned, "by rank-0 bytes",
                       f"; BYTES: rank 0's {counts}{after}")
        shape = lambda s: "[" + ", ".join(map(str, s)) + "]"  # noqa: E731
        out += table("RLLLLL", [["BYTES", "DTYPE", "SHAPE", "LOCAL", "PLACEMENTS", "PARAM"]] + [
            [byte_size(p["rank0_bytes"]), p["dtype"] or "-", shape(p["shape"]),
             shape(p["local_shape"]),
             " ".join(f"{a}={t}" for a, t in p["placements"].items()) or "-", p["fqn"]]
            for p in params[:top]], "  ")
    if doc["uncovered"][:top]:
        out += heading("model params" if run["without_meta"] else "uncovered params",
                       len(doc["uncovered"][:top]), uncovered, "by bytes")
        out += table("RLLL", [["BYTES", "DTYPE", "SHAPE", "PARAM"]] + [
            [byte_size(u["bytes"]), u["dtype"] or "-", "[" + ", ".join(map(str, u["shape"])) + "]",
             u["fqn"]] for u in doc["uncovered"][:top]], "  ")
    if doc["findings"]:
        counts = [sum(f["severity"] == s for f in doc["findings"]) for s in SEVERITIES]
        out += "\nfindings: " + ", ".join(plural(n, s) for n, s in zip(counts, SEVERITIES))
        out += " (on stderr)\n"
    return out


def param(fqn, shape, dtype="bfloat16", placements=(), requires_grad=True, stage=("before",)):
    """A planner parameter; `stage` where it sits against the layer stack: ("before",),
    ("layer", N) or ("after",)."""
    return {"fqn": fqn, "shape": list(shape), "dtype": dtype, "requires_grad": requires_grad,
            "placements": [list(p) for p in placements], "stage": list(stage)}


def stacked(layers, expert=None):
    """A small model with a layer stack: an embedding before it, per layer i a dense [6 + i,
    3] on tp (uneven) and a float32 bias, or experts with the placements `expert` instead,
    and after it a norm and a head."""
    ps = [param("embed", [10, 4], placements=[("tp", "S(0)")])]
    for i in range(layers):
        at = ("layer", i)
        ps.append(param(f"layers.{i}.w", [6 + i, 3], placements=[("tp", "S(-1)")], stage=at))
        if expert:
            ps.append(param(f"layers.{i}.experts", [4 + i % 3, 3], placements=expert, stage=at))
        else:
            ps.append(param(f"layers.{i}.b", [5 - i % 2], "float32", stage=at))
    ps += [param("norm", [4], stage=("after",)),
           param("head", [8, 4], placements=[("tp", "S(0)")], stage=("after",))]
    return ps


def deepseek_like(layers, dense_layers, experts):
    """DeepSeek-V3 dimensions (hidden 7168, vocab 129280, MLA ranks 1536/512+64, 128 heads,
    expert width 2048, dense width 18432), fewer layers, experts stacked per layer."""
    h, vocab, heads = 7168, 129280, 128
    ps = [param("model.embed_tokens.weight", [vocab, h], placements=[("tp", "S(0)")])]
    for i in range(layers):
        pre = f"model.layers.{i}."
        att = pre + "self_attn."
        ps += [
            param(pre + "input_layernorm.weight", [h], placements=[("tp", "R")]),
            param(att + "q_a_proj.weight", [1536, h]),
            param(att + "q_a_layernorm.weight", [1536]),
            param(att + "q_b_proj.weight", [heads * 192, 1536], placements=[("tp", "S(0)")]),
            param(att + "kv_a_proj_with_mqa.weight", [512 + 64, h]),
            param(att + "kv_a_layernorm.weight", [512]),
            param(att + "kv_b_proj.weight", [heads * 256, 512], placements=[("tp", "S(0)")]),
            param(att + "o_proj.weight", [h, heads * 128], placements=[("tp", "S(1)")]),
            param(pre + "post_attention_layernorm.weight", [h]),
        ]
        mlp = pre + "mlp."
        if i < dense_layers:
            ps += [param(mlp + "gate_proj.weight", [18432, h], placements=[("tp", "S(0)")]),
                   param(mlp + "up_proj.weight", [18432, h], placements=[("tp", "S(0)")]),
                   param(mlp + "down_proj.weight", [h, 18432], placements=[("tp", "S(1)")])]
            continue
        ps += [
            param(mlp + "gate.weight", [experts, h], placements=[("ep", "R")]),
            param(mlp + "gate.e_score_correction_bias", [experts], "float32", requires_grad=False),
            param(mlp + "experts.gate_up_proj", [experts, 2 * 2048, h],
                  placements=[("ep", "S(0)"), ("tp", "SS(1,2)")]),
            param(mlp + "experts.down_proj", [experts, h, 2048],
                  placements=[("ep", "S(0)"), ("tp", "S(2)")]),
            param(mlp + "shared_experts.gate_proj.weight", [2048, h], placements=[("tp", "S(0)")]),
            param(mlp + "shared_experts.up_proj.weight", [2048, h], placements=[("tp", "S(0)")]),
            param(mlp + "shared_experts.down_proj.weight", [h, 2048], placements=[("tp", "S(1)")]),
        ]
    ps += [param("model.norm.weight", [h]),
           param("lm_head.weight", [vocab, h], placements=[("tp", "S(-1)")])]
    return ps


# a [8,4] bf16 tp=S(0), b [6] float32 tp=R, c [3,2] bf16 tp=S(-1) (uneven dim 0).
HAND_EXAMPLE = [param("a", [8, 4], placements=[("tp", "S(0)")]),
                param("b", [6], "float32", [("tp", "R")]),
                param("c", [3, 2], placements=[("tp", "S(-1)")])]


# docs/capacity.md's folded example: m.a [8,4] bf16 tp=S(0), stacked experts x.w [4,6,2]
# bf16 ep=S(0) tp=R.
FOLDED_EXAMPLE = [param("m.a", [8, 4], placements=[("tp", "S(0)")]),
                  param("x.w", [4, 6, 2], placements=[("ep", "S(0)"), ("tp", "R")])]

# docs/capacity.md's second example: d [5,3] bf16 cp=S(-1) (uneven), n [7] float32
# replicated, e [10,2] bf16 ep=S(-1) (uneven experts).
SECOND_EXAMPLE = [param("d", [5, 3], placements=[("cp", "S(-1)")]),
                  param("n", [7], "float32"),
                  param("e", [10, 2], placements=[("ep", "S(-1)")])]


def cases():
    return [
        {
            "name": "tiny_tp_sweep",
            "axis_order": ["tp"], "fixed": [], "sweeps": [["tp", [4, 1, 3, 2]]],
            "optimizer": "none", "budget": None,
            "params": [param("embed.weight", [10, 4], placements=[("tp", "S(0)")]),
                       param("proj.weight", [6, 5], "float32", [("tp", "S(1)")]),
                       param("norm.weight", [4], placements=[("tp", "R")])],
        },
        {
            "name": "composed_uneven_shards",
            "axis_order": ["ep", "tp"], "fixed": [], "sweeps": [["ep", [1, 2, 3]], ["tp", [2, 4]]],
            "optimizer": "adam", "budget": "300",
            "params": [param("w", [9, 4], placements=[("ep", "S(-1)"), ("tp", "S(-1)")]),
                       param("v", [7, 3], placements=[("tp", "S(-2)")]),
                       param("b", [5], "float32", [("ep", "S(-1)")])],
        },
        {
            "name": "strided_and_extra_axes",
            "axis_order": ["dp", "tp"], "fixed": [["dp", 2]], "sweeps": [["tp", [2, 4, 8]]],
            "optimizer": "momentum", "budget": "0.25KiB",
            "params": [param("a", [10, 2], placements=[("tp", "SS(-1,2)")]),
                       param("c", [16, 3], placements=[("tp", "SS(0,2)"), ("dp", "R")]),
                       param("d", [12], "float16", [("tp", "SS(0,3)")])],
        },
        {
            "name": "dtypes_grads_partial",
            "axis_order": [], "fixed": [["tp", 2], ["cp", 3]], "sweeps": [],
            "optimizer": "adamw", "budget": "1kB",
            "params": [param("f64", [4, 2], "float64", [("tp", "S(0)")]),
                       param("fp8", [8], "float8_e4m3fn", [("cp", "S(0)")]),
                       param("c64", [2, 3], "torch.complex64", [("tp", "P(sum)")]),
                       param("frozen", [6], "bfloat16", [("tp", "S(0)")], requires_grad=False),
                       param("steps", [3], "int64", [("cp", "S(-1)")]),
                       param("flag", [5], "bool", [("tp", "R")]),
                       param("empty", [0, 7], "float32", [("tp", "S(1)")])],
        },
        {
            # docs/capacity.md's hand example, every stage on the one mesh tp=2 dp=4.
            "name": "zero_hand_example_stage_3",
            "axis_order": ["tp", "dp"], "fixed": [["tp", 2], ["dp", 4]], "sweeps": [],
            "optimizer": "adam", "budget": None, "zero": [3, ["dp"]],
            "params": HAND_EXAMPLE,
        },
        {
            # Stages 1 and 2 over a swept dp, an uneven and a strided dim 0, a frozen and a
            # non-float parameter (split at stage 3 only), a 0-dim one (never split), one the
            # plan shards on dp (not split again), and dp ahead of tp in the mesh order (the
            # split still comes after the plan's tp).
            "name": "zero_stages_uneven",
            "axis_order": ["dp", "tp"], "fixed": [["tp", 2]], "sweeps": [["dp", [1, 3, 4]]],
            "optimizer": "adamw", "budget": "400", "zero": [2, ["dp"]],
            "params": [param("w", [7, 3], placements=[("tp", "S(-1)")]),
                       param("s", [10, 2], placements=[("tp", "SS(-1,2)")]),
                       param("frozen", [5, 2], requires_grad=False),
                       param("ids", [6], "int64"),
                       param("scale", [], "float32"),
                       param("e", [8, 2], placements=[("dp", "S(0)")]),
                       param("empty", [0, 3])],
        },
        {
            "name": "zero_stage_1_other_axis",
            "axis_order": ["tp"], "fixed": [["tp", 2]], "sweeps": [["fsdp", [1, 2, 8]]],
            "optimizer": "momentum", "budget": None, "zero": [1, ["fsdp"]],
            "params": [param("w", [9, 4], "float16", [("tp", "S(1)")]),
                       param("b", [9], "float64"),
                       param("frozen", [3, 3], requires_grad=False)],
        },
        {
            "name": "zero_stage_3_over_a_stack",
            "axis_order": ["ep", "tp", "dp"], "fixed": [["tp", 2]],
            "sweeps": [["ep", [1, 2]], ["dp", [2, 5]]],
            "optimizer": "adam", "budget": "2KiB", "zero": [3, ["dp"]],
            "params": [param("experts", [4, 6, 5], placements=[("ep", "S(0)"), ("tp", "SS(1,3)")]),
                       param("x", [5, 4], placements=[("tp", "S(0)"), ("ep", "S(0)")])],
        },
        {
            # docs/capacity.md's worked example of the folded layout (issue 33): 4 devices,
            # edp = 2; 512 bytes on the worst rank without ZeRO, 320 with stage 3.
            "name": "folded_worked_example",
            "axis_order": ["tp"], "layout": "folded",
            "fixed": [["dp", 1], ["cp", 1], ["tp", 4], ["ep", 2], ["pp", 1]], "sweeps": [],
            "optimizer": "adam", "budget": None, "zero": [3, ["dp", "cp"]],
            "params": FOLDED_EXAMPLE,
        },
        {
            "name": "folded_worked_example_no_zero",
            "axis_order": ["tp"], "layout": "folded",
            "fixed": [["dp", 1], ["cp", 1], ["tp", 4], ["ep", 2], ["pp", 1]], "sweeps": [],
            "optimizer": "adam", "budget": None,
            "params": FOLDED_EXAMPLE,
        },
    ] + [
        {
            # docs/capacity.md's second example, every stage in both layouts: dp=4 cp=2
            # ep=4, so ep cuts dp in two (its edp part and its ep part).
            "name": f"second_example_{layout}_stage_{stage}",
            "axis_order": ["cp"], "layout": layout,
            "fixed": [["dp", 4], ["cp", 2], ["ep", 4]], "sweeps": [],
            "optimizer": "adam", "budget": None, "zero": [stage, ["dp", "cp"]],
            "params": SECOND_EXAMPLE,
        }
        for layout in ("folded", "axis") for stage in range(4)
    ] + [
        {
            # ep cuts across dp and cp (12 ranks, ep=4: no axis boundary), and ep=5 does not
            # divide the dense region at all.
            "name": "folded_ep_across_axes",
            "axis_order": ["cp", "tp"], "layout": "folded",
            "fixed": [["dp", 2], ["cp", 3], ["tp", 2]], "sweeps": [["ep", [1, 2, 3, 4, 5, 6]]],
            "optimizer": "adamw", "budget": "1KiB", "zero": [2, ["dp", "cp"]],
            "params": [param("q", [9, 4], placements=[("tp", "S(-1)"), ("cp", "R")]),
                       param("k", [5, 3], "float32", [("cp", "S(-1)")]),
                       param("experts.w", [11, 3, 2], placements=[("ep", "S(-1)"),
                                                                  ("tp", "R")]),
                       param("experts.b", [6], placements=[("ep", "S(0)")]),
                       param("frozen", [7, 2], requires_grad=False)],
        },
        {
            # Two pipeline stages, each laid out alike over the other axes (w on the first,
            # e and n on the last); an extra axis of the dense region comes before dp; ep=3
            # cuts tp's neighbour.
            "name": "folded_stages_and_extra_axis",
            "axis_order": ["tp"], "layout": "folded",
            "fixed": [["pp", 2], ["sp", 2], ["dp", 3], ["tp", 2]],
            "sweeps": [["ep", [2, 3, 6]]],
            "optimizer": "momentum", "budget": None, "zero": [3, ["dp", "cp"]],
            "stack": {"prefix": "blocks", "layers": 2},
            "params": [param("w", [10, 6], placements=[("tp", "S(1)"), ("sp", "S(-1)")],
                             stage=("layer", 0)),
                       param("e", [7, 5], "float32", [("ep", "SS(-1,2)")], stage=("layer", 1)),
                       param("n", [3], stage=("after",))],
        },
        {
            # The axis layout's ZeRO group over dp x cp: a parameter sharded on cp is split
            # over dp only, one sharded on dp over cp only.
            "name": "zero_over_dp_and_cp",
            "axis_order": ["cp", "tp"], "fixed": [["cp", 2], ["tp", 2]],
            "sweeps": [["dp", [1, 3]]],
            "optimizer": "adam", "budget": None, "zero": [1, ["dp", "cp"]],
            "params": [param("a", [7, 4], placements=[("tp", "S(-1)")]),
                       param("b", [9], placements=[("cp", "S(-1)")]),
                       param("c", [5, 2], "float32", [("dp", "S(-1)")])],
        },
        {
            # An uneven stack of 5 layers over pp 1..6 (6 has more stages than layers), the
            # first stages one layer longer, ZeRO-1 over a swept dp, a head tied to the
            # embedding that only the embedding's name holds (a checkpoint's), so the last
            # stage holds it too.
            "name": "stages_uneven_stack",
            "axis_order": ["tp"], "fixed": [["tp", 2]],
            "sweeps": [["pp", [1, 2, 3, 4, 6]], ["dp", [1, 2]]],
            "optimizer": "adam", "budget": "1000", "zero": [1, ["dp", "cp"]],
            "stack": {"prefix": "layers", "layers": 5},
            "tied": [{"params": [0], "elsewhere": [["after"]]}],
            "params": stacked(5),
        },
        {
            # Folded experts in every layer of a stack of 4, split into 2 and 3 stages, ZeRO-3
            # over dp x cp and over edp, a budget less a reserve.
            "name": "stages_folded_experts",
            "axis_order": ["tp"], "layout": "folded",
            "fixed": [["tp", 2], ["dp", 2]], "sweeps": [["ep", [1, 2, 4]], ["pp", [1, 2, 3]]],
            "optimizer": "adamw", "budget": "1KiB", "reserve": "256", "zero": [3, ["dp", "cp"]],
            "stack": {"prefix": "layers", "layers": 4},
            "params": stacked(4, expert=[("ep", "S(-1)")]),
        },
        {
            # --pp-layers 0,3,1: a first stage of no layer (the embedding alone), ZeRO-2.
            "name": "stages_given_layers",
            "axis_order": ["tp"], "fixed": [["tp", 2], ["pp", 3]], "sweeps": [["dp", [1, 3]]],
            "optimizer": "sgd", "budget": None, "zero": [2, ["dp"]],
            "stack": {"prefix": "layers", "layers": 4}, "pp_layers": [0, 3, 1],
            "params": stacked(4),
        },
        {
            # pp > 1 and no stack: such meshes cannot be laid out; pp=1 is counted.
            "name": "stages_without_a_stack",
            "axis_order": ["tp"], "fixed": [["tp", 2]], "sweeps": [["pp", [1, 2]]],
            "optimizer": "none", "budget": None,
            "params": [param("a", [8, 4], placements=[("tp", "S(0)")]), param("b", [3])],
        },
    ] + [
        {
            # docs/capacity.md's second example under the other recipes: uneven pieces
            # chunked with padding (fsdp2), flat shares that do not come out even and round
            # down once a rank (megatron, deepspeed).
            "name": f"recipe_{recipe}_second_example_stage_{stage}",
            "axis_order": ["cp"], "layout": "folded", "recipe": recipe,
            "fixed": [["dp", 4], ["cp", 2], ["ep", 4]], "sweeps": [],
            "optimizer": "adam", "budget": None, "zero": [stage, ["dp", "cp"]],
            "params": SECOND_EXAMPLE,
        }
        for recipe, stages in (("fsdp2", (2, 3)), ("megatron", (0, 1)),
                               ("deepspeed", (1, 2, 3)))
        for stage in stages
    ] + [
        {
            # Folded experts in a stack of 4 over pp and ep, each recipe at its top stage,
            # the experts chunked on dim 1 for the recipes that chunk (experts [4+i%3, 3]).
            "name": f"recipe_{recipe}_stages_folded_experts",
            "axis_order": ["tp"], "layout": "folded", "recipe": recipe,
            "expert_dim": 1 if recipe in ("dtensor", "fsdp2") else 0,
            "fixed": [["tp", 2], ["dp", 2]], "sweeps": [["ep", [1, 2, 4]], ["pp", [1, 2, 3]]],
            "optimizer": "adamw", "budget": "1KiB", "zero": [stage, ["dp", "cp"]],
            "stack": {"prefix": "layers", "layers": 4},
            "params": stacked(4, expert=[("ep", "S(-1)")]),
        }
        for recipe, stage in (("dtensor", 3), ("fsdp2", 3), ("megatron", 1), ("deepspeed", 3))
    ] + [
        {
            # DeepSpeed's estimator at stages 2 and 3 on a replicated model: 2P + 18P/N and
            # 18P/N + 4 x the largest module, P = 10 x 4 + 6 x 5 + 4 = 74 (embed, proj, norm).
            "name": f"recipe_deepspeed_replicated_stage_{stage}",
            "axis_order": [], "recipe": "deepspeed",
            "fixed": [], "sweeps": [["dp", [1, 3, 4]]],
            "optimizer": "adam", "budget": None, "zero": [stage, ["dp", "cp"]],
            "params": [param("embed.weight", [10, 4]), param("proj.weight", [6, 5]),
                       param("proj.bias", [4])],
        }
        for stage in (2, 3)
    ] + [
        {
            "name": "deepseek_like",
            "axis_order": ["ep", "cp", "tp"], "fixed": [["cp", 2]],
            "sweeps": [["tp", [1, 2, 3, 4, 8]], ["ep", [1, 8, 32]]],
            "optimizer": "adam", "budget": "80GiB",
            "params": deepseek_like(layers=4, dense_layers=1, experts=256),
        },
    ]


def main():
    out = []
    for case in cases():
        doc, totals, code = expected(case)
        out.append({**case, "expected_json": json.dumps(doc, separators=(",", ":")),
                    "expected_totals": totals, "expected_exit": code})
    text = json.dumps({"cases": out}, indent=1) + "\n"
    if "--check" in sys.argv[1:]:
        if not FIXTURE.exists() or FIXTURE.read_text() != text:
            print(f"{FIXTURE} is stale: run {sys.argv[0]}", file=sys.stderr)
            return 1
        return 0
    FIXTURE.parent.mkdir(parents=True, exist_ok=True)
    FIXTURE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
