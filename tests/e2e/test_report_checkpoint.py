"""`report` and `check` with a real checkpoint as --model: a safetensors file or a sharded
checkpoint's index, made here (tests/e2e/checkpoints.py; the data are holes, so 700 GB
cost a few KB of disk). Every expected byte count is computed here from the shapes."""

import json
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkpoints  # noqa: E402
from hpf import TempDirTest, run  # noqa: E402

# The tiny plan of testdata/report/tiny: m.w [8, 4] bf16 S(0) on tp=2, m.b [8] f32 R.
META = {"mesh_dim_names": ["tp"], "parallel_dims": {"tp_size": 2},
        "frozen_sharded_params": ["m.w"],
        "param_plan": {"m": {"is_boundary": True,
                             "params": {"b": {"tp": "R"}, "w": {"tp": "S(0)"}}}}}
TENSORS = {"m.w": ("BF16", [8, 4]), "m.b": ("F32", [8])}
RANK0 = 4 * 4 * 2 + 8 * 4  # half of w's rows, all of b
FULL = 8 * 4 * 2 + 8 * 4

GB = 10**9


class CheckpointReport(TempDirTest):
    def write_meta(self, meta=None):
        path = self.path("meta.json")
        with open(path, "w") as f:
            json.dump(meta or META, f)
        return path

    def report_json(self, model, *args):
        r = run("report", self.write_meta(), "--model", model, "--json", *args)
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        return json.loads(r.stdout)

    def test_safetensors_file_gives_the_dump_s_numbers(self):
        ck = checkpoints.write_safetensors(self.path("model.bin"), TENSORS, {"format": "pt"})
        out = self.report_json(ck)
        self.assertEqual(out["rank0_bytes"], RANK0)
        self.assertEqual(out["unsharded_bytes"], FULL)
        self.assertEqual(out["meshes"][0]["max_rank_bytes"], RANK0)
        self.assertEqual(out["meshes"][0]["min_rank_bytes"], RANK0)
        by_name = {p["fqn"]: p for p in out["params"]}
        self.assertEqual(by_name["m.w"]["dtype"], "bfloat16")
        self.assertEqual(by_name["m.b"]["dtype"], "float32")
        self.assertEqual(by_name["m.w"]["local_shape"], [4, 4])

    def test_sharded_index_relative_to_itself(self):
        index = checkpoints.write_sharded(self.path("ck"), {
            "model-00001-of-00002.safetensors": {"m.w": TENSORS["m.w"]},
            "model-00002-of-00002.safetensors": {"m.b": TENSORS["m.b"]},
        })
        # Run from elsewhere: the shards are found beside the index, not in the cwd.
        r = run("report", self.write_meta(), "--model", index, "--json", cwd="/")
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        out = json.loads(r.stdout)
        self.assertEqual(out["rank0_bytes"], RANK0)
        self.assertEqual(out["unsharded_bytes"], FULL)

    def test_uncovered_trainable_tensor_is_an_error_int_tensors_are_not_trainable(self):
        tensors = dict(TENSORS, **{"m.extra": ("F16", [3]), "m.step": ("I64", [1])})
        ck = checkpoints.write_safetensors(self.path("model.safetensors"), tensors)
        r = run("report", self.write_meta(), "--model", ck)
        self.assertEqual(r.returncode, 1)
        self.assertIn(f"hpfreeze: error: {ck}: 2 model parameters are not covered by any "
                      "planned key (14 B at full size, 1 trainable)", r.stderr.decode())
        r = run("check", self.write_meta(), "--model", ck)
        self.assertEqual(r.returncode, 1)
        err = r.stderr.decode()
        self.assertIn(f"hpfreeze: error: {ck}: /m.extra: trainable parameter 'm.extra' is not "
                      "covered", err)
        self.assertNotIn("m.step", err)

    def test_check_runs_parameter_checks_and_notes_the_skipped_module_checks(self):
        ck = checkpoints.write_safetensors(self.path("model.safetensors"), TENSORS)
        # A boundary class the checkpoint cannot confirm: with a model dump an error, here
        # skipped; a dim out of range is still found.
        meta = json.loads(json.dumps(META))
        meta["boundary_classes"] = {"m": "Linear"}
        meta["param_plan"]["m"]["params"]["b"] = {"tp": "S(1)"}
        r = run("check", self.write_meta(meta), "--model", ck)
        self.assertEqual(r.returncode, 1)
        lines = r.stderr.decode().splitlines()
        self.assertIn(f"hpfreeze: note: {ck}: a checkpoint has no module tree: the module "
                      "checks (boundary modules and boundary_classes against the model) were "
                      "skipped [HPF306]", lines)
        self.assertTrue(any("'S(1)' shards dim 1, but parameter 'm.b' has rank 1" in line
                            for line in lines), lines)
        self.assertFalse(any("boundary_classes/m" in line for line in lines), lines)
        self.assertEqual(sum("note:" in line and "module checks" in line for line in lines), 1)

    def test_corrupt_header_names_file_and_byte(self):
        ck = checkpoints.write_raw(self.path("bad.safetensors"), '{"m.w": nope}', 0)
        for command in ("report", "check"):
            r = run(command, self.write_meta(), "--model", ck)
            self.assertEqual(r.returncode, 1, command)
            err = r.stderr.decode().splitlines()
            self.assertEqual(len(err), 1, err)
            self.assertTrue(err[0].startswith(f"hpfreeze: error: {ck}: the safetensors header "
                                              "(bytes 8 to 21): "), err)
            # 'o' of nope, where the text stops being JSON: header byte 9, file byte 17.
            self.assertTrue(err[0].endswith("at byte 17"), err)
        long = checkpoints.write_raw(self.path("long.safetensors"), "{}", 0, length=99)
        r = run("report", self.write_meta(), "--model", long)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode(),
                         f"hpfreeze: error: {long}: the safetensors header length at byte 0 "
                         "(99 bytes) runs past the end of the file (10 bytes)\n")

    def test_header_as_strict_as_the_reference_loader(self):
        # Tensors must cover the data exactly and __metadata__ holds strings, each an error
        # naming the file and the byte (exit 1), in report and check alike.
        header, size = checkpoints.header_of(TENSORS)  # m.w [0, 64), m.b [64, 96)
        cases = []
        text = json.dumps(header)
        start = 8 + len(text)
        cases.append((checkpoints.write_raw(self.path("trailing.safetensors"), text, size + 5),
                      "/m.b/data_offsets: 5 bytes of data belong to no tensor: from byte %d of "
                      "the file, after tensor 'm.b', to the end of the file at byte %d; the "
                      "tensors must cover the data exactly" % (start + 96, start + 101)))
        header["m.b"]["data_offsets"] = [70, 102]
        text = json.dumps(header)
        start = 8 + len(text)
        cases.append((checkpoints.write_raw(self.path("gap.safetensors"), text, 102),
                      "/m.b/data_offsets: 6 bytes of data belong to no tensor: from byte %d of "
                      "the file, after tensor 'm.w', to byte %d, where tensor 'm.b' begins; the "
                      "tensors must cover the data exactly" % (start + 64, start + 70)))
        text = json.dumps({"__metadata__": {"format": "pt", "step": 7}, **checkpoints.header_of(
            TENSORS)[0]})
        cases.append((checkpoints.write_raw(self.path("meta.safetensors"), text, size),
                      "/__metadata__/step: __metadata__ value 'step' (at byte %d): expected a "
                      "string, got an integer (__metadata__ holds strings only)"
                      % (8 + text.index('"step"'))))
        for ck, message in cases:
            for command in ("report", "check"):
                r = run(command, self.write_meta(), "--model", ck)
                self.assertEqual((r.returncode, r.stderr.decode()),
                                 (1, f"hpfreeze: error: {ck}: {message}\n"), command)

    def test_json_readers_name_a_safetensors_file(self):
        ck = checkpoints.write_safetensors(self.path("model.safetensors"), TENSORS)
        message = ("this looks like a safetensors checkpoint, not JSON (report and check read "
                   "one as --model FILE, by path)\n")
        # From stdin the stream stops at its first NUL: a syntax error, exit 1.
        with open(ck, "rb") as f:
            r = run("report", self.write_meta(), "--model", "-", stdin=f.read())
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.decode().startswith("hpfreeze: error: <stdin>:1:"), r.stderr)
        plan = self.path("plan.json")
        with open(plan, "w") as f:
            json.dump({"format": "hpfreeze.plan/v1", "modules": {}}, f)
        r = run("expand", ck)
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.decode(), f"hpfreeze: error: {ck}: " + message)
        # freeze's --model also says what freeze needs that a checkpoint lacks.
        r = run("freeze", "--plan", plan, "--model", ck, "--allow-empty")
        self.assertEqual(r.returncode, 1)
        self.assertTrue(r.stderr.decode().startswith(
            f"hpfreeze: error: {ck}: this looks like a safetensors checkpoint, not JSON; --model "
            "wants a model tree dump (hpfreeze.model/v1): freeze needs the class of every "
            "module"), r.stderr)

    def test_missing_shard_cannot_be_read(self):
        index = checkpoints.write_sharded(self.path("ck"), {"a.safetensors": TENSORS})
        os.remove(self.path("ck", "a.safetensors"))
        for command in ("report", "check"):
            r = run(command, self.write_meta(), "--model", index)
            self.assertEqual(r.returncode, 2, command)
            self.assertEqual(r.stderr.decode(),
                             f"hpfreeze: error: {self.path('ck', 'a.safetensors')}: cannot open: "
                             f"No such file or directory (a shard of {index})\n")

    def test_shards_outside_the_index_directory_are_refused(self):
        # Each name reaches a real shard outside ck/ (or ck/a.safetensors through a NUL);
        # none is opened: one error naming the index and the entry, exit 1.
        checkpoints.write_safetensors(self.path("outside.safetensors"), TENSORS)
        index = checkpoints.write_sharded(self.path("ck"), {"a.safetensors": TENSORS})
        for shard, shown, why in (
                (self.path("outside.safetensors"), self.path("outside.safetensors"),
                 "is an absolute path"),
                ("../outside.safetensors", "../outside.safetensors", "has a '..' component"),
                ("a.safetensors\0x", "a.safetensors\\x00x", "holds a NUL byte")):
            with open(index, "w") as f:
                json.dump({"weight_map": {"m.b": "a.safetensors", "m.w": shard}}, f)
            for command in ("report", "check"):
                r = run(command, self.write_meta(), "--model", index)
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (1, b"", f"hpfreeze: error: {index}: /weight_map/m.w: shard "
                                          f"'{shown}' {why}: an index names files inside its "
                                          "own directory only\n"), command)

    def test_a_truncated_shard_names_its_index(self):
        # Cut inside its header, as a download cut short leaves it; and cut in its data.
        index = checkpoints.write_sharded(self.path("ck"), {"a.safetensors": TENSORS})
        shard = self.path("ck", "a.safetensors")
        header_length = len(json.dumps(checkpoints.header_of(TENSORS)[0]))
        data_start = 8 + header_length
        for size, error in (
                (100, f"the safetensors header length at byte 0 ({header_length} bytes) runs "
                      "past the end of the file (100 bytes)"),
                (data_start + 90, "/m.b/data_offsets: tensor 'm.b' (at byte %d) ends at byte 96 "
                                  "of the data, past its end: the data are 90 bytes (from byte "
                                  "%d of the file)" % (8 + json.dumps(checkpoints.header_of(
                                      TENSORS)[0]).index('"m.b"'), data_start))):
            checkpoints.write_sharded(self.path("ck"), {"a.safetensors": TENSORS})
            with open(shard, "r+b") as f:
                f.truncate(size)
            for command in ("report", "check"):
                r = run(command, self.write_meta(), "--model", index)
                self.assertEqual((r.returncode, r.stderr.decode()),
                                 (1, f"hpfreeze: error: {shard}: {error} (a shard of "
                                     f"{index})\n"), command)

    def test_a_checkpoint_directory_names_the_file_to_pass(self):
        index = checkpoints.write_sharded(self.path("sharded"), {"a.safetensors": TENSORS})
        single = self.path("single")
        os.makedirs(single)
        checkpoints.write_safetensors(os.path.join(single, "model.safetensors"), TENSORS)
        for directory, hint in ((self.path("sharded"), f"pass the checkpoint's index: --model {index}"),
                                (single, "pass the checkpoint's file: --model "
                                 + os.path.join(single, "model.safetensors")),
                                (self.dir, "--model takes a file: a model tree dump, a "
                                 "checkpoint's model.safetensors or a sharded one's "
                                 "model.safetensors.index.json")):
            for command in ("report", "check"):
                r = run(command, self.write_meta(), "--model", directory)
                self.assertEqual((r.returncode, r.stdout, r.stderr.decode()),
                                 (2, b"", f"hpfreeze: error: {directory}: is a directory; "
                                          f"{hint}\n"), command)

    def test_700_gb_checkpoint_read_header_only(self):
        # 61 layers of 4 bf16 [32768, 45056] tensors and a [131072, 16384] embedding on 8
        # shards: about 724 GB of data, none of it written.
        h, vocab = 16384, 131072
        layer = {f"model.layers.{i}.{n}.weight": ("BF16", [32768, 45056])
                 for i in range(61) for n in ("q", "k", "v", "o")}
        names = list(layer)
        shards = {f"model-{s + 1:05}-of-00008.safetensors":
                  {n: layer[n] for n in names[s::8]} for s in range(8)}
        shards["model-00001-of-00008.safetensors"]["model.embed.weight"] = ("BF16", [vocab, h])
        index = checkpoints.write_sharded(self.path("ck"), shards)
        total = 61 * 4 * 32768 * 45056 * 2 + vocab * h * 2
        self.assertGreater(total, 700 * GB)
        on_disk = sum(os.stat(self.path("ck", s)).st_blocks * 512 for s in shards)
        self.assertLess(on_disk, 10 * 2**20, "the test's files should be sparse")
        plan = {f"model.layers.{i}": {"is_boundary": True, "params": {
            f"{n}.weight": {"tp": "S(0)"} for n in ("q", "k", "v", "o")}} for i in range(61)}
        plan["model.embed"] = {"is_boundary": True, "params": {"weight": {"tp": "S(0)"}}}
        meta = {"mesh_dim_names": ["tp"], "parallel_dims": {"tp_size": 8}, "param_plan": plan}
        r = run("report", self.write_meta(meta), "--model", index, "--json", "--top", "0")
        self.assertEqual(r.returncode, 0, r.stderr.decode())
        out = json.loads(r.stdout)
        self.assertEqual(out["unsharded_bytes"], total)
        self.assertEqual(out["rank0_bytes"], total // 8)
        self.assertEqual(out["meshes"][0]["max_rank_bytes"], total // 8)


if __name__ == "__main__":
    unittest.main()
