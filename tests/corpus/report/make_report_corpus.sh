#!/usr/bin/env bash
# make_report_corpus.sh -- writes the metrics files `fullgraph report` is tested on (run in this
# folder; the files are committed). Epoch and final records have the trainer's exact form
# (src/train/trainer.c, write_metrics_epoch); run records and rank_bytes follow the issue-21
# contract (docs/architecture.md, "Metrics file"). The values are made up but deterministic.
set -euo pipefail
cd "$(dirname "$0")"

# epoch FIRST LAST SEED: epoch records FIRST..LAST; SEED varies the curves and times
epochs() {
  awk -v a="$1" -v z="$2" -v s="$3" 'BEGIN {
    for (e = a; e <= z; e++) {
      loss = 1.95 * exp(-0.11 * e * (1 + s / 10)) + 0.05 * s; vl = loss * 1.07 + 0.02
      tr = 1 - 0.8 * exp(-0.5 * e); va = 0.8 - 0.55 * exp(-0.4 * e) - 0.01 * s; te = va - 0.012
      sp = 0.0123 + 0.0004 * (e % 3) + 0.001 * s; ge = 0.0211 + 0.0002 * (e % 2)
      co = 0.0047 + 0.0001 * e; wa = 0.0021 * (1 + s); ot = 0.0035
      printf "{\"epoch\": %d, \"loss\": %.9g, \"train_acc\": %.6f, \"valid_acc\": %.6f, ", e, loss, tr, va
      printf "\"test_acc\": %.6f, \"valid_loss\": %.9g, \"seconds\": %.6f, ", te, vl, sp + ge + co + wa + ot
      printf "\"seconds_spmm\": %.6f, \"seconds_gemm\": %.6f, \"seconds_comm\": %.6f, ", sp, ge, co
      printf "\"seconds_wait\": %.6f, \"seconds_other\": %.6f, \"bytes_sent_max\": %.0f, ", wa, ot, 5200000
      printf "\"bytes_sent_mean\": %.1f, \"spmm_bytes\": %.0f, \"peak_rss_bytes\": %.0f, \"comm\": {", 2625000, 20179776, 61440000
      split("forward backward grads metrics", ph, " ")
      for (k = 1; k <= 4; k++) {
        printf "%s\"%s\": {", (k > 1 ? ", " : ""), ph[k]
        printf "\"bytes_sent_max\": %.0f, \"bytes_sent_mean\": %.1f, ", 1000 * k, 800 * k
        printf "\"bytes_recv_max\": %.0f, \"bytes_recv_mean\": %.1f, ", 1000 * k, 800 * k
        printf "\"msgs_sent_max\": %.0f, \"msgs_sent_mean\": %.1f, ", 3, 2.5
        printf "\"msgs_recv_max\": %.0f, \"msgs_recv_mean\": %.1f, ", 3, 2.5
        printf "\"param_bytes_sent_max\": %.0f, \"param_bytes_sent_mean\": %.1f, ", 0, 0
        printf "\"param_bytes_recv_max\": %.0f, \"param_bytes_recv_mean\": %.1f}", 0, 0
      }
      printf "}}\n"
    }
  }'
}

# run HIDDEN START PREDICTED(0/1): one run record line
run() {
  local pred=""
  [ "$3" = 1 ] && pred=', "predicted": {"seconds": 0.0412, "spmm_seconds": 0.0118, "gemm_seconds": 0.0190, "comm_seconds": 0.0071, "other_seconds": 0.0033}'
  printf '{"run": {"version": "0.1.0", "commit": "0123456789abcdef0123456789abcdef01234567", '
  printf '"dirty": false, "command": ["fullgraph", "train", "data/cora", "--scheme", "auto", '
  printf '"--hidden", "%s", "--metrics", "runs/it'"'"'s here/m.jsonl", "--title", "<b>&amp;\\"q\\"</b>"], ' "$1"
  printf '"options": {"epochs": 6, "layers": 2, "hidden": %s, "model": "gcn", "lr": 0.01, ' "$1"
  printf '"dropout": 0.5, "scheme": "1d-sa", "order": "natural", "seed": 42, '
  printf '"metrics": "runs/h%s.jsonl", "checkpoint": null}, ' "$1"
  printf '"ranks": 4, "threads": 1, "hosts": ["node1", "node2"], "blas": "Haswell", '
  printf '"dataset": {"path": "data/cora", "nodes": 2708, "edges": 13264, "features": 1433, '
  printf '"classes": 7, "fingerprint": "9f86d081884c7d65"}, "start_epoch": %s, ' "$2"
  printf '"started": "2026-11-26T03:40:00Z"%s}}\n' "$pred"
}

final() { # final EPOCHS RANK_BYTES(0/1)
  printf '{"final": true, "epochs": %s, "best_epoch": %s, "valid_acc": 0.780000, "test_acc": 0.768000, ' "$1" "$1"
  printf '"mean_epoch_seconds": 0.044000, "ranks": 4, "threads": 1, "scheme": "1d-sa", "reorder": "none"'
  if [ "$2" = 1 ]; then
    # rank 2 holds the hub nodes: it sends and receives about three times the others
    printf ', "rank_bytes": {"forward": {"sent": [1200000, 1150000, 3600000, 1250000], '
    printf '"recv": [1400000, 1300000, 3100000, 1350000]}, '
    printf '"backward": {"sent": [1200000, 1150000, 3600000, 1250000], '
    printf '"recv": [1400000, 1300000, 3100000, 1350000]}, '
    printf '"grads": {"sent": [92736, 92736, 92736, 92736], "recv": [92736, 92736, 92736, 92736]}, '
    printf '"metrics": {"sent": [96, 96, 96, 96], "recv": [96, 96, 96, 96]}}'
  fi
  printf '}\n'
}

# a planned 4-rank run with an imbalanced partition, and the same with another hidden width
{ run 16 0 1; epochs 1 6 0; final 6 1; } > four_rank.jsonl
{ run 64 0 1; epochs 1 6 2; final 6 1; } > four_rank_h64.jsonl
# stopped after epoch 3 and resumed: two run records, no prediction (not planned)
{ run 16 0 0; epochs 1 3 1; run 16 3 0; epochs 4 6 1; final 6 1; } > resumed.jsonl
# the format before run records and rank_bytes
{ epochs 1 4 3; printf '{"final": true, "epochs": 4, "best_epoch": 4, "valid_acc": 0.700000, "test_acc": 0.690000, "mean_epoch_seconds": 0.040000, "ranks": 1, "threads": 2, "scheme": "serial", "reorder": "none"}\n'; } > old.jsonl

# broken files: each refused with file:line[:column] and what is wrong
: > empty.jsonl
{ run 16 0 0; final 6 0; } > no_epochs.jsonl
{ epochs 1 2 0; printf '{"epoch": 3, "loss": 1.5,}\n'; } > bad_comma.jsonl
{ epochs 1 1 0; printf '{"epoch": "2", "loss": 1.5}\n'; } > bad_epoch.jsonl
{ epochs 1 1 0; printf '{"epoch": 2, "loss": "low"}\n'; } > bad_type.jsonl
{ epochs 1 1 0; printf '{"epoch": 2, "loss": NaN}\n'; } > bad_nan.jsonl
{ epochs 1 1 0; printf '[1, 2]\n'; } > bad_array.jsonl
{ epochs 1 1 0; printf '{"epoch": 2, "loss": 1.5, "loss": 1.4}\n'; } > bad_dupkey.jsonl
{ epochs 1 1 0; printf '{"epoch": 2, "note": "a\\qb"}\n'; } > bad_escape.jsonl
{ epochs 1 1 0; printf '{"epoch": 2, "note": "cut\xff"}\n'; } > bad_utf8.jsonl
{ epochs 1 1 0; printf '{"epoch": 2, "x": %s1%s}\n' "$(printf '[%.0s' $(seq 100))" "$(printf ']%.0s' $(seq 100))"; } > bad_deep.jsonl
{ epochs 1 2 0; epochs 3 3 0 | head -c 120; } > bad_truncated.jsonl
# values next to zero (subnormal): the axis must still get numbered ticks (fuzz_report's find)
printf '%s\n' '{"epoch": 1, "loss": -5e-324, "seconds": 0.0}' \
  '{"epoch": 2, "loss": 0, "seconds": 5e-324}' > tiny_values.jsonl
