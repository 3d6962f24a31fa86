#!/usr/bin/env bash
# Issue 32, item 3 on a lent GPU: the official StructFormer/UDGN code and induce trained on
# the same text for the same number of epochs, three seeds each, scored on WSJ section 22
# (bench/long_runs.py).  The official side trains first, for at most OFFICIAL_S seconds
# (whole epochs, at most EPOCHS); the induce side then trains each arch for as many epochs as
# its slowest official run reached, with INDUCE_SETS (default: bf16 autocast; CUDA graphs are on
# by default).  Then the GPU tests, in what time is left.  SIDES (default official,induce)
# runs one side only: the induce side then trains EPOCHS epochs.  The papers' 100 epochs do
# not fit one call: an official run takes about 2.6 s an epoch alone on an H100/H200, and
# runs sharing the GPU add up (six took 12-14.5 s an epoch each), so one call holds e.g.
# ARCHS=structformer SEEDS=1111,2222 SIDES=official EPOCHS=100 OFFICIAL_S=520
# OFFICIAL_LIMIT=560, and the induce side of an arch (3 seeds) another.  UNTIL (seconds since
# the epoch) replaces the limits: each long step then takes what is left until then (the
# official side's training 90 s less, for its last epoch, test loop and scoring).
#
#   bash bench/gpu_long_runs.sh OUT UDGN_CHECKOUT WSJ_FILES
#
# WSJ_FILES holds conll2000-wsj15-18.txt, conll2000-wsj20.txt and dev22.trees (the shared
# data's wsj-raw/ and wsj/ files), and sample/ the sample trees' words (ptb-sample's .dp
# files: the issue's text is the WSJ text and those words; without them, a log line).  On a
# lent machine without induce installed: pack the kit here (bench/gpu_kit.sh, with UDGN
# set), carry .gpu, and run there
#   . bench/gpu_env.sh .gpu; bash bench/gpu_long_runs.sh $OUT .gpu/udgn .gpu/wsj
# OUT receives long.log, official.json and induce.json (each side's long_runs.json: every
# run's scores and curves), runs.tar.gz (every run's folder without its checkpoints: logs,
# parses, metrics.jsonl) and compile-cache.tar.gz (bench/gpu_step.sh); the data, the runs
# and their checkpoints stay in WORK (default a new /tmp/long-runs.XXXXXX), since a lent
# machine returns at most 8 files of OUT.
set -u
out=${1:?OUT folder}
official=${2:?a checkout of yikangshen/UDGN}
wsj=${3:?a folder with the CoNLL-2000 WSJ files and dev22.trees}
epochs=${EPOCHS:-40}
seeds=${SEEDS:-1111,2222,3333}
archs=${ARCHS:-structformer,udgn}
sides=${SIDES:-official,induce}
here=$(cd "$(dirname "$0")" && pwd)
# the data, runs and checkpoints (more files than come back), fresh at every call: a warm
# machine keeps /tmp between calls, and a run folder left there would be resumed
work=${WORK:-$(mktemp -d /tmp/long-runs.XXXXXX)}
mkdir -p "$out" "$work"
log="$out/long.log"
induce=(python3 -c "import sys; from induce.cli.app import main; sys.exit(main())")
. "$here/gpu_step.sh"  # step NAME LIMIT COMMAND...
back() {  # what comes back from a lent machine (at most 8 files): see the header
    for side in official induce; do
        [ -f "$work/$side/long_runs.json" ] && cp "$work/$side/long_runs.json" "$out/$side.json"
    done
    local present=()
    for side in official induce; do [ -d "$work/$side" ] && present+=("$side"); done
    [ ${#present[@]} -gt 0 ] && tar -czf "$out/runs.tar.gz" -C "$work" --exclude=checkpoints \
        --exclude='*.pt' --exclude='*.safetensors' "${present[@]}"
    keep_compile_cache "$out"
}
trap back EXIT  # and after each side: a call cut off keeps what its sides finished
began=$SECONDS
# until_end LIMIT [RESERVE]: a long step's limit in seconds, LIMIT; with UNTIL (seconds since
# the epoch: bench/gpu_next.sh's end of the call), what is left until then less RESERVE,
# reckoned as the step starts (the data, gold and smoke steps before it take what they take)
until_end() {
    if [ -z "${UNTIL:-}" ]; then
        echo "$1"
        return
    fi
    local left=$((UNTIL - $(date +%s) - ${2:-0}))
    echo $((left > 1 ? left : 1))
}
step machine 30 python3 -c "import torch; print(torch.__version__, torch.version.cuda, \
torch.cuda.get_device_name() if torch.cuda.is_available() else 'no CUDA')"
data=$work/data
texts=(--train "$wsj/conll2000-wsj15-18.txt" --train "$wsj/conll2000-wsj20.txt")
samples=("$wsj"/sample/*.dp)
if [ -f "${samples[0]}" ]; then
    for f in "${samples[@]}"; do texts+=(--train "$f"); done
else
    echo "!! no sample trees' words in $wsj/sample: training on the CoNLL-2000 text only" >>"$log"
fi
step data 60 "${induce[@]}" preprocess text "${texts[@]}" --format columns \
    --valid-trees "$wsj/dev22.trees" --min-freq 2 -o "$data" || exit 1
step gold 60 "${induce[@]}" convert headrules "$data/valid.trees" --rules penn2malt \
    -o "$work/gold.conllu"
common=(--official "$official" --data "$data" --gold "$work/gold.conllu" --seeds "$seeds"
    --archs "$archs" --threads 2 --device "${DEVICE:-cuda}" --size "${SIZE:-paper}")
export OMP_NUM_THREADS=2
extra=()
for s in ${INDUCE_SETS:-train.bf16=true}; do extra+=(--set "$s"); done
# a few graph-captured steps first: if the CUDA graphs path fails here, the induce side runs
# eagerly rather than not at all (and the log says so)
tiny=(--set model.d_model=64 --set model.n_layers=2 --set model.n_heads=2 --set train.max_steps=4
    --set train.eval_every=2 --set train.parse_metrics=false --set model.head_size=32)
if [[ ",$sides," == *,induce,* ]] && ! step smoke 90 "${induce[@]}" train --config \
    udgn-ptb-paper --data "$data" --out "$work/smoke" "${tiny[@]}" "${extra[@]}"; then
    extra+=(--set train.cuda_graphs=false)
    echo "!! the smoke run failed: the induce side runs without CUDA graphs" >>"$log"
fi
reached=$epochs
if [[ ",$sides," == *,official,* ]]; then
    step official "$(until_end "${OFFICIAL_LIMIT:-330}")" python3 "$here/long_runs.py" \
        "${common[@]}" --sides official --out "$work/official" --epochs "$epochs" \
        --train-deadline "$(until_end "${OFFICIAL_S:-220}" 90)"
    back
    # each arch: the epochs its slowest official run reached (the induce side trains as many)
    # (none when the official side wrote no results: the induce side then trains EPOCHS)
    if [ -f "$work/official/long_runs.json" ]; then
        reached=$(python3 -c "import json; r = json.load(open('$work/official/long_runs.json'))['runs'];\
e = {}; [e.update({x['arch']: min(e.get(x['arch'], 10**9), x['epochs_run'])}) for x in r];\
print(','.join(f'{a}={n}' for a, n in e.items()))" 2>>"$log") || reached=$epochs
        [ -n "$reached" ] || reached=$epochs
    fi
fi
if [[ ",$sides," == *,induce,* ]]; then
    step induce "$(until_end "${INDUCE_LIMIT:-240}")" python3 "$here/long_runs.py" "${common[@]}" \
        --sides induce --out "$work/induce" --epochs "$reached" "${extra[@]}"
    back
fi
gpu_tests_left $((${TOTAL_S:-560} - (SECONDS - began) - 10))
echo "== done $(date -u +%T)" >>"$log"
