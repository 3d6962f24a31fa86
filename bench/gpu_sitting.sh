#!/usr/bin/env bash
# One sitting on a GPU machine, every step under its own time limit so that a slow one
# cannot eat the others' time (GPU time is lent by the minute):
#   1. the CUDA tests (tests/gpu, marked gpu);
#   2. official StructFormer/UDGN code against induce fp32 and induce bf16, training at
#      paper size (bench/side_by_side.py --device cuda, alternating fresh processes);
#   3. parsing WSJ section 22's lengths the same way (official test loop vs batched);
#   4. torch.profiler tables of induce's training step, and of an earlier tree's when BEFORE
#      is given (a copy of the library as it was, with this bench/ beside it);
#   5. with KIM set to a checkout of harvardnlp/compound-pcfg: the C-PCFG's training
#      tokens/s and peak GPU memory, Kim's code against induce (bench/pcfg_vs_official.py);
#   6. with TNPCFG set to a checkout of sustcsonglin/TN-PCFG: the training tokens/s and
#      peak GPU memory of the TN-PCFG and the Simple PCFGs (at NT $SIMPLE_NT, default 2048),
#      each official model's own loss (the Simple PCFGs' Triton kernels) against induce
#      (bench/lowrank_vs_official.py --speed --device cuda);
#   7. with BENEPAR set to a checkout of nikitakit/self-attentive-parser (its src/): the chart
#      parser against benepar's own training and parsing at equal settings, benepar fp32
#      against induce fp32 and bf16: dev F1 after the same updates, training sentences/s,
#      parsing, peak GPU memory (bench/chart_vs_benepar.py --device cuda; CHART_UPDATES,
#      default 500, CHART_SEEDS, default 1, CHART_LIMIT).
#
#   bash bench/gpu_sitting.sh OUT OFFICIAL [SHARED] [BEFORE]
#
# OUT: a folder for sitting.log (everything printed), train.json, parse.json (and pcfg.json,
# chart.json), and compile-cache.tar.gz (torch.compile's cache for the next sitting's kit:
# bench/gpu_step.sh).  OFFICIAL: a
# checkout of github.com/yikangshen/UDGN (models.py, layers.py).  SHARED: the folder with
# data/wsj/dev22.trees (default ../shared).  Sizes and counts can be changed for a dry run on
# a CPU: DEVICE=cpu SIZES=small STEPS=2 WARMUP=1 ROUNDS=1 PARSE_SENTENCES=40.  PARTS picks
# steps (default "tests train parse profiles"); SIDES the training sides (default: official,
# induce, induce-bf16 and, on CUDA, the three graph sides); ARCHS the models of training and
# parsing (default structformer,udgn); TRAIN_LIMIT the training step's limit (PARSE_LIMIT,
# PARSE_ROUNDS: parsing's limit, 150 s, and rounds, 1); INDUCE_SETS
# induce settings for training and parsing (KEY=VALUE, space-separated: side_by_side --set).
# The compiled step (train.compile, never yet measured on a GPU) is the sides
# induce-compile-graphs and induce-bf16-compile-graphs: e.g. SIDES=official,induce-bf16-graphs,
# induce-bf16-compile-graphs,induce-compile-graphs (each process compiles once, in its untimed
# first pass: on the CPU a minute or more at paper size; give TRAIN_LIMIT room).
#
# On a lent GPU machine with no network and without induce installed: pack the kit here first
# (bench/gpu_kit.sh: wheels, official code, data into the ignored .gpu/), carry it, and run
# from the repository root, in two device calls (one call may run 10 minutes at most):
#   . bench/gpu_env.sh .gpu && bash bench/gpu_sitting.sh $OUT .gpu/udgn .gpu/shared
#   . bench/gpu_env.sh .gpu && PARTS=none KIM=.gpu/kim TNPCFG=.gpu/tnpcfg \
#       BENEPAR=.gpu/benepar bash bench/gpu_sitting.sh $OUT .gpu/udgn .gpu/shared
# On an H100: tests, three training sides, parsing and profiles took 4.7 minutes; tests and
# five sides at STEPS=40 took 5; every part with five sides needs about 8 (plan the lease).
# Steps 5-7 have limits of 150 + 150 + 420 s: give them their own call, or fewer of them.
# On an H200 (2026-11-28): a compiled side's first pass took 160 s (StructFormer paper size),
# and tests/gpu did not finish in 218 s (its compiled-graph tests compile cold, over 100 s
# the first): give the tests a call of their own, or TESTS_LIMIT=500.  The calls left of
# issue 32, ready to run: bench/gpu_next.sh.
set -u
out=${1:?OUT folder}
official=${2:?a checkout of yikangshen/UDGN}
shared=${3:-../shared}
before=${4:-}
device=${DEVICE:-cuda}
sizes=${SIZES:-paper}
steps=${STEPS:-12}
warmup=${WARMUP:-4}
rounds=${ROUNDS:-2}
sentences=${PARSE_SENTENCES:-1700}
parts=" ${PARTS:-tests train parse profiles} "
graphs=""
[ "$device" = cpu ] || graphs=",induce-graphs,induce-bf16-graphs,induce-tf32-graphs"
sides=${SIDES:-official,induce,induce-bf16$graphs}
mkdir -p "$out"
log="$out/sitting.log"
here=$(cd "$(dirname "$0")" && pwd)

. "$here/gpu_step.sh"  # step NAME LIMIT COMMAND...
trap 'keep_compile_cache "$out"' EXIT

sbs=(python3 "$here/side_by_side.py" --official "$official" --shared "$shared"
    --device "$device" --sizes "$sizes" --archs "${ARCHS:-structformer,udgn}")
for s in ${INDUCE_SETS:-}; do sbs+=(--set "$s"); done  # e.g. model.lstm_precision=autocast
step machine 30 python3 -c "import torch; print(torch.__version__, torch.version.cuda, \
torch.backends.cudnn.version(), torch.cuda.get_device_name() if torch.cuda.is_available() \
else 'no CUDA')"
has() { [[ $parts == *" $1 "* ]]; }
has tests && step tests "${TESTS_LIMIT:-200}" python3 -m pytest -q -p no:cacheprovider -rs tests/gpu
has train && step train "${TRAIN_LIMIT:-240}" "${sbs[@]}" --rounds "$rounds" --steps "$steps" \
    --warmup "$warmup" --sides "$sides" --json "$out/train.json"
has parse && step parse "${PARSE_LIMIT:-150}" "${sbs[@]}" --rounds "${PARSE_ROUNDS:-1}" \
    --no-train --parse --parse-sentences "$sentences" --json "$out/parse.json"
if [ -n "${KIM:-}" ]; then
    step pcfg "${PCFG_LIMIT:-150}" python3 "$here/pcfg_vs_official.py" --official "$KIM" \
        --device "$device" --lengths "${PCFG_LENGTHS:-10,20,30,40}" --rounds "$rounds" \
        --steps "$steps" --warmup "$warmup" --memory 40,80,120 --json "$out/pcfg.json"
fi
if [ -n "${TNPCFG:-}" ]; then
    step lowrank-speed "${LOWRANK_SPEED_LIMIT:-150}" python3 "$here/lowrank_vs_official.py" \
        --official "$TNPCFG" --speed --device "$device" --archs tnpcfg,simplepcfg,scpcfg \
        --simple-nt "${SIMPLE_NT:-2048}" --lengths "${PCFG_LENGTHS:-10,20,30,40}" \
        --rounds "${LOWRANK_ROUNDS:-1}" --steps "${LOWRANK_STEPS:-3}" --warmup 1
fi
if [ -n "${BENEPAR:-}" ]; then
    step chart "${CHART_LIMIT:-420}" python3 "$here/chart_vs_benepar.py" --benepar "$BENEPAR" \
        --shared "$shared" --device "$device" --sides benepar,induce,induce-bf16 \
        --updates "${CHART_UPDATES:-500}" --check-every "${CHART_CHECK:-250}" \
        --seeds "${CHART_SEEDS:-1}" --threads 2 --dev-sentences "${CHART_DEV:-0}" \
        --json "$out/chart.json"
fi
has profiles || { echo "== done $(date -u +%T)" >>"$log"; exit 0; }
profile=(--device "$device" --size "${sizes%%,*}" --steps 4 --rows "${ROWS:-25}")
for arch in structformer udgn; do
    step "profile-$arch-bf16" 45 python3 "$here/profile_step.py" --arch "$arch" \
        "${profile[@]}" --set train.bf16=true --set train.cpu_bf16=true
    if [ -n "$before" ]; then
        step "profile-$arch-bf16-before" 45 python3 "$before/bench/profile_step.py" \
            --arch "$arch" "${profile[@]}" --set train.bf16=true --set train.cpu_bf16=true
    fi
done
step profile-udgn-fp32 45 python3 "$here/profile_step.py" --arch udgn "${profile[@]}"
echo "== done $(date -u +%T)" >>"$log"
