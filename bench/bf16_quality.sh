#!/usr/bin/env bash
# bf16_quality.sh -- what --precision bf16 does to a model's result: the test accuracy at the
# best-validation epoch over seeds 0..SEEDS-1, fp32 and bf16 run after one another on the same
# seed (same split, same initial weights), with the mean epoch time and the peak RSS. Prints one
# line per run and a Markdown table (mean ± std, the mean of the per-seed differences).
#
# usage: [MODELS="gcn sage gin"] bench/bf16_quality.sh [SEEDS] [THREADS] [ONLY]
#   default 10 seeds, 2 threads, every dataset (ONLY: those whose name starts with it)
# needs: a built fullgraph (FULLGRAPH, else build/release, else build/ci), /usr/bin/python3 for
#        the table, ../shared/data/ for the datasets beyond the bundled Cora.
set -euo pipefail
cd "$(dirname "$0")/.."
SEEDS=${1:-10}
THREADS=${2:-2}
ONLY=${3:-}
FG=${FULLGRAPH:-build/release/fullgraph}
[ -x "$FG" ] || FG=build/ci/fullgraph
SHARED=../shared/data
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMP_NUM_THREADS=$THREADS

configs=(
  "cora (planetoid split)|data/cora|--normalize-features --hidden 16"
  "cora (gnn-benchmark .npz, 60/20/20)|$SHARED/gnn_benchmark/cora.npz|--normalize-features --hidden 16"
  "chameleon (split 0)|$SHARED/heterophilous/chameleon.npz|--hidden 64"
  "minesweeper (split 0)|$SHARED/heterophilous/minesweeper.npz|--hidden 64"
)
read -r -a models <<< "${MODELS:-gcn sage gin}"
echo "machine: $(getconf _NPROCESSORS_ONLN) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $THREADS threads; $(date -u +%F)"
echo "fullgraph: $("$FG" --version | tr '\n' ' ')"
results=$T/results.txt
: > "$results"
for cfg in "${configs[@]}"; do
  IFS='|' read -r name path opts <<< "$cfg"
  [ -z "$ONLY" ] || [[ $name == "$ONLY"* ]] || continue
  [ -e "$path" ] || { echo "skip $name: $path missing"; continue; }
  for model in "${models[@]}"; do
    for ((seed = 0; seed < SEEDS; seed++)); do
      for prec in fp32 bf16; do
        # shellcheck disable=SC2086
        acc=$("$FG" train "$path" --model "$model" --seed "$seed" --threads "$THREADS" --quiet \
                --precision "$prec" --metrics "$T/m.jsonl" $opts |
              sed -n 's/^test accuracy \([0-9.]*\) .*/\1/p')
        secs=$(grep -o '"seconds": [0-9.e-]*' "$T/m.jsonl" | tail -n +2 | awk '{s += $2; n++} END {printf "%.5f", s / n}')
        rss=$(grep -o '"peak_rss_bytes": [0-9][0-9]*' "$T/m.jsonl" | awk '{if ($2 > m) m = $2} END {print m}')
        echo "$name|$model|$seed|$prec|$acc|$secs|$rss" | tee -a "$results"
      done
    done
  done
done
/usr/bin/python3 - "$results" <<'PY'
import sys, statistics as st
rows = {}
for line in open(sys.argv[1]):
    name, model, seed, prec, acc, secs, rss = line.strip().split("|")
    r = rows.setdefault((name, model), {}).setdefault(prec, {})
    r[int(seed)] = (float(acc), float(secs), int(rss))
def ms(v):
    return f"{st.mean(v):.4f} ± {st.stdev(v) if len(v) > 1 else 0:.4f}"
print("\n| dataset | model | fp32 test acc | bf16 test acc | bf16 − fp32 (per seed) | epoch s fp32 / bf16 | peak RSS MB fp32 / bf16 |")
print("|---|---|---|---|---|---|---|")
for (name, model), r in rows.items():
    seeds = sorted(set(r.get("fp32", {})) & set(r.get("bf16", {})))
    if not seeds:
        continue
    f = [r["fp32"][s] for s in seeds]
    b = [r["bf16"][s] for s in seeds]
    d = [y[0] - x[0] for x, y in zip(f, b)]
    print(f"| {name} | {model} | {ms([x[0] for x in f])} | {ms([y[0] for y in b])} | "
          f"{st.mean(d):+.4f} ± {st.stdev(d) if len(d) > 1 else 0:.4f} | "
          f"{st.mean(x[1] for x in f):.4f} / {st.mean(y[1] for y in b):.4f} | "
          f"{max(x[2] for x in f) / 2**20:.0f} / {max(y[2] for y in b) / 2**20:.0f} |")
PY
