"""`hpfreeze thaw`: freeze(thaw(meta)) reproduces the plan fields of every golden and real meta."""
import glob
import json
import os
import unittest

from hpf import TESTDATA, TempDirTest, read, run

REAL = sorted(glob.glob(os.path.join(TESTDATA, "realworld", "*.json")))
GOLDEN = sorted(glob.glob(os.path.join(TESTDATA, "cases", "*", "expected.json")))
TRICKY = os.path.join(TESTDATA, "thaw", "tricky.json")
FIELDS = ["param_plan", "injections", "frozen_sharded_params", "tied_pairs", "special_handlers",
          "mesh_dim_names"]


class Thaw(TempDirTest):
    def round_trip(self, meta_path):
        """thaw --model-out, then freeze; returns (refrozen bytes, thaw stderr)."""
        plan, model, out = self.path("plan.json"), self.path("model.json"), self.path("out.json")
        r = run("thaw", meta_path, "-o", plan, "--model-out", model)
        self.assertEqual((r.returncode, r.stdout), (0, b""), r.stderr)
        self.assertEqual(json.loads(read(plan))["format"], "hpfreeze.plan/v1")
        self.assertEqual(json.loads(read(model))["format"], "hpfreeze.model/v1")
        f = run("freeze", "--plan", plan, "--model", model, "--no-verify", "--allow-empty",
                "-o", out)
        self.assertEqual(f.returncode, 0, f.stderr)
        return read(out), r.stderr.decode()

    def assert_fields_reproduced(self, meta_path, refrozen):
        original = json.loads(read(meta_path))
        again = json.loads(refrozen)
        for field in FIELDS:
            with self.subTest(field=field):
                self.assertEqual(again[field], original[field])
                self.assertEqual(json.dumps(again[field], indent=2, sort_keys=True),
                                 json.dumps(original[field], indent=2, sort_keys=True))

    def test_corpus_is_present(self):
        self.assertEqual(len(REAL), 3)
        self.assertGreater(len(GOLDEN), 10)

    def test_golden_metas_come_back_byte_for_byte(self):
        # Every golden meta is one freeze wrote, so the whole file round-trips, not just
        # the plan fields.
        for path in GOLDEN + [TRICKY]:
            with self.subTest(path=path):
                refrozen, err = self.round_trip(path)
                self.assert_fields_reproduced(path, refrozen)
                self.assertEqual(refrozen, read(path))
                self.assertEqual(err, "")

    def test_real_metas_reproduce_their_plan_fields(self):
        for path in REAL:
            with self.subTest(path=path):
                refrozen, err = self.round_trip(path)
                self.assert_fields_reproduced(path, refrozen)
                original, again = json.loads(read(path)), json.loads(refrozen)
                # Everything else too, except classes upstream failed to resolve.
                missing = sorted(set(original["param_plan"]) - set(original["boundary_classes"]))
                for fqn in missing:
                    self.assertEqual(again["boundary_classes"].pop(fqn), "")
                self.assertEqual(again, original)
                if missing:
                    self.assertEqual(
                        err, "hpfreeze: warning: %s: /boundary_classes: %d boundaries have no "
                        "class (first: '%s'); the model tree gives them the class '' so that "
                        "freeze accepts the plan\n" % (path, len(missing), missing[0]))
                else:
                    self.assertEqual(refrozen, read(path))
                    self.assertEqual(err, "")

    def test_thawed_plan_shape(self):
        r = run("thaw", TRICKY)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.endswith(b"\n}\n"))
        plan = json.loads(r.stdout)
        self.assertEqual(list(plan), ["format", "mesh_dim_names", "tied_pairs", "special_handlers",
                                      "meta", "modules"])
        # Injection-bearing modules in the meta's injection order.
        self.assertEqual(list(plan["modules"]), ["", "z.attn", "a.mlp", "blk/odd~key", "blk"])
        blk = plan["modules"]["blk"]
        self.assertEqual(blk["params"]["w"]["tp"], {"$placement": "StridedShard", "dim": 1,
                                                    "split_factor": 3, "uneven_shard": True})
        self.assertEqual(blk["in_src"]["hidden_states"]["tp"], "SS( 0 , 2 )")
        self.assertEqual(blk["in_src"]["hidden_states"]["cp"], "S(x)")
        self.assertEqual(blk["in_src"]["t"]["$target"]["s"], "S(+3)")
        self.assertEqual(blk["_deferred_bias_params"], ["b", {"k": 1}])
        mlp = plan["modules"]["a.mlp"]
        self.assertEqual((mlp["_ep_stack"], mlp["_ep_size"], mlp["local_compute_fn"]),
                         ({"ep": [0, 1]}, 8, "moe_local_compute"))
        self.assertEqual(plan["modules"]["z.attn"]["local_compute_fn"], {"$placement": "Replicate"})
        self.assertNotIn("param_plan", plan["meta"])
        self.assertEqual(plan["meta"]["future_field"], {"kept": [1, 2]})

    def test_stdin_and_model_to_stdout(self):
        plan = self.path("plan.json")
        r = run("thaw", "-", "-o", plan, "--model-out", "-", stdin=read(TRICKY))
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["modules"]["blk/odd~key"], "Odd")
        self.assertEqual(json.loads(read(plan))["format"], "hpfreeze.plan/v1")

    def test_usage_errors(self):
        r = run("thaw", TRICKY, "--model-out", "-")
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertEqual(r.stderr, b"hpfreeze: error: -o and --model-out cannot both be '-' "
                                   b"(stdout)\n")
        same = self.path("same.json")
        r = run("thaw", TRICKY, "-o", same, "--model-out", same)
        self.assertEqual(r.returncode, 2)
        self.assertEqual(r.stderr, b"hpfreeze: error: %s: -o and --model-out name the same "
                                   b"file\n" % same.encode())
        self.assertFalse(os.path.exists(same))
        # Compared by what they lead to: a link to it is the same file too, and a character
        # device may be both (the strings were compared once: /dev/null twice was refused).
        os.symlink(same, self.path("link.json"))
        r = run("thaw", TRICKY, "-o", same, "--model-out", self.path("link.json"))
        self.assertEqual((r.returncode, r.stderr), (2, b"hpfreeze: error: %s: -o and --model-out "
                                                       b"name the same file\n"
                                                       % self.path("link.json").encode()))
        for second in ("/dev/null", "/dev//null"):
            r = run("thaw", TRICKY, "-o", "/dev/null", "--model-out", second)
            self.assertEqual((r.returncode, r.stdout, r.stderr), (0, b"", b""), second)
        self.assertEqual(run("thaw").returncode, 2)

    def test_rejected_meta_writes_nothing(self):
        bad = self.path("bad.json")
        with open(bad, "w") as f:
            f.write('{"param_plan": {"b": {"params": {"w": {"tp": "Shard(0)"}}}}}')
        out, model = self.path("plan.json"), self.path("model.json")
        with open(out, "w") as f:
            f.write("keep")
        r = run("thaw", bad, "-o", out, "--model-out", model)
        self.assertEqual((r.returncode, r.stdout), (1, b""))
        self.assertEqual(r.stderr.decode(),
                         "hpfreeze: error: %s: /param_plan/b/params/w/tp: invalid placement "
                         "'Shard(0)': unknown form, expected R, S(dim), SS(dim,factor) or "
                         "P(reduce_op) [HPF201]\n" % bad)
        self.assertEqual(read(out), b"keep")
        self.assertFalse(os.path.exists(model))
        self.assertEqual(sorted(os.listdir(self.dir)), ["bad.json", "plan.json"])

    def test_unreadable_meta_exits_2(self):
        missing = self.path("missing.json")
        r = run("thaw", missing)
        self.assertEqual((r.returncode, r.stdout), (2, b""))
        self.assertTrue(r.stderr.startswith(b"hpfreeze: error: " + missing.encode()), r.stderr)


if __name__ == "__main__":
    unittest.main()
