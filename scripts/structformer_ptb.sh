#!/usr/bin/env bash
# StructFormer (Shen et al., 2021) on the Penn Treebank: Table 1/2 of the paper.
#   scripts/structformer_ptb.sh LDC_PTB_DIR [OUT_DIR]      (SEEDS, SETS, STANFORD: see ptb_experiment.sh)
exec "$(dirname "$0")/ptb_experiment.sh" structformer "$@"
