"""End-to-end tests of what `report` answers and how (issue 33 item 8 and 9, issue 34 items
4 and 10; ../shared/reviews/newcomer-2026-12-04.md H1-H3, M2, M3, L3, L4): the rank-0 block
counts what the meshes table counts, no answer while an error stands, what `fits` leaves
out, a report from a checkpoint or model dump alone, a budget that looks mistyped, a
replica axis the plan shards, and sizes that overflow only on paper.

Every number is worked out by hand in the comments, from docs/capacity.md's hand example:
a [8,4] bf16 tp=S(0), b [6] float32 tp=R, c [3,2] bf16 tp=S(-1), 16 bytes an element with
adam (bf16 2+2+4+8, fp32 4+4+8): 704 bytes whole.
"""
import json
import struct

from checkpoints import llama_2_7b_shapes
from hpf import TempDirTest, run

PLAN = {"": {"params": {"a": {"tp": "S(0)"}, "b": {"tp": "R"}, "c": {"tp": "S(-1)"}}}}
SHAPES = {"a": {"shape": [8, 4], "dtype": "bfloat16"},
          "b": {"shape": [6], "dtype": "float32"},
          "c": {"shape": [3, 2], "dtype": "bfloat16"}}


class Answers(TempDirTest):
    def setUp(self):
        super().setUp()
        self.meta = self.write("meta.json", {"mesh_dim_names": ["tp"], "param_plan": PLAN})
        self.model = self.write("model.json", {"format": "hpfreeze.model/v1",
                                               "modules": {"": "M"}, "parameters": SHAPES})

    def write(self, name, doc):
        with open(self.path(name), "w") as f:
            json.dump(doc, f)
        return self.path(name)

    def report(self, *args, meta=True):
        return run("report", *([self.meta] if meta else []), "--model", self.model, *args)

    def test_the_rank_0_block_counts_what_the_meshes_table_counts(self):
        # tp=2 dp=4, adam, ZeRO-3 over dp: rank 0 holds a [4,4] -> 1 row of 4 = 64 B, b [6]
        # -> 2 = 32 B, c [2,2] -> 1 row of 2 = 32 B: 128 B, the mesh's worst rank. Before,
        # the block counted the weights alone (32 + 24 + 8 = 64 B).
        args = ["--mesh", "tp=2,dp=4", "--optimizer", "adam", "--zero", "3"]
        r = self.report(*args, "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        doc = json.loads(r.stdout)
        self.assertEqual(doc["meshes"][0]["max_rank_bytes"], 128)
        self.assertEqual(doc["rank0_bytes"], 128)
        self.assertEqual({p["fqn"]: p["rank0_bytes"] for p in doc["params"]},
                         {"a": 64, "b": 32, "c": 32})
        self.assertEqual(doc["unsharded_bytes"], 704)  # whole, with the accounting
        text = self.report(*args).stdout.decode()
        self.assertIn("\nrank 0 below counts weights, gradients and optimizer state (adam), after "
                      "ZeRO stage 3 over dp, 4 ranks; LOCAL is the plan's piece before it, as "
                      "the meshes table does\n", text)
        self.assertIn("\nrank 0 total                                3  128 B    128\n", text)
        self.assertIn("\n   64 B  bfloat16  [8, 4]  [4, 4]  tp=S(0)     a\n", text)

    def test_no_answer_while_an_error_finding_stands(self):
        # A planned parameter the model lacks: the meshes are still counted, but no mesh is
        # the answer (the numbers leave it out).
        plan = {"": {"params": dict(PLAN[""]["params"], gone={"tp": "S(0)"})}}
        meta = self.write("gone.json", {"mesh_dim_names": ["tp"], "param_plan": plan})
        r = run("report", meta, "--model", self.model, "--sweep", "tp=1,2", "--top", "0")
        self.assertEqual(r.returncode, 1)
        lines = r.stdout.decode().splitlines()
        self.assertIn("no answer: 1 planned parameter is not in the model", lines)
        self.assertFalse(any(line.startswith("smallest mesh") for line in lines))
        r = run("report", meta, "--model", self.model, "--sweep", "tp=1,2", "--json")
        self.assertIsNone(json.loads(r.stdout)["answer"])

    def test_fits_says_what_it_leaves_out(self):
        r = self.report("--mesh", "tp=2,dp=4", "--optimizer", "adam", "--zero", "3",
                        "--budget", "1KiB", "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        # The largest piece ZeRO-3 gathers on tp=2 dp=4: a's [4,4] under tp, 16 bf16
        # elements = 32 B (b's [6] float32 is 24 B, c's [2,2] 8 B).
        self.assertIn("\nfits counts weights, gradients and optimizer state only: no activations, "
                      "all-gather and bucket buffers or allocator slack, nor the parameter ZeRO-3 "
                      "gathers whole for compute (on tp=2 dp=4 the largest, a, is 32 B)\n",
                      r.stdout.decode())

    def test_a_model_alone_plans_every_parameter_replicated(self):
        # Every parameter whole, ZeRO-3 over dp: dp=2 a 4 rows (256 B), b 3 (48 B), c
        # chunk(3, 2) = 2 rows (64 B): 368 B; dp=4 a 2 rows (128 B), b 2 (32 B), c 1 row
        # (32 B): 192 B, the first within 300 B.
        r = self.report("--sweep", "dp=1,2,4", "--optimizer", "adam", "--zero", "3",
                        "--budget", "300", "--top", "0", meta=False)
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.decode()
        self.assertTrue(text.startswith("plan: none (no META): every parameter replicated\n"), text)
        self.assertIn("\nsmallest mesh that fits: dp=4 (4 devices, worst rank 192 B of 300 B)\n",
                      text)
        doc = json.loads(self.report("--sweep", "dp=1,2,4", "--optimizer", "adam", "--zero", "3",
                                     "--json", meta=False).stdout)
        self.assertEqual(doc["plan"], "replicated")
        self.assertEqual([m["max_rank_bytes"] for m in doc["meshes"]], [704, 368, 192])
        self.assertEqual(doc["findings"], [])
        # Without a mesh or a sweep there is nothing to answer; dp is known, tp is not.
        r = self.report(meta=False)
        self.assertEqual((r.returncode, r.stderr.decode()), (2, (
            "hpfreeze: error: without META every parameter is replicated, and --mesh or --sweep "
            "must give the data-parallel sizes (as --sweep dp=1,2,4,8)\n")))
        # With neither META nor --model, --model is what is missing.
        r = run("report")
        self.assertEqual((r.returncode, r.stderr.decode()), (2, (
            "hpfreeze: error: --model is required (see 'hpfreeze report --help')\n")))
        r = self.report("--sweep", "tp=1,2", meta=False)
        self.assertEqual(r.returncode, 2)
        self.assertIn("unknown axis 'tp'", r.stderr.decode())

    def test_llama_2_7b_at_stage_3(self):
        """docs/capacity.md's comparison with DeepSpeed: Llama-2-7B (vocab 32000, hidden
        4096, 32 layers, MLP 11008; 6,738,415,616 parameters), every parameter replicated,
        Adam, ZeRO-3 over dp=8: every dim 0 divides by 8, so each rank holds 16 x Psi / 8 =
        13,476,831,232 bytes (12.55 GiB); DeepSpeed's 18 Psi / 8 + 4 x 32000 x 4096 is
        15,685,723,136 (14.61 GiB)."""
        shapes = llama_2_7b_shapes()
        self.assertEqual(sum(a * (b if len(s) > 1 else 1) for s in shapes.values()
                             for a, b in [(s[0], s[-1])]), 6738415616)
        model = self.write("llama.json", {"format": "hpfreeze.model/v1", "modules": {"": "M"},
                                          "parameters": {n: {"shape": s, "dtype": "bfloat16"}
                                                         for n, s in shapes.items()}})
        r = run("report", "--model", model, "--mesh", "dp=8", "--optimizer", "adam", "--zero",
                "3", "--json", "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr)
        m = json.loads(r.stdout)["meshes"][0]
        self.assertEqual((m["max_rank_bytes"], m["min_rank_bytes"]), (13476831232, 13476831232))

    def test_a_model_given_as_meta_is_recognised(self):
        r = run("report", self.model, "--sweep", "dp=2")
        self.assertEqual((r.returncode, r.stderr.decode()), (2, (
            f"hpfreeze: error: META {self.model} is a model tree dump (hpfreeze.model/v1), not a "
            f"codegen_meta.json: give it as --model {self.model} (without META, report counts "
            "every parameter replicated and needs --mesh or --sweep)\n")))
        header = json.dumps({"w": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})
        path = self.path("model.safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header.encode() + b"\0" * 4)
        r = run("report", path)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr.decode(),
                         f"hpfreeze: error: META {path} is a safetensors checkpoint, not a "
                         f"codegen_meta.json: give it as --model {path} (without META, report "
                         "counts every parameter replicated and needs --mesh or --sweep)\n")
        r = run("report", self.meta)
        self.assertEqual((r.returncode, r.stderr.decode()),
                         (2, "hpfreeze: error: --model is required (see 'hpfreeze report "
                             "--help')\n"))

    def test_a_budget_that_looks_mistyped_gets_a_note(self):
        # tp=1: 704 B with adam; 80 is 80 bytes, under 1 MiB and under the one worst rank.
        r = self.report("--mesh", "tp=1", "--optimizer", "adam", "--budget", "80", "--top", "0")
        self.assertEqual(r.returncode, 1)
        self.assertIn("hpfreeze: note: --budget 80 is 80 B, under 1 MiB, below every mesh's worst "
                      "rank (the least is 704 B); did you mean 80GiB? [HPF515]\n",
                      r.stderr.decode())
        # A unit of GiB or more is no slip, even below every row; 0.5M is.
        r = self.report("--mesh", "tp=1", "--optimizer", "adam", "--budget", "0.0000001GiB")
        self.assertNotIn("did you mean", r.stderr.decode())
        r = self.report("--mesh", "tp=1", "--budget", "0.5M")
        self.assertIn("hpfreeze: note: --budget 0.5M is 488.3 KiB, under 1 MiB; did you mean "
                      "0.5GiB? [HPF515]\n", r.stderr.decode())
        self.assertEqual(r.returncode, 0)  # a note: 0.5 MB fits 704 B

    def test_a_replica_axis_the_plan_shards_is_a_usage_error(self):
        r = self.report("--replica-axis", "tp", "--mesh", "tp=2")
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: --replica-axis: axis 'tp' is sharded by the plan (it "
                         f"is named first at {self.meta}: /param_plan//params/a/tp), so it holds "
                         "no replicas; the inputs know it without --replica-axis\n")


class SizesThatOverflowOnlyOnPaper(TempDirTest):
    def write_model(self, shapes):
        path = self.path("model.json")
        with open(path, "w") as f:
            json.dump({"format": "hpfreeze.model/v1", "modules": {"": "M"},
                       "parameters": {n: {"shape": s, "dtype": d} for n, (s, d) in shapes.items()}},
                      f)
        return path

    def test_a_zero_sized_dim_beside_a_huge_one_holds_nothing(self):
        meta = self.path("meta.json")
        with open(meta, "w") as f:
            json.dump({"param_plan": {"": {"params": {"w": {"tp": "S(1)"}, "v": {}}}}}, f)
        for big in (2 ** 63, 2 ** 64 - 1):
            with self.subTest(big=big):
                model = self.write_model({"w": ([0, big], "bfloat16"), "v": ([3], "bfloat16")})
                r = run("report", meta, "--model", model, "--mesh", "tp=2,dp=2", "--optimizer",
                        "adam", "--zero", "3", "--json")
                self.assertEqual(r.returncode, 0, r.stderr)
                # v alone: 3 x 16 bytes, dim 0 over dp=2: 2 | 1 -> 32 B on the worst rank.
                self.assertEqual(json.loads(r.stdout)["meshes"][0]["max_rank_bytes"], 32)
        # A dim of 2^63 one-byte elements is no overflow: 2^63 bytes (it used to be a
        # "negative size" of the meta).
        model = self.write_model({"w": ([2, 2 ** 63 // 2], "int8"), "v": ([3], "bfloat16")})
        r = run("report", meta, "--model", model, "--mesh", "tp=1", "--json")
        self.assertEqual(json.loads(r.stdout)["meshes"][0]["max_rank_bytes"], 2 ** 63 + 6)

    def test_a_real_overflow_names_the_model_and_the_parameter(self):
        meta = self.path("meta.json")
        with open(meta, "w") as f:
            json.dump({"param_plan": {"": {"params": {"w": {"tp": "R"}}}}}, f)
        model = self.write_model({"w": ([2 ** 60, 1], "bfloat16")})
        r = run("report", meta, "--model", model, "--optimizer", "adam", "--mesh", "tp=1", "-q")
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode().splitlines()[0],
                         f"hpfreeze: error: {model}: /parameters/w: parameter 'w' of shape "
                         "[1152921504606846976, 1] and 16 bytes per element with --optimizer adam "
                         "needs more than 2^64-1 bytes [HPF512]")

    def test_a_checkpoint_with_a_zero_sized_dim(self):
        header = json.dumps({"w": {"dtype": "BF16", "shape": [0, 2 ** 63], "data_offsets": [0, 0]},
                             "v": {"dtype": "BF16", "shape": [2], "data_offsets": [0, 4]}})
        path = self.path("model.safetensors")
        with open(path, "wb") as f:
            f.write(struct.pack("<Q", len(header)) + header.encode() + b"\0" * 4)
        r = run("report", "--model", path, "--mesh", "dp=2", "--json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["meshes"][0]["max_rank_bytes"], 4)


if __name__ == "__main__":
    import unittest
    unittest.main()
