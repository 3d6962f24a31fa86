#!/usr/bin/env bash
# What is left of issue 32 on a lent GPU, as device calls ready to run (a lease of 15 minutes
# holds about one full call of 600 s and a short one; the order is the order of need):
#
#   speed     the targets still open: UDGN bf16 compiled (5x) and fp32 compiled for both
#             models (2x), each against the official code in the same call; then tests/gpu
#             in what is left of TOTAL (default 560 s, counted from the script's start).
#             COMPILE picks what the compiled sides compile (train.compile_scope): compile
#             (default: the whole forward), regions or layers (each layer once: cold on a
#             CPU 59% and 22% of the whole's compile time for StructFormer, bench/RESULTS.md).
#             UDGN's bf16 sides run the parser BiLSTM in bf16 (model.lstm_precision: auto);
#             the earlier visits' ran it in fp16 (PyTorch's autocast): to time that path
#             again, INDUCE_SETS=model.lstm_precision=autocast (bench/gpu_sitting.sh); and
#             bench/lstm_precision.py times the BiLSTM alone in each (into tests.log)
#   tests     tests/gpu alone (its compiled tests compile cold: minutes)
#   parse     parsing WSJ section 22's 1,700 sentences, both models against the official
#             test loop, two rounds (the 20x target: 16.2x and 15.2x in the first sitting;
#             UDGN's read-out has since dropped the Eisner pass the official loop never
#             makes, and each induce side says the host read-out's share of its time)
#   profile   torch.profiler tables of the compiled bf16 step (COMPILE as for speed) replayed
#             from CUDA graphs, UDGN and StructFormer at paper size (what is left to fuse or overlap; the "after"
#             of item 2's profiles)
#   chart     the C-PCFG against Kim et al.'s code (step 5 of bench/gpu_sitting.sh), then
#             the chart parser against benepar (step 7)
#   lowrank   the TN-PCFG and Simple PCFGs against their repository (step 6)
#   long-ARCH-SIDE  a long run: ARCH structformer|udgn, SIDE official|induce (100 epochs,
#             three seeds; the official side two seeds a call: SEEDS=3333 for the third);
#             the returned official.json and induce.json of every call make one table:
#             python bench/long_report.py CALL1/official.json CALL2/official.json ...
#
# From the repository root, the kit (bench/gpu_kit.sh with UDGN, BENEPAR, KIM, TNPCFG set)
# carried as .gpu:  run(command="bash bench/gpu_next.sh speed", carry=[".gpu"], timeout_s=600)
# Everything lands in $OUT (at most 8 files come back; each part says which).  After the
# call: the figures into bench/RESULTS.md, and the returned compile-cache.tar.gz files into
# the next kit (COMPILE_CACHE="a b" bash bench/gpu_kit.sh).  A dry run on a CPU (the graph
# sides fail there at once): OUT=/tmp/x NOENV=1 DEVICE=cpu SIZES=small SIZE=tiny EPOCHS=1
# STEPS=2 WARMUP=1 PARSE_SENTENCES=40 ...  The call exits 1 when a step failed or ran out
# of its time (the last line names them: NAME=EXIT, 124 for a timeout), 0 otherwise.
set -u
began=$SECONDS
calls="speed, tests, parse, profile, chart, lowrank or long-ARCH-SIDE (ARCH structformer|udgn, SIDE official|induce)"
case ${1:-} in  # checked before any lent time is spent on the kit
speed | tests | parse | profile | chart | lowrank | long-structformer-official | long-udgn-official | \
    long-structformer-induce | long-udgn-induce) call=$1 ;;
*)
    echo "gpu_next: which call? ${1:+not '$1': }one of $calls" >&2
    exit 2
    ;;
esac
scope=${COMPILE:-compile}  # the compiled sides' word: induce-bf16-$scope-graphs
case $scope in
compile | regions | layers) ;;
*)
    echo "gpu_next: COMPILE is compile, regions or layers, not '$scope'" >&2
    exit 2
    ;;
esac
if [ -z "${OUT:-}" ]; then
    echo "gpu_next: set OUT to the folder the device call returns" >&2
    exit 2
fi
out=$OUT
kit=${KIT:-.gpu}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
if [ -z "${NOENV:-}" ]; then . "$here/gpu_env.sh" "$kit" || exit 1; fi
total=${TOTAL:-560}  # seconds of the call's 600 this script may take, its start included
left() { echo $((total - (SECONDS - began) - ${1:-0})); }
sitting() {  # sitting FOLDER VAR=VALUE...: one bench/gpu_sitting.sh into $out/FOLDER
    local folder=$out/$1
    shift
    env "$@" bash "$here/gpu_sitting.sh" "$folder" "$kit/udgn" "$kit/shared"
}
speed=(PARTS=train STEPS="${STEPS:-20}" WARMUP="${WARMUP:-3}" ROUNDS=1)
log=$out/tests.log
# a CPU dry run (DEVICE=cpu SIZES=small) reaches the steps that time one script alone too;
# the profile replays CUDA graphs only on a GPU
device=${DEVICE:-cuda} size=${SIZES:-paper} graphs=--graphs
[ "$device" = cpu ] && graphs=
. "$here/gpu_step.sh"  # gpu_tests_left
case $call in
speed)  # 2 x (sitting.log, train.json, compile-cache.tar.gz) + tests.log
    sitting udgn "${speed[@]}" ARCHS=udgn TRAIN_LIMIT="${UDGN_LIMIT:-330}" \
        SIDES="official,induce-bf16-$scope-graphs,induce-$scope-graphs"
    # UDGN's BiLSTM alone in bf16, fp16 (PyTorch's autocast) and fp32, replayed from graphs
    step lstm-precision "${LSTM_LIMIT:-60}" python3 "$here/lstm_precision.py" --device "$device" \
        --size "$size" --shared "$kit/shared"
    limit=$(left 20)  # StructFormer's two sides in the rest (they need about 190 s)
    [ "$limit" -gt "${SF_LIMIT:-200}" ] && limit=${SF_LIMIT:-200}
    sitting structformer "${speed[@]}" ARCHS=structformer TRAIN_LIMIT="$limit" \
        SIDES="official,induce-$scope-graphs"
    gpu_tests_left "$(left 5)"
    ;;
tests)  # tests.log
    gpu_tests_left "$(left 5)"
    ;;
parse)  # sitting.log, parse.json
    sitting parse PARTS=parse PARSE_ROUNDS=2 PARSE_LIMIT="$(left 10)"
    ;;
profile)  # profile.log, compile-cache.tar.gz
    log=$out/profile.log
    for arch in udgn structformer; do  # half the time each (a cold compile: minutes)
        [ $arch = udgn ] && limit=$(($(left 20) / 2)) || limit=$(left 20)
        step "profile-$arch" "$limit" python3 "$here/profile_step.py" --arch $arch \
            --device "$device" --size "$size" --steps 4 --rows 30 --compile $graphs \
            --set train.bf16=true --set "train.compile_scope=${scope/#compile/model}"
    done
    keep_compile_cache "$out"
    ;;
chart)  # sitting.log, pcfg.json, chart.json, compile-cache.tar.gz
    sitting chart PARTS=none KIM="$kit/kim" PCFG_LIMIT=140 BENEPAR="$kit/benepar" \
        CHART_LIMIT="$(left 170)"
    ;;
lowrank)  # sitting.log, compile-cache.tar.gz
    sitting lowrank PARTS=none TNPCFG="$kit/tnpcfg" LOWRANK_SPEED_LIMIT="$(left 20)" \
        LOWRANK_ROUNDS=2
    ;;
long-*)  # long.log, official.json or induce.json, runs.tar.gz, compile-cache.tar.gz
    arch=${call#long-}
    side=${arch#*-}
    arch=${arch%-*}
    seeds=${SEEDS:-1111,2222,3333}
    [ "$side" = official ] && seeds=${SEEDS:-1111,2222}
    # the long step ends 40 s before the call (packing what comes back), its limit reckoned
    # when it starts, after the data, gold and smoke steps (bench/gpu_long_runs.sh's UNTIL)
    env ARCHS="$arch" SEEDS="$seeds" SIDES="$side" EPOCHS="${EPOCHS:-100}" TOTAL_S=0 \
        UNTIL=$(($(date +%s) + $(left 40))) bash "$here/gpu_long_runs.sh" "$out" "$kit/udgn" \
        "$kit/wsj"
    ;;
esac
# every step's end line ("-- NAME: exit RC", bench/gpu_step.sh) in the call's logs: a failed
# or cut-off step makes the call's exit status 1 and is named, where a device call's rc said
# nothing of its steps before
failed=$(grep -rhoE --include='*.log' -- '^-- [^:]+: exit [1-9][0-9]*' "$out" |
    sed -E 's/^-- //; s/: exit /=/' | tr '\n' ' ')
echo "gpu_next $call: $((SECONDS - began)) s${failed:+; failed: ${failed% }}"
[ -z "$failed" ]
