#!/usr/bin/env bash
# UDGN (Shen et al., 2022) on the Penn Treebank: the DDA/UDA and UF1 rows of the paper.
#   scripts/udgn_ptb.sh LDC_PTB_DIR [OUT_DIR]      (SEEDS, SETS, STANFORD: see ptb_experiment.sh)
exec "$(dirname "$0")/ptb_experiment.sh" udgn "$@"
