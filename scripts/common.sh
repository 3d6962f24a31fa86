# Shared by the protocol scripts (sourced, not run).

# train_seed RUN PRESET DATA SEED [induce train options...]: a new run of PRESET, or the
# continuation of RUN where an earlier, interrupted call stopped.
train_seed() {
  local run=$1 preset=$2 data=$3 seed=$4
  shift 4
  if [ -f "$run/config.yaml" ]; then
    induce train --resume "$run" "$@"
  else
    induce train --config "$preset" --data "$data" --out "$run" --seed "$seed" "$@"
  fi
  mkdir -p "$run/eval"
}
