#!/usr/bin/env bash
# What is left of issue 32 on a lent GPU, as device calls ready to run (a lease of 15 minutes
# holds about one full call of 600 s and a short one; the order is the order of need):
#
#   speed     the targets still open: UDGN bf16 compiled (5x) and fp32 compiled for both
#             models (2x), each against the official code in the same call; then tests/gpu
#             in what is left of TOTAL (default 570 s)
#   tests     tests/gpu alone (its compiled tests compile cold: minutes)
#   chart     the C-PCFG against Kim et al.'s code (step 5 of bench/gpu_sitting.sh), then
#             the chart parser against benepar (step 7)
#   lowrank   the TN-PCFG and Simple PCFGs against their repository (step 6)
#   long-ARCH-SIDE  a long run: ARCH structformer|udgn, SIDE official|induce (100 epochs,
#             three seeds; the official side two seeds a call: SEEDS=3333 for the third)
#
# From the repository root, the kit (bench/gpu_kit.sh with UDGN, BENEPAR, KIM, TNPCFG set)
# carried as .gpu:  run(command="bash bench/gpu_next.sh speed", carry=[".gpu"], timeout_s=600)
# Everything lands in $OUT (at most 8 files come back; each part says which).  After the
# call: the figures into bench/RESULTS.md, and the returned compile-cache.tar.gz files into
# the next kit (COMPILE_CACHE="a b" bash bench/gpu_kit.sh).  A dry run on a CPU (the graph
# sides fail there at once): OUT=/tmp/x NOENV=1 DEVICE=cpu SIZES=small SIZE=tiny EPOCHS=1 ...
set -u
call=${1:?speed, tests, chart, lowrank or long-ARCH-SIDE}
out=${OUT:?the folder of the device call ($OUT)}
kit=${KIT:-.gpu}
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "${NOENV:-}" ]; then . "$here/gpu_env.sh" "$kit" || exit 1; fi
began=$SECONDS
sitting() {  # sitting FOLDER VAR=VALUE...: one bench/gpu_sitting.sh into $out/FOLDER
    local folder=$out/$1
    shift
    env "$@" bash "$here/gpu_sitting.sh" "$folder" "$kit/udgn" "$kit/shared"
}
tests_in_time_left() {
    local left=$((${TOTAL:-570} - (SECONDS - began)))
    echo "tests: ${left}s left" >"$out/tests.log"
    [ "$left" -gt 30 ] || return 0
    timeout "$left" python3 -m pytest -v -p no:cacheprovider -rs tests/gpu >>"$out/tests.log" 2>&1
    echo "tests: exit $?" >>"$out/tests.log"
}
speed=(PARTS=train STEPS=20 WARMUP=3 ROUNDS=1)
case $call in
speed)  # 2 x (sitting.log, train.json, compile-cache.tar.gz) + tests.log
    sitting udgn "${speed[@]}" ARCHS=udgn TRAIN_LIMIT="${UDGN_LIMIT:-380}" \
        SIDES=official,induce-bf16-compile-graphs,induce-compile-graphs
    sitting structformer "${speed[@]}" ARCHS=structformer TRAIN_LIMIT="${SF_LIMIT:-190}" \
        SIDES=official,induce-compile-graphs
    tests_in_time_left
    ;;
tests)  # tests.log
    TOTAL=${TOTAL:-590} tests_in_time_left
    ;;
chart)  # sitting.log, chart.json, pcfg.json, compile-cache.tar.gz
    sitting chart PARTS=none BENEPAR="$kit/benepar" KIM="$kit/kim" CHART_LIMIT=400 \
        PCFG_LIMIT=150
    ;;
lowrank)  # sitting.log, compile-cache.tar.gz
    sitting lowrank PARTS=none TNPCFG="$kit/tnpcfg" LOWRANK_SPEED_LIMIT=300 \
        LOWRANK_ROUNDS=2
    ;;
long-structformer-official | long-udgn-official | long-structformer-induce | long-udgn-induce)
    # long.log, official.json or induce.json, runs.tar.gz, compile-cache.tar.gz
    arch=${call#long-}
    side=${arch#*-}
    arch=${arch%-*}
    if [ "$side" = official ]; then
        seeds=${SEEDS:-1111,2222} limits=(OFFICIAL_S=520 OFFICIAL_LIMIT=560)
    else
        seeds=${SEEDS:-1111,2222,3333} limits=(INDUCE_LIMIT=560)
    fi
    env ARCHS="$arch" SEEDS="$seeds" SIDES="$side" EPOCHS="${EPOCHS:-100}" TOTAL_S=0 \
        "${limits[@]}" bash "$here/gpu_long_runs.sh" "$out" "$kit/udgn" "$kit/wsj"
    ;;
*)
    echo "gpu_next: no call '$call' (speed, tests, chart, lowrank, long-ARCH-SIDE)" >&2
    exit 2
    ;;
esac
echo "gpu_next $call: $((SECONDS - began)) s"
