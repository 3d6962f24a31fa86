#!/usr/bin/env bash
# One paper's PTB experiment, several seeds: preprocess -> train -> parse section 23 ->
# evaluate (UF1 and per-label recall, UAS/UUAS, perplexity) -> mean (std) table.
#
#   scripts/ptb_experiment.sh ARCH LDC_PTB_DIR [OUT_DIR]
#
# ARCH is structformer or udgn.  LDC_PTB_DIR is the Penn Treebank 3 release (LDC99T42), at any
# level down to parsed/mrg/wsj.  Environment (all optional):
#   SEEDS="1111 2222 3333"   one run per seed (the papers average several)
#   SETS="--set train.max_steps=200"   extra `induce train` options (a quick trial, a GPU...)
#   SPLIT="--preset structformer"      or e.g. "--train 02-21 --valid 22 --test 23"
#   STANFORD=FILE            Stanford basic dependencies of the test sentences (CoNLL-U or
#                            CoNLL-X from the Stanford converter): adds the Stanford UAS/UUAS
#                            columns.  The CoNLL (Penn2Malt head rules) columns are always made.
set -euo pipefail
arch=${1:?usage: $0 structformer|udgn LDC_PTB_DIR [OUT_DIR]}
ptb=${2:?usage: $0 structformer|udgn LDC_PTB_DIR [OUT_DIR]}
out=${3:-experiments/$arch-ptb}
seeds=${SEEDS:-"1111 2222 3333"}
read -r -a sets <<< "${SETS:-}"
read -r -a split <<< "${SPLIT:---preset structformer}"
mkdir -p "$out"

# 1. the dataset: sections 02-21 / 22 / 23, the word tags only (punctuation removed),
#    lower-cased, digits as N, a 10k vocabulary with <unk>
data=$out/data
[ -f "$data/manifest.yaml" ] ||
  induce preprocess ptb --treebank "$ptb" --out "$data" "${split[@]}" --max-vocab 10000

# 2. gold dependencies of the test trees by the Penn2Malt head rules (the "CoNLL" columns)
[ -f "$out/test.conll.conllu" ] ||
  induce convert headrules "$data/test.trees" --rules penn2malt --output "$out/test.conll.conllu"

runs=()
for seed in $seeds; do
  run=$out/runs/seed-$seed
  runs+=("$run")
  # 3. train (resumes where a previous, interrupted call stopped)
  if [ -f "$run/trainer_state.pt" ]; then
    induce train --resume "$run" "${sets[@]}"
  else
    induce train --arch "$arch" --data "$data" --out "$run" --seed "$seed" "${sets[@]}"
  fi
  # 4. parse the test words and score the trees
  mkdir -p "$run/eval"
  induce parse "$data/test.txt" --model "$run" --pretokenized --format ptb -o "$run/eval/test.ptb"
  induce parse "$data/test.txt" --model "$run" --pretokenized --format conllu \
    -o "$run/eval/test.conllu"
  induce evaluate unsupervised "$data/test.trees" "$run/eval/test.ptb" -q \
    --json "$run/eval/uf1.json"
  induce evaluate deps "$out/test.conll.conllu" "$run/eval/test.conllu" -q \
    --json "$run/eval/deps-conll.json"
  if [ -n "${STANFORD:-}" ]; then
    induce evaluate deps "$STANFORD" "$run/eval/test.conllu" -q \
      --json "$run/eval/deps-stanford.json"
  fi
  induce evaluate mlm --model "$run" --data "$data" --split test -q --json "$run/eval/mlm.json"
done

# 5. mean (std) over the seeds
induce report "${runs[@]}" --markdown "$out/results.md" --csv "$out/results.csv"
