"""End-to-end tests of `report --recipe` against the frameworks' own estimates (issue 41 item
2; docs/capacity.md, "Recipes"), each estimate re-derived here in our own words, independent
of hpfreeze's code:

- Megatron-LM's `compute_weight_and_optimizer_memory`
  (megatron/training/theoretical_memory_usage.py, the expert-parallel-aware version of
  2026; every `L<n>` below is a line of that file): `--recipe megatron` agrees with it
  within 1e-5 on dense and MoE models, at pp = 1 and on the first stage at pp > 1, on
  models without an MTP block (the formula charges the MTP block to the first stage; the
  checkpoint's layout puts it on the last). Its MLA term splits the whole attention by tp,
  where Megatron's own layer spec keeps the down-projections whole on every tp rank: at
  tp > 1 hpfreeze counts those as the plan places them, and the test pins the difference.
- DeepSpeed's `estimate_zero2_model_states_mem_needs` (deepspeed/runtime/zero/
  stage_1_and_2.py) and `estimate_zero3_model_states_mem_needs` with `model_to_params`
  (deepspeed/runtime/zero/stage3.py): `--recipe deepspeed` equals them, to the byte, on
  replicated models; stages 0 and 1, which DeepSpeed has no estimator for, equal the ZeRO
  paper's 16P and 4P + 12P/N (arXiv 1910.02054, section 5.1).
"""
import json

from checkpoints import llama_2_7b_shapes
from hpf import TempDirTest, run


def megatron_weight_and_optimizer_bytes(c):
    """Megatron-LM's estimate of the weights and optimizer state of its most loaded shard
    (the first pipeline stage), in bytes, for the model and layout `c`."""
    h, heads, layers = c["hidden"], c["heads"], c["layers"]
    # L15-L16: the query width over the hidden size; L18-L19: without GQA every head is a
    # key-value group.
    ratio = c["kv_channels"] * heads / h
    groups = c.get("groups", heads)
    # L21-L22: experts (1 without), and the GLU factor on the two MLP matrices.
    experts = c.get("experts") or 1
    glu = 3 / 2 if c["swiglu"] else 1
    shared = c.get("shared_ffn", 0)  # L24-L28
    # L30-L50: which layers are MoE; L52-L58: no MTP block in these models.
    pattern = c.get("moe_pattern", [0] * layers)
    moe_layers = sum(pattern)
    dense_layers = layers - moe_layers
    moe_ffn = c["moe_ffn"] if c.get("experts") else 0
    ns = 1 if c["norm"] == "rms" else 2  # L61: RMSNorm a weight, LayerNorm a bias too
    if c.get("mla"):
        m = c["mla"]
        # L66-L77: the query's down-projection, its norm and up-projection (L73-L77).
        q = m["q_lora"] * (h + heads * (m["qk"] + m["rope"]) + ns)
        # L82-L91: the key-value down-projection, norm and up-projection, the rope key, the
        # output projection.
        attention = (q + m["kv_lora"] * (h + heads * (m["qk"] + m["v"]) + ns) + h * m["rope"]
                     + heads * m["v"] * h)
    else:
        # L93-L104: q and o at the query width, k and v at the groups' share of it.
        attention = 2 * h * h * (1 + groups / heads) * ratio
    embedding = h * c["vocab"]  # L106: the padded vocabulary
    final_norm = ns * h  # L107
    dense_mlp = 2 * h * c["ffn"] * glu  # L114
    shared_mlp = 2 * h * shared * glu  # L115-L117
    routed = 2 * h * moe_ffn * experts * glu  # L120-L125 (no latent size)
    norms = 2 * h * ns  # L140
    router = h * experts if c.get("experts") else 0  # L141-L145, no router bias here
    # L218-L223: the expert data-parallel size folds tp, cp and dp together.
    world = c["tp"] * c["dp"] * c.get("cp", 1) * c["pp"]
    edp = world // (1 * c["ep"] * c["pp"])  # expert tensor parallel 1
    # L226-L244: split by tp, whole on every tp rank, split by ep.
    tp_block = (attention + dense_mlp) * dense_layers + (attention + shared_mlp) * moe_layers
    replicated_block = norms * dense_layers + (norms + router) * moe_layers + final_norm
    expert_block = routed * moe_layers
    # L247-L263: the first stage holds 1/pp of each and the input embedding.
    tp_shard = (tp_block / c["pp"] + embedding) / c["tp"]
    replicated_shard = replicated_block / c["pp"]
    expert_shard = (expert_block / c["pp"]) / (1 * c["ep"])
    # L264-L268: an untied output layer is on the only stage at pp = 1.
    if c["untied"] and c["pp"] == 1:
        tp_shard += embedding / c["tp"]

    # L297: 18 bytes a parameter (bf16 weight, fp32 main gradient, fp32 master and Adam's
    # two moments), of which 12 divide over the data-parallel size with the distributed
    # optimizer; L299-L305: the dense parameters over the data-parallel size, the experts
    # over edp. `dense_dp` is that size: Megatron's formula takes dp (its data_parallel_size
    # has no cp); its distributed optimizer splits over dp x cp.
    def rate(d):
        return 6 + 12 / d if c["distributed_optimizer"] else 18
    dense_dp = c.get("dense_dp", c["dp"])
    return (tp_shard + replicated_shard) * rate(dense_dp) + expert_shard * rate(edp)


def megatron_model(c):
    """A model dump (parameters in registration order) and a meta of Megatron's layout: tp
    splits attention, the dense and shared MLPs, the embedding and the output layer; norms
    and routers whole; experts stacked and split over ep alone (folded, etp 1)."""
    h, heads, kv, layers = c["hidden"], c["heads"], c["kv_channels"], c["layers"]
    groups = c.get("groups", heads)
    params, plan = {}, {}

    def add(name, shape, tp=None, ep=None):
        params[name] = {"shape": shape, "dtype": "bfloat16"}
        plan[name] = {"ep": ep} if ep else {"tp": tp or "R"}

    def norm(name):
        add(name + ".weight", [h])
        if c["norm"] == "ln":
            add(name + ".bias", [h])

    def mlp(prefix, ffn):
        if c["swiglu"]:
            add(prefix + ".gate_proj.weight", [ffn, h], "S(0)")
            add(prefix + ".up_proj.weight", [ffn, h], "S(0)")
            add(prefix + ".down_proj.weight", [h, ffn], "S(1)")
        else:
            add(prefix + ".fc1.weight", [ffn, h], "S(0)")
            add(prefix + ".fc2.weight", [h, ffn], "S(1)")

    add("model.embed_tokens.weight", [c["vocab"], h], "S(0)")
    for i in range(layers):
        pre = f"model.layers.{i}"
        norm(pre + ".input_layernorm")
        if c.get("mla"):
            m = c["mla"]
            # The down-projections as Megatron's layer spec builds them: whole on every tp
            # rank (TELinear, parallel_mode 'duplicated'); the up-projections split.
            add(pre + ".self_attn.q_a_proj.weight", [m["q_lora"], h])
            add(pre + ".self_attn.q_a_layernorm.weight", [m["q_lora"]])
            add(pre + ".self_attn.q_b_proj.weight", [heads * (m["qk"] + m["rope"]), m["q_lora"]],
                "S(0)")
            add(pre + ".self_attn.kv_a_proj_with_mqa.weight", [m["kv_lora"] + m["rope"], h])
            add(pre + ".self_attn.kv_a_layernorm.weight", [m["kv_lora"]])
            add(pre + ".self_attn.kv_b_proj.weight", [heads * (m["qk"] + m["v"]), m["kv_lora"]],
                "S(0)")
            add(pre + ".self_attn.o_proj.weight", [h, heads * m["v"]], "S(1)")
        else:
            add(pre + ".self_attn.q_proj.weight", [heads * kv, h], "S(0)")
            add(pre + ".self_attn.k_proj.weight", [groups * kv, h], "S(0)")
            add(pre + ".self_attn.v_proj.weight", [groups * kv, h], "S(0)")
            add(pre + ".self_attn.o_proj.weight", [h, heads * kv], "S(1)")
        norm(pre + ".post_attention_layernorm")
        if c.get("moe_pattern", [0] * layers)[i]:
            e, f = c["experts"], c["moe_ffn"]
            add(pre + ".mlp.gate.weight", [e, h])
            up = 2 * f if c["swiglu"] else f
            add(pre + ".mlp.experts.gate_up_proj", [e, up, h], ep="S(0)")
            add(pre + ".mlp.experts.down_proj", [e, h, f], ep="S(0)")
            if c.get("shared_ffn"):
                mlp(pre + ".mlp.shared_experts", c["shared_ffn"])
        else:
            mlp(pre + ".mlp", c["ffn"])
    norm("model.norm")
    if c["untied"]:
        add("lm_head.weight", [c["vocab"], h], "S(0)")
    model = {"format": "hpfreeze.model/v1", "modules": {"": "Model"}, "parameters": params}
    meta = {"mesh_dim_names": ["tp"], "param_plan": {"": {"params": plan}}}
    return model, meta


LLAMA3_8B = {"hidden": 4096, "heads": 32, "groups": 8, "kv_channels": 128, "ffn": 14336,
             "layers": 32, "vocab": 128256, "swiglu": True, "norm": "rms", "untied": True}
GPT_2B = {"hidden": 2048, "heads": 16, "kv_channels": 128, "ffn": 8192, "layers": 24,
          "vocab": 51200, "swiglu": False, "norm": "ln", "untied": False}
# Megatron pads Mixtral's 32000 to 32256 at tp=4 (a multiple of 128 x tp): the dump holds
# the padded vocabulary, as Megatron's model does.
MIXTRAL = {"hidden": 4096, "heads": 32, "groups": 8, "kv_channels": 128, "ffn": 14336,
           "layers": 32, "vocab": 32256, "swiglu": True, "norm": "rms", "untied": True,
           "experts": 8, "moe_ffn": 14336, "moe_pattern": [1] * 32}
# DeepSeek-V3's attention (MLA) and experts with a shared one, its first layer dense, fewer
# layers and experts; no MTP block.
DEEPSEEK = {"hidden": 7168, "heads": 128, "kv_channels": 128, "ffn": 18432, "layers": 6,
            "vocab": 129280, "swiglu": True, "norm": "rms", "untied": True, "experts": 32,
            "moe_ffn": 2048, "shared_ffn": 2048, "moe_pattern": [0] + [1] * 5,
            "mla": {"q_lora": 1536, "kv_lora": 512, "qk": 128, "rope": 64, "v": 128}}


class Megatron(TempDirTest):
    def ours(self, c, zero):
        """The worst rank of report --recipe megatron on the first stage of `c`'s mesh."""
        model, meta = megatron_model(c)
        for name, doc in (("model.json", model), ("meta.json", meta)):
            with open(self.path(name), "w") as f:
                json.dump(doc, f)
        mesh = f"tp={c['tp']},dp={c['dp']},cp={c.get('cp', 1)},pp={c['pp']}"
        mesh += f",ep={c['ep']}" if c.get("experts") else ""  # no axis of a dense plan
        r = run("report", self.path("meta.json"), "--model", self.path("model.json"), "--mesh",
                mesh, "--optimizer", "adam", "--recipe", "megatron", "--zero", str(zero),
                "--json", "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        stages = json.loads(r.stdout)["meshes"][0]["stages"]
        return stages[0]["max_rank_bytes"]

    def agree(self, c, **layout):
        for distributed in (True, False):
            with self.subTest(**layout, distributed_optimizer=distributed):
                k = {**c, **layout, "distributed_optimizer": distributed}
                theirs = megatron_weight_and_optimizer_bytes(k)
                ours = self.ours(k, 1 if distributed else 0)
                self.assertLessEqual(abs(ours - theirs), 1e-5 * theirs, (ours, theirs))

    def test_the_formula_as_rederived_gives_the_research_notes_anchor(self):
        # Mixtral-like at tp=4 dp=16 ep=8 (edp = 64 / 8 = 8), vocabulary 32256: TP-split
        # (32 x 41,943,040 + 2 x 132,120,576) / 4 = 401,604,608, whole 32 x (8192 + 32,768)
        # + 4096 = 1,314,816, experts 32 x 1,409,286,144 / 8 = 5,637,144,576; bytes
        # 402,919,424 x (6 + 12/16) + 5,637,144,576 x (6 + 12/8) = 44,998,290,432.
        c = {**MIXTRAL, "tp": 4, "dp": 16, "ep": 8, "pp": 1, "distributed_optimizer": True}
        self.assertEqual(megatron_weight_and_optimizer_bytes(c), 44998290432)

    def test_dense_models(self):
        self.agree(LLAMA3_8B, tp=2, dp=8, ep=1, pp=1)
        self.agree(LLAMA3_8B, tp=2, dp=4, ep=1, pp=4)  # the first of 4 stages of 8 layers
        self.agree(GPT_2B, tp=4, dp=8, ep=1, pp=1)  # LayerNorm, GELU, a tied embedding

    def test_the_final_norm_is_on_the_last_stage(self):
        # The formula counts the final norm in the block (L173-L177) and gives the first
        # stage 1/pp of the block (L247-L263); the model holds it on the last stage. On a
        # small LayerNorm model that share, 2 x 2048 / 2 elements at 6 + 12/2 bytes (24,576
        # B), is 1.2e-5 of the first stage: without it the two agree.
        for distributed in (True, False):
            c = {**GPT_2B, "tp": 4, "dp": 2, "ep": 1, "pp": 2,
                 "distributed_optimizer": distributed}
            share = 2 * c["hidden"] / c["pp"] * (6 + 12 / c["dp"] if distributed else 18)
            theirs = megatron_weight_and_optimizer_bytes(c)
            ours = self.ours(c, 1 if distributed else 0)
            self.assertLessEqual(abs(ours - (theirs - share)), 1e-7 * theirs, (ours, theirs))
            self.assertGreater(abs(ours - theirs), 1e-5 * theirs)

    def test_moe_models(self):
        self.agree(MIXTRAL, tp=4, dp=16, ep=8, pp=1)
        self.agree(MIXTRAL, tp=2, dp=8, ep=4, pp=4)
        self.agree(DEEPSEEK, tp=1, dp=16, ep=8, pp=1)  # MLA, a shared expert, a dense layer

    def test_context_parallel_splits_over_dp_and_cp(self):
        # Megatron's formula divides the dense optimizer state by dp alone; its distributed
        # optimizer splits the dense buffers over dp x cp (intra_dp_cp_group), and so does
        # --recipe megatron: it agrees with the formula read with dp x cp, and is below it.
        c = {**MIXTRAL, "tp": 4, "dp": 8, "cp": 2, "ep": 8, "pp": 1,
             "distributed_optimizer": True}
        ours = self.ours(c, 1)
        as_code = megatron_weight_and_optimizer_bytes({**c, "dense_dp": 16})
        self.assertLessEqual(abs(ours - as_code), 1e-5 * as_code)
        self.assertLess(ours, megatron_weight_and_optimizer_bytes(c))

    def test_mla_down_projections_stay_whole_at_tp_above_1(self):
        # The formula divides all of MLA by tp; Megatron's layer spec keeps q_a, kv_a (with
        # the rope rows) and the two latent norms whole on every tp rank, as the plan here
        # does: hpfreeze is above the formula by exactly those (1 - 1/tp), at 6 + 12/dp bytes
        # a parameter, in each of the 6 layers.
        c = {**DEEPSEEK, "tp": 2, "dp": 8, "ep": 8, "pp": 1, "distributed_optimizer": True}
        m, h = c["mla"], c["hidden"]
        whole = m["q_lora"] * (h + 1) + m["kv_lora"] * (h + 1) + h * m["rope"]
        expected = megatron_weight_and_optimizer_bytes(c) + 6 * whole * (1 - 1 / 2) * (6 + 12 / 8)
        ours = self.ours(c, 1)
        self.assertLessEqual(abs(ours - expected), 1e-5 * expected)
        self.assertGreater(ours - megatron_weight_and_optimizer_bytes(c), 1e8)


class WorkedExample(TempDirTest):
    """docs/capacity.md's worked example of the recipes: Mixtral-8x7B-like (vocabulary
    32000) at tp=4 dp=16 ep=8 (edp = 64 / 8 = 8), Adam. A rank holds 402,395,136 dense
    elements: attention 32 x 10,485,760, embedding and head 8000 x 4096 each, norms 32 x
    8192 + 4096 and routers 32 x 32,768 whole; and 5,637,144,576 expert elements, one local
    expert of each of the 96 expert tensors."""

    def report(self, *args):
        model, meta = megatron_model({**MIXTRAL, "vocab": 32000})
        for name, doc in (("model.json", model), ("meta.json", meta)):
            with open(self.path(name), "w") as f:
                json.dump(doc, f)
        r = run("report", self.path("meta.json"), "--model", self.path("model.json"), "--mesh",
                "tp=4,dp=16,ep=8", "--optimizer", "adam", *args, "--json", "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        m = doc["meshes"][0]
        return m["max_rank_bytes"], m["min_rank_bytes"], [f["message"] for f in doc["findings"]]

    def test_every_recipe(self):
        # dtensor, ZeRO-1: 4 B kept, 12 B on dim 0 over dp = 16 (every dense dim 0 divides
        # but the routers' 8 rows, of which rank 0 holds 1): 402,395,136 x 4 + 401,346,560 x
        # 12 / 16 + 32 x 4096 x 12 = 1,912,163,328; an expert's dim 0 is 1 over edp = 8, so
        # rank 0 holds all of it: 5,637,144,576 x 16. 92,106,476,544 B (the 92.1 GB).
        worst, _, notes = self.report("--zero", "1")
        self.assertEqual(worst, 1912163328 + 5637144576 * 16)
        self.assertEqual(notes, ["7 of 8 ranks of the expert group hold none of "
                                 "model.layers.0.mlp.experts.gate_up_proj's optimizer state (63 "
                                 "more expert tensors split so); --expert-zero-dim 1 spreads it"])
        # The same on dim 1 (14,336 and 4096 rows over 8): 5.5 B an expert element.
        self.assertEqual(self.report("--zero", "1", "--expert-zero-dim", "1")[0],
                         1912163328 + 5637144576 * 11 // 2)
        # megatron, its distributed optimizer: 6 + 12/16 B dense, 6 + 12/8 B experts:
        # 44,994,751,488 B (Megatron's own estimate at this vocabulary; "45.0 GB").
        self.assertEqual(self.report("--recipe", "megatron", "--zero", "1")[:2],
                         (44994751488, 44994751488))
        # fsdp2, ZeRO-3 on dim 0: rank 0 of the expert group 16 B an expert element, the
        # others the padded weight and gradient alone (4 B); dense 16 B over 16, the routers'
        # padded row on every rank and its 12 B on the first 8: worst 403,443,712 +
        # 90,194,313,216, best 401,870,848 + 22,548,578,304.
        self.assertEqual(self.report("--recipe", "fsdp2", "--zero", "3")[:2],
                         (90597756928, 22950449152))
        # On dim 1 every expert rank holds 16 B x 1/8: 11,274,289,152 beside the dense part.
        self.assertEqual(self.report("--recipe", "fsdp2", "--zero", "3", "--expert-zero-dim",
                                     "1")[:2], (11677732864, 11676160000))


def deepspeed_params(parameters):
    """DeepSpeed's model_to_params: every element once, and the most elements one module
    owns directly (its own parameters, not its children's)."""
    total = sum(_elements(s) for s in parameters.values())
    owned = {}
    for name, shape in parameters.items():
        module = name.rpartition(".")[0]
        owned[module] = owned.get(module, 0) + _elements(shape)
    return total, max(owned.values())


def _elements(shape):
    out = 1
    for d in shape:
        out *= d
    return out


def deepspeed_gpu_bytes(total, largest, gpus, stage):
    """Model states per GPU without offload: stages 2 and 3 as DeepSpeed's estimators count
    them (2 bytes of 16-bit weights whole and 18 split: a 16-bit and an fp32 gradient, the
    fp32 master and Adam's moments; at stage 3 18 split and 4 bytes an element of the
    largest layer), rounded down as they do; stages 0 and 1 as the ZeRO paper (16 whole;
    4 whole and 12 split)."""
    if stage == 0:
        return 16 * total
    if stage == 1:
        return 4 * total + int(12 * total / gpus)
    if stage == 2:
        return 2 * total + int(18 * total / gpus)
    return 4 * largest + int(18 * total / gpus)


def gpt2_like():
    """GPT-2 small's modules (a LayerNorm owns a weight and a bias, c_attn a weight and a
    bias), untied head."""
    h, v = 768, 50257
    shapes = {"transformer.wte.weight": [v, h], "transformer.wpe.weight": [1024, h]}
    for n in range(12):
        p = f"transformer.h.{n}."
        shapes.update({p + "ln_1.weight": [h], p + "ln_1.bias": [h],
                       p + "attn.c_attn.weight": [h, 3 * h], p + "attn.c_attn.bias": [3 * h],
                       p + "attn.c_proj.weight": [h, h], p + "attn.c_proj.bias": [h],
                       p + "ln_2.weight": [h], p + "ln_2.bias": [h],
                       p + "mlp.c_fc.weight": [h, 4 * h], p + "mlp.c_fc.bias": [4 * h],
                       p + "mlp.c_proj.weight": [4 * h, h], p + "mlp.c_proj.bias": [h]})
    shapes.update({"transformer.ln_f.weight": [h], "transformer.ln_f.bias": [h],
                   "lm_head.weight": [v, h]})
    return shapes


def mixtral_hf(layers=4):
    """Mixtral's Hugging Face modules: every expert a Linear of its own, so the largest
    module is the embedding (or the head)."""
    h, f, v = 4096, 14336, 32000
    shapes = {"model.embed_tokens.weight": [v, h]}
    for n in range(layers):
        p = f"model.layers.{n}."
        shapes.update({p + f"self_attn.{x}_proj.weight": [h if x in "qo" else 1024, h]
                       for x in "qkvo"})
        shapes[p + "block_sparse_moe.gate.weight"] = [8, h]
        for e in range(8):
            q = p + f"block_sparse_moe.experts.{e}."
            shapes.update({q + "w1.weight": [f, h], q + "w2.weight": [h, f], q + "w3.weight": [f, h]})
        shapes.update({p + "input_layernorm.weight": [h], p + "post_attention_layernorm.weight": [h]})
    shapes.update({"model.norm.weight": [h], "lm_head.weight": [v, h]})
    return shapes


class DeepSpeed(TempDirTest):
    def test_the_estimator_on_replicated_models(self):
        for name, shapes in (("llama-2-7b", llama_2_7b_shapes()), ("gpt2", gpt2_like()),
                             ("mixtral", mixtral_hf())):
            model = self.path(name + ".json")
            with open(model, "w") as f:
                json.dump({"format": "hpfreeze.model/v1", "modules": {"": "Model"},
                           "parameters": {n: {"shape": s, "dtype": "bfloat16"}
                                          for n, s in shapes.items()}}, f)
            total, largest = deepspeed_params(shapes)
            for gpus in (8, 12, 64):
                for stage in range(4):
                    with self.subTest(model=name, gpus=gpus, stage=stage):
                        r = run("report", "--model", model, "--mesh", f"dp={gpus}",
                                "--optimizer", "adam", "--recipe", "deepspeed", "--zero",
                                str(stage), "--json", "--top", "0")
                        self.assertEqual(r.returncode, 0, r.stderr)
                        m = json.loads(r.stdout)["meshes"][0]
                        expected = deepspeed_gpu_bytes(total, largest, gpus, stage)
                        self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"]),
                                         (expected, expected))

    def test_llama_2_7b_at_stage_3_as_docs_capacity_md_gives_it(self):
        # 18 x 6,738,415,616 / 8 + 4 x 131,072,000 (the embedding, or the head) =
        # 15,685,723,136 B.
        total, largest = deepspeed_params(llama_2_7b_shapes())
        self.assertEqual((total, largest), (6738415616, 131072000))
        self.assertEqual(deepspeed_gpu_bytes(total, largest, 8, 3), 15685723136)


if __name__ == "__main__":
    import unittest
    unittest.main()
