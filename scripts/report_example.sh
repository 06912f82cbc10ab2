#!/usr/bin/env bash
# report_example.sh [FULLGRAPH] -- renders docs/report-example.png, the README's picture of
# `fullgraph report`: a real 4-rank run on Cora (50 epochs, the scheme chosen by the performance model, so that every section has data), drawn by the report and
# screenshot by headless Chromium. Run it again when the report or the metrics change.
set -euo pipefail
cd "$(dirname "$0")/.."
FG=$(realpath "${1:-build/release/fullgraph}")
ROOT=$PWD
. scripts/env.sh
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" # the page names the file as given: a short relative name
OMP_NUM_THREADS=1 mpirun -n 4 "$FG" train "$ROOT/data/cora" --scheme auto --epochs 50 --seed 1 \
  --metrics cora-p4.jsonl --quiet
"$FG" report cora-p4.jsonl --title "fullgraph report: Cora on 4 ranks, --scheme auto" \
  --output report.html
# the page down to its provenance: curves, time split, traffic per rank, prediction (< 200 KB)
chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1000,2170 \
  --screenshot="$T/report.png" "file://$T/report.html" > /dev/null 2>&1
cp "$T/report.png" "$ROOT/docs/report-example.png"
echo "wrote docs/report-example.png ($(stat -c %s "$ROOT/docs/report-example.png") bytes)"
