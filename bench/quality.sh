#!/usr/bin/env bash
# quality.sh -- test accuracy at the best-validation epoch of fullgraph's models against the same
# models in plain PyTorch (bench/torch_models.py), on the same files and the same split (each
# fullgraph run writes its split with --save-split; the PyTorch run reads it), over seeds
# 0..SEEDS-1. Prints one line per run and a mean ± std table (Markdown) at the end.
#
# usage: [MODELS="gcn sage gin"] bench/quality.sh [SEEDS] [THREADS] [NORM] [ONLY]
#   default 10 seeds, 2 threads, NORM none (--norm on both sides: none, layer, batch), and every
#   dataset (ONLY: those whose name starts with it, e.g. "cora (planetoid")
# needs: a built fullgraph (FULLGRAPH, else build/release, else build/ci), /usr/bin/python3 with python3-torch,
#        -numpy, -scipy (scripts/install-deps.sh --bench), ../shared/data/.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${1:-10}
THREADS=${2:-2}
NORM=${3:-none}
ONLY=${4:-}
FG=${FULLGRAPH:-build/release/fullgraph} # build it first: cmake --preset release && cmake --build build/release
[ -x "$FG" ] || FG=build/ci/fullgraph
SHARED=../shared/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMP_NUM_THREADS=$THREADS

# name | path | fullgraph's and the reference's options (the same meaning on both sides)
configs=(
  "cora (planetoid split)|data/cora|--normalize-features --hidden 16"
  "cora (gnn-benchmark .npz, random 60/20/20 split)|$SHARED/gnn_benchmark/cora.npz|--normalize-features --hidden 16"
  "chameleon (split 0)|$SHARED/heterophilous/chameleon.npz|--hidden 64"
)
read -r -a models <<< "${MODELS:-gcn sage gin}" # e.g. MODELS="gin" bench/quality.sh
echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $THREADS threads; $(date -u +%F)"
echo "fullgraph: $("$FG" --version); $(/usr/bin/python3 -c 'import torch; print("torch", torch.__version__)')"
results=$T/results.txt
: > "$results"
for cfg in "${configs[@]}"; do
  IFS='|' read -r name path opts <<< "$cfg"
  [ -z "$ONLY" ] || [[ $name == "$ONLY"* ]] || continue
  [ -e "$path" ] || { echo "skip $name: $path missing"; continue; }
  opts="$opts --norm $NORM"
  for model in "${models[@]}"; do
    label=$model
    [ "$NORM" = none ] || label="$model --norm $NORM"
    for ((seed = 0; seed < SEEDS; seed++)); do
      # shellcheck disable=SC2086
      fg=$("$FG" train "$path" --model "$model" --seed "$seed" --threads "$THREADS" --quiet \
             --save-split "$T/split.npy" $opts | sed -n 's/^test accuracy \([0-9.]*\) .*/\1/p')
      # shellcheck disable=SC2086
      pt=$(/usr/bin/python3 bench/torch_models.py "$path" --split "$T/split.npy" \
             --model "$model" --seed "$seed" --threads "$THREADS" $opts |
           /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["test_acc"])')
      echo "$name|$label|$seed|$fg|$pt" | tee -a "$results"
    done
  done
done
/usr/bin/python3 - "$results" <<'EOF'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    name, model, seed, fg, pt = line.strip().split("|")
    rows.setdefault((name, model), []).append((float(fg), float(pt)))
print("\n| dataset | model | fullgraph test acc | PyTorch test acc | difference / PyTorch's std |")
print("|---|---|---|---|---|")
for (name, model), v in rows.items():
    f = [a for a, _ in v]; p = [b for _, b in v]
    sf, sp = (st.stdev(f), st.stdev(p)) if len(v) > 1 else (0.0, 0.0)
    d = (st.mean(f) - st.mean(p)) / sp if sp > 0 else float("nan")
    print(f"| {name} | {model} | {100*st.mean(f):.1f} ± {100*sf:.1f} | "
          f"{100*st.mean(p):.1f} ± {100*sp:.1f} | {d:+.2f} |")
EOF
