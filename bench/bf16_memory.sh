#!/usr/bin/env bash
# bf16_memory.sh -- what --precision bf16 costs in memory and time against fp32 on a graph
# whose activations dominate the process: peak RSS (the metrics' peak_rss_bytes), the planner's
# activation bytes (`fullgraph info --precision`), and the mean epoch after the first. Each
# repeat runs every binary x model x precision in turn (interleaved), so two builds (before and
# after a change) compare on the same load.
#
# usage: [FULLGRAPHS="old/fullgraph new/fullgraph"] [MODELS="gcn sage"] bench/bf16_memory.sh \
#            [REPEATS] [THREADS] [SCALE]
#   default 2 repeats, 2 threads, R-MAT scale 18 (edge factor 16), 128 random features,
#   32 classes, 3 layers of width 256, 4 epochs a run
# needs: built fullgraph binaries (default build/release/fullgraph)
set -euo pipefail
cd "$(dirname "$0")/.."
REPEATS=${1:-2}
THREADS=${2:-2}
SCALE=${3:-18}
read -r -a fgs <<< "${FULLGRAPHS:-build/release/fullgraph}"
read -r -a models <<< "${MODELS:-gcn sage}"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMP_NUM_THREADS=$THREADS
data=$T/rmat$SCALE.txt
"${fgs[0]}" generate rmat --scale "$SCALE" --edge-factor 16 --output "$data" > /dev/null
opts=(--layers 3 --hidden 256 --gen-features 128 --gen-classes 32)
run=(--epochs 4 --threads "$THREADS")
echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $THREADS threads; $(date -u +%F)"
for fg in "${fgs[@]}"; do echo "$fg: $("$fg" --version | tr '\n' ' ')"; done
echo "# binary | model | precision | repeat | peak RSS MB | planned activation MB (10^6 B) | epoch s"
for ((r = 0; r < REPEATS; r++)); do
  for fg in "${fgs[@]}"; do
    for model in "${models[@]}"; do
      for prec in fp32 bf16; do
        planned=$("$fg" info "$data" "${opts[@]}" --model "$model" --precision "$prec" 2>/dev/null |
                    sed -n 's/.*activations *\([0-9.][0-9.]*\) MB.*/\1/p' | head -1)
        "$fg" train "$data" "${opts[@]}" "${run[@]}" --model "$model" --precision "$prec" --quiet \
          --metrics "$T/m.jsonl" > /dev/null
        /usr/bin/python3 - "$T/m.jsonl" "$fg" "$model" "$prec" "$r" "${planned:-nan}" <<'PY'
import json, sys
path, fg, model, prec, rep, planned = sys.argv[1:]
eps = [json.loads(l) for l in open(path) if l.startswith('{"epoch"')]
rss = max(e["peak_rss_bytes"] for e in eps) / 2**20
tail = eps[1:] or eps
sec = sum(e["seconds"] for e in tail) / len(tail)
print(f"{fg} | {model} | {prec} | {rep} | {rss:.0f} | {float(planned):.0f} | {sec:.3f}")
PY
      done
    done
  done
done
