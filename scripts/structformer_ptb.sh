#!/usr/bin/env bash
# StructFormer (Shen et al., 2021) on the Penn Treebank as its code runs it (preset
# structformer-ptb-paper): the masked LM on Mikolov's PTB text, parsing on WSJ section 23
# (UF1 by the StructFormer convention; DDA/UDA by its word-string matching against the
# Stanford and CoNLL-style conversions of section 23 the code reads).
#
#   scripts/structformer_ptb.sh LDC_PTB_DIR MIKOLOV_DIR [OUT_DIR]
#
# LDC_PTB_DIR: the Penn Treebank 3 release (LDC99T42); MIKOLOV_DIR: ptb.train.txt,
# ptb.valid.txt, ptb.test.txt (Mikolov et al. 2010).  Environment (all optional):
#   SEEDS="1111 2222 3333"   one run per seed
#   SETS="--set train.max_steps=200"   extra `induce train` options
#   ARCH=structformer        or transformer (the paper's baseline: no parsing columns)
#   STANFORD=FILE            section 23 in Stanford basic dependencies (the code's
#                            test.stanford): the "UAS stanford" columns
#   CONLL=FILE               section 23 in the CoNLL-style conversion (test.conll): "UAS conll"
#   Without either, Penn2Malt head rules give a "UAS penn2malt" column, NOT comparable with the
#   paper.
set -euo pipefail
# shellcheck source=scripts/common.sh
source "$(dirname "$0")/common.sh"
ptb=${1:?usage: $0 LDC_PTB_DIR MIKOLOV_DIR [OUT_DIR]}
mikolov=${2:?usage: $0 LDC_PTB_DIR MIKOLOV_DIR [OUT_DIR]}
arch=${ARCH:-structformer}
out=${3:-experiments/$arch-ptb}
seeds=${SEEDS:-"1111 2222 3333"}
read -r -a sets <<< "${SETS:-}"
mkdir -p "$out"

# 1. the language-model data (every training word of Mikolov's text) and the parsing data
#    (section 23 trees, the words the code's data_ptb.py keeps)
[ -f "$out/lm/manifest.yaml" ] || induce preprocess mikolov --dir "$mikolov" --out "$out/lm"
[ -f "$out/wsj/manifest.yaml" ] ||
  induce preprocess ptb --treebank "$ptb" --out "$out/wsj" --preset structformer
golds=()
[ -n "${STANFORD:-}" ] && golds+=("stanford=$STANFORD")
[ -n "${CONLL:-}" ] && golds+=("conll=$CONLL")
if [ ${#golds[@]} -eq 0 ]; then
  echo "warning: gold dependencies from Penn2Malt head rules: not comparable with the paper" >&2
  [ -f "$out/test.penn2malt.conllu" ] ||
    induce convert headrules "$out/wsj/test.trees" --rules penn2malt -o "$out/test.penn2malt.conllu"
  golds+=("penn2malt=$out/test.penn2malt.conllu")
fi

runs=()
for seed in $seeds; do
  run=$out/runs/seed-$seed
  runs+=("$run")
  train_seed "$run" "$arch-ptb-paper" "$out/lm" "$seed" "${sets[@]}"
  if [ "$arch" = structformer ]; then
    # section 23 words through the LM's vocabulary (words it lacks read as <unk>)
    induce parse "$out/wsj/test.txt" --model "$run" --pretokenized --format ptb \
      -o "$run/eval/test.ptb"
    induce parse "$out/wsj/test.txt" --model "$run" --pretokenized --format conllu \
      -o "$run/eval/test.conllu"
    induce evaluate unsupervised "$out/wsj/test.trees" "$run/eval/test.ptb" -q \
      --json "$run/eval/uf1.json"
    for gold in "${golds[@]}"; do
      name=${gold%%=*}
      induce evaluate deps "${gold#*=}" "$run/eval/test.conllu" --convention structformer \
        --gold-scheme "$name" -q --json "$run/eval/deps-$name.json"
    done
  fi
  induce evaluate mlm --model "$run" --data "$out/lm" --split test -q --json "$run/eval/mlm.json"
done

induce report "${runs[@]}" --markdown "$out/results.md" --csv "$out/results.csv"
