#!/usr/bin/env python3
"""Generates the golden cases of testdata/cases beyond the copied conformance seed.

    make_cases.py [--out DIR] [--check]

Inputs are written here; expected.json comes from freeze_oracle.py; expected.err is
chosen by hand (a JSON Pointer, or FILE:LINE:COL for syntax errors, where the offset is
known by construction of the bad text). Every case is also checked against hand-written
fragments (`must`) so an oracle bug cannot silently become a golden expectation.
Output is deterministic. `--check` regenerates into a temporary directory and fails if
the tree differs from DIR.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import shutil
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import freeze_oracle  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
CONFORMANCE_NAMES = {
    "corners", "deepseek-4l", "dense-llama-2l", "err-bad-placement-type", "err-duplicate-key",
    "err-missing-boundary", "err-no-such-param", "err-syntax", "err-unknown-field",
    "moe-qwen-2l", "tiny", "tiny-base",
}


# --------------------------------------------------------------------------------------
# Building blocks
# --------------------------------------------------------------------------------------

def shard(dim, **extra):
    return {"$placement": "Shard", "dim": dim, **extra}


def strided(dim, factor, **extra):
    return {"$placement": "StridedShard", "dim": dim, "split_factor": factor, **extra}


def partial(op=None):
    return {"$placement": "Partial"} if op is None else {"$placement": "Partial", "reduce_op": op}


R = {"$placement": "Replicate"}


def target(obj):
    return {"$target": obj}


def fn(name):
    return {"$callable": name}


MODEL_MODULES = {
    "": "Net", "emb": "Embedding", "lin": "Linear", "blk": "Block", "blk.attn": "Attention",
    "blk.mlp": "MLP",
}
MODEL_PARAMS = {
    "emb.weight": {"shape": [100, 4], "dtype": "bfloat16"},
    "lin.weight": {"shape": [8, 4], "dtype": "float32", "requires_grad": True},
    "lin.bias": {"shape": [8], "dtype": "float32", "requires_grad": False},
    "blk.w": {"shape": [4, 4, 2]},
    "blk.attn.qkv": {"shape": [12, 4]},
    "blk.mlp.up": {"shape": [16, 4]},
    "lm_head.weight": {"shape": [100, 4]},
}


def model(modules=None, params=None, extra_modules=None, no_params=False, **top):
    doc = {"format": "hpfreeze.model/v1",
           "modules": dict(MODEL_MODULES if modules is None else modules)}
    doc["modules"].update(extra_modules or {})
    if not no_params:
        doc["parameters"] = MODEL_PARAMS if params is None else params
    doc.update(top)
    return doc


def plan(modules, **top):
    doc = {"format": "hpfreeze.plan/v1"}
    doc.update(top)
    doc["modules"] = modules
    return doc


LIN = {"params": {"weight": {"tp": shard(0)}}}


def lin_with(**fields):
    """Module spec for `lin` (weight sharded on tp) plus the given fields."""
    return {"lin": {"params": {"weight": {"tp": shard(0)}}, **fields}}


def dumps(doc, ascii_only=False) -> bytes:
    return (json.dumps(doc, indent=1, ensure_ascii=ascii_only) + "\n").encode("utf-8")


def line_col(prefix: bytes) -> str:
    """1-based line and byte column of the byte right after `prefix`."""
    line = prefix.count(b"\n") + 1
    col = len(prefix) - (prefix.rfind(b"\n") + 1) + 1
    return f"{line}:{col}"


@dataclass
class Case:
    name: str
    plan: object
    model: object = None
    base: object = None
    args: str = ""
    err: str | None = None          # expected.err substring; None for a success case
    must: list[str] = field(default_factory=list)   # fragments the expected output holds
    warn: list[str] = field(default_factory=list)   # expected.warn lines


CASES: list[Case] = []


def case(name, plan_doc, model_doc=None, **kw):
    CASES.append(Case(name, plan_doc, model() if model_doc is None else model_doc, **kw))


# --------------------------------------------------------------------------------------
# Section 2 field table: every kind and write condition
# --------------------------------------------------------------------------------------

case("field-params-null-empty-present", plan({
    "lin": {"params": None, "is_boundary": True},
    "emb": {"params": {}},
    "blk": {"params": {"w": {}}},
    "blk.attn": {"params": {"qkv": {"tp": R, "cp": "R"}}},
    "blk.mlp": {},
}), must=['"lin": {\n      "is_boundary": true\n    }', '"emb": {\n      "params": {}\n    }',
          '"w": {}', '"blk.mlp": {}', '"frozen_sharded_params": []'])

case("field-named-placements-falsy", plan({
    "lin": {"in_src": False, "in_dst": 0, "out_src": "", "out_dst": []},
    "emb": {"in_src": 0.0, "in_dst": {}, "out_src": None, "out_dst": -0.0},
    "blk": {"in_src": None, "in_dst": None, "out_src": None, "out_dst": None},
}), must=['"lin": {\n      "in_dst": {},\n      "in_src": {},\n      "out_dst": {},\n'
          '      "out_src": {}\n    }', '"emb": {\n      "in_dst": {},\n      "in_src": {},\n'
          '      "out_dst": {}\n    }', '"blk": {}'])

case("field-named-placements-nested", plan({
    "blk": {
        "in_src": {
            "x": {"tp": shard(1), "cp": None},
            "y": None,
            "z": [R, fn("gather"), [partial("max"), 7]],
            "t": target({"_target_": "pkg.mod.Cls", "inner": shard(0), "list": [1, None]}),
            "s": {"tp": "S(x)"},
            "num": 3,
            "direct": shard(0),
            "deep": {"a": {"b": {"c": {"tp": strided(0, 2, uneven_shard=True)}}}},
        },
        "out_dst": {"output": {"tp": partial(), "cp": R}},
    },
}), must=['"cp": null', '"y": null', '"R",\n          "gather",\n          [\n'
          '            "P(max)",\n            7\n          ]',
          '"inner": {\n            "$placement": "Shard",\n            "dim": 0\n          }',
          '"tp": "S(x)"', '"tp": "SS(-1,2)"', '"direct": "S(0)"', '"tp": "P(sum)"'])

case("field-value-to-dict-deep", plan({
    "blk": {
        "inner_wrapper": target({"_target_": "pkg.cp_wrapper", "causal": True,
                                 "kw": {"$callable": "not_interpreted"}}),
        "inner_out_src": {"output": [[partial("avg")], {"a": fn("g"), "b": [shard(1), "S(1)"]}]},
        "local_compute_fn": fn("moe_local_compute"),
    },
    "blk.attn": {"inner_wrapper": [target({"_target_": "a"}), fn("f"), {"k": [R]}]},
}), must=['"$callable": "not_interpreted"', '"local_compute_fn": "moe_local_compute"',
          '"match": "blk"', '"match": "blk.attn"', '"P(avg)"', '"a": "g"',
          '"b": [\n              "S(1)",\n              "S(1)"\n            ]'])

case("field-value-to-dict-falsy-written", plan({
    "lin": {"inner_wrapper": False, "inner_out_src": 0, "local_compute_fn": ""},
    "emb": {"inner_wrapper": [], "inner_out_src": {}, "local_compute_fn": 0.0},
    "blk": {"inner_wrapper": None, "inner_out_src": None, "local_compute_fn": None},
}), must=['"inner_out_src": 0,\n      "inner_wrapper": false,\n      "local_compute_fn": "",\n'
          '      "match": "lin"', '"inner_out_src": {},\n      "inner_wrapper": [],\n'
          '      "local_compute_fn": 0.0,\n      "match": "emb"'])

case("field-value-to-dict-scalars", plan({
    "lin": {"inner_wrapper": "by_name", "inner_out_src": 2.5, "local_compute_fn": True},
}), must=['"inner_out_src": 2.5', '"inner_wrapper": "by_name"', '"local_compute_fn": true'])

case("field-name-list-falsy-not-written", plan({
    "lin": {"out_names": [], "_deferred_bias_params": {}},
    "emb": {"out_names": False, "_deferred_bias_params": 0},
    "blk": {"out_names": "", "_deferred_bias_params": None},
    "blk.attn": {"out_names": 0.0, "_deferred_bias_params": []},
    "blk.mlp": {"out_names": None},
}), must=['"lin": {}', '"emb": {}', '"blk": {}', '"blk.attn": {}', '"blk.mlp": {}'])

case("field-name-list-present", plan({
    "lin": {"out_names": ["o", 1, None, {"a": [1.5]}, ["x"]], "_deferred_bias_params": ["bias"]},
}), must=['"deferred_bias_params": [\n        "bias"\n      ]', '"out_names": [\n        "o",\n'
          '        1,\n        null,\n'])

case("field-attr-list", plan({
    "lin": {"tp_divide_attrs": []},
    "emb": {"tp_divide_attrs": ["num_heads", "head_dim", 2, None]},
    "blk": {"tp_divide_attrs": None},
}), must=['"lin": {\n      "tp_divide_attrs": []\n    }', '"head_dim",\n        2,\n        null',
          '"blk": {}'])

case("field-scalar", plan({
    "lin": {"is_boundary": False, "region_dispatch": 0},
    "emb": {"is_boundary": "yes", "region_dispatch": {"k": [1, 2], "m": None}},
    "blk": {"is_boundary": None, "region_dispatch": ""},
    "blk.attn": {"is_boundary": [], "region_dispatch": 1e16},
}), must=['"is_boundary": false,\n      "region_dispatch": 0', '"is_boundary": "yes"',
          '"blk": {\n      "region_dispatch": ""\n    }', '"region_dispatch": 1e+16'])

case("field-plain-inner-target", plan({
    "lin": {"inner_target": ""},
    "emb": {"inner_target": False},
    "blk": {"inner_target": {"_target_": "pkg.inner", "n": 2}},
    "blk.attn": {"inner_target": [1, "two"]},
    "blk.mlp": {"inner_target": None},
}), must=['"inner_target": "",\n      "match": "lin"', '"inner_target": false,\n'
          '      "match": "emb"', '"_target_": "pkg.inner"'])

case("field-dict-copy", plan({
    "lin": {"_ep_stack": {}},
    "emb": {"_ep_stack": None},
    "blk": {"_ep_stack": {"experts": [0, 1], "w": {"k": None}, "f": 0.5}},
    "blk.attn": {"_ep_stack": False},
}), must=['"ep_stack": {\n        "experts": [\n          0,\n          1\n        ],\n'
          '        "f": 0.5,'])

case("field-int-truthy", plan({
    "lin": {"_ep_size": 0},
    "emb": {"_ep_size": 0.0},
    "blk": {"_ep_size": 8},
    "blk.attn": {"_ep_size": 2.5},
    "blk.mlp": {"_ep_size": "4"},
    "": {"_ep_size": True},
}),
    must=['"ep_size": true,\n      "match": ""', '"ep_size": 8,\n      "match": "blk"',
          '"ep_size": 2.5', '"ep_size": "4"'])

case("field-int-truthy-more", plan({
    "lin": {"_ep_size": False},
    "emb": {"_ep_size": -1},
    "blk": {"_ep_size": ""},
    "blk.attn": {"_ep_size": [0]},
    "blk.mlp": {"_ep_size": {"a": None}},
    "": {"_ep_size": None},
}), must=['"ep_size": -1,\n      "match": "emb"', '"ep_size": [\n        0\n      ]',
          '"ep_size": {\n        "a": null\n      }'])

case("field-all-sixteen", plan({
    "blk": {
        "params": {"w": {"tp": shard(0), "cp": R}},
        "in_src": {"hidden_states": {"tp": shard(1)}},
        "in_dst": {"hidden_states": {"tp": R}},
        "out_src": {"output": {"tp": partial("sum")}},
        "out_dst": {"output": {"tp": shard(0)}},
        "out_names": ["output"],
        "tp_divide_attrs": ["num_heads"],
        "is_boundary": True,
        "region_dispatch": "moe",
        "_deferred_bias_params": ["b"],
        "inner_wrapper": target({"_target_": "pkg.ring", "causal": True}),
        "inner_target": "pkg.inner_attn",
        "inner_out_src": {"output": {"cp": shard(1)}},
        "local_compute_fn": fn("local_fn"),
        "_ep_stack": {"ep": [0, 1]},
        "_ep_size": 2,
        "_tp_local_attr_plan": {"x": 1},
        "_is_terminal": True,
        "_needs_cp_attn": False,
        "_resolved_inner_wrapper": "w",
        "_resolved_inner_target": None,
        "_head_count_owner": "blk.attn",
    },
}), must=['"deferred_bias_params"', '"ep_stack"', '"ep_size": 2', '"region_dispatch": "moe"',
          '"inner_target": "pkg.inner_attn"', '"frozen_sharded_params": [\n    "blk.w"\n  ]'])

case("exempt-keys-garbage", plan({
    "lin": {
        "params": {"weight": {"tp": shard(0)}},
        "_tp_local_attr_plan": {"$placement": "Bogus", "$target": 1},
        "_is_terminal": "S(x)",
        "_needs_cp_attn": [{"$callable": 5}],
        "_resolved_inner_wrapper": {"$target": "not an object"},
        "_resolved_inner_target": None,
        "_head_count_owner": {"a": {"$placement": "Shard"}, "b": {"$placement": "RaggedShard"}},
    },
}), must=['"lin": {\n      "params": {\n        "weight": {\n          "tp": "S(0)"\n'
          '        }\n      }\n    }', '"injections": []'])

case("injections-plan-order", plan({
    "blk.mlp": {"_ep_size": 4},
    "lin": {"params": {"weight": {"tp": shard(0)}}},
    "blk": {"local_compute_fn": fn("z_fn")},
    "emb": {"inner_target": "t"},
}), must=['"match": "blk.mlp"\n    },\n    {\n      "local_compute_fn": "z_fn",\n'
          '      "match": "blk"\n    },\n    {\n      "inner_target": "t",\n      "match": "emb"'])

# Typed values where a field forbids them, and other kind-rule violations.
case("err-typed-in-scalar", plan(lin_with(is_boundary=fn("f"))), err="/modules/lin/is_boundary")
case("err-typed-in-scalar-nested", plan(lin_with(region_dispatch={"a": [R]})),
     err="/modules/lin/region_dispatch")
case("err-typed-in-plain", plan(lin_with(inner_target=target({"_target_": "x"}))),
     err="/modules/lin/inner_target")
case("err-typed-in-name-list", plan(lin_with(out_names=["a", R])), err="/modules/lin/out_names")
case("err-typed-in-deferred-bias", plan(lin_with(_deferred_bias_params=[{"x": fn("f")}])),
     err="/modules/lin/_deferred_bias_params")
case("err-typed-in-attr-list", plan(lin_with(tp_divide_attrs=[[fn("f")]])),
     err="/modules/lin/tp_divide_attrs")
case("err-typed-in-dict-copy", plan(lin_with(_ep_stack={"a": target({})})),
     err="/modules/lin/_ep_stack")
case("err-typed-dict-copy-top", plan(lin_with(_ep_stack=fn("f"))), err="/modules/lin/_ep_stack")
case("err-typed-in-int-truthy", plan(lin_with(_ep_size=shard(0))), err="/modules/lin/_ep_size")
case("err-name-list-not-array", plan(lin_with(out_names="abc")), err="/modules/lin/out_names")
case("err-attr-list-falsy-object", plan(lin_with(tp_divide_attrs={})),
     err="/modules/lin/tp_divide_attrs")
case("err-attr-list-false", plan(lin_with(tp_divide_attrs=False)),
     err="/modules/lin/tp_divide_attrs")
case("err-dict-copy-not-object", plan(lin_with(_ep_stack=[1])), err="/modules/lin/_ep_stack")
case("err-named-placements-array", plan(lin_with(in_src=[1])), err="/modules/lin/in_src")
case("err-named-placements-true", plan(lin_with(in_dst=True)), err="/modules/lin/in_dst")
case("err-named-placements-typed", plan(lin_with(out_src=R)), err="/modules/lin/out_src")

# --------------------------------------------------------------------------------------
# Placements: typed objects and canonical strings (section 1)
# --------------------------------------------------------------------------------------

case("placements-typed-all", plan({
    "blk": {"params": {"w": {
        "a": shard(1), "b": shard(1, uneven_shard=False), "c": shard(1, uneven_shard=True),
        "d": strided(0, 2), "e": strided(2, 8, uneven_shard=True), "f": R, "g": partial(),
        "h": partial("max"), "i": partial("f(x) y"), "j": shard(0, uneven_shard=True),
    }}},
}), must=['"a": "S(1)"', '"b": "S(1)"', '"c": "S(-2)"', '"d": "SS(0,2)"', '"e": "SS(-3,8)"',
          '"f": "R"', '"g": "P(sum)"', '"h": "P(max)"', '"i": "P(f(x) y)"', '"j": "S(-1)"'])

case("params-canonical-strings", plan({
    "blk": {"params": {"w": {
        "a": "R", "b": "S(0)", "c": "S(-1)", "d": "S(+3)", "e": "S(007)", "f": "S(-0)",
        "g": "S(1_0)", "h": "SS( 0 , 2 )", "i": "SS(-2,3)", "j": "P(sum)", "k": "P( avg )",
        "l": "P(a(b))", "m": "S(\t1 )", "n": "SS(+1,0_2)", "o": "S(9223372036854775807)",
        "p": "S(-9223372036854775808)", "q": "P())",
    }}},
}), model_doc=model(no_params=True),
    must=['"a": "R"', '"c": "S(-1)"', '"d": "S(3)"', '"e": "S(7)"', '"f": "S(0)"', '"g": "S(10)"',
          '"h": "SS(0,2)"', '"i": "SS(-2,3)"', '"k": "P( avg )"', '"l": "P(a(b))"', '"m": "S(1)"',
          '"n": "SS(1,2)"', '"o": "S(9223372036854775807)"', '"p": "S(-9223372036854775808)"',
          '"q": "P())"'])

for suffix, text in (
        ("empty", ""), ("word", "Shard(0)"), ("lower", "s(0)"), ("space-r", " R"),
        ("ss-one-arg", "SS(0)"), ("ss-three-args", "SS(0,2,3)"), ("ss-zero-factor", "SS(0,0)"),
        ("ss-negative-factor", "SS(0,-2)"), ("p-empty", "P()"), ("trailing-comma", "S(0,)"),
        ("no-digits", "S()"), ("letters", "S(x)"), ("non-ascii-digit", "S(\u0663)"),
        ("non-ascii-op", "P(\u03a3)"), ("double-underscore", "S(1__0)"),
        ("trailing-underscore", "S(1_)"), ("overflow", "S(9223372036854775808)"),
        ("float", "S(1.0)"), ("newline", "S(0\n)"), ("trailing-text", "S(0)x")):
    case(f"err-canonical-{suffix}", plan({"lin": {"params": {"weight": {"tp": text}}}}),
         err="/modules/lin/params/weight/tp")

for suffix, leaf in (
        ("ragged", {"$placement": "RaggedShard", "dim": 0}),
        ("missing-dim", {"$placement": "Shard"}),
        ("missing-split-factor", {"$placement": "StridedShard", "dim": 0}),
        ("split-factor-zero", strided(0, 0)),
        ("split-factor-float", strided(0, 2.0)),
        ("uneven-null", shard(0, uneven_shard=None)),
        ("uneven-int", shard(0, uneven_shard=1)),
        ("dim-float", shard(0.0)),
        ("dim-bool", shard(True)),
        ("dim-string", shard("0")),
        ("dim-null", shard(None)),
        ("dim-too-big", shard(2**63)),
        ("replicate-with-dim", {"$placement": "Replicate", "dim": 0}),
        ("shard-with-reduce-op", shard(0, reduce_op="sum")),
        ("reduce-op-empty", partial("")),
        ("reduce-op-null", {"$placement": "Partial", "reduce_op": None}),
        ("reduce-op-number", {"$placement": "Partial", "reduce_op": 1}),
        ("type-not-string", {"$placement": 1}),
        ("type-lowercase", {"$placement": "shard", "dim": 0}),
        ("two-tags", {"$placement": "Replicate", "$callable": "f"}),
        ("leaf-null", None),
        ("leaf-number", 0),
        ("leaf-plain-object", {"dim": 0}),
        ("leaf-callable", fn("f")),
        ("leaf-target", target({"_target_": "x"})),
        ("leaf-array", [R])):
    case(f"err-placement-{suffix}", plan({"lin": {"params": {"weight": {"tp": leaf}}}}),
         err="/modules/lin/params/weight/tp")

# reduce_op must read back from P(op) (canonical-string parser: ASCII, no newline); a
# $callable name must be a non-empty string. Plain-JSON places ($target contents, the
# plan's meta, special_handlers, the base) copy look-alike tags whatever they hold.
for suffix, op in (("non-ascii", "su\u00e9"), ("newline", "sum\nmax"), ("only-newline", "\n"),
                   ("nbsp", "max\u00a0")):
    case(f"err-reduce-op-{suffix}",
         plan({"lin": {"params": {"weight": {"tp": partial(op)}}}}),
         err="/modules/lin/params/weight/tp/reduce_op")
case("err-reduce-op-non-ascii-in-named", plan(lin_with(out_src={"y": {"tp": partial("\u03a3")}})),
     err="/modules/lin/out_src/y/tp/reduce_op")
case("err-reduce-op-newline-in-injection",
     plan(lin_with(inner_out_src={"output": [partial("avg\n")]})),
     err="/modules/lin/inner_out_src/output/0/reduce_op")
case("reduce-op-ascii-reads-back", plan({"lin": {"params": {"weight": {
    "tp": partial("a)b"), "cp": partial(" sum "), "ep": partial("x\ty"), "dp": partial("c\rd"),
    "sp": partial("\x7f"), "pp": partial("P(sum)")}}}}),
    must=['"tp": "P(a)b)"', '"cp": "P( sum )"', '"ep": "P(x\\ty)"', '"dp": "P(c\\rd)"',
          '"sp": "P(\\u007f)"', '"pp": "P(P(sum))"'])
case("err-callable-empty", plan(lin_with(local_compute_fn=fn(""))),
     err="/modules/lin/local_compute_fn/$callable")
case("err-callable-empty-nested", plan(lin_with(inner_wrapper={"k": [fn("ok"), fn("")]})),
     err="/modules/lin/inner_wrapper/k/1/$callable")
case("plain-json-look-alike-tags", plan(
    {"lin": {**LIN, "inner_wrapper": target({"_target_": "w", "f": fn(""), "p": partial("\u00e9"),
                                              "two": {"$placement": "R", "$callable": 1}})}},
    special_handlers={"x": fn(""), "y": {"$placement": "Partial", "reduce_op": "\n"}},
    meta={"source": {"$target": 5}, "model_name": {"$callable": ""}}),
    must=['"f": {\n          "$callable": ""\n        }', '"reduce_op": "\\u00e9"',
          '"x": {\n      "$callable": ""\n    }', '"reduce_op": "\\n"',
          '"source": {\n    "$target": 5\n  }', '"model_name": {\n    "$callable": ""\n  }'])
case("base-look-alike-tags", plan({"lin": LIN}), base={
    "outputs": {"$placement": "Bogus"}, "parallel_dims": {"$callable": ""}},
    must=['"outputs": {\n    "$placement": "Bogus"\n  }',
          '"parallel_dims": {\n    "$callable": ""\n  }'])
case("plan-null-module-keys", plan({"lin": {
    "params": {"weight": {"tp": shard(0)}}, "in_src": None, "out_names": None,
    "is_boundary": None, "inner_wrapper": None, "_ep_stack": None, "_ep_size": None,
    "_tp_local_attr_plan": None}}, mesh_dim_names=None, tied_pairs=None),
    must=['"lin": {\n      "params": {\n        "weight": {\n          "tp": "S(0)"\n'
          '        }\n      }\n    }', '"injections": []'])
case("err-two-tags-in-named", plan(lin_with(in_src={"x": {"$target": {}, "$callable": "f"}})),
     err="/modules/lin/in_src/x")
case("err-target-not-object", plan(lin_with(inner_wrapper=target("pkg.f"))),
     err="/modules/lin/inner_wrapper")
case("err-target-null", plan(lin_with(inner_out_src={"output": [target(None)]})),
     err="/modules/lin/inner_out_src/output/0")
case("err-target-extra-key", plan(lin_with(inner_wrapper={"$target": {}, "causal": True})),
     err="/modules/lin/inner_wrapper")
case("err-callable-not-string", plan(lin_with(local_compute_fn=fn(3))),
     err="/modules/lin/local_compute_fn")
case("err-callable-extra-key", plan(lin_with(local_compute_fn={"$callable": "f", "x": 1})),
     err="/modules/lin/local_compute_fn")
case("err-bad-placement-in-value-to-dict", plan(lin_with(
    inner_out_src={"output": {"cp": {"$placement": "Shard", "dim": 0, "split_factor": 2}}})),
     err="/modules/lin/inner_out_src/output/cp")
case("err-bad-placement-in-named", plan(lin_with(in_src={"x": [R, {"$placement": "Bogus"}]})),
     err="/modules/lin/in_src/x/1")
case("err-param-entry-not-object", plan({"lin": {"params": {"weight": "S(0)"}}}),
     err="/modules/lin/params/weight")
case("err-param-entry-placement", plan({"lin": {"params": {"weight": shard(0)}}}),
     err="/modules/lin/params/weight")
case("err-params-not-object", plan({"lin": {"params": []}}), err="/modules/lin/params")
case("err-params-false", plan({"lin": {"params": False}}), err="/modules/lin/params")

# --------------------------------------------------------------------------------------
# Negative real dims and verification (section 4)
# --------------------------------------------------------------------------------------

NEGATIVE_PLAN = plan({
    "lin": {"params": {"weight": {"tp": shard(-1), "cp": "S(-1)"}}},
    "blk": {"in_src": {"x": {"tp": shard(-2)}}, "inner_out_src": [strided(-1, 2)]},
})
case("negative-dim-warning", NEGATIVE_PLAN, warn=["/modules/lin/params/weight/tp"],
     must=['"tp": "S(-1)"', '"cp": "S(-1)"', '"tp": "S(-2)"', '"SS(-1,2)"'])
case("err-negative-dim-strict", NEGATIVE_PLAN, args="--strict",
     err="/modules/lin/params/weight/tp")
case("negative-dim-in-injection-only", plan({
    "lin": {"params": {"weight": {"tp": shard(0)}}},
    "blk": {"local_compute_fn": {"k": shard(-3)}},
}), warn=["/modules/blk/local_compute_fn/k"], must=['"k": "S(-3)"'])
case("err-negative-dim-in-injection-strict", plan({
    "lin": {"params": {"weight": {"tp": shard(0)}}},
    "blk": {"local_compute_fn": {"k": shard(-3)}},
}), args="--strict", err="/modules/blk/local_compute_fn/k")
case("negative-dim-uneven-true", plan({
    "lin": {"params": {"weight": {"tp": shard(-1, uneven_shard=True)}}},
}), warn=["/modules/lin/params/weight/tp"], must=['"tp": "S(0)"'])
case("strict-no-real-negative", plan({
    "lin": {
        "params": {"weight": {"tp": "S(-1)", "cp": shard(0, uneven_shard=True),
                              "ep": "SS(-2,2)"}},
        "inner_wrapper": target({"_target_": "x", "p": shard(-1)}),
        "_head_count_owner": shard(-1),
    },
}), args="--strict", must=['"tp": "S(-1)"', '"cp": "S(-1)"', '"ep": "SS(-2,2)"'])
case("dim-range-edges", plan({
    "lin": {"params": {"weight": {"tp": shard(1), "cp": shard(-2), "ep": "S(-2)"}}},
    "blk": {"params": {"w": {"tp": strided(2, 2), "cp": strided(-3, 4)}}},
}), warn=["/modules/lin/params/weight/cp"], must=['"cp": "S(-2)"', '"ep": "S(-2)"'])

case("rank-zero-without-dims", plan({
    "lin": {"params": {"weight": {"tp": R, "cp": partial("max"), "ep": "P(avg)"}}},
}), model_doc=model(params={"lin.weight": {"shape": []}}), must=['"cp": "P(max)"'])
case("negative-dim-root-boundary", plan({
    "": {"params": {"lm_head.weight": {"tp": shard(-1)}}},
    "lin": {"params": {"weight": {"tp": shard(-1)}}},
}), warn=["/modules//params/lm_head.weight/tp"],
    must=['"lm_head.weight": {\n          "tp": "S(-1)"'])
case("err-dim-out-of-range", plan({"lin": {"params": {"weight": {"tp": shard(2)}}}}),
     err="/modules/lin/params/weight/tp")
case("err-negative-dim-out-of-range", plan({"lin": {"params": {"weight": {"cp": shard(-3)}}}}),
     err="/modules/lin/params/weight/cp")
case("err-uneven-string-dim-out-of-range",
     plan({"lin": {"params": {"weight": {"tp": "S(-3)"}}}}), err="/modules/lin/params/weight/tp")
case("err-strided-dim-out-of-range", plan({"blk": {"params": {"w": {"cp": strided(3, 2)}}}}),
     err="/modules/blk/params/w/cp")
case("err-dim-rank-zero", plan({"lin": {"params": {"weight": {"tp": shard(0)}}}}),
     model_doc=model(params={"lin.weight": {"shape": []}}), err="/modules/lin/params/weight/tp")
case("err-missing-param-replicate-only", plan({"lin": {"params": {"scale": {"tp": R}}}}),
     err="/modules/lin/params/scale")
case("err-tied-name-missing", plan({"lin": {"params": {"weight": {"tp": shard(0)}}}},
                                   tied_pairs=[["emb.weight", "lm_head.weight"],
                                               ["lin.weight", "head.weight"]]),
     err="/tied_pairs/1/1")

VERIFY_FAILING_PLAN = plan({
    "lin": {"params": {"weight": {"tp": shard(5)}, "ghost": {"tp": "S(0)"}}},
}, tied_pairs=[["lin.weight", "nowhere.weight"]])
case("no-verify-passes", VERIFY_FAILING_PLAN, args="--no-verify",
     must=['"ghost": {\n          "tp": "S(0)"', '"nowhere.weight"', '"lin.ghost"'])
case("err-no-verify-missing-boundary", plan({"lin": LIN, "ghost": {}}), args="--no-verify",
     err="/modules/ghost")
case("model-without-parameters", VERIFY_FAILING_PLAN, model_doc=model(no_params=True),
     must=['"lin.ghost",\n    "lin.weight"'])
case("model-parameters-null", VERIFY_FAILING_PLAN, model_doc=model(params=None, no_params=True,
                                                                   parameters=None),
     must=['"tp": "S(5)"'])
case("err-model-parameters-empty-object", plan({"lin": {"params": {"weight": {"tp": R}}}}),
     model_doc=model(params={}), err="/modules/lin/params/weight")

# --------------------------------------------------------------------------------------
# FQNs, boundaries, frozen_sharded_params
# --------------------------------------------------------------------------------------

case("root-boundary-fqn", plan({
    "": {"params": {"lm_head.weight": {"tp": shard(0)}, "emb.weight": {"tp": R}}},
    "blk": {"params": {"": {"tp": partial()}, "w": {"tp": R, "cp": R}}},
}), model_doc=model(params={**MODEL_PARAMS, "blk": {"shape": [3]}}),
    must=['"frozen_sharded_params": [\n    "blk",\n    "lm_head.weight"\n  ]',
          '"": "Net"'])
case("root-boundary-empty-param-name", plan({
    "": {"params": {"": {"tp": shard(0)}}},
}), model_doc=model(params={"": {"shape": [4]}}),
    must=['"frozen_sharded_params": [\n    ""\n  ]', '"": {\n      "params": {\n        "": {'])
case("frozen-dedup-sort", plan({
    "a": {"params": {"b.c": {"tp": shard(0)}}},
    "a.b": {"params": {"c": {"tp": "P(sum)"}, "r": {"tp": "R", "cp": R}}},
    "": {"params": {
        "a.b.c": {"tp": strided(0, 2)}, "z.w": {"tp": shard(0)}, "Z.w": {"tp": "S(0)"},
        "\u00e9.w": {"ep": partial("avg")}, "\u4e2d.w": {"tp": shard(0)},
        "\ufb00.w": {"tp": shard(0)}, "\U0001F600.w": {"tp": shard(0)}, "a.w": {"tp": R},
        "n.w": {},
    }},
}), model_doc=model(modules={"": "Root", "a": "A", "a.b": "AB"}, no_params=True),
    must=['"frozen_sharded_params": [\n    "Z.w",\n    "a.b.c",\n    "z.w",\n    "\\u00e9.w",\n'
          '    "\\u4e2d.w",\n    "\\ufb00.w",\n    "\\ud83d\\ude00.w"\n  ]'])
case("sort-keys-code-point-order", plan({
    "\U0001F600": {"params": {}}, "\ufb00": {"params": {}}, "B": {}, "a": {}, "\u00e9": {},
}, special_handlers={"\U0001F600.w": 1, "\ufb00.w": 2, "~": 3, "A": 4, "": 5}),
    model_doc=model(modules={"\U0001F600": "Emoji", "\ufb00": "Lig", "B": "B", "a": "A",
                             "\u00e9": "E"}, no_params=True),
    must=['"boundary_classes": {\n    "B": "B",\n    "a": "A",\n    "\\u00e9": "E",\n'
          '    "\\ufb00": "Lig",\n    "\\ud83d\\ude00": "Emoji"\n  }',
          '"special_handlers": {\n    "": 5,\n    "A": 4,\n    "~": 3,\n'])
case("err-missing-boundary-root", plan({"": {"params": {}}}),
     model_doc=model(modules={"lin": "Linear"}, no_params=True), err="/modules/:")
case("err-missing-boundary-case", plan({"Lin": {"params": {}}}), err="/modules/Lin")
case("err-pointer-escape", plan({"a/b~c": {"params": {"w/x~1": {"tp": {"$placement": "Shrad"}}}}}),
     model_doc=model(extra_modules={"a/b~c": "Odd"}, no_params=True),
     err="/modules/a~1b~0c/params/w~1x~01/tp")
case("err-pointer-escape-verify", plan({"x/y": {"params": {"q~/r": {"tp": R}}}}),
     model_doc=model(extra_modules={"x/y": "Odd"}), err="/modules/x~1y/params/q~0~1r")
case("err-pointer-escape-missing-boundary", plan({"~1": {}}), err="/modules/~01")

# --------------------------------------------------------------------------------------
# Top-level plan keys
# --------------------------------------------------------------------------------------

case("plan-top-level-nulls", {
    "format": None, "mesh_dim_names": None, "tied_pairs": None, "special_handlers": None,
    "meta": None, "sequence_parallel": None, "loss_parallel": None, "modules": {"lin": LIN},
}, must=['"mesh_dim_names": null', '"tied_pairs": []', '"special_handlers": {}',
         '"signature": ""'])
case("plan-without-format", {"modules": {"lin": LIN}, "sequence_parallel": True,
                             "loss_parallel": False}, must=['"frozen_sharded_params": [\n'
                                                            '    "lin.weight"\n  ]'])
case("mesh-dim-names-empty", plan({"lin": LIN}, mesh_dim_names=[]),
     must=['"mesh_dim_names": null'])
case("mesh-dim-names-duplicates", plan({"lin": LIN}, mesh_dim_names=["tp", "tp", "\u03b4", ""]),
     must=['"mesh_dim_names": [\n    "tp",\n    "tp",\n    "\\u03b4",\n    ""\n  ]'])
case("tied-pairs-shapes", plan({"lin": LIN}, tied_pairs=[
    ["lin.weight", "blk.w", "lin.bias"], [], ["emb.weight"]]),
    must=['"tied_pairs": [\n    [\n      "lin.weight",\n      "blk.w",\n      "lin.bias"\n'
          '    ],\n    [],\n    [\n      "emb.weight"\n    ]\n  ]'])
case("special-handlers-any-json", plan({"lin": LIN}, special_handlers={
    "lin.weight": "h", "n": None, "i": 3, "f": 0.5, "b": False, "l": [1, "S(0)"],
    "typed": {"$placement": "Shard", "dim": -1}, "call": {"$callable": 5},
    "\u8fb9\u754c": "\u6a21\u578b"}),
    must=['"typed": {\n      "$placement": "Shard",\n      "dim": -1\n    }',
          '"call": {\n      "$callable": 5\n    }', '"\\u8fb9\\u754c": "\\u6a21\\u578b"'])

case("err-unknown-top-level-key", plan({"lin": LIN}, sharding={}), err="/sharding")
case("err-top-level-attribute-name", plan({"lin": LIN}, _mesh_dim_names=["tp"]),
     err="/_mesh_dim_names")
case("err-plan-format-wrong", plan({"lin": LIN}, format="hpfreeze.plan/v2"), err="/format")
case("err-plan-format-model", plan({"lin": LIN}, format="hpfreeze.model/v1"), err="/format")
case("err-sequence-parallel-not-bool", plan({"lin": LIN}, sequence_parallel=1),
     err="/sequence_parallel")
case("err-loss-parallel-not-bool", plan({"lin": LIN}, loss_parallel="false"),
     err="/loss_parallel")
case("err-mesh-dim-names-not-strings", plan({"lin": LIN}, mesh_dim_names=["tp", 1]),
     err="/mesh_dim_names")
case("err-mesh-dim-names-string", plan({"lin": LIN}, mesh_dim_names="tp"), err="/mesh_dim_names")
case("err-tied-pairs-inner-not-array", plan({"lin": LIN}, tied_pairs=[["lin.weight"], "x"]),
     err="/tied_pairs/1")
case("err-tied-pairs-not-strings", plan({"lin": LIN}, tied_pairs=[["lin.weight", None]]),
     err="/tied_pairs/0")
case("err-special-handlers-not-object", plan({"lin": LIN}, special_handlers=[]),
     err="/special_handlers")
case("err-modules-missing", {"format": "hpfreeze.plan/v1"}, err="plan.json")
case("err-modules-null", {"modules": None}, err="/modules")
case("err-modules-not-object", {"modules": [LIN]}, err="/modules")
case("err-spec-not-object", plan({"lin": None}), err="/modules/lin")
case("err-spec-array", plan({"lin": LIN, "emb": []}), err="/modules/emb")
case("err-empty-modules", plan({}), err="/modules")
case("allow-empty", plan({}, mesh_dim_names=["tp"]), args="--allow-empty",
     must=['"param_plan": {}', '"boundary_classes": {}', '"sharding_plan": true',
           '"mesh_dim_names": [\n    "tp"\n  ]'])
case("err-spec-key-meta-name", plan(lin_with(deferred_bias_params=["b"])),
     err="/modules/lin/deferred_bias_params")
case("err-spec-key-ep-size", plan(lin_with(ep_size=2)), err="/modules/lin/ep_size")
case("err-spec-key-null-unknown", plan(lin_with(bogus=None)), err="/modules/lin/bogus")
case("err-plan-not-object", [{"modules": {"lin": LIN}}], err="plan.json")

# --------------------------------------------------------------------------------------
# Model dump (section 3)
# --------------------------------------------------------------------------------------

case("model-nulls-and-extras", plan({"lin": LIN}), model_doc={
    "format": None, "modules": {"": "Net", "lin": "Linear", "unused": "Whatever"},
    "parameters": {"lin.weight": {"shape": [8, 4], "dtype": None, "requires_grad": None},
                   "unused.p": {"shape": [0, 18446744073709551615]}}},
    must=['"boundary_classes": {\n    "lin": "Linear"\n  }'])
case("model-without-format", plan({"lin": LIN}), model_doc={"modules": {"lin": "Linear"}},
     must=['"lin": "Linear"'])
case("err-model-format-wrong", plan({"lin": LIN}), model_doc=model(format="hpfreeze.plan/v1"),
     err="/format")
case("err-model-unknown-key", plan({"lin": LIN}), model_doc=model(buffers={}), err="/buffers")
case("err-model-class-not-string", plan({"lin": LIN}), model_doc=model(extra_modules={"zz": 5}),
     err="/modules/zz")
case("err-model-modules-missing", plan({"lin": LIN}), model_doc={"parameters": MODEL_PARAMS},
     err="model.json")
case("err-model-modules-not-object", plan({"lin": LIN}), model_doc={"modules": ["lin"]},
     err="/modules")
case("err-model-parameters-not-object", plan({"lin": LIN}), model_doc=model(params=[]),
     err="/parameters")
case("err-model-param-not-object", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": [8, 4]}), err="/parameters/lin.weight")
case("err-model-shape-negative", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"shape": [8, -1]}}),
     err="/parameters/lin.weight/shape")
case("err-model-shape-float", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"shape": [8.0, 4]}}),
     err="/parameters/lin.weight/shape")
case("err-model-shape-bool", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.bias": {"shape": [True]}}),
     err="/parameters/lin.bias/shape")
case("err-model-shape-missing", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"dtype": "float32"}}),
     err="/parameters/lin.weight")
case("err-model-shape-null", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"shape": None}}),
     err="/parameters/lin.weight")
case("err-model-param-unknown-field", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"shape": [8, 4], "device": "meta"}}),
     err="/parameters/lin.weight/device")
case("err-model-requires-grad-not-bool", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"shape": [8, 4],
                                                            "requires_grad": "yes"}}),
     err="/parameters/lin.weight/requires_grad")
case("err-model-dtype-not-string", plan({"lin": LIN}),
     model_doc=model(params={**MODEL_PARAMS, "lin.weight": {"shape": [8, 4], "dtype": 16}}),
     err="/parameters/lin.weight/dtype")
case("err-model-not-object", plan({"lin": LIN}), model_doc="Net", err="model.json")

# --------------------------------------------------------------------------------------
# Base meta and the plan's meta (section 5)
# --------------------------------------------------------------------------------------

PLAN_META = {
    "codegen_version": "0.0.9", "signature": "from-plan", "yaml_path": "plan.yaml",
    "model_name": "PlanModel", "parallel_dims": {"tp_size": 4},
}
case("base-precedence", plan({"lin": LIN}, meta=PLAN_META), base={
    "signature": "from-base", "yaml_sha256": "00ff", "model_class": "BaseModel",
}, must=['"signature": "from-base"', '"codegen_version": "0.1.1"', '"yaml_path": ""',
         '"model_name": null', '"model_class": "BaseModel"', '"parallel_dims": {}'])
case("plan-meta-only", plan({"lin": LIN}, mesh_dim_names=["tp"], meta={
    **PLAN_META, "future_field": {"x": [1, None]}, "param_plan": {"stale": {}},
    "mesh_dim_names": ["dp"], "frozen_sharded_params": ["stale.w"], "remote_siblings": ["r"],
    "covered": {"sharding_plan": False, "module_overrides": True, "axes": ["tp"]},
}), must=['"signature": "from-plan"', '"codegen_version": "0.0.9"', '"future_field": {',
          '"remote_siblings": [\n    "r"\n  ]', '"mesh_dim_names": [\n    "tp"\n  ]',
          '"covered": {\n    "axes": [\n      "tp"\n    ],\n    "module_overrides": true,\n'
          '    "sharding_plan": true\n  }'])
case("base-unknown-keys-kept", plan({"lin": LIN}), base={
    "new_top": True, "zzz": [1.5, {"a": None}], "covered": {"axes": ["tp", "cp"]},
}, must=['"new_top": true', '"zzz": [', '"covered": {\n    "axes": [\n      "tp",\n      "cp"\n'
         '    ],\n    "sharding_plan": true\n  }'])
case("base-covered-extra-keys", plan({"lin": LIN}), base={
    "covered": {"sharding_plan": "no", "extra": {"k": 1}},
}, must=['"covered": {\n    "extra": {\n      "k": 1\n    },\n    "sharding_plan": true\n  }'])
case("base-covered-empty", plan({"lin": LIN}), base={"covered": {}},
     must=['"covered": {\n    "sharding_plan": true\n  }'])
case("base-replaces-everything", plan({"blk": {"_ep_size": 2}}, tied_pairs=[["emb.weight",
                                                                              "lm_head.weight"]]),
     base={"not_covered": [], "entrypoints": {"parallelize": "custom", "x": "y"},
           "model_name": "M", "injections": [{"match": "stale"}], "tied_pairs": [["x", "y"]],
           "special_handlers": {"stale": "h"}, "boundary_classes": {"stale": "S"},
           "outputs": {"file": "modeling.py"}, "signature": None, "source": "free-form"},
     must=['"not_covered": []', '"parallelize": "custom"', '"model_name": "M"',
           '"match": "blk"', '"special_handlers": {}', '"boundary_classes": {\n    "blk": "Block"'
           '\n  }', '"signature": null', '"source": "free-form"'])
case("base-empty-object", plan({"lin": LIN}, meta={"signature": "ignored"}), base={},
     must=['"signature": ""'])
case("err-base-not-object", plan({"lin": LIN}), base=["signature"], err="base.json")
case("err-base-covered-not-object", plan({"lin": LIN}), base={"covered": "all"}, err="/covered")
case("err-base-covered-null", plan({"lin": LIN}), base={"covered": None}, err="/covered")
case("err-base-null", plan({"lin": LIN}), base=b"null", err="base.json")
case("err-plan-meta-checked-with-base", plan({"lin": LIN}, meta={"covered": 5}),
     base={"signature": "s"}, err="/meta/covered")

# A type tag makes an object that typed value, so it can be neither a params map nor an
# axes map (review finding: these used to be read as a parameter or an axis named "$...").
case("err-params-map-is-typed", plan({"lin": {"params": {"$callable": {"tp": R}}}}),
     err="/modules/lin/params")
case("err-axes-map-is-typed", plan({"lin": {"params": {"weight": {"$placement": "R"}}}}),
     err="/modules/lin/params/weight")
case("err-axes-map-is-target", plan({"lin": {"params": {"weight": {"$target": "S(1)"}}}}),
     err="/modules/lin/params/weight")
# Python's int() strips the ASCII separators 0x1c-0x1f too.
case("canonical-python-whitespace", plan({"lin": {"params": {"weight": {
    "tp": "S(\x1c0\x1f)", "cp": "SS(\x0b0,\x1d2\x0c)"}}}}),
     must=['"tp": "S(0)"', '"cp": "SS(0,2)"'])
case("err-plan-meta-not-object", plan({"lin": LIN}, meta="x"), err="/meta")
case("err-plan-meta-covered-not-object", plan({"lin": LIN}, meta={"covered": []}),
     err="/meta/covered")

FLOATS_PLAN = b"""{
 "meta": {
  "parallel_dims": {
   "lr": 1e-05, "big": 1e16, "negzero": -0.0, "tiny": 2.5e-07, "one": 1.0,
   "hundred": 1e2, "upper": 1E+2, "tenth": 0.1, "huge": 1.5e300, "third": 0.3333333333333333,
   "imprecise": 0.1000000000000000055511151231257827, "u64max": 18446744073709551615,
   "i64min": -9223372036854775808, "negzero_int": -0, "small": 1e-7,
   "e16b": 12345678901234567890e-3, "four": 0.0001, "five": 0.00001, "e15": 1e15,
   "big_frac": 123456789012345678.0, "subnormal": 5e-324, "max": 1.7976931348623157e308,
   "neg": -2.5E-3, "int_like": 100, "zero_exp": 0e0, "frac_exp": 1.5e+1
  },
  "model_name": "\\u00e9\\t"
 },
 "modules": {"lin": {"params": {"weight": {"tp": {"$placement": "Shard", "dim": 0}}},
                     "region_dispatch": [0.5, -0.0, 1e-7, 3e20]}}
}
"""
case("meta-floats-bigints", FLOATS_PLAN, must=[
    '"lr": 1e-05', '"big": 1e+16', '"negzero": -0.0', '"tiny": 2.5e-07', '"one": 1.0',
    '"hundred": 100.0', '"upper": 100.0', '"tenth": 0.1', '"huge": 1.5e+300',
    '"imprecise": 0.1,', '"u64max": 18446744073709551615', '"i64min": -9223372036854775808',
    '"negzero_int": 0,', '"small": 1e-07', '"e16b": 1.2345678901234568e+16', '"four": 0.0001',
    '"five": 1e-05', '"e15": 1000000000000000.0', '"big_frac": 1.2345678901234568e+17',
    '"subnormal": 5e-324', '"max": 1.7976931348623157e+308', '"neg": -0.0025',
    '"int_like": 100', '"zero_exp": 0.0', '"frac_exp": 15.0', '"model_name": "\\u00e9\\t"',
    '0.5,\n        -0.0,\n        1e-07,\n        3e+20'])

UNICODE_MODEL = {
    "format": "hpfreeze.model/v1",
    "modules": {"": "\u6a21\u578bForCausalLM", "layers.\U0001F600": "\U0001F916Block",
                "tab": "Tab\tName", "q": "Quote\"Back\\slash", "del": "DEL\u007f",
                "ctl": "ctl\u0001\u001f", "sl": "slash/", "e": "\u00e9", "nl": "a\nb\r\b\f",
                "\u5c42.0": "\u5c42", "nul": "a\u0000b"},
}
UNICODE_PLAN = plan({
    "": {}, "layers.\U0001F600": {"params": {"\u6743\u91cd": {"tp": "S(0)"}}}, "tab": {},
    "q": {}, "del": {}, "ctl": {}, "sl": {}, "e": {}, "nl": {}, "nul": {},
    "\u5c42.0": {"out_names": ["\u2028"]},
}, special_handlers={"\u5c42.0.w": "\u00ff\u0100\uffff"})
case("unicode-keys-classes", dumps(UNICODE_PLAN)
     .replace(b'"sl": {}', b'"sl": {"inner_target": "a\\/b"}')
     .replace(b'"e": {}', b'"\\u0065": {}'), model_doc=dumps(UNICODE_MODEL, ascii_only=True),
     must=['"": "\\u6a21\\u578bForCausalLM"', '"layers.\\ud83d\\ude00": "\\ud83e\\udd16Block"',
           '"tab": "Tab\\tName"', '"q": "Quote\\"Back\\\\slash"', '"del": "DEL\\u007f"',
           '"ctl": "ctl\\u0001\\u001f"', '"sl": "slash/"', '"e": "\\u00e9"',
           '"nl": "a\\nb\\r\\b\\f"', '"layers.\\ud83d\\ude00.\\u6743\\u91cd"', '"\\u2028"',
           '"\\u5c42.0.w": "\\u00ff\\u0100\\uffff"', '"inner_target": "a/b"',
           '"nul": "a\\u0000b"'])

# --------------------------------------------------------------------------------------
# Section 6: bad JSON. The error position is known by construction of the text.
# --------------------------------------------------------------------------------------

GOOD_PLAN = dumps(plan({"lin": LIN}))
GOOD_MODEL = dumps(model())


def syntax_case(name, prefix: bytes, rest: bytes, where="plan", extra=0, base=None):
    """`prefix + rest` is the bad file; the error sits `extra` bytes after the prefix."""
    bad = prefix + rest
    pos = line_col(bad[:len(prefix) + extra])
    docs = {"plan": GOOD_PLAN, "model": GOOD_MODEL, "base": base}
    docs[where] = bad
    CASES.append(Case(name, docs["plan"], docs["model"], base=docs["base"],
                      err=f"{where}.json:{pos}"))


P_HEAD = b'{\n "format": "hpfreeze.plan/v1",\n "modules": {\n  "lin": {\n   "params": '
P_TAIL = b'{"weight": {"tp": "S(0)"}}\n  }\n }\n}\n'
assert json.loads(P_HEAD + P_TAIL)

syntax_case("err-json-missing-colon", b'{\n "modules" ', b'{"lin": {}}\n}\n')
syntax_case("err-json-truncated", GOOD_PLAN[:-9], b"")
syntax_case("err-json-truncated-in-string", P_HEAD + b'{"wei', b"")
syntax_case("err-json-trailing-content", GOOD_PLAN + b"  ", b"{}\n")
syntax_case("err-json-trailing-comma", P_HEAD + b'{"weight": {"tp": "S(0)"},\n   ',
            b'}\n  }\n }\n}\n')
syntax_case("err-json-single-quotes", P_HEAD + b"{", b"'weight': {}}\n  }\n }\n}\n")
syntax_case("err-json-bad-literal", P_HEAD + b'{"weight": {"tp": "S(0)"}}, "is_boundary": tru',
            b'\n  }\n }\n}\n')
syntax_case("err-json-capital-true", P_HEAD + b'{}, "is_boundary": ', b'True\n  }\n }\n}\n')
syntax_case("err-json-leading-zero", P_HEAD + b'{}, "_ep_size": 0', b'8\n  }\n }\n}\n')
syntax_case("err-json-bare-minus", P_HEAD + b'{}, "_ep_size": -', b'\n  }\n }\n}\n')
syntax_case("err-json-bad-exponent", P_HEAD + b'{}, "_ep_size": 1e', b'}\n }\n}\n')
syntax_case("err-json-bad-escape", P_HEAD + b'{}, "out_names": ["w\\', b'x"]\n  }\n }\n}\n')
syntax_case("err-json-bad-unicode-escape", P_HEAD + b'{}, "out_names": ["w\\u00',
            b'g0"]\n  }\n }\n}\n')
syntax_case("err-json-control-char", P_HEAD + b'{}, "out_names": ["w', b'\tx"]\n  }\n }\n}\n')
syntax_case("err-json-invalid-utf8", b'{\n "special_handlers": {"a": "x', b'\xff"},\n'
            b' "modules": {"lin": {}}\n}\n')
syntax_case("err-json-invalid-utf8-continuation", b'{\n "modules": {"lin": {"in_src": {"', b'\x80'
            b'": null}}}\n}\n')
syntax_case("err-json-invalid-utf8-overlong", b'{\n "special_handlers": {"',
            b'\xc0\xaf": 1},\n "modules": {"lin": {}}\n}\n')
syntax_case("err-json-invalid-utf8-surrogate-bytes", b'{\n "special_handlers": {"\xed',
            b'\xa0\x80": 1},\n "modules": {"lin": {}}\n}\n')
syntax_case("err-json-invalid-utf8-model", b'{\n "modules": {"": "Net", "lin": "Lin\xe4\xb8',
            b'"}\n}\n', where="model")
syntax_case("err-json-bom", b"", b"\xef\xbb\xbf" + GOOD_PLAN)
syntax_case("err-json-lone-surrogate", P_HEAD + b'{"weight": {"tp": "R"}}, "out_names": ["x',
            b'\\ud800"]\n  }\n }\n}\n')
syntax_case("err-json-lone-low-surrogate", P_HEAD + b'{}, "out_names": ["x',
            b'\\udc00y"]\n  }\n }\n}\n')
syntax_case("err-json-surrogate-then-non-low", P_HEAD + b'{}, "out_names": ["',
            b'\\ud83d\\u0041"]\n  }\n }\n}\n')
syntax_case("err-json-lone-surrogate-key", b'{\n "special_handlers": {"a',
            b'\\uD834": 1},\n "modules": {"lin": {}}\n}\n')
syntax_case("err-json-nan", P_HEAD + b'{}, "region_dispatch": ', b'NaN\n  }\n }\n}\n')
syntax_case("err-json-infinity", P_HEAD + b'{}, "region_dispatch": [1, ',
            b'Infinity]\n  }\n }\n}\n')
syntax_case("err-json-int-too-big", b'{\n "meta": {"parallel_dims": {"n": ',
            b'18446744073709551616}},\n "modules": {"lin": {}}\n}\n')
syntax_case("err-json-int-too-small", b'{\n "meta": {"parallel_dims": {"n": ',
            b'-9223372036854775809}},\n "modules": {"lin": {}}\n}\n')
syntax_case("err-json-float-overflow", b'{\n "meta": {"parallel_dims": {"n": ',
            b'1e400}},\n "modules": {"lin": {}}\n}\n')
syntax_case("err-json-negative-float-overflow", P_HEAD + b'{}, "_ep_size": ',
            b'-2.5e308\n  }\n }\n}\n')
syntax_case("err-json-empty-file", b"", b"")
syntax_case("err-json-whitespace-only", b"\n \n", b"", where="model")
syntax_case("err-json-model-syntax", b'{\n "modules": {"": "Net", "lin": "Linear"', b']\n}\n',
            where="model")
syntax_case("err-json-base-syntax", b'{"signature": "abc",\n "covered": {"axes": [',
            b'}\n}\n', where="base")

DEPTH_PREFIX = b'{"modules": {"lin": {"params": {}, "_tp_local_attr_plan": '
syntax_case("err-json-nesting-1025", DEPTH_PREFIX + b"[" * 1021, b"[" * 1 + b"]" * 1022
            + b"}}}\n")

def nested(depth):
    value = "leaf"
    for level in range(depth):
        value = [value] if level % 2 else {f"k{level}": value}
    return value


case("deep-nesting-in-written-field", plan({"lin": {"region_dispatch": nested(120)}}),
     must=['"k0": "leaf"'])
case("json-nesting-1024", DEPTH_PREFIX + b"[" * 1021 + b"]" * 1021 + b"}}}\n",
     must=['"lin": {\n      "params": {}\n    }'])


def dup_case(name, text: bytes, pointer: str):
    CASES.append(Case(name, text, model(), err=pointer))


dup_case("err-json-duplicate-key-deep", P_HEAD + b'{"weight": {"tp": "S(0)", "cp": "R", "tp": "R"}}'
         b'\n  }\n }\n}\n', "/modules/lin/params/weight/tp")
dup_case("err-json-duplicate-key-escaped", b'{"meta": {"a": 1, "\\u0061": 2},\n'
         b' "modules": {"lin": {}}}\n', "/meta/a")
dup_case("err-json-duplicate-top-level", b'{"modules": {"lin": {}},\n "modules": {"lin": {}}}\n',
         "/modules")
CASES.append(Case("err-json-duplicate-model", GOOD_PLAN,
                  b'{"modules": {"": "Net", "lin": "Linear"},\n "parameters": {"lin.weight": '
                  b'{"shape": [8, 4], "shape": [8, 4]}}}\n', err="/parameters/lin.weight/shape"))
dup_case("err-json-duplicate-in-exempt",
         b'{"modules": {"lin": {"_is_terminal": {"x": 1, "x": 1}}}}',
         "/modules/lin/_is_terminal/x")

# --------------------------------------------------------------------------------------
# Writing and checking
# --------------------------------------------------------------------------------------

def as_bytes(doc) -> bytes:
    return doc if isinstance(doc, bytes) else dumps(doc)


def write_case(root: Path, c: Case):
    folder = root / c.name
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    (folder / "plan.json").write_bytes(as_bytes(c.plan))
    (folder / "model.json").write_bytes(as_bytes(c.model))
    if c.base is not None:
        (folder / "base.json").write_bytes(as_bytes(c.base))
    if c.args:
        (folder / "args").write_text(c.args + "\n")
    options = freeze_oracle.Options(verify="--no-verify" not in c.args,
                                    strict="--strict" in c.args,
                                    allow_empty="--allow-empty" in c.args)
    base_path = str(folder / "base.json") if c.base is not None else None
    code, out, lines = freeze_oracle.run(str(folder / "plan.json"), str(folder / "model.json"),
                                         base_path, options)
    stderr = "\n".join(lines)
    if c.err is not None:
        if code != 1 or c.err not in stderr:
            raise SystemExit(f"{c.name}: oracle gave exit {code}, stderr {stderr!r}; "
                             f"expected an error holding {c.err!r}")
        (folder / "expected.err").write_text(c.err + "\n", encoding="utf-8")
        return
    if code != 0:
        raise SystemExit(f"{c.name}: oracle failed: {stderr}")
    text = out.decode("ascii")
    for fragment in c.must:
        if fragment not in text:
            raise SystemExit(f"{c.name}: expected output lacks {fragment!r}")
    for warning in c.warn:
        if warning not in stderr:
            raise SystemExit(f"{c.name}: oracle stderr lacks warning {warning!r}: {stderr!r}")
    if not c.warn and stderr:
        raise SystemExit(f"{c.name}: unexpected oracle stderr {stderr!r}")
    (folder / "expected.json").write_bytes(out)
    if c.warn:
        (folder / "expected.warn").write_text("".join(w + "\n" for w in c.warn), encoding="utf-8")


def generate(root: Path):
    names = [c.name for c in CASES]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit(f"duplicate case names: {sorted(duplicates)}")
    clashes = CONFORMANCE_NAMES.intersection(names)
    if clashes:
        raise SystemExit(f"generated names clash with the conformance seed: {sorted(clashes)}")
    for c in CASES:
        write_case(root, c)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "testdata" / "cases")
    parser.add_argument("--check", action="store_true",
                        help="fail if the generated cases differ from those in --out")
    args = parser.parse_args()
    if not args.check:
        generate(args.out)
        print(f"wrote {len(CASES)} cases to {args.out}")
        return 0
    with tempfile.TemporaryDirectory() as tmp:
        generate(Path(tmp))
        stale = []
        for c in CASES:
            comparison = filecmp.dircmp(Path(tmp) / c.name, args.out / c.name)
            if (not (args.out / c.name).is_dir() or comparison.left_only
                    or comparison.right_only or comparison.diff_files):
                stale.append(c.name)
            else:
                # dircmp compares stat signatures only; compare the bytes too.
                for f in comparison.common_files:
                    if not filecmp.cmp(Path(tmp) / c.name / f, args.out / c.name / f,
                                       shallow=False):
                        stale.append(c.name)
                        break
        known = CONFORMANCE_NAMES | {c.name for c in CASES}
        unknown = sorted(p.name for p in args.out.iterdir() if p.is_dir() and p.name not in known)
    for name in stale:
        print(f"stale: {name}")
    for name in unknown:
        print(f"unknown folder: {name}")
    print(f"{len(CASES)} generated cases, {len(stale)} stale, {len(unknown)} unknown")
    return 1 if stale or unknown else 0


if __name__ == "__main__":
    sys.exit(main())
