#!/usr/bin/env bash
# Packs, on this machine, what a lent GPU machine lacks for issue 32's sittings into one
# ignored folder, so that the first device call (minutes of lent time) runs instead of
# stopping at an import: the wheels its image has not (for its Python, PYVER, default 3.12),
# the official code of each side-by-side bench, and the shared data files they read.
#
#   bash bench/gpu_kit.sh [KIT]        # KIT: default .gpu (ignored by .gitignore)
#
# Checkouts, each optional (a missing one is skipped with a line saying so): UDGN
# (yikangshen/UDGN: models.py, layers.py, utils.py), BENEPAR (nikitakit/self-attentive-parser:
# src/), KIM (harvardnlp/compound-pcfg), TNPCFG (sustcsonglin/TN-PCFG).  SHARED: the shared
# folder (default ../shared).  COMPILE_CACHE: the compile-cache.tar.gz files earlier sittings
# returned (torch.compile's cache, bench/gpu_step.sh; several separated by spaces: each holds
# what its sitting added), merged into the kit's one for bench/gpu_env.sh (remove
# KIT/compile-cache.tar.gz to start afresh).
# Nothing of them is committed: KIT is ignored, and `run` carries it (`carry: [".gpu"]`, 64 MiB
# at most; this kit is about 13, the cache up to 16 more).  On the device, from the
# repository root:
#   . bench/gpu_env.sh .gpu &&
#   bash bench/gpu_sitting.sh $OUT .gpu/udgn .gpu/shared     # KIM=.gpu/kim TNPCFG=.gpu/tnpcfg
#                                                           # BENEPAR=.gpu/benepar
#   bash bench/gpu_long_runs.sh $OUT .gpu/udgn .gpu/wsj
set -euo pipefail
kit=${1:-.gpu}
shared=${SHARED:-../shared}
pyver=${PYVER:-3.12}
mkdir -p "$kit/whl"
# induce's dependencies the image lacked in the first sittings, and benepar's torch-struct
# (the image has torch, numpy, pandas, pyyaml, typer, rich and transformers)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version "$pyver" \
    --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 -d "$kit/whl" \
    conllu nltk ufal.chu_liu_edmonds torch-struct
copy() {  # copy NAME SOURCE DEST PATTERNS...: what of a checkout a bench imports
    local name=$1 source=$2 dest=$3
    shift 3
    if [ -z "$source" ] || [ ! -d "$source" ]; then
        echo "skipped $name: set ${name^^} to a checkout"
        return
    fi
    mkdir -p "$dest"
    dest=$(cd "$dest" && pwd)
    # shellcheck disable=SC2068  # the patterns expand inside the checkout
    (cd "$source" && cp -r --parents $@ "$dest")
    echo "$name: $(cd "$source" && git rev-parse --short HEAD 2>/dev/null || echo '?')"
}
copy udgn "${UDGN:-}" "$kit/udgn" models.py layers.py utils.py main.py
copy benepar "${BENEPAR:-}" "$kit/benepar" src
copy kim "${KIM:-}" "$kit/kim" '*.py'
if [ -n "${TNPCFG:-}" ] && [ -d "$TNPCFG" ]; then
    mkdir -p "$kit/tnpcfg"
    (cd "$TNPCFG" && git archive HEAD) | tar -x -C "$kit/tnpcfg"
    echo "tnpcfg: $(git -C "$TNPCFG" rev-parse --short HEAD)"
else
    echo "skipped tnpcfg: set TNPCFG to a checkout"
fi
# gpu_sitting.sh's SHARED layout (data/...) and gpu_long_runs.sh's flat WSJ folder
mkdir -p "$kit/shared/data/wsj" "$kit/shared/data/ptb-sample" "$kit/wsj"
# (writable copies of the read-only shared files, so that the kit can be packed again)
cp -r --no-preserve=mode "$shared/data/wsj/dev22.trees" "$kit/shared/data/wsj/"
cp -r --no-preserve=mode "$shared/data/ptb-sample/trees" "$kit/shared/data/ptb-sample/"
cp -r --no-preserve=mode "$shared"/data/wsj-raw/conll2000-wsj*.txt "$shared/data/wsj/dev22.trees" \
    "$kit/wsj/"
# the sample trees' words for the long runs' text (their Penn2Malt files: word, tag, head)
mkdir -p "$kit/wsj/sample"
cp --no-preserve=mode "$shared"/data/ptb-sample/dependencies/*.dp "$kit/wsj/sample/"
if [ -n "${COMPILE_CACHE:-}" ]; then  # merged with the kit's own into one, no entry twice
    merged=$(mktemp -d)
    for cache in "$kit/compile-cache.tar.gz" $COMPILE_CACHE; do
        [ -f "$cache" ] || continue
        tar -xzf "$cache" -C "$merged"
        echo "compile cache: $(du -h "$cache" | cut -f1) from $cache"
    done
    tar -czf "$kit/compile-cache.tar.gz.part" -C "$merged" .
    mv "$kit/compile-cache.tar.gz.part" "$kit/compile-cache.tar.gz"
    rm -rf "$merged"
    echo "compile cache merged: $(du -h "$kit/compile-cache.tar.gz" | cut -f1)"
fi
du -sh "$kit"
mib=$(du -sm "$kit" | cut -f1)
if [ "$mib" -gt 60 ]; then  # run carries 64 MiB with the working tree
    echo "gpu_kit: $kit is $mib MiB, over what a device call carries: remove" \
        "$kit/compile-cache.tar.gz (old compile caches)" >&2
    exit 2
fi
