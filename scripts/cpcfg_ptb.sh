#!/usr/bin/env bash
# The compound PCFG (Kim, Dyer & Rush 2019, preset cpcfg-ptb-paper), the neural PCFG
# (ARCH=npcfg, preset npcfg-ptb-paper) or the TN-PCFG (Yang, Zhao & Tu 2021, ARCH=tnpcfg,
# preset tnpcfg-ptb-paper: MBR trees, its repository's scoring convention, published 57.7
# +- 4.2), the Simple PCFG (Liu et al. 2023, ARCH=simplepcfg, preset simplepcfg-ptb-paper,
# published 65.1 +- 2.1) or its compound SC-PCFG (ARCH=scpcfg, preset scpcfg-ptb-paper, NT
# 2048, published 60.6 +- 3.6) on the WSJ Penn Treebank: the papers' data (sections
# 02-21 / 22 / 23, punctuation removed, lower-cased, a number as one N, 10,000 words), ten
# epochs with the 30 -> 40 word curriculum and the best checkpoint by the validation ELBO
# perplexity; section 23 parsed with the labelled Viterbi tree (z at its mean) and scored by
# the official eval.py's convention (cpcfg: sentence F1 without the whole-sentence span,
# length-1 sentences skipped). Published (sentence F1 on 23, mean of 4 seeds):
# N-PCFG 50.8, C-PCFG 55.2.
#
#   scripts/cpcfg_ptb.sh LDC_PTB_DIR [OUT_DIR]
#
# Environment (all optional):
#   ARCH=cpcfg                  or npcfg, tnpcfg, simplepcfg, scpcfg
#   SEEDS="3435 1 2 3"          one run per seed (3435: the official default)
#   SETS="--set train.epochs=1" extra `induce train` options
#   DECODER=viterbi             or mbr (the TN-PCFG repository's read-out; tnpcfg's default)
#   CONVENTION=cpcfg            or tnpcfg (tnpcfg's default)
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
ptb=${1:?usage: $0 LDC_PTB_DIR [OUT_DIR]}
arch=${ARCH:-cpcfg}
out=${2:-experiments/$arch-ptb}
seeds=${SEEDS:-"3435 1 2 3"}
decoder=${DECODER:-viterbi}
convention=${CONVENTION:-cpcfg}
if [ "$arch" = tnpcfg ] || [ "$arch" = simplepcfg ] || [ "$arch" = scpcfg ]; then
  decoder=${DECODER:-mbr}
  convention=${CONVENTION:-tnpcfg}
fi
read -r -a sets <<< "${SETS:-}"
mkdir -p "$out"

data=$out/data
[ -f "$data/manifest.yaml" ] || induce preprocess ptb --treebank "$ptb" --out "$data" --preset pcfg

runs=()
for seed in $seeds; do
  run=$out/runs/seed-$seed
  runs+=("$run")
  train_seed "$run" "$arch-ptb-paper" "$data" "$seed" "${sets[@]}"
  induce parse "$data/test.txt" --model "$run" --pretokenized --format ptb --decoder "$decoder" \
    -o "$run/eval/test.ptb"
  induce evaluate unsupervised "$data/test.trees" "$run/eval/test.ptb" --convention "$convention" -q \
    --json "$run/eval/uf1.json"
done

induce report "${runs[@]}" --markdown "$out/results.md" --csv "$out/results.csv"
