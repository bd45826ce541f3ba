"""python/hpfreeze_export.py: live plan + model (stand-ins with upstream's class names,
field types and defaults, tests/e2e/standins) -> dumps -> `hpfreeze freeze` -> the
expected bytes.

The expected bytes are testdata/cases/<case>/expected.json, written from the SPEC rules
by the golden corpus, and the real metas of testdata/realworld, written by upstream's
Python; never by hpfreeze or the exporter.
"""
import ast
import dataclasses
import enum
import functools
import glob
import json
import os
import shutil
import subprocess
import sys
import unittest
import warnings

import cli_help
from hpf import SOURCE, TESTDATA, TempDirTest, case, read, run

sys.path.insert(0, os.path.join(SOURCE, "python"))
import hpfreeze_export as hx  # noqa: E402
from standins.planner import (MeshAxisName, ModuleShardingSpec, Partial,  # noqa: E402
                              Placement, RaggedShard, Replicate, Shard, ShardingPlan,
                              StridedShard, Target, TpLocalAttrPlan, inner_wrapper,
                              local_compute, parse_placement)
from standins.torch_like import (ModuleList, Parameter, float32, make,  # noqa: E402
                                 module_class)

TP, CP, EP = MeshAxisName.TP, MeshAxisName.CP, MeshAxisName.EP


class PlainAxis(enum.Enum):  # not a str: distinct from "tp" as a dict key
    TP = "tp"


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def spec(**fields):
    """A ModuleShardingSpec; init=False fields (leading underscore) set afterwards."""
    late = {k: fields.pop(k) for k in list(fields) if k.startswith("_")}
    s = ModuleShardingSpec(**fields)
    for k, v in late.items():
        setattr(s, k, v)
    return s


def linear(out_features, in_features, bias=False):
    members = {"weight": Parameter(out_features, in_features)}
    if bias:
        members["bias"] = Parameter(out_features)
    return make("Linear", **members)


# --- moe-qwen-2l, rebuilt as the planner would hold it -----------------------------------

def qwen_moe_plan():
    def tp_ep(tp, ep=None):
        return {TP: tp, EP: ep if ep is not None else Replicate()}

    modules = {
        "model.embed_tokens": spec(params={"weight": tp_ep(Shard(0))},
                                   out_src={"output": tp_ep(Partial("sum"))}),
    }
    for i in range(2):
        attn_params = {}
        for proj in ("q_proj", "k_proj", "v_proj"):
            attn_params[f"{proj}.weight"] = tp_ep(Shard(0))
            attn_params[f"{proj}.bias"] = tp_ep(Shard(0))
        attn_params["o_proj.weight"] = tp_ep(Shard(1))
        modules[f"model.layers.{i}.self_attn"] = spec(
            params=attn_params,
            out_src={"output": tp_ep(Partial())},
            out_dst={"output": tp_ep(Replicate())},
            tp_divide_attrs=["num_heads", "num_key_value_heads"],
            is_boundary=True,
            # What the planner fills in on TP boundaries: a frozen dataclass.
            _tp_local_attr_plan=TpLocalAttrPlan(auto_divide=("num_heads",
                                                             "num_key_value_heads")))
        modules[f"model.layers.{i}.mlp"] = spec(
            params={
                "experts.gate_up_proj": tp_ep(StridedShard(2, 2), Shard(0)),
                "experts.down_proj": tp_ep(Shard(1), Shard(0)),
                "gate.weight": tp_ep(Replicate()),
                "shared_expert.gate_proj.weight": tp_ep(Shard(0)),
                "shared_expert.up_proj.weight": tp_ep(Shard(0)),
                "shared_expert.down_proj.weight": tp_ep(Shard(1)),
            },
            in_src={"hidden_states": tp_ep(Replicate())},
            out_src={"output": tp_ep(Partial("sum"), Partial("sum")),
                     "router_logits": tp_ep(Replicate())},
            out_dst={"output": tp_ep(Replicate())},
            out_names=["output", "router_logits"],
            is_boundary=True,
            local_compute_fn=Target("hyper_parallel.models.qwen2_moe.ep_local_compute",
                                    capacity_factor=1.25, drop_tokens=False, num_experts=8),
            _deferred_bias_params=(),
            _ep_stack={"gate_up_proj": "experts.gate_up_proj",
                       "down_proj": "experts.down_proj"},
            _ep_size=8,
            _is_terminal=False)
    modules["lm_head"] = spec(params={"weight": tp_ep(Shard(0))}, is_boundary=True,
                              _is_terminal=True)
    return ShardingPlan(modules=modules, tied_pairs=[], special_handlers={},
                        mesh_dim_names=(TP, EP))


QWEN_META = {
    "codegen_version": "0.1.1",
    "signature": "f" * 64,
    "yaml_path": "configs/qwen2_moe.yaml",
    "yaml_sha256": "0" * 64,
    "source": {"architecture": "Qwen2MoeForCausalLM", "model_type": "qwen2_moe"},
    "parallel_dims": {"tp_size": 2, "ep_size": 8, "cp_size": 1, "pp_size": 1, "dp_size": 4},
    "model_name": "Qwen2_Moe",
    "model_class": "Qwen2MoeForCausalLM",
}


def qwen_moe_model():
    hidden, vocab, experts, moe_inter, shared_inter = 2048, 151936, 8, 1408, 5632

    def layer():
        attn = make("Qwen2MoeAttention", q_proj=linear(hidden, hidden, bias=True),
                    k_proj=linear(hidden, hidden, bias=True),
                    v_proj=linear(hidden, hidden, bias=True), o_proj=linear(hidden, hidden))
        mlp = make("Qwen2MoeSparseMoeBlock",
                   experts=make("Qwen2MoeExperts",
                                gate_up_proj=Parameter(experts, hidden, 2 * moe_inter),
                                down_proj=Parameter(experts, moe_inter, hidden)),
                   gate=linear(experts, hidden),
                   shared_expert=make("Qwen2MoeMLP", gate_proj=linear(shared_inter, hidden),
                                      up_proj=linear(shared_inter, hidden),
                                      down_proj=linear(hidden, shared_inter)))
        return make("Qwen2MoeDecoderLayer", self_attn=attn, mlp=mlp)

    inner = make("Qwen2MoeModel", embed_tokens=make("Embedding",
                                                    weight=Parameter(vocab, hidden)))
    inner.layers = ModuleList([layer(), layer()])
    return make("Qwen2MoeForCausalLM", model=inner, lm_head=linear(vocab, hidden))


# --- dense-llama-2l ----------------------------------------------------------------------

def llama_plan():
    def tp(p):
        return {TP: p}

    def tp_cp(t, c):
        return {TP: t, CP: c}

    modules = {
        "model.embed_tokens": spec(params={"weight": tp(Shard(0))},
                                   out_src={"output": tp(Partial())},
                                   out_dst={"output": tp(Replicate())},
                                   out_names=["output"], is_boundary=True),
    }
    for i in range(2):
        modules[f"model.layers.{i}.self_attn"] = spec(
            params={"q_proj.weight": tp_cp(Shard(0), Replicate()),
                    "k_proj.weight": tp_cp(Shard(0), Replicate()),
                    "v_proj.weight": tp_cp(Shard(0), Replicate()),
                    "o_proj.weight": tp_cp(Shard(1), Replicate())},
            in_src={"hidden_states": tp_cp(Shard(1), Shard(1))},
            in_dst={"hidden_states": tp_cp(Replicate(), Shard(1))},
            out_src={"output": tp_cp(Partial("sum"), Shard(1))},
            out_dst={"output": tp_cp(Shard(1), Shard(1))},
            out_names=("output", "attn_weights"),
            tp_divide_attrs=["num_heads", "num_key_value_heads"],
            is_boundary=True,
            inner_wrapper=Target("hyper_parallel.distributed.cp.ring_attention", causal=True,
                                 softmax_scale=0.08838834764831843),
            inner_target="attention_interface",
            _needs_cp_attn=True,
            _is_terminal=False,
            _tp_local_attr_plan=TpLocalAttrPlan(auto_divide=("num_heads",
                                                             "num_key_value_heads")),
            _resolved_inner_wrapper="hyper_parallel.distributed.cp.ring_attention",
            _resolved_inner_target="attention_interface")
        modules[f"model.layers.{i}.mlp"] = spec(
            params={"gate_proj.weight": tp(Shard(0)), "up_proj.weight": tp(Shard(0)),
                    "down_proj.weight": tp(Shard(1))},
            in_src={"x": tp(Shard(1))},
            in_dst={"x": tp(Replicate())},
            out_src={"output": tp(Partial())},
            out_dst={"output": tp(Shard(1))},
            out_names=["output"],
            is_boundary=True)
    modules["lm_head"] = spec(params={"weight": tp(Shard(0))},
                              out_src={"output": tp(Shard(2))}, is_boundary=True,
                              region_dispatch="vocab_parallel")
    modules["model.norm"] = spec(params={"weight": tp(Replicate())}, is_boundary=False)
    return ShardingPlan(modules=modules, tied_pairs=[],
                        special_handlers={"model.embed_tokens.weight":
                                          "vocab_parallel_embedding"},
                        mesh_dim_names=[TP, CP])


def llama_model():
    hidden, vocab, kv, inter = 4096, 128256, 1024, 14336

    def norm():
        return make("LlamaRMSNorm", weight=Parameter(hidden, dtype=float32))

    def layer():
        attn = make("LlamaAttention", q_proj=linear(hidden, hidden), k_proj=linear(kv, hidden),
                    v_proj=linear(kv, hidden), o_proj=linear(hidden, hidden))
        mlp = make("LlamaMLP", gate_proj=linear(inter, hidden), up_proj=linear(inter, hidden),
                   down_proj=linear(hidden, inter))
        return make("LlamaDecoderLayer", self_attn=attn, mlp=mlp, input_layernorm=norm(),
                    post_attention_layernorm=norm())

    inner = make("LlamaModel", embed_tokens=make("Embedding", weight=Parameter(vocab, hidden)),
                 norm=norm())
    inner.layers = ModuleList([layer(), layer()])
    return make("LlamaForCausalLM", model=inner, lm_head=linear(vocab, hidden))


def python_meta_bytes(meta):
    """The bytes of docs/formats.md, "The meta": Python's json.dump(meta, indent=2, sort_keys=True)."""
    return json.dumps(meta, indent=2, sort_keys=True).encode()


def qwen_moe_expected():
    """moe-qwen-2l's golden meta for the live plan: its hand-written plan.json leaves out
    is_boundary on model.embed_tokens, which a live spec holds as its default, True."""
    golden = read(case("moe-qwen-2l", "expected.json"))
    meta = json.loads(golden)
    assert python_meta_bytes(meta) == golden  # re-encoding in Python is exact
    meta["param_plan"]["model.embed_tokens"]["is_boundary"] = True
    return python_meta_bytes(meta)


# --- a real upstream meta, rebuilt as the live plan and model it was frozen from --------

AXES = {axis.value: axis for axis in MeshAxisName}


def live_placements(value):
    """Canonical strings -> live placements; axis keys -> MeshAxisName members."""
    if isinstance(value, str):
        return parse_placement(value)
    if isinstance(value, list):
        return [live_placements(v) for v in value]
    return {AXES.get(k, k) if isinstance(v, str) else k: live_placements(v)
            for k, v in value.items()}


def live_target(value):
    if isinstance(value, dict) and "_target_" in value:
        kwargs = {k: v for k, v in value.items() if k != "_target_"}
        return Target(value["_target_"], **kwargs)
    return value  # a registry name


def live_plan_from_meta(meta):
    injections = {entry["match"]: entry for entry in meta["injections"]}
    # Plan order is what orders meta["injections"]; param_plan itself is sorted.
    order = list(injections) + sorted(set(meta["param_plan"]) - set(injections))
    modules = {}
    for fqn in order:
        frozen, injected = meta["param_plan"][fqn], injections.get(fqn, {})
        s = ModuleShardingSpec(
            **{k: live_placements(frozen[k]) for k in ("params", "in_src", "in_dst",
                                                      "out_src", "out_dst") if k in frozen},
            is_boundary=frozen.get("is_boundary", True),
            region_dispatch=frozen.get("region_dispatch"),
            inner_target=injected.get("inner_target"),
            inner_wrapper=live_target(injected.get("inner_wrapper")),
            local_compute_fn=live_target(injected.get("local_compute_fn")),
            _ep_stack=dict(injected.get("ep_stack", {})),
            _ep_size=injected.get("ep_size", 0))
        # What the planner and the applier fill in; freeze ignores all of it.
        s._deferred_bias_params = tuple(frozen.get("deferred_bias_params", ()))
        if "self_attn" in fqn:
            s._tp_local_attr_plan = TpLocalAttrPlan(auto_divide=("num_heads",
                                                                 "num_key_value_heads"))
        if s.inner_wrapper is not None:
            s._needs_cp_attn = True
            s._resolved_inner_wrapper = s.inner_wrapper.to_dict()["_target_"]
            s._resolved_inner_target = s.inner_target
        s._is_terminal = fqn == "lm_head"
        modules[fqn] = s
    dims = meta["parallel_dims"]
    return ShardingPlan(modules=modules,
                        sequence_parallel=dims.get("sequence_parallel", True),
                        loss_parallel=dims.get("loss_parallel", False),
                        special_handlers=dict(meta["special_handlers"]),
                        mesh_dim_names=tuple(AXES[a] for a in meta["mesh_dim_names"] or ()),
                        tied_pairs=[tuple(pair) for pair in meta["tied_pairs"]])


def boundary_classes(meta):
    """Every plan module's class. The two Qwen3 metas were written by an upstream version
    that left the is_boundary=False specs (the MoE blocks) out of boundary_classes; the
    freeze hpfreeze follows records every plan module, so those get their class here."""
    classes = dict(meta["boundary_classes"])
    for fqn in meta["param_plan"]:
        classes.setdefault(fqn, "Qwen3MoeSparseMoeBlock")
    return classes


def real_meta_expected(path):
    golden = read(path)
    meta = json.loads(golden)
    if set(meta["boundary_classes"]) == set(meta["param_plan"]):
        return golden
    assert python_meta_bytes(meta) == golden  # re-encoding in Python is exact
    meta["boundary_classes"] = boundary_classes(meta)
    return python_meta_bytes(meta)


def model_from_meta(meta):
    """A module tree with the boundary classes of the meta and every planned parameter."""
    nodes = {"": module_class(meta["model_class"])()}
    classes = boundary_classes(meta)

    def node(fqn):
        if fqn not in nodes:
            parent, _, name = fqn.rpartition(".")
            nodes[fqn] = module_class(classes.get(fqn, "Module"))()
            setattr(node(parent), name, nodes[fqn])
        return nodes[fqn]

    for fqn in classes:
        node(fqn)
    for fqn, frozen in meta["param_plan"].items():
        for name, axes in frozen.get("params", {}).items():
            full = f"{fqn}.{name}" if fqn else name
            dims = [parse_placement(p).dim for p in axes.values() if p != "R" and p[0] == "S"]
            owner, _, leaf = full.rpartition(".")
            node(owner)._parameters[leaf] = Parameter(*[64] * max([2] + [d + 1 for d in dims]))
    return nodes[""]


class Fixture(TempDirTest):
    def freeze(self, plan, model, *extra):
        return run("freeze", "--plan", plan, "--model", model, *extra)

    def export_and_freeze(self, plan, model, meta=None):
        hx.write_dumps(plan, model, self.path("plan.json"), self.path("model.json"), meta=meta)
        return self.freeze(self.path("plan.json"), self.path("model.json"))

    def llama_norms_warning(self):
        """The case's plan leaves the layers' norms unplanned, as the golden meta has them."""
        return (f"hpfreeze: warning: {self.path('model.json')}: /parameters/model.layers.0."
                f"input_layernorm.weight: 4 trainable parameters are not covered by any planned "
                f"parameter of {self.path('plan.json')}, first here: 'model.layers.0."
                f"input_layernorm.weight', 'model.layers.0.post_attention_layernorm.weight', "
                f"'model.layers.1.input_layernorm.weight' and 1 more (upstream's preflight "
                f"refuses them at run time) [HPF305]\n").encode()


class EndToEnd(Fixture):
    def test_qwen_moe_freezes_to_the_golden_bytes(self):
        r = self.export_and_freeze(qwen_moe_plan(), qwen_moe_model(), meta=QWEN_META)
        self.assertEqual(r.stderr, b"")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stdout, qwen_moe_expected())

    def test_llama_freezes_to_the_golden_bytes(self):
        r = self.export_and_freeze(llama_plan(), llama_model())
        self.assertEqual((r.returncode, r.stderr), (0, self.llama_norms_warning()))
        self.assertEqual(r.stdout, read(case("dense-llama-2l", "expected.json")))

    def test_real_upstream_metas_are_reproduced_from_live_plans(self):
        paths = sorted(glob.glob(os.path.join(TESTDATA, "realworld", "*.json")))
        self.assertEqual(len(paths), 3)
        for path in paths:
            with self.subTest(meta=os.path.basename(path)):
                meta = load(path)
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    hx.write_dumps(live_plan_from_meta(meta), model_from_meta(meta),
                                   self.path("plan.json"), self.path("model.json"))
                r = self.freeze(self.path("plan.json"), self.path("model.json"), "--base", path)
                self.assertEqual((r.returncode, r.stderr), (0, b""))
                self.assertEqual(r.stdout, real_meta_expected(path))

    def test_dump_files_are_ascii_json_with_a_final_newline(self):
        hx.write_dumps(qwen_moe_plan(), qwen_moe_model(), self.path("p.json"),
                       self.path("m.json"))
        for name in ("p.json", "m.json"):
            data = read(self.path(name))
            self.assertTrue(data.endswith(b"}\n"))
            data.decode("ascii")
        self.assertEqual(sorted(os.listdir(self.dir)), ["m.json", "p.json"])


class Placements(Fixture):
    def leaf(self, placement):
        plan = ShardingPlan(modules={"m": spec(params={"w": {TP: placement}})})
        return hx.plan_to_dump(plan)["modules"]["m"]["params"]["w"]["tp"]

    def test_each_placement_type(self):
        self.assertEqual(self.leaf(Shard(1)),
                         {"$placement": "Shard", "dim": 1, "uneven_shard": False})
        self.assertEqual(self.leaf(Shard(0, uneven_shard=True)),
                         {"$placement": "Shard", "dim": 0, "uneven_shard": True})
        # StridedShard subclasses Shard: it must not come out as a plain Shard.
        self.assertEqual(self.leaf(StridedShard(2, 4)),
                         {"$placement": "StridedShard", "dim": 2, "split_factor": 4,
                          "uneven_shard": False})
        self.assertEqual(self.leaf(Replicate()), {"$placement": "Replicate"})
        self.assertEqual(self.leaf(Partial("avg")), {"$placement": "Partial", "reduce_op": "avg"})
        self.assertEqual(self.leaf(Partial()), {"$placement": "Partial", "reduce_op": "sum"})
        self.assertEqual(self.leaf("S(0)"), "S(0)")  # canonical strings pass through

    def test_ragged_shard_is_refused(self):
        with self.assertRaises(hx.ExportError) as e:
            self.leaf(RaggedShard(0, (1, 2)))
        self.assertEqual(str(e.exception), "/modules/m/params/w/tp: placement RaggedShard has "
                                           "no canonical string form and cannot be frozen")

    def test_unknown_placement_subclass_is_refused(self):
        class Interleaved(Placement):
            pass

        with self.assertRaises(hx.ExportError) as e:
            self.leaf(Interleaved())
        self.assertEqual(str(e.exception),
                         "/modules/m/params/w/tp: unknown placement type 'Interleaved' "
                         "(expected Shard, StridedShard, Replicate or Partial)")

    def test_bad_placement_attributes(self):
        with self.assertRaises(hx.ExportError) as e:
            self.leaf(Shard("0"))
        self.assertEqual(str(e.exception),
                         "/modules/m/params/w/tp: dim must be an integer, got str")
        with self.assertRaises(hx.ExportError) as e:
            self.leaf(Shard(True))
        self.assertEqual(str(e.exception),
                         "/modules/m/params/w/tp: dim must be an integer, got bool")
        with self.assertRaises(hx.ExportError) as e:
            self.leaf(Partial(""))
        self.assertEqual(str(e.exception),
                         "/modules/m/params/w/tp: reduce_op must be a non-empty string, got ''")

    def test_negative_real_dim_reaches_hpfreeze_which_warns(self):
        plan = ShardingPlan(modules={"lm_head": spec(params={"weight": {TP: Shard(-1)}})})
        model = make("M", lm_head=linear(8, 4))
        r = self.export_and_freeze(plan, model)
        self.assertEqual(r.returncode, 0)
        self.assertIn(b'"lm_head.weight"', r.stdout)
        self.assertIn(b"warning", r.stderr)


class Values(Fixture):
    def test_mesh_axis_enums_become_their_values(self):
        self.assertEqual(str(TP), "MeshAxisName.TP")  # why .value is needed at all
        plan = ShardingPlan(modules={"m": spec(in_src={"x": {TP: Replicate(), CP: Shard(1)}},
                                               region_dispatch=EP)},
                            mesh_dim_names=(TP, CP))
        dump = hx.plan_to_dump(plan)
        self.assertEqual(dump["mesh_dim_names"], ["tp", "cp"])
        self.assertEqual(list(dump["modules"]["m"]["in_src"]["x"]), ["tp", "cp"])
        self.assertEqual(dump["modules"]["m"]["region_dispatch"], "ep")
        self.assertIs(type(dump["mesh_dim_names"][0]), str)

    def test_targets_callables_tuples(self):
        def moe_local_compute():
            pass

        plan = ShardingPlan(modules={"m": spec(
            inner_wrapper=Target("pkg.wrap", sizes=(1, 2), axis=TP),
            local_compute_fn=moe_local_compute,
            inner_out_src=[(Shard(0), len), lambda: 0])})
        with self.assertWarns(hx.ExportWarning):  # the lambda
            m = hx.plan_to_dump(plan)["modules"]["m"]
        self.assertEqual(m["inner_wrapper"],
                         {"$target": {"_target_": "pkg.wrap", "sizes": [1, 2], "axis": "tp"}})
        self.assertEqual(m["local_compute_fn"], {"$callable": "moe_local_compute"})
        self.assertEqual(m["inner_out_src"],
                         [[{"$placement": "Shard", "dim": 0, "uneven_shard": False},
                           {"$callable": "len"}], {"$callable": "<lambda>"}])

    def test_integer_likes_become_integers(self):
        class Int64:  # numpy.int64 is no int subclass but has __index__
            def __index__(self):
                return 8

        plan = ShardingPlan(modules={"m": spec(params={"w": {TP: Shard(Int64())}},
                                               _ep_size=Int64())})
        m = hx.plan_to_dump(plan)["modules"]["m"]
        self.assertEqual((m["_ep_size"], m["params"]["w"]["tp"]["dim"]), (8, 8))
        self.assertIs(type(m["_ep_size"]), int)

    def test_every_dataclass_field_by_attribute_name_in_order(self):
        m = hx.plan_to_dump(ShardingPlan(modules={"m": spec()}))["modules"]["m"]
        self.assertEqual(list(m), [f for f in ModuleShardingSpec.__dataclass_fields__])
        self.assertIn("_deferred_bias_params", m)  # an init=False field
        # Upstream's defaults, as a fresh spec holds them.
        self.assertEqual({k: v for k, v in m.items() if v is not None},
                         {"_deferred_bias_params": [], "is_boundary": True,
                          "_is_terminal": False, "_needs_cp_attn": False, "_ep_stack": {},
                          "_ep_size": 0})

    def test_init_false_field_never_assigned_is_null(self):
        import dataclasses

        @dataclasses.dataclass
        class LateSpec:
            params: dict
            _ep_size: int = dataclasses.field(init=False)  # no default, never assigned

        m = hx.plan_to_dump(ShardingPlan(modules={"m": LateSpec({})}))["modules"]["m"]
        self.assertEqual(m, {"params": {}, "_ep_size": None})

    def test_unknown_spec_field_is_exported_and_hpfreeze_refuses_it(self):
        import dataclasses

        @dataclasses.dataclass
        class NewerSpec(ModuleShardingSpec):
            _shiny_new_field: int = 3

        plan = ShardingPlan(modules={"m": NewerSpec(params={"w": {TP: Replicate()}})})
        r = self.export_and_freeze(plan, make("M", m=make("Inner", w=Parameter(2))))
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode(), "hpfreeze: error: " + self.path("plan.json") +
                         ": /modules/m/_shiny_new_field: unknown module-spec field "
                         "'_shiny_new_field'\n")

    def test_unexportable_values_name_their_path(self):
        cases = [
            (spec(out_names={"a"}), "/modules/m/out_names: cannot export a value of type set"),
            (spec(_ep_size=2**64), "/modules/m/_ep_size: integer 18446744073709551616 does "
                                   "not fit in 64 bits"),
            (spec(_ep_stack={"x": float("nan")}), "/modules/m/_ep_stack/x: nan is not a JSON "
                                                  "number"),
            (spec(_ep_stack={"$target": "x"}), "/modules/m/_ep_stack: a plain mapping may not "
                                               "use the key '$target' (it would read as a "
                                               "typed value)"),
            (spec(_ep_stack={PlainAxis.TP: 1, "tp": 2}), "/modules/m/_ep_stack: two keys both "
                                                         "export as 'tp'"),
            (spec(_ep_stack={(1, 2): 1}), "/modules/m/_ep_stack: mapping key (1, 2) is not a "
                                          "string"),
            (spec(inner_wrapper=Target("t", p=Shard(0))),
             "/modules/m/inner_wrapper/$target/p: expected plain data, got placement Shard"),
            (object(), "/modules/m: expected a dataclass instance as module spec, got object"),
        ]
        for s, message in cases:
            with self.subTest(message=message):
                with self.assertRaises(hx.ExportError) as e:
                    hx.plan_to_dump(ShardingPlan(modules={"m": s}))
                self.assertEqual(str(e.exception), message)

    def test_pointer_escapes_slash_and_tilde(self):
        with self.assertRaises(hx.ExportError) as e:
            hx.plan_to_dump(ShardingPlan(modules={"a/b~c": spec(_ep_stack={"k": {1}})}))
        self.assertEqual(str(e.exception),
                         "/modules/a~1b~0c/_ep_stack/k: cannot export a value of type set")

    def test_plan_level_fields(self):
        plan = ShardingPlan(modules={}, tied_pairs=[("a.weight", "b.weight")],
                            special_handlers={"a.weight": "h"}, mesh_dim_names=[],
                            sequence_parallel=True)
        self.assertEqual(hx.plan_to_dump(plan, meta={"signature": "s"}), {
            "format": "hpfreeze.plan/v1", "mesh_dim_names": [],
            "tied_pairs": [["a.weight", "b.weight"]], "special_handlers": {"a.weight": "h"},
            "sequence_parallel": True, "loss_parallel": False, "meta": {"signature": "s"},
            "modules": {}})

    def test_a_plan_without_optional_attributes(self):
        class Bare:
            modules = {"": spec(is_boundary=True)}

        self.assertEqual(list(hx.plan_to_dump(Bare())), ["format", "modules"])
        with self.assertRaises(hx.ExportError) as e:
            hx.plan_to_dump(object())
        self.assertEqual(str(e.exception), "/modules: plan.modules must be a dict, got NoneType")


class Injections(Fixture):
    """inner_wrapper as upstream allows it, inner_out_src's sentinel, exempt fields."""

    def test_inner_wrapper_forms_and_first_input(self):
        @inner_wrapper
        def cp_allgather_wrapper(target_module, mesh, tp_mesh, cp_mesh, ep_mesh):
            pass

        @local_compute
        def moe_factory(mesh, tp_mesh, cp_mesh, ep_mesh):
            pass

        w = {TP: Shard(0)}
        modules = {
            "a": spec(params={"w": w}, inner_wrapper="sdpa_hf", inner_target="self",
                      inner_out_src="first_input", region_dispatch=False),
            "b": spec(params={"w": w}, inner_wrapper=cp_allgather_wrapper, inner_target="core",
                      inner_out_src={"output": {TP: Shard(1), CP: Replicate()}},
                      region_dispatch=True),
            "c": spec(params={"w": {TP: Replicate()}},
                      inner_wrapper=Target("pkg.wrappers.sdpa_hf_cp_wrapper"),
                      local_compute_fn=moe_factory, region_dispatch=False),
        }
        model = make("Root", a=make("A", w=Parameter(4, 4)), b=make("B", w=Parameter(4, 4)),
                     c=make("C", w=Parameter(4, 4)))
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # none of these is worth a warning
            r = self.export_and_freeze(ShardingPlan(modules=modules, mesh_dim_names=(TP, CP)),
                                       model)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        meta = json.loads(r.stdout)
        self.assertEqual(meta["injections"], [
            {"inner_out_src": "first_input", "inner_target": "self",
             "inner_wrapper": "sdpa_hf", "match": "a"},
            {"inner_out_src": {"output": {"cp": "R", "tp": "S(1)"}}, "inner_target": "core",
             "inner_wrapper": "cp_allgather_wrapper", "match": "b"},
            {"inner_wrapper": {"_target_": "pkg.wrappers.sdpa_hf_cp_wrapper"},
             "local_compute_fn": "moe_factory", "match": "c"}])
        self.assertEqual({fqn: e.get("region_dispatch") for fqn, e in meta["param_plan"].items()},
                         {"a": False, "b": True, "c": False})

    def test_nested_dataclasses_are_objects(self):
        @dataclasses.dataclass(frozen=True)
        class Stack:
            gate_up_proj: str = "experts.gate_up_proj"
            down_proj: str = "experts.down_proj"

        s = spec(params={"experts.gate_up_proj": {EP: Shard(0)}}, _ep_stack=Stack(), _ep_size=8,
                 _tp_local_attr_plan=TpLocalAttrPlan(auto_divide=("num_heads",)))
        m = hx.plan_to_dump(ShardingPlan(modules={"mlp": s}))["modules"]["mlp"]
        self.assertEqual(m["_tp_local_attr_plan"], {"auto_divide": ["num_heads"],
                                                    "user_divide": []})
        self.assertEqual(m["_ep_stack"], {"gate_up_proj": "experts.gate_up_proj",
                                          "down_proj": "experts.down_proj"})
        model = make("Root", mlp=make("Moe", experts=make("Experts",
                                                          gate_up_proj=Parameter(8, 4, 4))))
        r = self.export_and_freeze(ShardingPlan(modules={"mlp": s}), model)
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(json.loads(r.stdout)["injections"], [
            {"ep_size": 8, "ep_stack": {"down_proj": "experts.down_proj",
                                        "gate_up_proj": "experts.gate_up_proj"},
             "match": "mlp"}])

    def test_exempt_fields_never_stop_an_export(self):
        class Broken:
            def to_dict(self):
                raise RuntimeError("not resolvable offline")

        s = spec(params={"w": {TP: Shard(0)}}, _tp_local_attr_plan={"a", "b"},
                 _is_terminal=float("nan"), _needs_cp_attn=Broken(),
                 _resolved_inner_wrapper=RaggedShard(0, (1,)), _resolved_inner_target=object(),
                 _head_count_owner=lambda: 0)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # exempt fields never reach the meta: no warning
            m = hx.plan_to_dump(ShardingPlan(modules={"m": s}))["modules"]["m"]
        self.assertEqual({k: m[k] for k in ("_tp_local_attr_plan", "_is_terminal",
                                            "_needs_cp_attn", "_resolved_inner_wrapper",
                                            "_resolved_inner_target")},
                         dict.fromkeys(("_tp_local_attr_plan", "_is_terminal", "_needs_cp_attn",
                                        "_resolved_inner_wrapper", "_resolved_inner_target")))
        self.assertEqual(m["_head_count_owner"], {"$callable": "<lambda>"})
        r = self.export_and_freeze(ShardingPlan(modules={"m": s}),
                                   make("Root", m=make("M", w=Parameter(4, 4))))
        self.assertEqual((r.returncode, r.stderr), (0, b""))
        self.assertEqual(json.loads(r.stdout)["param_plan"],
                         {"m": {"is_boundary": True, "params": {"w": {"tp": "S(0)"}}}})

    def test_a_frozen_field_still_refuses_what_the_dump_cannot_hold(self):
        with self.assertRaises(hx.ExportError) as e:
            hx.plan_to_dump(ShardingPlan(modules={"m": spec(inner_out_src={"a", "b"})}))
        self.assertEqual(str(e.exception),
                         "/modules/m/inner_out_src: cannot export a value of type set")


class Warnings(Fixture):
    def test_partial_and_lambda_make_the_meta_irreproducible(self):
        def scaled_compute(mesh, tp_mesh, cp_mesh, ep_mesh, factor):
            pass

        part = functools.partial(scaled_compute, factor=2)
        modules = {f"layers.{i}.mlp": spec(local_compute_fn=part) for i in range(3)}
        modules["head"] = spec(inner_wrapper=lambda target_module: None)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            dump = hx.plan_to_dump(ShardingPlan(modules=modules))
        text = str(part)
        self.assertRegex(text, r" at 0x[0-9a-f]+")
        self.assertEqual([(w.category, str(w.message)) for w in caught], [
            (hx.ExportWarning,
             f"/modules/layers.0.mlp/local_compute_fn: partial has no __name__, so the meta "
             f"gets its str() {text!r}, which holds a memory address and changes from run to "
             "run; use a def function, a registry name or a Target (3 places in all)"),
            (hx.ExportWarning,
             "/modules/head/inner_wrapper: a lambda is written as '<lambda>', a name no "
             "generated code can resolve; use a def function, a registry name or a Target")])
        self.assertEqual(caught[0].filename, __file__)  # points at the caller
        # The dump still says what upstream's freeze would write.
        self.assertEqual(dump["modules"]["layers.2.mlp"]["local_compute_fn"], {"$callable": text})
        self.assertEqual(dump["modules"]["head"]["inner_wrapper"], {"$callable": "<lambda>"})

    def test_write_dumps_warns_too(self):
        plan = ShardingPlan(modules={"m": spec(params={"w": {TP: Shard(0)}},
                                               local_compute_fn=lambda: None)})
        with self.assertWarns(hx.ExportWarning) as w:
            hx.write_dumps(plan, make("R", m=make("M", w=Parameter(2, 2))),
                           self.path("p.json"), self.path("m.json"))
        self.assertEqual(w.filename, __file__)


CLI_FACTORY = """
import sys
sys.path[:0] = {paths!r}
import test_exporter as t


def llama():
    return t.llama_plan(), t.llama_model()


def qwen():
    return t.qwen_moe_plan(), t.qwen_moe_model()


def ragged():
    return t.ShardingPlan(modules={{"m": t.spec(params={{"w": {{t.TP: t.RaggedShard(0, ())}}}})}}), t.llama_model()


def with_lambda():
    plan, model = llama()
    plan.modules["lm_head"].local_compute_fn = lambda: None
    return plan, model


def not_a_pair():
    return llama()[0]
"""


class CommandLine(Fixture):
    def setUp(self):
        super().setUp()
        with open(self.path("live_setup.py"), "w") as f:
            f.write(CLI_FACTORY.format(paths=[os.path.dirname(os.path.abspath(__file__))]))
        with open(self.path("meta.json"), "w") as f:
            json.dump(QWEN_META, f)

    def export(self, *args, script=False):
        env = dict(os.environ, PYTHONPATH=os.path.join(SOURCE, "python"))
        entry = ([os.path.join(SOURCE, "python", "hpfreeze_export.py")] if script
                 else ["-m", "hpfreeze_export"])
        return subprocess.run([sys.executable, *entry, *args], cwd=self.dir, env=env,
                              capture_output=True, text=True, timeout=120)

    def test_module_entry_point_writes_dumps_that_freeze_to_the_golden_bytes(self):
        r = self.export("live_setup:llama")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "", ""))
        f = self.freeze(self.path("plan.json"), self.path("model.json"))
        self.assertEqual((f.returncode, f.stderr), (0, self.llama_norms_warning()))
        self.assertEqual(f.stdout, read(case("dense-llama-2l", "expected.json")))

    def test_meta_file_and_output_names(self):
        r = self.export("live_setup:qwen", "--plan", "p.json", "--model", "m.json",
                        "--meta", "meta.json", script=True)
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        f = self.freeze(self.path("p.json"), self.path("m.json"))
        self.assertEqual((f.returncode, f.stderr), (0, b""))
        self.assertEqual(f.stdout, qwen_moe_expected())

    def test_warnings_are_one_line_each(self):
        r = self.export("live_setup:with_lambda")
        self.assertEqual(r.returncode, 0)
        self.assertEqual(r.stderr, "hpfreeze_export: warning: /modules/lm_head/local_compute_fn: "
                                   "a lambda is written as '<lambda>', a name no generated code "
                                   "can resolve; use a def function, a registry name or a "
                                   "Target\n")

    def test_errors_and_exit_codes(self):
        cases = [
            (["live_setup:ragged"], 1, "/modules/m/params/w/tp: placement RaggedShard has no "
                                       "canonical string form and cannot be frozen"),
            (["no_such_module:llama"], 2, "cannot import 'no_such_module': No module named "
                                          "'no_such_module'"),
            (["live_setup:nothing"], 2, "'live_setup' has no attribute 'nothing'"),
            (["live_setup"], 2, "expected MODULE:FUNCTION, got 'live_setup'"),
            (["live_setup:not_a_pair"], 2, "live_setup:not_a_pair returned ShardingPlan, "
                                           "expected the pair (plan, model)"),
            (["live_setup:llama", "--meta", "missing.json"], 2,
             "missing.json: cannot read: No such file or directory"),
            (["live_setup:llama", "--meta", "live_setup.py"], 1, None),
        ]
        for args, status, message in cases:
            with self.subTest(args=args):
                r = self.export(*args)
                self.assertEqual(r.returncode, status, r.stderr)
                if message is not None:
                    self.assertEqual(r.stderr, f"hpfreeze_export: error: {message}\n")
                else:
                    self.assertTrue(r.stderr.startswith("hpfreeze_export: error: live_setup.py: "
                                                        "not valid JSON"), r.stderr)
                self.assertFalse(os.path.exists(self.path("plan.json")))

    def test_help_says_where_the_plan_is_and_how_to_call_it(self):
        r = self.export("--help")
        self.assertEqual((r.returncode, r.stderr), (0, ""))
        for text in ("usage: python3 -m hpfreeze_export MODULE:FUNCTION",
                     "ShardingPlanner(plan_overrides=overrides).plan(model, mesh",
                     'hpfreeze_export.write_dumps(plan, model, "plan.json", "model.json")',
                     "apply_sharding_plan", "signature", "--base",
                     "/usr/local/share/hpfreeze", "Exit status"):
            self.assertIn(text, r.stdout)
        self.assertEqual(hx.__doc__.strip()[:40], r.stdout.split("\n\n", 1)[1].strip()[:40])


def build_dir():
    """The CMake build tree of the binary under test, if it is one."""
    try:
        return cli_help.build_dir()
    except RuntimeError:
        return None


class Installed(TempDirTest):
    def test_cmake_install_puts_it_where_the_docs_say(self):
        build = build_dir()
        if build is None or not shutil.which("cmake"):
            self.skipTest("no CMake build tree around the binary")
        prefix = self.path("prefix")
        r = subprocess.run(["cmake", "--install", build, "--prefix", prefix],
                           capture_output=True, text=True, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        installed = os.path.join(prefix, "share", "hpfreeze", "hpfreeze_export.py")
        self.assertEqual(read(installed), read(os.path.join(SOURCE, "python",
                                                            "hpfreeze_export.py")))
        r = subprocess.run([sys.executable, "-m", "hpfreeze_export", "--help"],
                           env=dict(os.environ, PYTHONPATH=os.path.dirname(installed)),
                           capture_output=True, text=True, timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        # The docs name the path of the default prefix, /usr/local.
        with open(os.path.join(SOURCE, "docs", "formats.md"), encoding="utf-8") as f:
            self.assertIn("/usr/local/share/hpfreeze/hpfreeze_export.py", f.read())


class Models(Fixture):
    def test_tied_weights_appear_under_both_names(self):
        shared = Parameter(16, 4)
        model = make("Tiny", embed=make("Embedding", weight=shared),
                     head=make("Linear", weight=shared))
        model.extra = Parameter(3, dtype=float32, requires_grad=False)
        dump = hx.model_to_dump(model)
        self.assertEqual(dump, {
            "format": "hpfreeze.model/v1",
            "modules": {"": "Tiny", "embed": "Embedding", "head": "Linear"},
            "parameters": {
                "extra": {"shape": [3], "dtype": "float32", "requires_grad": False},
                "embed.weight": {"shape": [16, 4], "dtype": "bfloat16", "requires_grad": True},
                "head.weight": {"shape": [16, 4], "dtype": "bfloat16", "requires_grad": True}}})
        # With both names present, hpfreeze can check the tied pair against the model.
        plan = ShardingPlan(modules={"head": spec(params={"weight": {TP: Shard(0)}}),
                                     "embed": spec(params={"weight": {TP: Shard(0)}})},
                            tied_pairs=[("embed.weight", "head.weight")])
        r = self.export_and_freeze(plan, model)
        self.assertEqual((r.returncode, r.stderr), (0, b""))

    def test_shared_module_appears_under_both_names(self):
        block = make("Block", w=Parameter(2))
        dump = hx.model_to_dump(make("Root", a=block, b=block))
        self.assertEqual(dump["modules"], {"": "Root", "a": "Block", "b": "Block"})
        self.assertEqual(list(dump["parameters"]), ["a.w", "b.w"])

    def test_look_alike_without_remove_duplicate(self):
        class OldStyle:
            def named_modules(self):
                yield "", self

            def named_parameters(self):
                yield "w", Parameter(5)

        self.assertEqual(hx.model_to_dump(OldStyle()), {
            "format": "hpfreeze.model/v1", "modules": {"": "OldStyle"},
            "parameters": {"w": {"shape": [5], "dtype": "bfloat16", "requires_grad": True}}})

    def test_unreadable_shape(self):
        class Lazy:
            dtype = None
            requires_grad = True

            @property
            def shape(self):
                raise ValueError("uninitialized")

        model = module_class("M")()
        model._parameters["w"] = Lazy()
        with self.assertRaises(hx.ExportError) as e:
            hx.model_to_dump(model)
        self.assertEqual(str(e.exception), "/parameters/w: cannot read the shape: uninitialized")


class Writing(Fixture):
    def test_identical_dumps_leave_files_and_mtimes_alone(self):
        p, m = self.path("plan.json"), self.path("model.json")
        hx.write_dumps(llama_plan(), llama_model(), p, m)
        os.utime(p, (1_000_000, 1_000_000))
        os.utime(m, (1_000_000, 1_000_000))
        hx.write_dumps(llama_plan(), llama_model(), p, m)
        self.assertEqual((os.stat(p).st_mtime, os.stat(m).st_mtime), (1_000_000, 1_000_000))
        hx.write_dumps(qwen_moe_plan(), llama_model(), p, m)
        self.assertNotEqual(os.stat(p).st_mtime, 1_000_000)
        self.assertEqual(os.stat(m).st_mtime, 1_000_000)
        self.assertEqual(sorted(os.listdir(self.dir)), ["model.json", "plan.json"])

    def test_export_error_writes_nothing(self):
        bad = ShardingPlan(modules={"m": spec(params={"w": {TP: RaggedShard(0, ())}})})
        with self.assertRaises(hx.ExportError):
            hx.write_dumps(bad, llama_model(), self.path("plan.json"), self.path("model.json"))
        self.assertEqual(os.listdir(self.dir), [])

    def test_new_files_get_the_umask_mode(self):
        hx.write_dumps(llama_plan(), llama_model(), self.path("p.json"), self.path("m.json"))
        umask = os.umask(0)
        os.umask(umask)
        self.assertEqual(os.stat(self.path("p.json")).st_mode & 0o777, 0o666 & ~umask)


class Source(unittest.TestCase):
    def test_parses_as_python_3_9_and_imports_only_the_standard_library(self):
        path = os.path.join(SOURCE, "python", "hpfreeze_export.py")
        with open(path, encoding="utf-8") as f:
            tree = ast.parse(f.read(), feature_version=(3, 9))
        imported = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                imported.add((node.module or "").split(".")[0])
        self.assertEqual(imported, {"__future__", "argparse", "dataclasses", "enum",
                                    "importlib", "json", "math", "operator", "os", "re",
                                    "secrets", "shutil", "subprocess", "sys", "threading",
                                    "typing", "warnings"})


if __name__ == "__main__":
    unittest.main()
