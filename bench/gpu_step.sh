# Sourced by bench/gpu_sitting.sh and bench/gpu_long_runs.sh (not run alone).
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
