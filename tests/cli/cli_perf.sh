#!/usr/bin/env bash
# CLI of the single-process options: --mem-limit refusals and parsing, --reorder choices, the
# memory line of `fullgraph info` (with train's --reorder and --normalize-features).
# usage: cli_perf.sh FULLGRAPH DEMO_DATA
set -u
FG=$1 DEMO=$2
pass=0 fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/../expect.sh"

# (20M: Cora loads within it, --mem-limit bounding loading too; the run does not fit)
expect 1 "this run needs [0-9]+ bytes \(.*\) but --mem-limit is 20000000 \(20.0 MB\).*--hidden" \
  "$FG" train "$DEMO" --epochs 1 --mem-limit 20M
expect 1 "but --mem-limit is 20971520 " "$FG" train "$DEMO" --epochs 1 --mem-limit 20MiB
expect 0 "test accuracy" "$FG" train "$DEMO" --epochs 1 --quiet --mem-limit 8G
expect 0 "test accuracy" "$FG" train "$DEMO" --epochs 1 --quiet --mem-limit none
expect 2 "--mem-limit expects a positive size like 8G or 512MiB, or none, got '12x'" \
  "$FG" train "$DEMO" --epochs 1 --mem-limit 12x
expect 2 "--mem-limit expects a positive size" "$FG" train "$DEMO" --epochs 1 --mem-limit -5
expect 0 "test accuracy" "$FG" train "$DEMO" --epochs 2 --quiet --reorder rcm
expect 0 "test accuracy" "$FG" train "$DEMO" --epochs 2 --quiet --reorder degree
expect 2 "reorder" "$FG" train "$DEMO" --epochs 1 --reorder sideways
# auto is the default and says what it took: Cora's rows of X fit in any cache, so none
expect 0 "--reorder auto: none \(the 64-byte rows of X fit in a [0-9]+ MiB cache\)" \
  "$FG" train "$DEMO" --epochs 1
expect 0 '"reorder": "rcm"' sh -c "'$FG' train '$DEMO' --epochs 1 --quiet --reorder rcm --metrics '$tmp/m.json' && cat '$tmp/m.json'"
expect 0 "test accuracy" "$FG" train "$DEMO" --epochs 1 --quiet --reorder auto --scheme 1d
expect 2 "--scheme 3d does not take --reorder \(it is an option of: serial\)" \
  "$FG" train "$DEMO" --epochs 1 --reorder degree --scheme 3d
expect 0 "--reorder HOW" "$FG" train --help
expect 0 "--mem-limit BYTES" "$FG" train --help
expect 0 "memory +[0-9]+ bytes \([0-9.]+ MB\) to train on one process, GCN 1433 -> 16 -> 7" \
  "$FG" info "$DEMO"
expect 0 "GCN 1433 -> 64 -> 64 -> 7:" "$FG" info "$DEMO" --layers 3 --hidden 64
# the number info prints is the one train refuses with
need=$("$FG" info "$DEMO" --layers 3 --hidden 64 | sed -n 's/.*memory *\([0-9]*\) bytes.*/\1/p')
expect 1 "needs $need bytes" "$FG" train "$DEMO" --layers 3 --hidden 64 --mem-limit $((need - 1))
# bf16 too: its operand scratch counted, and the limit that refuses it lets fp32 run
need16=$("$FG" info "$DEMO" --layers 3 --hidden 64 --precision bf16 |
         sed -n 's/.*memory *\([0-9]*\) bytes (.*) to train on one process in bf16.*/\1/p')
expect 0 "^bf16 needs more$" sh -c "[ '${need16:-0}' -gt '$need' ] && echo 'bf16 needs more'"
expect 1 "needs $need16 bytes" "$FG" train "$DEMO" --layers 3 --hidden 64 --precision bf16 \
  --mem-limit $((need16 - 1))
expect 0 "test accuracy" "$FG" train "$DEMO" --layers 3 --hidden 64 --epochs 1 --quiet \
  --mem-limit $((need16 - 1))
expect 0 "test accuracy" "$FG" train "$DEMO" --layers 3 --hidden 64 --epochs 1 --quiet \
  --mem-limit "$need"
# info takes train's --reorder and --normalize-features for its memory line, and the number
# it prints is again the one train refuses with
for how in rcm degree auto; do
  need=$("$FG" info "$DEMO" --reorder $how | sed -n 's/.*memory *\([0-9]*\) bytes.*/\1/p')
  expect 1 "needs $need bytes" "$FG" train "$DEMO" --reorder $how --mem-limit $((need - 1))
done
plain=$("$FG" info "$DEMO" | sed -n 's/.*features and labels \([0-9.]*\) MB.*/\1/p')
copied=$("$FG" info "$DEMO" --normalize-features | sed -n 's/.*features and labels \([0-9.]*\) MB.*/\1/p')
expect 0 "copied" awk -v a="$plain" -v b="$copied" 'BEGIN { if (b > a + 10) print "copied"; else print "same: " a " " b }'
expect 2 "reorder" "$FG" info "$DEMO" --reorder sideways
expect 0 "--normalize-features" "$FG" info --help

echo "cli_perf: $pass passed, $fail failed"
[ "$fail" = 0 ]
