#!/bin/bash
# multilabel_cli.sh FULLGRAPH CORPUS -- --task and --metric from the command line: the refusals
# (exit 2, naming why: before loading for a bad name, after loading for what the data does not
# allow), a multi-label run's lines and metrics file, `info` on multi-label targets.
fg=$1
corpus=$2
dir=$(mktemp -d "${TMPDIR:-/tmp}/fg_mlcli_XXXXXX") || exit 1
trap 'rm -rf "$dir"' EXIT
fails=0
ml=$corpus/ogb/ml_ok     # 6 nodes, 3 tasks
one=$corpus/ogb/ok       # 6 nodes, 3 classes

# expect WHAT STATUS NEEDLE ARGS...: exit status STATUS and NEEDLE in stdout + stderr
expect() {
  what=$1 want=$2 needle=$3
  shift 3
  timeout 60 "$fg" "$@" >"$dir/out" 2>&1
  rc=$?
  if [ $rc -ne "$want" ]; then
    echo "FAIL: $what: exit $rc, expected $want:"
    cat "$dir/out"
    fails=$((fails + 1))
  elif ! grep -qF -- "$needle" "$dir/out"; then
    echo "FAIL: $what: output lacks '$needle':"
    cat "$dir/out"
    fails=$((fails + 1))
  else
    echo "ok: $what (exit $rc)"
  fi
}

expect "an unknown task" 2 "--task must be multiclass (one class per node, softmax cross-entropy) or multilabel" \
  train "$ml" --epochs 1 --task binary
expect "an unknown metric" 2 "--metric must be accuracy, rocauc or f1-micro, got 'auc'" \
  train "$ml" --epochs 1 --metric auc
expect "multiclass of multi-label data" 2 \
  "--task multiclass: $ml has multi-label targets (3 tasks: several label columns of 0/1), not one class per node; use --task multilabel" \
  train "$ml" --epochs 1 --task multiclass
expect "multilabel of one class per node" 2 \
  "--task multilabel: $one has one class per node (3 classes), not multi-label targets" \
  train "$one" --epochs 1 --task multilabel
expect "rocauc of 3 classes" 2 \
  "--metric rocauc: $one has 3 classes; multiclass ROC-AUC is defined for 2 classes only" \
  train "$one" --epochs 1 --metric rocauc
expect "label propagation with multi-label targets" 2 \
  "--label-prop with multi-label targets ($ml): the label embedding takes one class per node" \
  train "$ml" --epochs 1 --label-prop 0.5
expect "a malformed multi-label file" 1 \
  "raw/node-label.csv: line 2, column 2: target '2' is not 0 or 1" \
  train "$corpus/ogb/ml_value_two" --epochs 1

# a run: the task line, the metric in the final line, the metrics file's records
expect "multi-label training" 0 \
  "task multilabel: 3 tasks, sigmoid binary cross-entropy over 5/5/5 (node, task) pairs; metric rocauc" \
  train "$ml" --epochs 3 --hidden 4 --metrics "$dir/m.jsonl"
grep -q "best epoch [0-9]*: valid rocauc [0-9.]*  test rocauc" "$dir/out" ||
  { echo "FAIL: no rocauc in the final line"; fails=$((fails + 1)); }
grep -q '"task": "multilabel", "metric": "rocauc"' "$dir/m.jsonl" &&
  head -1 "$dir/m.jsonl" | grep -q '"task": "multilabel", "metric": "rocauc"' &&
  tail -1 "$dir/m.jsonl" | grep -q '"test_acc": [0-9.]*, "task": "multilabel", "metric": "rocauc", ' ||
  { echo "FAIL: the metrics file lacks the task and metric:"; cat "$dir/m.jsonl"; fails=$((fails + 1)); }
expect "--quiet names the metric" 0 "test f1-micro " \
  train "$ml" --epochs 2 --quiet --metric f1-micro
# today's runs: the final record as it was, the run record naming multiclass accuracy
expect "multiclass training" 0 "best epoch" train "$one" --epochs 2 --metrics "$dir/c.jsonl"
if tail -1 "$dir/c.jsonl" | grep -q '"metric"' ||
  ! head -1 "$dir/c.jsonl" | grep -q '"task": "multiclass", "metric": "accuracy"'; then
  echo "FAIL: a multiclass run's records:"
  cat "$dir/c.jsonl"
  fails=$((fails + 1))
fi
expect "info on multi-label targets" 0 "tasks        3 binary tasks (multi-label targets: --task multilabel)" \
  info "$ml"
grep -qF "positive rate per task min 0.4000 (task 1), mean 0.5333, max 0.6000 (task 0)" "$dir/out" ||
  { echo "FAIL: info lacks the positive rates"; fails=$((fails + 1)); }

[ $fails -eq 0 ] || exit 1
echo "multilabel_cli: all expectations met"
