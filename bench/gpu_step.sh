# Sourced by bench/gpu_sitting.sh and bench/gpu_long_runs.sh (not run alone); both write to
# "$log".
# step NAME LIMIT COMMAND...: run COMMAND for at most LIMIT seconds, its output appended to
# "$log" between a start and an end line; returns its exit code (a lent GPU's sitting goes
# on whatever one step's end, so the callers do not `set -e`).
step() {
    local name=$1 limit=$2
    shift 2
    echo "== $name (started $(date -u +%T), limit ${limit}s): $*" >>"$log"
    local began=$SECONDS
    timeout "$limit" "$@" >>"$log" 2>&1
    local rc=$?
    echo "-- $name: exit $rc after $((SECONDS - began))s" >>"$log"
    return $rc
}

# keep_compile_cache OUT: torch.compile's on-disk cache (TORCHINDUCTOR_CACHE_DIR, which
# bench/gpu_env.sh sets and fills from the kit) packed as OUT/compile-cache.tar.gz, so that the
# next sitting's kit can bring it back (bench/gpu_kit.sh, COMPILE_CACHE): a compiled side then
# skips inductor's code generation and Triton's compilation (on a CPU, StructFormer and UDGN
# small, a side each: 108 s cold, 32 s with the cache, 8 s uncompiled; bench/RESULTS.md).
# The cache's entries are keyed by what they were compiled from (graph, shapes' kinds,
# torch, Triton, device), so one from another machine kind is only missed.  Skipped, saying
# why, when there is none or it would not come back from the lent machine (at most 16 MiB a
# file).
keep_compile_cache() {
    local out=$1 cache=${TORCHINDUCTOR_CACHE_DIR:-}
    local packed=$out/compile-cache.tar.gz limit=$((16 * 1024 * 1024)) list bytes
    if [ -z "$cache" ] || [ ! -d "$cache" ]; then
        echo "compile cache: none to keep" >>"$log"
        return 0
    fi
    list=$(mktemp)
    # what this sitting added: files newer than bench/gpu_env.sh's stamp (the kit's own
    # entries keep their packed times), so the caches do not grow from sitting to sitting
    (cd "$cache" && if [ -f .kit-stamp ]; then find . -type f -newer .kit-stamp; else
        find . -type f; fi) | grep -v -e '^\./locks/' -e '^\./\.kit-stamp$' >"$list"
    if [ ! -s "$list" ]; then
        echo "compile cache: nothing new to keep" >>"$log"
        rm -f "$list"
        return 0
    fi
    _pack_cache "$cache" "$list" "$packed"
    bytes=$(stat -c %s "$packed" 2>/dev/null || echo 0)
    if [ "$bytes" -gt "$limit" ]; then  # Triton's own folder: inductor's entries bundle it
        echo "compile cache: $bytes bytes packed; again without triton/" >>"$log"
        grep -v '^\./triton/' "$list" >"$list.small"
        mv "$list.small" "$list"
        _pack_cache "$cache" "$list" "$packed"
        bytes=$(stat -c %s "$packed" 2>/dev/null || echo 0)
    fi
    rm -f "$list"
    if [ "$bytes" -gt "$limit" ]; then
        rm -f "$packed"
        echo "compile cache: $bytes bytes, over the 16 MiB a lent machine returns: dropped" >>"$log"
    elif [ "$bytes" -gt 0 ]; then
        echo "compile cache: $bytes bytes in $packed" >>"$log"
    fi
}

_pack_cache() {  # _pack_cache CACHE LIST PACKED: no half-written archive is left
    if ! tar -czf "$2.tar.gz" -C "$1" -T "$2" 2>>"$log"; then
        echo "compile cache: packing failed; none kept" >>"$log"
        rm -f "$2.tar.gz" "$3"
        return 0
    fi
    mv "$2.tar.gz" "$3"
}

# gpu_tests_left LEFT: tests/gpu for at most LEFT seconds as a step of "$log" (skipped, with
# a line, under 30 s); -v, so that a run cut off keeps the names of the tests it passed.
gpu_tests_left() {
    local left=$1
    if [ "$left" -le 30 ]; then
        echo "-- tests: not run, ${left}s left" >>"$log"
        return 0
    fi
    step tests "$left" python3 -m pytest -v -p no:cacheprovider -rs tests/gpu
}
