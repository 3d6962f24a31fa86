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
# skips inductor's code generation and Triton's compilation (on a CPU, StructFormer small: 71 s
# cold, 31 s with the cache, 8 s uncompiled).  The cache's entries are keyed by what they were
# compiled from (graph, shapes' kinds, torch, Triton, device), so one from another machine
# kind is only missed.  Skipped, saying why, when there is none or it would not come back from
# the lent machine (at most 16 MiB a file).
keep_compile_cache() {
    local out=$1 cache=${TORCHINDUCTOR_CACHE_DIR:-}
    if [ -z "$cache" ] || [ -z "$(ls -A "$cache" 2>/dev/null)" ]; then
        echo "compile cache: none to keep" >>"$log"
        return 0
    fi
    local packed=$out/compile-cache.tar.gz bytes limit=$((16 * 1024 * 1024))
    tar -czf "$packed" --exclude=./locks -C "$cache" . 2>>"$log"
    bytes=$(stat -c %s "$packed" 2>/dev/null || echo 0)
    if [ "$bytes" -gt "$limit" ]; then  # Triton's own folder: inductor's entries bundle it
        echo "compile cache: $bytes bytes packed; again without triton/" >>"$log"
        tar -czf "$packed" --exclude=./locks --exclude=./triton -C "$cache" . 2>>"$log"
        bytes=$(stat -c %s "$packed" 2>/dev/null || echo 0)
    fi
    if [ "$bytes" -gt "$limit" ]; then
        rm -f "$packed"
        echo "compile cache: $bytes bytes, over the 16 MiB a lent machine returns: dropped" >>"$log"
    else
        echo "compile cache: $bytes bytes in $packed" >>"$log"
    fi
}
