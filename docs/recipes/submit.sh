#!/bin/sh
# submit.sh MESH BUDGET_GIB -- check the frozen plan, then queue the job.
set -eu
mesh=$1          # e.g. tp=8,ep=8
budget_gib=$2    # parameter bytes allowed on one device, in GiB

status=0
hpfreeze report generated/codegen_meta.json --model model.json --mesh "$mesh" --json \
    > report.json || status=$?
case $status in
  0) ;;
  1) echo "submit: the plan does not divide on $mesh (see above); not submitting" >&2
     exit 1 ;;
  *) exit "$status" ;;   # usage or I/O trouble
esac

python3 - "$budget_gib" report.json <<'EOF'
import json, sys
budget = float(sys.argv[1]) * 2**30
report = json.load(open(sys.argv[2]))
# Planned params at their rank-0 shard, plus model params the plan does not cover.
need = report["rank0_bytes"] + report["uncovered_bytes"]
print(f"submit: {need / 2**30:.1f} GiB of parameters on rank 0, budget {budget / 2**30:.1f} GiB",
      file=sys.stderr)
if need > budget:
    for p in report["params"][:5]:
        print(f"  {p['rank0_bytes'] / 2**20:9.1f} MiB  {p['fqn']}", file=sys.stderr)
    sys.exit(1)
EOF

sbatch train.sbatch
