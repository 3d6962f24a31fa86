#!/usr/bin/env bash
# Combiner (seed paper 004) on the WSJ Penn Treebank (preset combiner-ptb-paper): sections
# 02-21 / 22 / 23, UF1 on section 23 by the StructFormer convention (sentence F1, the
# whole-sentence span excluded), the tree read from the layer at which adjacent words join.
#
#   scripts/combiner_ptb.sh LDC_PTB_DIR [OUT_DIR]
#
# Environment (all optional):
#   SEEDS="1111 2222 3333"   one run per seed
#   SETS="--set train.max_steps=200"   extra `induce train` options
#   DECODER=merge            or divergence (the Jensen-Shannon read-out)
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
ptb=${1:?usage: $0 LDC_PTB_DIR [OUT_DIR]}
out=${2:-experiments/combiner-ptb}
seeds=${SEEDS:-"1111 2222 3333"}
decoder=${DECODER:-merge}
read -r -a sets <<< "${SETS:-}"
mkdir -p "$out"

data=$out/data
[ -f "$data/manifest.yaml" ] || induce preprocess ptb --treebank "$ptb" --out "$data" --preset parsing

runs=()
for seed in $seeds; do
  run=$out/runs/seed-$seed
  runs+=("$run")
  train_seed "$run" combiner-ptb-paper "$data" "$seed" "${sets[@]}"
  induce parse "$data/test.txt" --model "$run" --pretokenized --format ptb --decoder "$decoder" \
    -o "$run/eval/test.ptb"
  induce evaluate unsupervised "$data/test.trees" "$run/eval/test.ptb" -q \
    --json "$run/eval/uf1.json"
  induce evaluate mlm --model "$run" --data "$data" --split test -q --json "$run/eval/mlm.json"
done

induce report "${runs[@]}" --markdown "$out/results.md" --csv "$out/results.csv"
