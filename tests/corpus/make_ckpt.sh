#!/bin/sh
# make_ckpt.sh FULLGRAPH -- regenerates tests/corpus/ckpt: small checkpoints written by the
# fullgraph program (the fuzz target fuzz_checkpoint's seeds; test_checkpoint reads each). A
# 32-node R-MAT graph with generated features and labels, one thread, fixed seeds, so the bytes
# are the same on every run of one build (the sharded seeds as well). The outputs are committed; run this only
# to change them:  sh tests/corpus/make_ckpt.sh build/ci/fullgraph
set -eu
fg=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
cd "$(dirname "$0")"
rm -rf ckpt && mkdir ckpt
export OMP_NUM_THREADS=1
graph=$(mktemp "${TMPDIR:-/tmp}/fg_ckpt_XXXXXX")
trap 'rm -f "$graph"' EXIT
"$fg" generate rmat --scale 5 --edge-factor 4 --seed 3 --output "$graph" > /dev/null
# name, then the model's options: every section and model field takes more than one value
while read -r name opts; do
  # shellcheck disable=SC2086
  "$fg" train "$graph" --quiet --epochs 2 --seed 7 --gen-features 4 --gen-classes 2 \
    --hidden 3 $opts --checkpoint "ckpt/$name.ckpt" > /dev/null
done <<'LIST'
gcn
sage_layer --model sage --norm layer --dropout 0.25 --normalize-features
gin_learn_residual --model gin --gin-eps learn --residual --layers 3 --weight-decay-layers all
gcn_batch_labelprop --norm batch --label-prop 0.5 --lr 0.05 --adj-norm mean
LIST
# a sharded checkpoint (3d on one rank, learned features): its manifest, and its weight and
# feature shard files as *.shard (fuzz_checkpoint checks those as shards)
"$fg" train "$graph" --quiet --epochs 2 --seed 7 --gen-features 4 --gen-classes 2 --hidden 3 \
  --scheme 3d --grid 1x1x1 --learn-features --checkpoint "$graph.d/" > /dev/null
cp "$graph.d/manifest" ckpt/sharded_manifest.ckpt
cp "$graph.d"/shard-0-of-1.g1.ckpt ckpt/sharded_weights.shard
cp "$graph.d"/features-0-of-1.g1.ckpt ckpt/sharded_features.shard
rm -r "$graph.d"
ls -l ckpt
