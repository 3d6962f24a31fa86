# Sourced on a lent GPU machine, from the repository root, before bench/gpu_sitting.sh or
# bench/gpu_long_runs.sh:  . bench/gpu_env.sh [KIT] && bash bench/gpu_sitting.sh ...
# (KIT: bench/gpu_kit.sh's, default .gpu).  The kit's wheels go to /tmp/site (no network
# there: --no-index), induce is imported from the working tree laid out as installed (its
# resources/ and cli/ beside the package).  Returns 1, having said why, when the kit is
# missing or induce does not import: a sitting must not spend lent time on import errors.
# torch.compile's cache goes to TORCHINDUCTOR_CACHE_DIR (default /tmp/induce-compile-cache),
# filled first from the kit's compile-cache*.tar.gz when earlier sittings left some
# (bench/gpu_step.sh's keep_compile_cache, bench/gpu_kit.sh's COMPILE_CACHE).
kit=${1:-.gpu}
if ! ls "$kit"/whl/*.whl >/dev/null 2>&1; then
    echo "gpu_env: no wheels in $kit/whl: pack the kit with bench/gpu_kit.sh and carry it" >&2
    return 1
fi
export TORCHINDUCTOR_CACHE_DIR=${TORCHINDUCTOR_CACHE_DIR:-/tmp/induce-compile-cache}
mkdir -p "$TORCHINDUCTOR_CACHE_DIR"
for cache in "$kit"/compile-cache*.tar.gz; do
    [ -f "$cache" ] || continue
    if tar -xzf "$cache" -C "$TORCHINDUCTOR_CACHE_DIR"; then  # it only saves time: go on
        echo "compile cache: $(find "$TORCHINDUCTOR_CACHE_DIR" -type f | wc -l) files after $cache"
    else
        echo "gpu_env: $cache did not unpack; compiling without it" >&2
    fi
done
touch "$TORCHINDUCTOR_CACHE_DIR/.kit-stamp"  # what is newer, keep_compile_cache packs
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$kit"/whl/*.whl || return 1
export PYTHONPATH=/tmp/site:$PWD
ln -sfn ../resources induce/resources
ln -sfn ../cli induce/cli
python3 -c "import induce.cli.app, conllu, nltk, torch; print('induce importable; torch',
torch.__version__, 'CUDA', torch.cuda.is_available())" || return 1
