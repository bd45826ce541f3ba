#!/bin/sh
# submit.sh MESH BUDGET_GIB -- check the frozen plan, then queue the job.
set -eu
mesh=$1          # e.g. tp=8,ep=8
budget_gib=$2    # parameter bytes allowed on one device, in GiB

status=0
hpfreeze report generated/codegen_meta.json --model model.json --mesh "$mesh" \
    --budget "${budget_gib}GiB" --json --top 5 > report.json 2> report.err || status=$?
cat report.err >&2
case $status in
  0) ;;
  1) # The first error says what failed: a dim that does not divide, an uncovered
     # trainable parameter, or the busiest rank over the budget.
     why=$(sed -n 's/^hpfreeze: error: //p' report.err | head -n 1)
     echo "submit: not submitting on $mesh: $why" >&2
     python3 - report.json <<'EOF' || true
import json, sys
for p in json.load(open(sys.argv[1]))["params"]:
    print(f"  {p['rank0_bytes'] / 2**20:9.1f} MiB  {p['fqn']}", file=sys.stderr)
EOF
     exit 1 ;;
  *) exit "$status" ;;   # usage or I/O trouble
esac

sbatch train.sbatch
