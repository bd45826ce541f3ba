#!/usr/bin/env python3
"""Generates the golden cases of testdata/cases beyond the copied conformance seed.

    make_cases.py [--out DIR] [--check]

Inputs are written here; expected.json comes from freeze_oracle.py; expected.err is the
whole diagnostic line, built by hand from the case's parts: its file, its JSON Pointer (or
FILE:LINE:COL for syntax errors, where the offset is known by construction of the bad
text) and its message (ERR_MESSAGES); the oracle must place the error at the same spot. Every case is also checked against hand-written
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
    err: str | None = None          # error location (pointer or FILE[:L:C]); None: success
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
# The model's only trainable parameter is planned, so --strict finds no uncovered one.
case("strict-no-real-negative", plan({
    "lin": {
        "params": {"weight": {"tp": "S(-1)", "cp": shard(0, uneven_shard=True),
                              "ep": "SS(-2,2)"}},
        "inner_wrapper": target({"_target_": "x", "p": shard(-1)}),
        "_head_count_owner": shard(-1),
    },
}), model_doc=model(params={"lin.weight": MODEL_PARAMS["lin.weight"],
                            "lin.bias": MODEL_PARAMS["lin.bias"]}),
    args="--strict", must=['"tp": "S(-1)"', '"cp": "S(-1)"', '"ep": "SS(-2,2)"'])
# Trainable model parameters no planned key covers (upstream's preflight rule: a planned FQN
# or a dotted prefix of one; lin.bias is frozen): a warning at the first, an error under
# --strict; a parameter below a planned key is covered; --no-verify skips the rule.
case("uncovered-warning", plan({"lin": LIN}), warn=["model.json: /parameters/emb.weight: "])
case("err-uncovered-strict", plan({"lin": LIN}), args="--strict", err="/parameters/emb.weight")
case("strict-covered-below-a-planned-key", plan({"lin": LIN}),
     model_doc=model(params={"lin.weight": {"shape": [8, 4]}, "lin.weight.absmax": {"shape": [8]},
                             "lin.bias": MODEL_PARAMS["lin.bias"]}),
     args="--strict", must=['"frozen_sharded_params": [\n    "lin.weight"\n  ]'])
case("strict-no-verify-skips-coverage", plan({"lin": LIN}), args="--strict --no-verify",
     must=['"lin": "Linear"'])
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

# The message of every generated error case: expected.err holds the whole line
# "hpfreeze: error: FILE[:LINE:COL]: POINTER: MESSAGE", built from the case's err (its
# pointer, or FILE:LINE:COL for a syntax error), its file (ERR_FILES, else plan.json) and
# this message. Each was read against the code that emits it and docs/formats.md.
ERR_MESSAGES = {
    'err-attr-list-false': 'expected an array, got a boolean',
    'err-attr-list-falsy-object': 'expected an array, got an object',
    'err-axes-map-is-target': 'expected an object of axis placements, got a typed $target value',
    'err-axes-map-is-typed': 'expected an object of axis placements, got a typed $placement value',
    'err-bad-placement-in-named':
        "unknown placement type 'Bogus' (expected Shard, StridedShard, Replicate or Partial)",
    'err-bad-placement-in-value-to-dict': "unknown field 'split_factor' for placement Shard",
    'err-base-covered-not-object': "'covered' must be an object in a base meta",
    'err-base-covered-null': "'covered' must be an object in a base meta",
    'err-base-not-object': 'a base meta must be a JSON object',
    'err-base-null': 'a base meta must be a JSON object',
    'err-callable-empty': 'a $callable name must not be empty',
    'err-callable-empty-nested': 'a $callable name must not be empty',
    'err-callable-extra-key': 'a $callable object may hold no other key',
    'err-callable-not-string': 'expected a string, got an integer',
    'err-canonical-double-underscore': "invalid placement 'S(1__0)': dim '1__0' is not an integer",
    'err-canonical-empty': "invalid placement '': empty string",
    'err-canonical-float': "invalid placement 'S(1.0)': dim '1.0' is not an integer",
    'err-canonical-letters': "invalid placement 'S(x)': dim 'x' is not an integer",
    'err-canonical-lower':
        "invalid placement 's(0)': unknown form, expected R, S(dim), SS(dim,factor) or "
        'P(reduce_op)',
    'err-canonical-newline': "invalid placement 'S(0\\n)': newline inside the parentheses",
    'err-canonical-no-digits': "invalid placement 'S()': dim '' is not an integer",
    'err-canonical-non-ascii-digit': "invalid placement 'S(\\xd9\\xa3)': non-ASCII character",
    'err-canonical-non-ascii-op': "invalid placement 'P(\\xce\\xa3)': non-ASCII character",
    'err-canonical-overflow':
        "invalid placement 'S(9223372036854775808)': dim does not fit in a signed 64-bit integer",
    'err-canonical-p-empty': "invalid placement 'P()': missing reduce_op in P(...)",
    'err-canonical-space-r':
        "invalid placement ' R': unknown form, expected R, S(dim), SS(dim,factor) or P(reduce_op)",
    'err-canonical-ss-negative-factor':
        "invalid placement 'SS(0,-2)': split_factor must be >= 1, got -2",
    'err-canonical-ss-one-arg':
        "invalid placement 'SS(0)': SS(dim,factor) takes 2 arguments, got 1",
    'err-canonical-ss-three-args':
        "invalid placement 'SS(0,2,3)': SS(dim,factor) takes 2 arguments, got 3",
    'err-canonical-ss-zero-factor':
        "invalid placement 'SS(0,0)': split_factor must be >= 1, got 0",
    'err-canonical-trailing-comma': "invalid placement 'S(0,)': S(dim) takes 1 argument, got 2",
    'err-canonical-trailing-text':
        "invalid placement 'S(0)x': unknown form, expected R, S(dim), SS(dim,factor) or "
        'P(reduce_op)',
    'err-canonical-trailing-underscore': "invalid placement 'S(1_)': dim '1_' is not an integer",
    'err-canonical-word':
        "invalid placement 'Shard(0)': unknown form, expected R, S(dim), SS(dim,factor) or "
        'P(reduce_op)',
    'err-dict-copy-not-object': 'expected an object, got an array',
    'err-dim-out-of-range':
        "dim 2 out of range for parameter 'lin.weight' of shape [8, 4] (rank 2)",
    'err-dim-rank-zero': "dim 0 out of range for parameter 'lin.weight' of shape [] (rank 0)",
    'err-empty-modules': 'the plan has no modules (use --allow-empty to accept an empty plan)',
    'err-json-bad-escape': 'invalid escape',
    'err-json-bad-exponent': 'invalid number',
    'err-json-bad-literal': 'invalid literal',
    'err-json-bad-unicode-escape': 'invalid escape',
    'err-json-bare-minus': 'invalid number',
    'err-json-base-syntax': 'expected a value',
    'err-json-bom': 'byte-order mark is not allowed',
    'err-json-capital-true': 'invalid literal',
    'err-json-control-char': 'unescaped control character 0x09 in string',
    'err-json-duplicate-in-exempt': "duplicate key 'x'",
    'err-json-duplicate-key-deep': "duplicate key 'tp'",
    'err-json-duplicate-key-escaped': "duplicate key 'a'",
    'err-json-duplicate-model': "duplicate key 'shape'",
    'err-json-duplicate-top-level': "duplicate key 'modules'",
    'err-json-empty-file': 'empty input',
    'err-json-float-overflow': 'number out of range',
    'err-json-infinity': 'invalid literal',
    'err-json-int-too-big': 'integer out of range [-2^63, 2^64-1]',
    'err-json-int-too-small': 'integer out of range [-2^63, 2^64-1]',
    'err-json-invalid-utf8': 'invalid UTF-8 byte 0xff',
    'err-json-invalid-utf8-continuation': 'invalid UTF-8 byte 0x80',
    'err-json-invalid-utf8-model': 'invalid UTF-8 byte 0x22: the multi-byte sequence started '
                                   'by 0xe4 is cut short',
    'err-json-invalid-utf8-overlong': 'invalid UTF-8 byte 0xc0',
    'err-json-invalid-utf8-surrogate-bytes': 'invalid UTF-8 byte 0xa0',
    'err-json-leading-zero': 'invalid number',
    'err-json-lone-low-surrogate': 'lone surrogate escape \\udc00',
    'err-json-lone-surrogate': 'lone surrogate escape \\ud800',
    'err-json-lone-surrogate-key': 'lone surrogate escape \\uD834',
    'err-json-missing-colon': "expected ':' after object key",
    'err-json-model-syntax': "expected ',' or '}' after object member",
    'err-json-nan': 'invalid literal',
    'err-json-negative-float-overflow': 'number out of range',
    'err-json-nesting-1025': 'nesting deeper than 1024 levels',
    'err-json-single-quotes': "expected a string key or '}'",
    'err-json-surrogate-then-non-low': 'lone surrogate escape \\ud83d',
    'err-json-trailing-comma': 'expected a string key',
    'err-json-trailing-content': 'trailing content after the JSON document',
    'err-json-truncated': 'unexpected end of input',
    'err-json-truncated-in-string': 'unexpected end of input',
    'err-json-whitespace-only': 'empty input',
    'err-loss-parallel-not-bool': 'expected a boolean, got a string',
    'err-mesh-dim-names-not-strings': 'expected a string, got an integer',
    'err-mesh-dim-names-string': 'expected an array, got a string',
    'err-missing-boundary-case': "boundary module 'Lin' is not in the model tree (model.json)",
    'err-missing-boundary-root': "boundary module '' is not in the model tree (model.json)",
    'err-missing-param-replicate-only': "parameter 'lin.scale' is not in the model (model.json)",
    'err-model-class-not-string': 'expected a string, got an integer',
    'err-model-dtype-not-string': 'expected a string, got an integer',
    'err-model-format-wrong':
        "unsupported format 'hpfreeze.plan/v1' (expected 'hpfreeze.model/v1')",
    'err-model-modules-missing': "missing required key 'modules'",
    'err-model-modules-not-object': 'expected an object, got an array',
    'err-model-not-object': 'expected an object, got a string',
    'err-model-param-not-object': 'expected an object, got an array',
    'err-model-param-unknown-field': "unknown parameter field 'device'",
    'err-model-parameters-empty-object': "parameter 'lin.weight' is not in the model (model.json)",
    'err-model-parameters-not-object': 'expected an object, got an array',
    'err-model-requires-grad-not-bool': 'expected a boolean, got a string',
    'err-model-shape-bool': 'expected a non-negative integer, got a boolean',
    'err-model-shape-float': 'expected a non-negative integer, got a float',
    'err-model-shape-missing': "parameter has no 'shape'",
    'err-model-shape-negative': 'shape dimensions must be non-negative, got -1',
    'err-model-shape-null': 'expected an array, got null',
    'err-model-unknown-key': "unknown top-level key 'buffers'",
    'err-modules-missing': "missing required key 'modules'",
    'err-modules-not-object': 'expected an object, got an array',
    'err-modules-null': 'expected an object, got null',
    'err-name-list-not-array': 'expected an array, got a string',
    'err-named-placements-array': 'expected an object, got an array',
    'err-named-placements-true': 'expected an object, got a boolean',
    'err-named-placements-typed':
        'expected an object of named placements, got a typed $placement value',
    'err-negative-dim-in-injection-strict':
        '1 placement(s) with a negative dim, first here: S(-k) reads back as an uneven shard of '
        'dim k-1; written verbatim as upstream does (--strict makes this an error)',
    'err-negative-dim-out-of-range':
        "dim -3 out of range for parameter 'lin.weight' of shape [8, 4] (rank 2)",
    'err-uncovered-strict':
        "5 trainable parameters are not covered by any planned parameter of plan.json, first "
        "here: 'emb.weight', 'blk.w', 'blk.attn.qkv' and 2 more (upstream's preflight refuses "
        "them at run time) (--strict makes this an error)",
    'err-negative-dim-strict':
        '3 placement(s) with a negative dim, first here: S(-k) reads back as an uneven shard of '
        'dim k-1; written verbatim as upstream does (--strict makes this an error)',
    'err-no-verify-missing-boundary':
        "boundary module 'ghost' is not in the model tree (model.json)",
    'err-param-entry-not-object': 'expected an object, got a string',
    'err-param-entry-placement':
        'expected an object of axis placements, got a typed $placement value',
    'err-params-false': 'expected an object, got a boolean',
    'err-params-map-is-typed': 'expected an object of parameters, got a typed $callable value',
    'err-params-not-object': 'expected an object, got an array',
    'err-placement-dim-bool': 'expected an integer, got a boolean',
    'err-placement-dim-float': 'expected an integer, got a float',
    'err-placement-dim-null': 'expected an integer, got null',
    'err-placement-dim-string': 'expected an integer, got a string',
    'err-placement-dim-too-big': 'dim does not fit in a signed 64-bit integer',
    'err-placement-leaf-array':
        'expected a placement ({"$placement": ...} or a canonical string), got an array',
    'err-placement-leaf-callable':
        'expected a placement ({"$placement": ...} or a canonical string), got a typed $callable '
        'value',
    'err-placement-leaf-null':
        'expected a placement ({"$placement": ...} or a canonical string), got null',
    'err-placement-leaf-number':
        'expected a placement ({"$placement": ...} or a canonical string), got an integer',
    'err-placement-leaf-plain-object':
        'expected a placement ({"$placement": ...} or a canonical string), got a plain object',
    'err-placement-leaf-target':
        'expected a placement ({"$placement": ...} or a canonical string), got a typed $target '
        'value',
    'err-placement-missing-dim': 'placement Shard needs a dim',
    'err-placement-missing-split-factor': 'placement StridedShard needs a split_factor',
    'err-placement-ragged':
        "placement type 'RaggedShard' has no canonical string form and cannot be frozen",
    'err-placement-reduce-op-empty': 'reduce_op must not be empty',
    'err-placement-reduce-op-null': 'expected a string, got null',
    'err-placement-reduce-op-number': 'expected a string, got an integer',
    'err-placement-replicate-with-dim': "unknown field 'dim' for placement Replicate",
    'err-placement-shard-with-reduce-op': "unknown field 'reduce_op' for placement Shard",
    'err-placement-split-factor-float': 'expected an integer, got a float',
    'err-placement-split-factor-zero': 'split_factor must be >= 1, got 0',
    'err-placement-two-tags': "object carries two type tags, '$placement' and '$callable'",
    'err-placement-type-lowercase':
        "unknown placement type 'shard'; did you mean 'Shard'? (expected Shard, StridedShard, "
        "Replicate or Partial)",
    'err-placement-type-not-string': 'expected a string, got an integer',
    'err-placement-uneven-int': 'expected a boolean, got an integer',
    'err-placement-uneven-null': 'expected a boolean, got null',
    'err-plan-format-model':
        "unsupported format 'hpfreeze.model/v1' (expected 'hpfreeze.plan/v1')",
    'err-plan-format-wrong': "unsupported format 'hpfreeze.plan/v2' (expected 'hpfreeze.plan/v1')",
    'err-plan-meta-checked-with-base': "'covered' must be an object in a base meta",
    'err-plan-meta-covered-not-object': "'covered' must be an object in a base meta",
    'err-plan-meta-not-object': 'expected an object, got a string',
    'err-plan-not-object': 'expected an object, got an array',
    'err-pointer-escape':
        "unknown placement type 'Shrad'; did you mean 'Shard'? (expected Shard, StridedShard, "
        "Replicate or Partial)",
    'err-pointer-escape-missing-boundary':
        "boundary module '~1' is not in the model tree (model.json)",
    'err-pointer-escape-verify': "parameter 'x/y.q~/r' is not in the model (model.json)",
    'err-reduce-op-nbsp':
        "reduce_op 'max\\xc2\\xa0' does not read back from P(...): it must be ASCII without a "
        'newline',
    'err-reduce-op-newline':
        "reduce_op 'sum\\nmax' does not read back from P(...): it must be ASCII without a newline",
    'err-reduce-op-newline-in-injection':
        "reduce_op 'avg\\n' does not read back from P(...): it must be ASCII without a newline",
    'err-reduce-op-non-ascii':
        "reduce_op 'su\\xc3\\xa9' does not read back from P(...): it must be ASCII without a "
        'newline',
    'err-reduce-op-non-ascii-in-named':
        "reduce_op '\\xce\\xa3' does not read back from P(...): it must be ASCII without a newline",
    'err-reduce-op-only-newline':
        "reduce_op '\\n' does not read back from P(...): it must be ASCII without a newline",
    'err-sequence-parallel-not-bool': 'expected a boolean, got an integer',
    'err-spec-array': 'expected an object, got an array',
    'err-spec-key-ep-size': "unknown module-spec field 'ep_size'",
    'err-spec-key-meta-name': "unknown module-spec field 'deferred_bias_params'",
    'err-spec-key-null-unknown': "unknown module-spec field 'bogus'",
    'err-spec-not-object': 'expected an object, got null',
    'err-special-handlers-not-object': 'expected an object, got an array',
    'err-strided-dim-out-of-range':
        "dim 3 out of range for parameter 'blk.w' of shape [4, 4, 2] (rank 3)",
    'err-target-extra-key': 'a $target object may hold no other key',
    'err-target-not-object': 'expected an object, got a string',
    'err-target-null': 'expected an object, got null',
    'err-tied-name-missing': "tied parameter 'head.weight' is not in the model (model.json)",
    'err-tied-pairs-inner-not-array': 'expected an array, got a string',
    'err-tied-pairs-not-strings': 'expected a string, got null',
    'err-top-level-attribute-name': "unknown top-level key '_mesh_dim_names'",
    'err-two-tags-in-named': "object carries two type tags, '$target' and '$callable'",
    'err-typed-dict-copy-top': 'expected a plain JSON value, got a typed $callable value',
    'err-typed-in-attr-list': 'expected a plain JSON value, got a typed $callable value',
    'err-typed-in-deferred-bias': 'expected a plain JSON value, got a typed $callable value',
    'err-typed-in-dict-copy': 'expected a plain JSON value, got a typed $target value',
    'err-typed-in-int-truthy': 'expected a plain JSON value, got a typed $placement value',
    'err-typed-in-name-list': 'expected a plain JSON value, got a typed $placement value',
    'err-typed-in-plain': 'expected a plain JSON value, got a typed $target value',
    'err-typed-in-scalar': 'expected a plain JSON value, got a typed $callable value',
    'err-typed-in-scalar-nested': 'expected a plain JSON value, got a typed $placement value',
    'err-uneven-string-dim-out-of-range':
        "dim 2 out of range for parameter 'lin.weight' of shape [8, 4] (rank 2)",
    'err-unknown-top-level-key': "unknown top-level key 'sharding'",
}
# The file a pointer-located error case is about, when it is not plan.json.
ERR_FILES = {
    'err-uncovered-strict': 'model.json',
    'err-base-covered-not-object': 'base.json',
    'err-base-covered-null': 'base.json',
    'err-json-duplicate-model': 'model.json',
    'err-model-class-not-string': 'model.json',
    'err-model-dtype-not-string': 'model.json',
    'err-model-format-wrong': 'model.json',
    'err-model-modules-not-object': 'model.json',
    'err-model-param-not-object': 'model.json',
    'err-model-param-unknown-field': 'model.json',
    'err-model-parameters-not-object': 'model.json',
    'err-model-requires-grad-not-bool': 'model.json',
    'err-model-shape-bool': 'model.json',
    'err-model-shape-float': 'model.json',
    'err-model-shape-missing': 'model.json',
    'err-model-shape-negative': 'model.json',
    'err-model-shape-null': 'model.json',
    'err-model-unknown-key': 'model.json',
}

# The whole pointer of an error case whose `err` names only a prefix of it (the value
# inside the one the case is about).
ERR_POINTERS = {
    'err-bad-placement-in-value-to-dict': '/modules/lin/inner_out_src/output/cp/split_factor',
    'err-callable-not-string': '/modules/lin/local_compute_fn/$callable',
    'err-mesh-dim-names-not-strings': '/mesh_dim_names/1',
    'err-model-shape-bool': '/parameters/lin.bias/shape/0',
    'err-model-shape-float': '/parameters/lin.weight/shape/0',
    'err-model-shape-negative': '/parameters/lin.weight/shape/1',
    'err-model-shape-null': '/parameters/lin.weight/shape',
    'err-placement-dim-bool': '/modules/lin/params/weight/tp/dim',
    'err-placement-dim-float': '/modules/lin/params/weight/tp/dim',
    'err-placement-dim-null': '/modules/lin/params/weight/tp/dim',
    'err-placement-dim-string': '/modules/lin/params/weight/tp/dim',
    'err-placement-dim-too-big': '/modules/lin/params/weight/tp/dim',
    'err-placement-reduce-op-empty': '/modules/lin/params/weight/tp/reduce_op',
    'err-placement-reduce-op-null': '/modules/lin/params/weight/tp/reduce_op',
    'err-placement-reduce-op-number': '/modules/lin/params/weight/tp/reduce_op',
    'err-placement-replicate-with-dim': '/modules/lin/params/weight/tp/dim',
    'err-placement-shard-with-reduce-op': '/modules/lin/params/weight/tp/reduce_op',
    'err-placement-split-factor-float': '/modules/lin/params/weight/tp/split_factor',
    'err-placement-split-factor-zero': '/modules/lin/params/weight/tp/split_factor',
    'err-placement-type-not-string': '/modules/lin/params/weight/tp/$placement',
    'err-placement-uneven-int': '/modules/lin/params/weight/tp/uneven_shard',
    'err-placement-uneven-null': '/modules/lin/params/weight/tp/uneven_shard',
    'err-target-not-object': '/modules/lin/inner_wrapper/$target',
    'err-target-null': '/modules/lin/inner_out_src/output/0/$target',
    'err-tied-pairs-not-strings': '/tied_pairs/0/1',
    'err-typed-in-attr-list': '/modules/lin/tp_divide_attrs/0/0',
    'err-typed-in-deferred-bias': '/modules/lin/_deferred_bias_params/0/x',
    'err-typed-in-dict-copy': '/modules/lin/_ep_stack/a',
    'err-typed-in-name-list': '/modules/lin/out_names/1',
    'err-typed-in-scalar-nested': '/modules/lin/region_dispatch/a/0',
}


# The code of an error that is a finding of one of check's rules (docs/cli.md, "Finding
# codes"), which ends its line: " [HPF305]". freeze's other errors are no findings.
ERR_CODES = {
    'err-uncovered-strict': 'HPF305',  # uncovered-parameter, counted once by freeze
}


def expected_error_line(c: Case) -> str:
    """The whole first stderr line of an error case, from the parts the case states."""
    if c.name not in ERR_MESSAGES:
        raise SystemExit(f"{c.name}: no message in ERR_MESSAGES")
    if c.err.startswith("/"):
        stated = c.err.removesuffix(":")  # "/modules/:" names the pointer "/modules/"
        pointer = ERR_POINTERS.get(c.name, stated)
        if not pointer.startswith(stated):
            raise SystemExit(f"{c.name}: ERR_POINTERS entry {pointer!r} is not under {stated!r}")
        location = f"{ERR_FILES.get(c.name, 'plan.json')}: {pointer}"
    else:
        location = c.err  # FILE or FILE:LINE:COL
    code = f" [{ERR_CODES[c.name]}]" if c.name in ERR_CODES else ""
    return f"hpfreeze: error: {location}: {ERR_MESSAGES[c.name]}{code}"


# What the oracle's warning about uncovered trainable parameters says.
UNCOVERED = "trainable parameter(s) under no planned key"


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
        # The oracle words messages its own way and may point at the enclosing value; its
        # location must be the one the case states (c.err, in the case's file).
        line = expected_error_line(c)
        location = c.err
        if c.err.startswith("/"):
            location = f"{ERR_FILES.get(c.name, 'plan.json')}: {c.err.removesuffix(':')}"
        first = lines[0].replace(f"{folder}/", "") if lines else ""
        if code != 1 or not first.startswith("freeze_oracle: error: " + location):
            raise SystemExit(f"{c.name}: oracle gave exit {code}, stderr {stderr!r}; "
                             f"expected an error at {location!r}")
        (folder / "expected.err").write_text(line + "\n", encoding="utf-8")
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
    # Most cases plan a part of the shared model: the oracle's warning about the trainable
    # rest is expected there, and checked where a case lists it (uncovered-warning).
    unexpected = [line for line in lines if UNCOVERED not in line]
    if not c.warn and unexpected:
        raise SystemExit(f"{c.name}: unexpected oracle stderr {stderr!r}")
    (folder / "expected.json").write_bytes(out)
    if c.warn:
        (folder / "expected.warn").write_text("".join(w + "\n" for w in c.warn), encoding="utf-8")


def generate(root: Path):
    unused = (set(ERR_MESSAGES) | set(ERR_FILES) | set(ERR_POINTERS)) - {
        c.name for c in CASES if c.err is not None}
    if unused:
        raise SystemExit(f"messages, files or pointers of no error case: {sorted(unused)}")
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
        # The conformance copies pin the whole line too; the shared suite's expected.err
        # (a substring) must still be part of it.
        shared = REPO.parent / "shared" / "conformance"
        for name in sorted(CONFORMANCE_NAMES):
            ours, theirs = args.out / name / "expected.err", shared / name / "expected.err"
            if not ours.is_file():
                continue
            line = ours.read_text(encoding="utf-8").splitlines()[0]
            if not line.startswith("hpfreeze: error: "):
                stale.append(f"{name} (expected.err is not a whole diagnostic line)")
            if theirs.is_file():
                wanted = theirs.read_text(encoding="utf-8").splitlines()[0]
                if wanted not in line:
                    stale.append(f"{name} (lacks the conformance substring {wanted!r})")
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
