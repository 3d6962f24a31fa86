# Sourced on a lent GPU machine, from the repository root, before bench/gpu_sitting.sh or
# bench/gpu_long_runs.sh:  . bench/gpu_env.sh [KIT]   (KIT: bench/gpu_kit.sh's, default .gpu)
# The kit's wheels go to /tmp/site (no network there: --no-index), induce is imported from
# the working tree, laid out as installed (its resources/ and cli/ beside the package).
kit=${1:-.gpu}
python3 -m pip install -q --no-index --no-deps --target /tmp/site "$kit"/whl/*.whl
export PYTHONPATH=/tmp/site:$PWD
ln -sfn ../resources induce/resources
ln -sfn ../cli induce/cli
python3 -c "import induce.cli.app, conllu, nltk, torch; print('induce importable; torch',
torch.__version__, 'CUDA', torch.cuda.is_available())"
