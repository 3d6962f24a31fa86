#!/usr/bin/env bash
# UDGN (Shen et al., 2022) on the Penn Treebank as its code runs it (preset udgn-ptb-paper):
# sections 00-20 / 21-22 / 23-24, words seen at least 5 times, perplexity on 23-24 (5 mask
# draws), parsing on section 23 decoded by the official MST-per-root rule, DDA/UDA by position
# against the dependency conversion the code reads (a .dep file beside every .mrg file).
#
#   scripts/udgn_ptb.sh LDC_PTB_DIR [OUT_DIR]
#
# LDC_PTB_DIR is the Penn Treebank 3 release (LDC99T42), at any level down to parsed/mrg/wsj.
# Environment (all optional):
#   SEEDS="1111 2222 3333"   one run per seed (the papers average several)
#   SETS="--set train.max_steps=200"   extra `induce train` options (a quick trial, a GPU...)
#   DEPS=next                where the gold conversion is: next (wsj_NNxx.mrg.dep beside the
#                            trees, as the UDGN code reads them), a folder of per-file
#                            conversions, or none: head rules (penn2malt), NOT comparable with
#                            the paper
#   DEPS_SCHEME=stanford     the conversion's name, recorded in the dataset and every report
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
ptb=${1:?usage: $0 LDC_PTB_DIR [OUT_DIR]}
out=${2:-experiments/udgn-ptb}
seeds=${SEEDS:-"1111 2222 3333"}
deps=${DEPS:-next}
scheme=${DEPS_SCHEME:-stanford}
read -r -a sets <<< "${SETS:-}"
mkdir -p "$out"

# 1. the dataset, with the parsing split (section 23) and its gold dependencies
data=$out/data
if [ ! -f "$data/manifest.yaml" ]; then
  if [ "$deps" = none ]; then
    induce preprocess ptb --treebank "$ptb" --out "$data" --preset udgn
  else
    induce preprocess ptb --treebank "$ptb" --out "$data" --preset udgn \
      --deps "$deps" --deps-scheme "$scheme"
  fi
fi
gold=$data/parse.deps.conllu
if [ "$deps" = none ]; then
  scheme=penn2malt
  gold=$out/parse.penn2malt.conllu
  echo "warning: gold dependencies from Penn2Malt head rules: not comparable with the paper" >&2
  [ -f "$gold" ] || induce convert headrules "$data/parse.trees" --rules penn2malt -o "$gold"
fi

runs=()
for seed in $seeds; do
  run=$out/runs/seed-$seed
  runs+=("$run")
  # 2. train (resumes where a previous, interrupted call stopped)
  train_seed "$run" udgn-ptb-paper "$data" "$seed" "${sets[@]}"
  # 3. parse section 23 (the run's protocol decoder: mst-uniform-root) and score it
  induce parse "$data/parse.txt" --model "$run" --pretokenized --format ptb -o "$run/eval/test.ptb"
  induce parse "$data/parse.txt" --model "$run" --pretokenized --format conllu \
    -o "$run/eval/test.conllu"
  induce evaluate unsupervised "$data/parse.trees" "$run/eval/test.ptb" -q \
    --json "$run/eval/uf1.json"
  induce evaluate deps "$gold" "$run/eval/test.conllu" --gold-scheme "$scheme" -q \
    --json "$run/eval/deps-$scheme.json"
  # 4. perplexity on sections 23-24, averaged over the preset's 5 mask draws
  induce evaluate mlm --model "$run" --data "$data" --split test -q --json "$run/eval/mlm.json"
done

# 5. mean (std) over the seeds
induce report "${runs[@]}" --markdown "$out/results.md" --csv "$out/results.csv"
