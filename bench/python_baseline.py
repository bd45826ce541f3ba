#!/usr/bin/env python3
"""The Python baseline of bench/run: a lower bound for any Python implementation of freeze.

    python_baseline.py PLAN MODEL META OUT [--runs N]

Loads META (hpfreeze's own output for PLAN and MODEL) first, untimed. Then, timed with
time.perf_counter: json.load of PLAN and of MODEL, and json.dump(meta, OUT, indent=2,
sort_keys=True) -- the reading and writing a Python freeze cannot avoid, with none of the
freezing. Prints one JSON line: {"seconds": [one per run], "median": ...}. bench/run adds
the interpreter's start-up (`python3 -c pass`) on top.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time


def one_run(plan: str, model: str, meta: dict, out: str) -> float:
    start = time.perf_counter()
    with open(plan, encoding="utf-8") as f:
        json.load(f)
    with open(model, encoding="utf-8") as f:
        json.load(f)
    with open(out, "w", encoding="ascii") as f:
        json.dump(meta, f, indent=2, sort_keys=True)
    return time.perf_counter() - start


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("plan")
    ap.add_argument("model")
    ap.add_argument("meta")
    ap.add_argument("out")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    with open(args.meta, encoding="ascii") as f:
        meta = json.load(f)
    seconds = [one_run(args.plan, args.model, meta, args.out) for _ in range(args.runs)]
    print(json.dumps({"seconds": seconds, "median": statistics.median(seconds)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
