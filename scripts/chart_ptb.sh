#!/usr/bin/env bash
# The supervised self-attentive chart parser (Kitaev & Klein 2018, preset chart-ptb-paper) on
# the WSJ Penn Treebank: train on sections 02-21 with dev F1 on 22 (EVALB, COLLINS.prm) picking
# the best checkpoint, then parse the words of section 23 (their tags kept, as EVALB expects)
# and score it with COLLINS.prm; dev 22 is scored the same way.
#
#   scripts/chart_ptb.sh LDC_PTB_DIR [OUT_DIR]
#
# Environment (all optional):
#   SEEDS="1111"                          one run per seed
#   SETS="--set train.max_steps=2000"     extra `induce train` options
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
ptb=${1:?usage: $0 LDC_PTB_DIR [OUT_DIR]}
out=${2:-experiments/chart-ptb}
seeds=${SEEDS:-"1111"}
read -r -a sets <<< "${SETS:-}"
mkdir -p "$out"

data=$out/data
[ -f "$data/manifest.yaml" ] || induce preprocess ptb --treebank "$ptb" --out "$data" --preset parsing

runs=()
for seed in $seeds; do
  run=$out/runs/seed-$seed
  runs+=("$run")
  train_seed "$run" chart-ptb-paper "$data" "$seed" "${sets[@]}"
  for split in valid test; do
    induce parse "$data/$split.trees" --model "$run" --format ptb -q -o "$run/eval/$split.ptb"
    induce evaluate brackets "$data/$split.trees" "$run/eval/$split.ptb" --param collins -q \
      --json "$run/eval/evalb-$split.json"
  done
done

induce report "${runs[@]}" --markdown "$out/results.md" --csv "$out/results.csv"
