#!/usr/bin/env python3
"""Model tree dumps for the two upstream MoE metas of testdata/realworld/ that use expert
parallelism, with shapes of our choosing (their parameter names are the metas'):

  qwen3_moe_v2.model.json    for qwen3_moe_training_demo_v2.json: Qwen3-30B-A3B's
                             dimensions (vocab 151936, hidden 2048, 32 query and 4 KV heads
                             of 128, 128 experts of width 768, stacked), its 4 layers;
  deepseek_v41_toy.model.json for deepseek_v41_toy.json: a toy of hidden 1024, vocab 32000,
                             40 layers of 64 stacked experts of width 512, one shared expert.

    gen_models.py            rewrite them
    gen_models.py --check    exit 1 if a committed one differs from a fresh one
"""
import json
import pathlib
import re
import sys

HERE = pathlib.Path(__file__).resolve().parent
REALWORLD = HERE.parents[1] / "realworld"

QWEN = dict(V=151936, H=2048, Q=32 * 128, KV=4 * 128, D=128, E=128, I=768)
TOY = dict(V=32000, H=1024, E=64, I=512, QL=384, HEADS=16, HD=96, KVD=96, HC=4, EMB=65536,
           EMBD=256)


def qwen_shape(name):
    d = QWEN
    rules = [
        (r"(lm_head|model\.embed_tokens)\.weight", [d["V"], d["H"]]),
        (r".*\.self_attn\.linear_qkv\.weight", [d["Q"] + 2 * d["KV"], d["H"]]),
        (r".*\.self_attn\.o_proj\.weight", [d["H"], d["Q"]]),
        (r".*\.self_attn\.[qk]_norm\.weight", [d["D"]]),
        (r".*\.mlp\.gate\.weight", [d["E"], d["H"]]),
        (r".*\.mlp\.experts\.gate_up_proj", [d["E"], d["H"], 2 * d["I"]]),
        (r".*\.mlp\.experts\.down_proj", [d["E"], d["I"], d["H"]]),
        (r".*(layernorm|norm)\.weight", [d["H"]]),
    ]
    return next(shape for pattern, shape in rules if re.fullmatch(pattern, name))


def toy_shape(name):
    d = TOY
    q = d["HEADS"] * d["HD"]
    rules = [
        (r"(lm_head|model\.embed_tokens)\.weight", [d["V"], d["H"]]),
        (r".*_hc\.base", [d["HC"]]),
        (r".*_hc\.fn", [d["HC"] * (d["HC"] + 2), d["HC"] * d["H"]]),
        (r".*_hc\.scale", [3]),
        (r".*\.mlp\.experts\.gate_up_proj", [d["E"], d["H"], 2 * d["I"]]),
        (r".*\.mlp\.experts\.down_proj", [d["E"], d["I"], d["H"]]),
        (r".*\.mlp\.gate\.bias", [d["E"]]),
        (r".*\.mlp\.gate\.weight", [d["E"], d["H"]]),
        (r".*\.shared_experts\.(gate|up)_proj\.weight", [d["I"], d["H"]]),
        (r".*\.shared_experts\.down_proj\.weight", [d["H"], d["I"]]),
        (r".*\.self_attn\.kv_proj\.weight", [d["KVD"], d["H"]]),
        (r".*\.self_attn\.o_a_proj\.weight", [d["QL"], q]),
        (r".*\.self_attn\.o_b_proj\.weight", [d["H"], d["QL"]]),
        (r".*\.self_attn\.q_a_proj\.weight", [d["QL"], d["H"]]),
        (r".*\.self_attn\.q_b_proj\.weight", [q, d["QL"]]),
        (r".*\.self_attn\.sinks", [d["HEADS"]]),
        (r".*\.self_attn\.kv_norm\.weight", [d["KVD"]]),
        (r".*\.self_attn\.q_a_norm\.weight", [d["QL"]]),
        (r".*\.engram\.embed\.weight", [d["EMB"], d["EMBD"]]),
        (r".*\.engram\.[kq]_weight", [d["EMBD"]]),
        (r".*\.engram\.wkv\.weight", [2 * d["EMBD"], d["H"]]),
        (r".*\.compressor\.wgate\.weight", [d["KVD"], d["H"]]),
        (r".*\.compressor\.wkv\.weight", [d["KVD"], d["H"]]),
        (r".*\.compressor\.norm\.weight", [d["KVD"]]),
        (r".*\.indexer\.q_b_proj\.weight", [4 * 64, d["QL"]]),
        (r".*\.indexer\.weights_proj\.weight", [4, d["H"]]),
        (r".*\.indexer\.wk\.weight", [64, d["H"]]),
        (r".*\.indexer\.k_norm\.weight", [64]),
        (r".*(layernorm|norm)\.weight", [d["H"]]),
    ]
    return next(shape for pattern, shape in rules if re.fullmatch(pattern, name))


def planned(meta):
    for boundary, spec in meta["param_plan"].items():
        for name in spec.get("params") or {}:
            yield f"{boundary}.{name}" if boundary else name


def model(meta_name, shape_of, root):
    meta = json.loads((REALWORLD / meta_name).read_text())
    params = {fqn: {"shape": shape_of(fqn), "dtype": "bfloat16"} for fqn in planned(meta)}
    return {"format": "hpfreeze.model/v1", "modules": {"": root},
            "parameters": dict(sorted(params.items()))}


def outputs():
    return {
        "qwen3_moe_v2.model.json": model("qwen3_moe_training_demo_v2.json", qwen_shape,
                                         "Qwen3MoeForCausalLM"),
        "deepseek_v41_toy.model.json": model("deepseek_v41_toy.json", toy_shape,
                                             "DeepseekV4ForCausalLM"),
    }


def main():
    stale = []
    for name, doc in outputs().items():
        text = json.dumps(doc, indent=1) + "\n"
        path = HERE / name
        if "--check" in sys.argv[1:]:
            if not path.exists() or path.read_text() != text:
                stale.append(name)
        else:
            path.write_text(text)
    for name in stale:
        print(f"{HERE / name} is stale: run {sys.argv[0]}", file=sys.stderr)
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
