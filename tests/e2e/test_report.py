"""End-to-end tests of `hpfreeze report` on realistic model shapes.

The model trees and metas are generated here (a Llama-3-8B-like dense model and a
Qwen3-30B-A3B-like MoE, stacked and unstacked experts). Every expected number is computed
in this file from the model's dimensions in closed form, never taken from the program.
"""

import json
import os
import subprocess
import tempfile
import unittest

BINARY = os.environ["HPFREEZE_BINARY"]
TESTDATA = os.environ["HPFREEZE_TESTDATA_DIR"]

BF16 = 2

# Llama-3-8B: vocab 128256, hidden 4096, 32 layers, MLP 14336, 32 heads and 8 KV heads of 128.
LLAMA = dict(V=128256, H=4096, L=32, I=14336, KV=8 * 128)
# Qwen3-30B-A3B: vocab 151936, hidden 2048, 48 layers, 32 heads and 4 KV heads of 128,
# 128 experts with a 768-wide MLP.
QWEN = dict(V=151936, H=2048, L=48, Q=32 * 128, KV=4 * 128, D=128, E=128, Im=768)


def run(*args, stdin=None):
    return subprocess.run([BINARY, *args], input=stdin, capture_output=True, text=True,
                          check=False)


def meta_doc(param_plan, mesh_dim_names, parallel_dims):
    return {"codegen_version": "0.1.1", "mesh_dim_names": mesh_dim_names,
            "parallel_dims": parallel_dims, "param_plan": param_plan}


def model_doc(params):
    modules = {"": "ForCausalLM"}
    return {"format": "hpfreeze.model/v1", "modules": modules,
            "parameters": {fqn: {"shape": shape, "dtype": dtype}
                           for fqn, shape, dtype in params}}


def llama(tp):
    d = LLAMA
    H, I, KV, V = d["H"], d["I"], d["KV"], d["V"]
    R = {"cp": "R", "tp": "R"}
    col = {"cp": "R", "tp": "S(0)"}
    row = {"cp": "R", "tp": "S(1)"}
    params = [("model.embed_tokens.weight", [V, H], "bfloat16")]
    plan = {"model.embed_tokens": {"is_boundary": True, "params": {"weight": col}}}
    for i in range(d["L"]):
        p = f"model.layers.{i}"
        params += [(f"{p}.self_attn.q_proj.weight", [H, H], "bfloat16"),
                   (f"{p}.self_attn.k_proj.weight", [KV, H], "bfloat16"),
                   (f"{p}.self_attn.v_proj.weight", [KV, H], "bfloat16"),
                   (f"{p}.self_attn.o_proj.weight", [H, H], "bfloat16"),
                   (f"{p}.mlp.gate_proj.weight", [I, H], "torch.bfloat16"),
                   (f"{p}.mlp.up_proj.weight", [I, H], "torch.bfloat16"),
                   (f"{p}.mlp.down_proj.weight", [H, I], "torch.bfloat16"),
                   (f"{p}.input_layernorm.weight", [H], "bfloat16"),
                   (f"{p}.post_attention_layernorm.weight", [H], "bfloat16")]
        plan[f"{p}.self_attn"] = {"params": {"q_proj.weight": col, "k_proj.weight": col,
                                             "v_proj.weight": col, "o_proj.weight": row}}
        plan[f"{p}.mlp"] = {"params": {"gate_proj.weight": col, "up_proj.weight": col,
                                       "down_proj.weight": row}}
        plan[f"{p}.input_layernorm"] = {"params": {"weight": R}}
        plan[f"{p}.post_attention_layernorm"] = {"params": {"weight": R}}
    params += [("model.norm.weight", [H], "bfloat16"), ("lm_head.weight", [V, H], "bfloat16")]
    plan["model.norm"] = {"params": {"weight": R}}
    plan["lm_head"] = {"params": {"weight": col}}
    dims = {"cp_size": 1, "dp_size": 8, "ep_size": 1, "pp_size": 1, "tp_size": tp,
            "sequence_parallel": True, "loss_parallel": True}
    return meta_doc(plan, ["cp", "tp"], dims), model_doc(params)


def llama_expected(tp):
    d = LLAMA
    H, I, KV, V, L = d["H"], d["I"], d["KV"], d["V"], d["L"]
    per_layer_sharded = 2 * H * H + 2 * KV * H + 3 * I * H
    replicated = L * 2 * H + H
    return {
        "rank0_bytes": BF16 * (2 * V * H // tp + L * per_layer_sharded // tp + replicated),
        "replicated_bytes": BF16 * replicated,
        "unsharded_bytes": BF16 * 8030261248,  # the published parameter count of Llama-3-8B
        "uncovered_bytes": 0,
    }


def qwen_moe(tp, ep, stacked=True):
    d = QWEN
    H, Q, KV, D, E, Im, V = d["H"], d["Q"], d["KV"], d["D"], d["E"], d["Im"], d["V"]
    R = {"cp": "R", "ep": "R", "tp": "R"}
    col = {"cp": "R", "ep": "R", "tp": "S(0)"}
    row = {"cp": "R", "ep": "R", "tp": "S(1)"}
    params = [("model.embed_tokens.weight", [V, H], "bfloat16")]
    plan = {"model.embed_tokens": {"params": {"weight": col}}}
    for i in range(d["L"]):
        p = f"model.layers.{i}"
        params += [(f"{p}.self_attn.q_proj.weight", [Q, H], "bfloat16"),
                   (f"{p}.self_attn.k_proj.weight", [KV, H], "bfloat16"),
                   (f"{p}.self_attn.v_proj.weight", [KV, H], "bfloat16"),
                   (f"{p}.self_attn.o_proj.weight", [H, Q], "bfloat16"),
                   (f"{p}.self_attn.q_norm.weight", [D], "bfloat16"),
                   (f"{p}.self_attn.k_norm.weight", [D], "bfloat16"),
                   (f"{p}.mlp.gate.weight", [E, H], "bfloat16"),
                   (f"{p}.input_layernorm.weight", [H], "bfloat16"),
                   (f"{p}.post_attention_layernorm.weight", [H], "bfloat16")]
        plan[f"{p}.self_attn"] = {"params": {"q_proj.weight": col, "k_proj.weight": col,
                                             "v_proj.weight": col, "o_proj.weight": row}}
        plan[f"{p}.self_attn.q_norm"] = {"params": {"weight": R}}
        plan[f"{p}.self_attn.k_norm"] = {"params": {"weight": R}}
        mlp = {"gate.weight": R}
        if stacked:
            params += [(f"{p}.mlp.experts.gate_up_proj", [E, H, 2 * Im], "bfloat16"),
                       (f"{p}.mlp.experts.down_proj", [E, Im, H], "bfloat16")]
            mlp["experts.gate_up_proj"] = {"cp": "R", "ep": "S(0)", "tp": "SS(2,2)"}
            mlp["experts.down_proj"] = {"cp": "R", "ep": "S(0)", "tp": "S(1)"}
        else:
            for e in range(E):
                x = f"{p}.mlp.experts.{e}"
                params += [(f"{x}.gate_proj.weight", [Im, H], "bfloat16"),
                           (f"{x}.up_proj.weight", [Im, H], "bfloat16"),
                           (f"{x}.down_proj.weight", [H, Im], "bfloat16")]
        plan[f"{p}.mlp"] = {"params": mlp}
        plan[f"{p}.input_layernorm"] = {"params": {"weight": R}}
        plan[f"{p}.post_attention_layernorm"] = {"params": {"weight": R}}
    params += [("model.norm.weight", [H], "bfloat16"), ("lm_head.weight", [V, H], "bfloat16")]
    plan["model.norm"] = {"params": {"weight": R}}
    plan["lm_head"] = {"params": {"weight": col}}
    dims = {"cp_size": 1, "dp_size": 1, "ep_size": ep, "pp_size": 1, "tp_size": tp}
    # Experts split on tp as well as ep: old-style expert parallelism, ep a mesh axis of its
    # own (the axis layout), named last so that the placement order stays cp, tp, ep.
    return meta_doc(plan, ["cp", "tp", "ep"], dims), model_doc(params)


def qwen_expected(tp, ep, stacked=True):
    d = QWEN
    H, Q, KV, D, E, Im, V, L = (d["H"], d["Q"], d["KV"], d["D"], d["E"], d["Im"], d["V"],
                                d["L"])
    by_tp = 2 * V * H + L * (2 * Q * H + 2 * KV * H)  # embed, lm_head, attention projections
    always_whole = L * (2 * D + E * H + 2 * H) + H  # norms and the router
    experts = L * E * (H * 2 * Im + Im * H)
    # At tp=1 the tp axis shards nothing: its params count as replicated.
    out = {"replicated_bytes": BF16 * (always_whole + (by_tp if tp == 1 else 0))}
    rank0 = by_tp // tp + always_whole
    full = by_tp + always_whole
    if stacked:
        out.update(rank0_bytes=BF16 * (rank0 + experts // (ep * tp)),
                   unsharded_bytes=BF16 * (full + experts), uncovered_bytes=0)
    else:
        out.update(rank0_bytes=BF16 * rank0, unsharded_bytes=BF16 * full,
                   uncovered_bytes=BF16 * experts)
    return out


def human(n):
    """Binary units with one decimal (the values used here are never on a rounding tie)."""
    if n < 1024:
        return f"{n} B"
    for i, unit in enumerate(["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"], start=1):
        if round(n / 1024**i, 1) < 1024:
            return f"{n / 1024**i:.1f} {unit}"
    raise AssertionError(n)


class ReportTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def write(self, name, doc):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w", encoding="utf-8") as f:
            json.dump(doc, f, sort_keys=True)  # as codegen_meta.json is written
        return path

    def report_json(self, meta, model, *extra, code=0):
        r = run("report", meta, "--model", model, "--json", *extra)
        self.assertEqual(r.returncode, code, r.stderr)
        self.assertTrue(r.stdout.endswith("}\n"))
        return json.loads(r.stdout), r

    def totals(self, doc):
        return {k: doc[k] for k in ("rank0_bytes", "replicated_bytes", "unsharded_bytes",
                                    "uncovered_bytes")}

    def test_llama_at_tp_2_4_8(self):
        for tp in (2, 4, 8):
            with self.subTest(tp=tp):
                meta, model = llama(tp)
                doc, _ = self.report_json(self.write(f"llama{tp}.meta.json", meta),
                                          self.write(f"llama{tp}.model.json", model))
                self.assertEqual(self.totals(doc), llama_expected(tp))
                self.assertEqual(doc["mesh"], {"cp": 1, "dp": 8, "ep": 1, "pp": 1, "tp": tp})
                self.assertEqual(len(doc["params"]), 2 + 32 * 9 + 1)
                self.assertEqual(len(doc["boundaries"]), 2 + 32 * 4 + 1)
                # Largest first: embed and lm_head (same bytes, FQN order), then the MLP.
                V, H, I = LLAMA["V"], LLAMA["H"], LLAMA["I"]
                self.assertEqual(doc["params"][0], {
                    "fqn": "lm_head.weight", "shape": [V, H], "dtype": "bfloat16",
                    "local_shape": [V // tp, H], "rank0_bytes": BF16 * V * H // tp,
                    "full_bytes": BF16 * V * H, "boundary": "lm_head",
                    "placements": {"cp": "R", "tp": "S(0)"}, "replicated": False})
                # Everything divides, so every rank holds what rank 0 holds.
                self.assertEqual(len(doc["meshes"]), 1)
                m = doc["meshes"][0]
                self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"], m["divisible"],
                                  m["fits"], m["devices"]),
                                 (llama_expected(tp)["rank0_bytes"],) * 2 + (True, None, 8 * tp))
                self.assertEqual(doc["mesh_source"], "parallel_dims")
                self.assertEqual(doc["counts"]["planned_params"], 2 + 32 * 9 + 1)
                self.assertEqual(doc["params"][1]["fqn"], "model.embed_tokens.weight")
                self.assertEqual(doc["params"][2]["fqn"], "model.layers.0.mlp.down_proj.weight")
                self.assertEqual(doc["params"][2]["local_shape"], [H, I // tp])
                self.assertEqual(doc["params"][2]["dtype"], "torch.bfloat16")
                self.assertEqual(doc["boundaries"][0]["fqn"], "lm_head")
                layer_mlp = [b for b in doc["boundaries"] if b["fqn"] == "model.layers.7.mlp"]
                self.assertEqual(layer_mlp, [{"fqn": "model.layers.7.mlp",
                                              "rank0_bytes": BF16 * 3 * I * H // tp,
                                              "params": 3}])
                self.assertEqual(doc["findings"], [{
                    "severity": "note", "code": "HPF503", "file": os.path.join(self.tmp.name,
                                                             f"llama{tp}.meta.json"),
                    "pointer": "/param_plan/lm_head/params/weight/cp",
                    "message": "axis 'cp' has size 1; its placements change nothing"}])

    def test_llama_mesh_flag_replaces_parallel_dims(self):
        meta, model = llama(2)
        doc, _ = self.report_json(self.write("llama.meta.json", meta),
                                  self.write("llama.model.json", model), "--mesh", "tp=8")
        self.assertEqual(doc["mesh"], {"tp": 8})
        self.assertEqual(self.totals(doc), llama_expected(8))
        self.assertEqual(doc["findings"][0]["message"],
                         "axis 'cp' is not in the mesh (--mesh); its placements change nothing")

    def test_llama_text_table(self):
        meta, model = llama(8)
        meta_path = self.write("llama8t.meta.json", meta)
        model_path = self.write("llama8t.model.json", model)
        r = run("report", meta_path, "--model", model_path)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, f"hpfreeze: note: {meta_path}: /param_plan/lm_head/params/"
                                   "weight/cp: axis 'cp' has size 1; its placements change "
                                   "nothing [HPF503]\nhpfreeze: note: report: 0 errors, 0 warnings, "
                                   "1 note\n")
        lines = r.stdout.splitlines()
        self.assertEqual(lines[0], "mesh: cp=1 dp=8 ep=1 pp=1 tp=8 (from parallel_dims)")
        # The answer first, right under the mesh line.
        self.assertTrue(lines[1].startswith("smallest mesh that divides: cp=1 tp=8 dp=8 ep=1 "
                                            "pp=1 (64 devices, worst rank "), lines[1])
        self.assertEqual(lines[2], "placement order: cp, tp")
        expected = llama_expected(8)
        rank0 = [line for line in lines if line.startswith("rank 0, planned params")]
        self.assertEqual(rank0[0].split()[-4:],
                         ["291", *human(expected["rank0_bytes"]).split(),
                          str(expected["rank0_bytes"])])
        full = [line for line in lines if line.startswith("planned params at full size")]
        self.assertEqual(full[0].split()[-3:], ["15.0", "GiB", str(expected["unsharded_bytes"])])
        self.assertIn("boundaries (top 10 of 131, by rank-0 bytes):", lines)
        self.assertIn("params (top 10 of 291, by rank-0 bytes; BYTES: rank 0's weights only):",
                      lines)
        self.assertEqual(lines[-1], "findings: 0 errors, 0 warnings, 1 note (on stderr)")
        r = run("-q", "report", meta_path, "--model", model_path, "--top", "3")
        self.assertIn("params (top 3 of 291, by rank-0 bytes; BYTES: rank 0's weights only):",
                      r.stdout.splitlines())
        self.assertEqual(r.stderr, "")

    def test_llama_at_tp_3_does_not_divide(self):
        meta, model = llama(3)
        meta_path = self.write("llama3.meta.json", meta)
        doc, r = self.report_json(meta_path, self.write("llama3.model.json", model), code=1)
        errors = [f for f in doc["findings"] if f["severity"] == "error"]
        # q, k, v, o, gate, up, down in each of 32 layers; 128256 = 3 x 42752 divides.
        self.assertEqual(len(errors), 7 * 32)
        self.assertIn({"severity": "error", "code": "HPF501", "file": meta_path,
                       "pointer": "/param_plan/model.layers.0.self_attn/params/q_proj.weight/tp",
                       "message": "parameter 'model.layers.0.self_attn.q_proj.weight' dim 0 "
                                  "(size 4096) is not divisible by 3: S(0) on axis 'tp' of "
                                  "size 3"}, errors)
        self.assertIn({"severity": "error", "code": "HPF501", "file": meta_path,
                       "pointer": "/param_plan/model.layers.31.mlp/params/down_proj.weight/tp",
                       "message": "parameter 'model.layers.31.mlp.down_proj.weight' dim 1 "
                                  "(size 14336) is not divisible by 3: S(1) on axis 'tp' of "
                                  "size 3"}, errors)
        stderr = r.stderr.splitlines()
        # 224 errors and 1 note: 100 lines, a count, then the summary.
        self.assertEqual(len(stderr), 102)
        self.assertEqual(stderr[-1], "hpfreeze: note: report: 224 errors, 0 warnings, 1 note")
        self.assertEqual(stderr[-2],
                         "hpfreeze: error: 125 more findings not shown (--json lists them all)")
        self.assertTrue(stderr[0].startswith(f"hpfreeze: error: {meta_path}: /param_plan/"))
        # Non-divisible dims are counted with ceil chunking: an upper bound.
        H, I, KV = LLAMA["H"], LLAMA["I"], LLAMA["KV"]
        c = lambda n: -(-n // 3)  # noqa: E731
        layer = 2 * c(H) * H + 2 * c(KV) * H + 2 * c(I) * H + H * c(I) + 2 * H
        expected = BF16 * (2 * LLAMA["V"] * H // 3 + 32 * layer + H)
        self.assertEqual(doc["rank0_bytes"], expected)

    def test_qwen_moe_stacked_at_tp_2_4_8_ep_8(self):
        E, H, Im = QWEN["E"], QWEN["H"], QWEN["Im"]
        for tp in (2, 4, 8):
            with self.subTest(tp=tp):
                meta, model = qwen_moe(tp, 8)
                doc, _ = self.report_json(self.write(f"qwen{tp}.meta.json", meta),
                                          self.write(f"qwen{tp}.model.json", model))
                self.assertEqual(self.totals(doc), qwen_expected(tp, 8))
                gate_up = [p for p in doc["params"]
                           if p["fqn"] == "model.layers.5.mlp.experts.gate_up_proj"]
                self.assertEqual(gate_up[0]["local_shape"], [E // 8, H, 2 * Im // tp])
                down = [p for p in doc["params"]
                        if p["fqn"] == "model.layers.5.mlp.experts.down_proj"]
                self.assertEqual(down[0]["local_shape"], [E // 8, Im // tp, H])
                self.assertEqual([f["message"] for f in doc["findings"]],
                                 ["axis 'cp' has size 1; its placements change nothing"])

    def test_qwen_moe_ep_only(self):
        meta, model = qwen_moe(1, 8)
        doc, _ = self.report_json(self.write("qwen-ep.meta.json", meta),
                                  self.write("qwen-ep.model.json", model))
        self.assertEqual(self.totals(doc), qwen_expected(1, 8))
        self.assertEqual(len(doc["findings"]), 2)  # cp and tp both of size 1

    def test_qwen_moe_unstacked_experts_are_uncovered(self):
        meta, model = qwen_moe(4, 8, stacked=False)
        meta_path = self.write("qwen-u.meta.json", meta)
        model_path = self.write("qwen-u.model.json", model)
        expected = qwen_expected(4, 8, stacked=False)
        n = QWEN["L"] * QWEN["E"] * 3
        message = (f"{n} model parameters are not covered by any planned key "
                   f"({human(expected['uncovered_bytes'])} at full size, {n} trainable); they "
                   "stay whole on every rank")
        # Trainable and uncovered: an error, as in check, unless --allow-uncovered.
        for extra, severity, code in (((), "error", 1), (("--allow-uncovered",), "warning", 0)):
            doc, r = self.report_json(meta_path, model_path, *extra, code=code)
            self.assertEqual(self.totals(doc), expected)
            self.assertIn({"severity": severity, "code": "HPF305", "file": model_path,
                           "pointer": "", "message": message}, doc["findings"])
            self.assertIn(f"hpfreeze: {severity}: {model_path}: {message} [HPF305]",
                          r.stderr.splitlines())
            self.assertEqual(doc["counts"]["uncovered_params"], n)
            self.assertEqual(len(doc["uncovered"]), n)
            # The uncovered experts are whole on every rank.
            self.assertEqual(doc["meshes"][0]["max_rank_bytes"],
                             expected["rank0_bytes"] + expected["uncovered_bytes"])

    def test_qwen_moe_ep_6_does_not_divide(self):
        meta, model = qwen_moe(2, 6)
        doc, _ = self.report_json(self.write("qwen6.meta.json", meta),
                                  self.write("qwen6.model.json", model), code=1)
        errors = [f["message"] for f in doc["findings"] if f["severity"] == "error"]
        self.assertEqual(len(errors), 2 * QWEN["L"])
        self.assertIn("parameter 'model.layers.0.mlp.experts.down_proj' dim 0 (size 128) is not "
                      "divisible by 6: S(0) on axis 'ep' of size 6", errors)


class CommandLineTest(unittest.TestCase):
    META = os.path.join(TESTDATA, "report", "tiny", "meta.json")
    MODEL = os.path.join(TESTDATA, "report", "tiny", "model.json")

    def test_tiny_report(self):
        r = run("report", self.META, "--model", self.MODEL, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        # w [8, 4] S(0) over tp=2 -> [4, 4] x 2; b [8] float32 replicated -> 32 bytes.
        self.assertEqual(doc["rank0_bytes"], 4 * 4 * 2 + 8 * 4)
        self.assertEqual(doc["mesh"], {"tp": 2})

    def test_stdin(self):
        with open(self.META, encoding="utf-8") as f:
            r = run("report", "-", "--model", self.MODEL, "--json", stdin=f.read())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["rank0_bytes"], 64)

    def test_usage_errors_exit_2(self):
        cases = [
            (["--mesh", "tp=0"], "hpfreeze: error: --mesh: 'tp=0': the size must be a decimal "
                                 "integer >= 1"),
            (["--mesh", "tp=2,,cp=2"], "hpfreeze: error: --mesh: empty item in 'tp=2,,cp=2'; "
                                       "expected AXIS=N[,AXIS=N...]"),
            (["--mesh", "tp2"], "hpfreeze: error: --mesh: 'tp2' is not AXIS=N"),
            (["--mesh", "tp=2,tp=4"], "hpfreeze: error: --mesh: axis 'tp' is given twice"),
            (["--top", "-1"], "hpfreeze: error: --top: expected a non-negative integer, got '-1'"),
        ]
        for extra, message in cases:
            with self.subTest(extra=extra):
                r = run("report", self.META, "--model", self.MODEL, *extra)
                self.assertEqual(r.returncode, 2)
                self.assertEqual(r.stdout, "")
                self.assertTrue(r.stderr.startswith(message), r.stderr)
        r = run("report", self.META)
        self.assertEqual(r.returncode, 2)
        r = run("report", "-", "--model", "-", stdin="{}")
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, "hpfreeze: error: at most one of META and --model may be '-' "
                                   "(stdin)\n")

    def test_io_error_exits_2_and_bad_json_exits_1(self):
        r = run("report", os.path.join(TESTDATA, "report", "no-such.json"), "--model", self.MODEL)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stdout, "")
        r = run("report", "-", "--model", self.MODEL, stdin="{")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stdout, "")
        self.assertTrue(r.stderr.startswith("hpfreeze: error: <stdin>:"), r.stderr)

    def test_quiet_prints_no_findings_line(self):
        # A warning (m.b without dtype) and an error (tp=3): under -q the error alone reaches
        # stderr, and stdout has no line counting findings; -qq prints no finding at all.
        meta = os.path.join(TESTDATA, "report", "tiny", "meta-tp3.json")
        with tempfile.TemporaryDirectory() as tmp:
            model = os.path.join(tmp, "model.json")
            with open(model, "w") as f:
                json.dump({"format": "hpfreeze.model/v1", "modules": {"": "Tiny", "m": "Linear"},
                           "parameters": {"m.w": {"shape": [8, 4], "dtype": "bfloat16"},
                                          "m.b": {"shape": [8]}}}, f)
            loud = run("report", meta, "--model", model)
            self.assertEqual(loud.returncode, 1)
            summary = "\nfindings: 1 error, 1 warning, 0 notes (on stderr)\n"
            self.assertTrue(loud.stdout.endswith(summary), loud.stdout)
            error = (f"hpfreeze: error: {meta}: /param_plan/m/params/w/tp: parameter 'm.w' dim 0 "
                     "(size 8) is not divisible by 3: S(0) on axis 'tp' of size 3 [HPF501]\n")
            for quiet, stderr in ((["-q"], error), (["-qq"], ""), (["--quiet"], error)):
                for where in ("before", "after"):
                    args = ([*quiet, "report", meta, "--model", model] if where == "before" else
                            ["report", meta, "--model", model, *quiet])
                    r = run(*args)
                    self.assertEqual((r.returncode, r.stdout, r.stderr),
                                     (1, loud.stdout[:-len(summary)], stderr), args)
            # --json keeps every finding: -q filters stderr, not data.
            j = run("report", meta, "--model", model, "--json", "-q")
            self.assertEqual(len(json.loads(j.stdout)["findings"]), 2)

    def test_non_dividing_fixture(self):
        meta = os.path.join(TESTDATA, "report", "tiny", "meta-tp3.json")
        r = run("report", meta, "--model", self.MODEL)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr,
                         f"hpfreeze: error: {meta}: /param_plan/m/params/w/tp: parameter 'm.w' "
                         "dim 0 (size 8) is not divisible by 3: S(0) on axis 'tp' of size 3 "
                         "[HPF501]\nhpfreeze: note: report: 1 error, 0 warnings, 0 notes\n")
        self.assertIn("findings: 1 error, 0 warnings, 0 notes", r.stdout)
        # The planner's verdict for the one mesh: [8] by tp=3 chunks as 3, 3, 2.
        self.assertIn("does not divide: m.w dim 0 by tp=3", r.stdout)


if __name__ == "__main__":
    unittest.main()
