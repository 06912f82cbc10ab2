#!/usr/bin/env bash
# CLI tests: exit codes and messages of the fullgraph program.
# usage: cli_test.sh FULLGRAPH DEMO_DATA CORPUS MPIEXEC
set -u
FG=$1 DEMO=$2 CORPUS=$3 MPIEXEC=${4:-mpiexec}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. "$(dirname "$0")/../expect.sh"

expect 0 "^fullgraph [0-9]+\.[0-9]+" "$FG" --version
expect 0 "usage: fullgraph <command>" "$FG" --help
expect 2 "usage: fullgraph <command>" "$FG"
expect 2 "unknown command 'frobnicate'" "$FG" frobnicate
for sub in train info; do
  expect 0 "usage: fullgraph $sub DATA" "$FG" $sub --help
done
expect 0 "usage: fullgraph generate rmat" "$FG" generate --help
expect 0 "--normalize-features" "$FG" train --help
expect 2 "unknown option '--bogus'" "$FG" train "$DEMO" --bogus
expect 2 "--epochs expects an integer, got 'ten'" "$FG" train "$DEMO" --epochs ten
expect 2 "--lr expects a number" "$FG" train "$DEMO" --lr 1x
expect 2 "--lr needs a value" "$FG" train "$DEMO" --lr
expect 2 "missing argument" "$FG" train
expect 2 "unexpected argument 'extra'" "$FG" train "$DEMO" extra
expect 2 "--agg-order must be one of: auto first last" "$FG" train "$DEMO" --agg-order sideways
expect 1 "nope/missing: [Nn]o such file or directory" "$FG" train "$T/nope/missing"
expect 2 "--dropout must be in \[0, 1\)" "$FG" train "$DEMO" --dropout 1.5 --epochs 1
expect 2 "--layers must be in" "$FG" train "$DEMO" --layers 0 --epochs 1
expect 2 "--scale must be in 1..30" "$FG" generate rmat --scale 0 --output "$T/x.txt"
expect 2 "--output FILE is required" "$FG" generate rmat --scale 4
expect 2 "unknown generator 'er'" "$FG" generate er --scale 4 --output "$T/x.txt"

# a malformed file: the message names the file and the line
printf '0 1\n1 two\n' > "$T/bad.txt"
expect 1 "bad.txt.*line 2" "$FG" train "$T/bad.txt" --epochs 1
expect 1 "bad.txt.*line 2" "$FG" info "$T/bad.txt"
# a truncated gzip
seq 1 20000 | sed 's/.*/& 7/' | gzip -c > "$T/full.txt.gz"
head -c 2000 "$T/full.txt.gz" > "$T/trunc.txt.gz"
expect 1 "trunc.txt.gz" "$FG" info "$T/trunc.txt.gz"

# the layouts as they ship: a SciPy sparse .npz (a graph alone) and the Reddit pair, by folder or
# by either file; a broken one exits 1 naming the file, member and element
expect 0 "2708" "$FG" info "$CORPUS/scipy/cora_csc.npz"
expect 0 "2708" "$FG" info "$CORPUS/reddit/cora_f16"
expect 0 "best epoch [0-9]+: valid" "$FG" train "$CORPUS/reddit/cora/reddit_graph.npz" --epochs 2
expect 1 "index_range.npz\[indices.npy\]: element 4: column 5 out of range" "$FG" info \
  "$CORPUS/scipy/index_range.npz"
expect 1 "reddit_data.npz\[node_types.npy\]: element 2: node type 4" "$FG" train \
  "$CORPUS/reddit/bad_type" --epochs 1
expect 1 "no_graph: missing reddit_graph.npz" "$FG" info "$CORPUS/reddit/no_graph/reddit_data.npz"

# the demo data: info, a short training run with metrics, predictions and a checkpoint
expect 0 "2708" "$FG" info "$DEMO"
expect 0 "best epoch [0-9]+: valid" "$FG" train "$DEMO" --epochs 5 --metrics "$T/m.jsonl" \
  --save-predictions "$T/p.npy" --checkpoint "$T/c.ckpt" --normalize-features
expect 0 "\"final\": true" cat "$T/m.jsonl"
expect 0 "epoch    7" "$FG" train "$DEMO" --epochs 8 --resume "$T/c.ckpt" --normalize-features
expect 1 "checkpoint has 2 layers, the model has 3" "$FG" train "$DEMO" --epochs 8 --layers 3 --resume "$T/c.ckpt"
expect 0 "test accuracy 0\.[0-9]+ at best epoch" "$FG" train "$DEMO" --epochs 3 --quiet

# generate -> info -> train on a graph-only input (generated features, labels, split)
expect 0 "wrote R-MAT scale 8" "$FG" generate rmat --scale 8 --edge-factor 8 --output "$T/r.txt.gz"
expect 0 "256" "$FG" info "$T/r.txt.gz" --gen-features 16 --gen-classes 4
expect 0 "best epoch" "$FG" train "$T/r.txt.gz" --epochs 3 --gen-features 16 --gen-classes 4

# SNAP ids: the ids that occur, renumbered; --keep-ids; --save-ids writes the file ids
printf '# sparse ids\n40 7\n7 900\n900 40\n5 7\n' > "$T/sparse.txt"
expect 0 "nodes +4$" "$FG" info "$T/sparse.txt"
expect 0 "node ids +4 of the ids in \[0, 901\) occur" "$FG" info "$T/sparse.txt"
expect 0 "nodes +901$" "$FG" info "$T/sparse.txt" --keep-ids
expect 0 "best epoch" "$FG" train "$T/sparse.txt" --epochs 2 --gen-features 4 --gen-classes 2 \
  --train-frac 0.5 --valid-frac 0.25 --save-ids "$T/ids.npy" --save-predictions "$T/sp.npy"
# 128-byte header, then 5 7 40 900 as little-endian int64
expect 0 "^05000000000000000700000000000000280000000000000084030000" \
  sh -c "od -An -tx1 -v -j128 '$T/ids.npy' | tr -d ' \n'"
expect 0 "'<i8'.*\(4,\)" head -c 128 "$T/ids.npy"
expect 1 "--save-ids .*no_dir/ids.npy: directory .*no_dir: No such file" "$FG" train "$T/sparse.txt" --epochs 2 \
  --gen-features 4 --gen-classes 2 --save-ids "$T/no_dir/ids.npy"

# models: SAGE trains and names its operator; bad names are refused; a checkpoint of one model
# is refused by another, and by another operator; --save-split writes the split trained on
expect 0 "sage 1433 -> 16 -> 7, 46103 parameters, adjacency mean without self loops" \
  "$FG" train "$DEMO" --model sage --epochs 2 --checkpoint "$T/sage.ckpt"
expect 0 "gcn 1433 -> 16 -> 7, 23063 parameters, adjacency sum;" "$FG" train "$DEMO" --epochs 1 \
  --adj-norm sum
expect 2 "--model: no model 'gat' \(models: gcn, sage, gin\)" "$FG" train "$DEMO" --model gat
expect 2 "--adj-norm: no normalization 'row'" "$FG" train "$DEMO" --adj-norm row
expect 1 "the checkpoint is of a sage model, this run trains gcn" "$FG" train "$DEMO" \
  --epochs 3 --resume "$T/sage.ckpt"
expect 1 "aggregates with --adj-norm mean without self loops, this run with sym without self loops" \
  "$FG" train "$DEMO" --model sage --adj-norm sym --epochs 3 --resume "$T/sage.ckpt"
expect 0 "epoch    3" "$FG" train "$DEMO" --model sage --epochs 3 --resume "$T/sage.ckpt"
expect 1 "--learn-features: the sage model does not learn its input features" \
  "$FG" train "$DEMO" --model sage --scheme 3d --learn-features --epochs 1
expect 0 "best epoch" "$FG" train "$T/sparse.txt" --epochs 1 --gen-features 4 --gen-classes 2 \
  --train-frac 0.5 --valid-frac 0.25 --seed 3 --save-split "$T/split.npy"
expect 0 "'<i8'.*\(4,\)" head -c 128 "$T/split.npy"
expect 0 "^(0[0-2]|ff)(00|ff){7}(0[0-2]|ff)(00|ff){7}(0[0-2]|ff)(00|ff){7}(0[0-2]|ff)(00|ff){7}$" \
  sh -c "od -An -tx1 -v -j128 '$T/split.npy' | tr -d ' \n'"
expect 0 "sage 1433 -> 16 -> 7:" "$FG" info "$DEMO" --model sage
expect 0 "46135 parameters, adjacency mean without self loops, LayerNorm;" "$FG" train "$DEMO" \
  --model sage --norm layer --epochs 1
expect 0 "46167 parameters, adjacency mean without self loops, BatchNorm;" "$FG" train "$DEMO" \
  --model sage --norm batch --epochs 1 --checkpoint "$T/bn.ckpt"
expect 2 "--norm: no normalization 'batchy' \(none, layer, batch\)" "$FG" train "$DEMO" --norm batchy
expect 1 "the checkpoint's sage model has --norm none, this run layer" "$FG" train "$DEMO" \
  --model sage --norm layer --epochs 3 --resume "$T/sage.ckpt"
expect 1 "the checkpoint's sage model has --norm batch, this run layer" "$FG" train "$DEMO" \
  --model sage --norm layer --epochs 3 --resume "$T/bn.ckpt"
expect 0 "epoch    2" "$FG" train "$DEMO" --model sage --norm batch --epochs 3 --resume "$T/bn.ckpt"
# GIN: two Linears a layer, epsilon fixed or learned (2 more parameters), refused elsewhere
expect 0 "gin 1433 -> 16 -> 16 -> 7 -> 7, 23391 parameters, adjacency sum without self loops" \
  "$FG" train "$DEMO" --model gin --epochs 2 --checkpoint "$T/gin.ckpt"
expect 0 "23393 parameters" "$FG" train "$DEMO" --model gin --gin-eps learn --epochs 1
expect 1 "has --gin-eps 0, this run learn from 0" "$FG" train "$DEMO" --model gin \
  --gin-eps learn --epochs 3 --resume "$T/gin.ckpt"
expect 0 "epoch    3" "$FG" train "$DEMO" --model gin --epochs 3 --resume "$T/gin.ckpt"
expect 2 "--gin-eps applies to --model gin, not sage" "$FG" train "$DEMO" --model sage \
  --gin-eps 0.5
expect 2 "--gin-eps: 'often' is neither a number nor 'learn'" "$FG" train "$DEMO" --model gin \
  --gin-eps often
expect 1 "--learn-features: the gin model does not learn its input features" \
  "$FG" train "$DEMO" --model gin --scheme 3d --learn-features --epochs 1
expect 0 "gin 1433 -> 16 -> 7:" "$FG" info "$DEMO" --model gin

# --residual: layer 0's projection (1433 x 16) is 22928 parameters more; a checkpoint without
# residual connections is refused by a run with them
expect 0 "gcn 1433 -> 16 -> 7, 45991 parameters" "$FG" train "$DEMO" --residual --epochs 1
expect 1 "model is without residual connections, this run with" "$FG" train "$DEMO" \
  --model gin --residual --epochs 3 --resume "$T/gin.ckpt"
expect 1 "--learn-features with --residual" "$FG" train "$DEMO" --residual --scheme 3d \
  --learn-features --epochs 1

# the halo scheme's flags: bad values, and flags of other schemes refused, naming the owner
expect 2 "--aggregation must be pre, post or hybrid, got 'both'" "$FG" train "$DEMO" \
  --scheme halo --aggregation both --epochs 1
expect 2 "--quantize must be none, int8, int4 or int2, got 'int3'" "$FG" train "$DEMO" \
  --scheme halo --quantize int3 --epochs 1
expect 2 "--scheme serial does not take --quantize \(it is an option of: halo\)" "$FG" train \
  "$DEMO" --quantize int2 --epochs 1
expect 2 "--scheme 1d-sa does not take --aggregation \(it is an option of: halo\)" \
  "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --aggregation pre --epochs 1
# the default scheme of 2 ranks takes --order: the one-process memory count must not refuse it
expect 0 "layout: scheme 1d-sa, order random, 2 rank" "$MPIEXEC" -n 2 --oversubscribe "$FG" \
  train "$DEMO" --order random --epochs 1
expect 0 "halo exchange: pre aggregation, int2 rows" "$MPIEXEC" -n 2 --oversubscribe "$FG" \
  train "$DEMO" --scheme halo --aggregation pre --quantize int2 --epochs 2
expect 0 "hybrid / pre 0\.[0-9]+, hybrid / post" "$FG" info "$DEMO" --ranks 4 --scheme halo
expect 0 "of which [0-9]+ data \(int2 codes\) and [0-9]+ parameters" "$FG" info "$DEMO" \
  --ranks 3 --scheme halo --quantize int2

# label propagation: a rate outside (0, 1), a grid scheme, residual connections, and a resume
# of a model without the embedding are refused by name
expect 2 "--label-prop must be in \(0, 1\), got 1.5" "$FG" train "$DEMO" --label-prop 1.5 --epochs 1
expect 0 "best epoch" "$FG" train "$DEMO" --label-prop 0.5 --scheme 3d --epochs 2
expect 1 "--label-prop with --learn-features" "$FG" train "$DEMO" --label-prop 0.5 --scheme 3d \
  --learn-features --epochs 1
expect 1 "--label-prop with --residual" "$FG" train "$DEMO" --label-prop 0.5 --residual --epochs 1
expect 0 "best epoch" "$FG" train "$DEMO" --label-prop 0.5 --epochs 3 --checkpoint "$T/lp.ckpt"
expect 1 "model is with a label embedding \(--label-prop\), this run without" "$FG" train \
  "$DEMO" --epochs 4 --resume "$T/lp.ckpt"
expect 0 "best epoch" "$FG" train "$DEMO" --label-prop 0.5 --epochs 4 --resume "$T/lp.ckpt"

# under mpirun with one rank, and without it (above)
expect 0 "best epoch" "$MPIEXEC" -n 1 "$FG" train "$DEMO" --epochs 2
# 1.5d: an impossible replication names the valid ones; without --replicate the performance
# model picks c; only 1.5d takes --replicate
expect 2 "--replicate 2 on 1 process: c must divide P and be at most P / c.*valid here: 1" \
  "$FG" train "$DEMO" --scheme 1.5d --replicate 2 --epochs 1
expect 2 "--replicate 3 on 4 processes: .*valid here: 1, 2" "$MPIEXEC" -n 4 --oversubscribe \
  "$FG" train "$DEMO" --scheme 1.5d --replicate 3 --epochs 1
expect 2 "--scheme serial does not take --replicate \(it is an option of: 1.5d\)" "$FG" train \
  "$DEMO" --replicate 2 --epochs 1
expect 0 "performance model: 1.5d, --replicate 2" "$MPIEXEC" -n 4 --oversubscribe "$FG" train \
  "$DEMO" --scheme 1.5d --epochs 2
expect 1 "needs about .* \(1.5d --replicate 2: the busiest rank's share" "$MPIEXEC" -n 4 \
  --oversubscribe "$FG" train "$DEMO" --scheme 1.5d --replicate 2 --mem-limit 20M --epochs 1

echo "cli: $pass passed, $fail failed"
[ "$fail" = 0 ]
