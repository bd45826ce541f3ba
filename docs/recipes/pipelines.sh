#!/bin/sh
# hpfreeze in shell pipelines. Run in a directory holding plan.json, model.json and
# base_meta.json. stdout carries data only; diagnostics go to stderr.
set -eu

# Canonical form of placement strings: from the arguments...
hpfreeze parse 'SS( 0 , 2 )' 'S(+3)' 'P(avg)'
# ...or one per line on stdin.
printf 'R\nS(-1)\n' | hpfreeze parse

# A lint step: exit 1 if any line is invalid or not written canonically.
printf 'S(0)\nSS(1,2)\n' | hpfreeze parse --check

# One JSON object per placement, for scripts.
hpfreeze parse --json 'SS(0,2)'

# The plan from stdin (say, straight from the exporter), the meta to a file.
hpfreeze freeze --plan - --model model.json --base base_meta.json < plan.json > codegen_meta.json

# Which parameters does the plan shard? One FQN per line, ready for grep and wc.
hpfreeze expand plan.json | grep experts | wc -l

# The meta on stdout, into any JSON tool: how many parameters end up sharded?
hpfreeze freeze --plan plan.json --model model.json |
  python3 -c 'import json, sys; print(len(json.load(sys.stdin)["frozen_sharded_params"]))'
