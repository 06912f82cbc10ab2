#!/usr/bin/env bash
# report_test.sh FULLGRAPH CORPUS DEMO_DATA PNG_COLORS [MPIEXEC] -- `fullgraph report`:
#  - refusals: a missing file, malformed lines (file:line:column named), an empty file, no
#    epochs, bad flags, outputs that cannot be written (exit codes, messages, nothing left behind);
#  - the page is well-formed XML and each of its SVGs passes xmllint on its own;
#  - every plotted value (the data-* attributes) equals the metrics file's, for every epoch,
#    series, rank and phase, and nothing else is plotted: the fixtures of tests/corpus/report (a
#    planned 4-rank run with an imbalanced partition, another hidden width, a resumed run, the old
#    format) and a metrics file the trainer writes now;
#  - headless Chromium renders the page to a PNG that is not blank (tests/cli/png_colors.c);
#    skipped (77) when chromium is not installed, after everything else has run.
set -u
FG=$1 CORPUS=$2/report DEMO=$3 PNGC=$4 MPIEXEC=${5:-mpiexec}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0
. "$(dirname "$0")/../expect.sh"
check() {
  local what=$1; shift
  if "$@"; then pass=$((pass + 1)); else echo "FAIL: $what"; fail=$((fail + 1)); fi
}
command -v xmllint > /dev/null || { echo "FAIL: xmllint is not installed (libxml2-utils)"; exit 1; }
cd "$T" || exit 1

# ---- refusals --------------------------------------------------------------------------------
R=("$FG" report)
expect 1 "nope.jsonl: cannot open: No such file or directory" "${R[@]}" nope.jsonl --output o.html
expect 1 "empty.jsonl: no epoch records \(the file is empty\)" "${R[@]}" "$CORPUS/empty.jsonl" --output o.html
expect 1 "no_epochs.jsonl: no epoch records \(nothing to plot\)" "${R[@]}" "$CORPUS/no_epochs.jsonl" --output o.html
expect 1 "bad_comma.jsonl:3:26: a trailing comma before '}'" "${R[@]}" "$CORPUS/bad_comma.jsonl" --output o.html
expect 1 "bad_epoch.jsonl:2: \"epoch\" must be a whole number" "${R[@]}" "$CORPUS/bad_epoch.jsonl" --output o.html
expect 1 "bad_type.jsonl:2: \"loss\" must be a number or null, found a string" "${R[@]}" "$CORPUS/bad_type.jsonl" --output o.html
expect 1 "bad_nan.jsonl:2:22: expected a value, found 'N'" "${R[@]}" "$CORPUS/bad_nan.jsonl" --output o.html
expect 1 "bad_array.jsonl:2:1: a record must be a JSON object, found an array" "${R[@]}" "$CORPUS/bad_array.jsonl" --output o.html
expect 1 "bad_dupkey.jsonl:2:27: the key \"loss\" appears twice" "${R[@]}" "$CORPUS/bad_dupkey.jsonl" --output o.html
expect 1 "bad_escape.jsonl:2:24: an unknown escape .q in a string" "${R[@]}" "$CORPUS/bad_escape.jsonl" --output o.html
expect 1 "bad_utf8.jsonl:2:26: bytes that are not valid UTF-8" "${R[@]}" "$CORPUS/bad_utf8.jsonl" --output o.html
expect 1 "bad_deep.jsonl:2:82: nested deeper than 64" "${R[@]}" "$CORPUS/bad_deep.jsonl" --output o.html
expect 1 "bad_truncated.jsonl:3:121: expected ',' or '}' in an object, found the end of the line" \
  "${R[@]}" "$CORPUS/bad_truncated.jsonl" --output o.html
# the one bad file among good ones is named
expect 1 "bad_comma.jsonl:3:26" "${R[@]}" "$CORPUS/four_rank.jsonl" "$CORPUS/bad_comma.jsonl" --output o.html
expect 2 "unknown option '--bogus'" "${R[@]}" "$CORPUS/four_rank.jsonl" --output o.html --bogus
expect 2 "--output FILE is required" "${R[@]}" "$CORPUS/four_rank.jsonl"
expect 2 "missing argument; usage: fullgraph report" "${R[@]}" --output o.html
expect 2 "--output: the path is empty" "${R[@]}" "$CORPUS/four_rank.jsonl" --output ""
expect 1 "nodir/o.html: cannot create: No such file or directory" "${R[@]}" "$CORPUS/four_rank.jsonl" --output nodir/o.html
mkdir d
expect 1 "d: is a directory, not a file" "${R[@]}" "$CORPUS/four_rank.jsonl" --output d
cp "$CORPUS/four_rank.jsonl" same.jsonl
expect 2 "--output same.jsonl is one of the metrics files" "${R[@]}" same.jsonl --output same.jsonl
check "the metrics file kept" cmp -s same.jsonl "$CORPUS/four_rank.jsonl"
check "no output and no temporary file after the refusals" \
  test -z "$(ls -A | grep -v -x -e d -e same.jsonl)$(ls -A d)"
# values too close to zero to step through (subnormal: fuzz_report found -5e-324 gave NaN ticks)
expect 0 "wrote tiny.html" "${R[@]}" "$CORPUS/tiny_values.jsonl" --output tiny.html
check "tiny values: every tick a number" eval '! grep -Eq ">-?(nan|inf)<|=\"-?(nan|inf)\"" tiny.html'
rm -f tiny.html
expect 0 "usage: fullgraph report METRICS.jsonl" "${R[@]}" --help
expect 0 "report M.jsonl" "$FG" --help

# ---- the plotted values against the files ---------------------------------------------------
# expected FILE RUN: "run series x y" for every value the page must plot from FILE
expected() {
  awk -v run="$2" '
    function num(key,   m) {   # the value of "key": in this line, or "" when absent or null
      if (!match($0, "\"" key "\": [-0-9.eE+]+")) return ""
      m = substr($0, RSTART, RLENGTH); sub(/^[^:]*: /, "", m); return m
    }
    function arr(s, phase, dir,   m) {  # the array of phase.dir in rank_bytes
      if (!match(s, "\"" phase "\": \\{\"sent\": \\[[^]]*\\], \"recv\": \\[[^]]*\\]")) return ""
      m = substr(s, RSTART, RLENGTH)
      if (dir == "recv") sub(/.*"recv": \[/, "", m); else { sub(/.*"sent": \[/, "", m); sub(/\].*/, "", m) }
      sub(/\].*/, "", m); return m
    }
    /^\{"run": / {
      nseg++; first[nseg] = nep + 1
      pred[nseg] = ""
      if (match($0, /"predicted": \{[^}]*\}/)) pred[nseg] = substr($0, RSTART, RLENGTH)
      next
    }
    /^\{"final": true/ {
      if (match($0, /"rank_bytes": .*/)) {
        rb = substr($0, RSTART, RLENGTH)
        split("forward backward grads metrics", ph, " ")
        for (k = 1; k <= 4; k++) for (d = 0; d < 2; d++) {
          dir = d ? "recv" : "sent"; n = split(arr(rb, ph[k], dir), v, ", ")
          for (r = 1; r <= n; r++) print run, ph[k] "." dir, r - 1, v[r]
        }
      }
      next
    }
    /^\{"epoch": / {
      nep++; e = num("epoch"); seg[nep] = nseg
      ns = split("loss valid_loss train_acc valid_acc test_acc seconds_spmm seconds_gemm seconds_comm seconds_wait seconds_other", S, " ")
      for (k = 1; k <= ns; k++) { x = num(S[k]); if (x != "") print run, S[k], e, x }
      split("seconds seconds_spmm seconds_gemm seconds_comm seconds_wait seconds_other", M, " ")
      for (k = 1; k <= 6; k++) val[nep, k] = num(M[k])
    }
    END {
      # per planned run record: the prediction, and the means after the first two epochs
      split("seconds spmm_seconds gemm_seconds comm_seconds other_seconds", P, " ")
      for (s = 1; s <= nseg; s++) {
        if (pred[s] == "") continue
        last = s < nseg ? first[s + 1] - 1 : nep; a = first[s]; if (last - a + 1 > 2) a += 2
        for (k = 1; k <= 6; k++) { sum[k] = 0 }
        for (e = a; e <= last; e++) for (k = 1; k <= 6; k++) sum[k] += val[e, k]
        cnt = last - a + 1
        mean[0] = sum[1] / cnt; mean[1] = sum[2] / cnt; mean[2] = sum[3] / cnt
        mean[3] = (sum[4] + sum[5]) / cnt; mean[4] = sum[6] / cnt
        for (k = 0; k < 5; k++) {
          $0 = pred[s]; print run, "predicted", k, num(P[k + 1]); print run, "measured", k, mean[k]
        }
      }
    }' "$1"
}
# plotted PAGE: "run series x y" for every element with data-x, in document order
plotted() {
  local a
  for a in run series x y; do
    xmllint --xpath "//*[@data-x]/@data-$a" "$1" 2> /dev/null | grep -o '"[^"]*"' | tr -d '"' \
      > "$T/col.$a"
  done
  paste -d ' ' "$T/col.run" "$T/col.series" "$T/col.x" "$T/col.y"
}
# same EXPECTED PLOTTED: the same "run series x" keys with values within 1e-6 relative
same() {
  awk '
    NR == FNR { want[$1 " " $2 " " $3] = $4; n++; next }
    { k = $1 " " $2 " " $3; got++
      if (!(k in want)) { print "  plotted but not in the file: " $0; bad++; next }
      d = want[k] - $4; if (d < 0) d = -d; m = want[k] < 0 ? -want[k] : want[k]
      if (d > 1e-6 * (m > 1 ? m : 1)) { print "  " k ": file " want[k] ", plotted " $4; bad++ }
      seen[k] = 1 }
    END {
      for (k in want) if (!(k in seen)) { print "  in the file but not plotted: " k " " want[k]; bad++ }
      if (n == 0) { print "  nothing expected"; bad++ }
      exit bad > 0 }' "$1" "$2"
}
# well_formed PAGE: the page parses as XML, and so does each of its SVGs alone
well_formed() {
  xmllint --noout "$1" || return 1
  rm -f "$T"/svg.*.svg
  awk -v dir="$T" '/^<svg /{ n++; f = dir "/svg." n ".svg" } f { print > f } /^<\/svg>/{ close(f); f = "" }' "$1"
  local n=0 s
  for s in "$T"/svg.*.svg; do
    [ -e "$s" ] || return 1
    xmllint --noout "$s" || return 1
    n=$((n + 1))
  done
  echo "    $n SVGs" >&2
}

F=("$CORPUS/four_rank.jsonl" "$CORPUS/four_rank_h64.jsonl" "$CORPUS/resumed.jsonl" "$CORPUS/old.jsonl")
expect 0 "wrote all.html \(4 runs\)" "${R[@]}" "${F[@]}" --output all.html
check "the page and each SVG are well-formed XML" well_formed all.html
: > want
for i in 0 1 2 3; do expected "${F[$i]}" "$i" >> want; done
plotted all.html > got
check "every plotted value is the file's, and every value is plotted ($(wc -l < want) values)" \
  same want got
check "the run records' values were compared too (rank bytes, predictions)" \
  grep -q "^0 forward.sent 2 3600000$" want
# on the loss, accuracy and time charts of run 3, and nowhere else
check "the resume point is marked (run 3, after epoch 3)" \
  test "$(xmllint --xpath "count(//*[@data-resume='3'][@data-run='2'])" all.html)-$(xmllint --xpath 'count(//*[@data-resume])' all.html)" = 3-3
page_text() { xmllint --xpath "string($1)" all.html 2> /dev/null; }
check "runs labelled by the options that differ" \
  test "$(page_text "(//*[local-name()='table'])[1]//*[local-name()='tr'][3]/*[2]")" = "hidden=64"
check "the same options get the file's name" \
  test "$(page_text "(//*[local-name()='table'])[1]//*[local-name()='tr'][2]/*[2]")" = "hidden=16 (four_rank.jsonl)"
cmdline=$(page_text "//*[@data-run='0'][@data-record='0']//*[local-name()='tr'][*[1]='command']/*[2]")
want_cmd="fullgraph train data/cora --scheme auto --hidden 16 --metrics 'runs/it'\\''s here/m.jsonl' --title '<b>&amp;\"q\"</b>'"
check "the command line, shell-quoted on one line" test "$cmdline" = "$want_cmd"
check "the quoted command line gives back the words" \
  test "$(eval "printf '%s|' $cmdline")" = "fullgraph|train|data/cora|--scheme|auto|--hidden|16|--metrics|runs/it's here/m.jsonl|--title|<b>&amp;\"q\"</b>|"
check "nested fields flattened" \
  test "$(page_text "//*[@data-run='0'][@data-record='0']//*[local-name()='tr'][*[1]='dataset.nodes']/*[2]")" = 2708
check "the imbalance in the caption" grep -q "Sent: max 7.29 MB (rank 2), mean 3.69 MB, max/mean 1.97" all.html
# the metric the *_acc fields hold (--metric): accuracy by default, the final record's name else
check "accuracy charted by default" grep -q ">Accuracy</text>" all.html
sed 's/"final": true,/"final": true, "task": "multilabel", "metric": "rocauc",/' \
  "$CORPUS/four_rank.jsonl" > roc.jsonl
expect 0 "wrote roc.html" "${R[@]}" roc.jsonl --output roc.html
check "a ROC-AUC run's chart is titled so" grep -q ">ROC-AUC</text>" roc.html
expect 0 "wrote mixed.html" "${R[@]}" roc.jsonl "$CORPUS/four_rank_h64.jsonl" --output mixed.html
check "runs of different metrics: each named in the table" grep -q "(rocauc)" mixed.html
check "an unplanned run says so" grep -q "not planned: the configuration was given" all.html
check "a run without rank_bytes says so" grep -q 'has no "rank_bytes"' all.html
check "a run without a run record says so" grep -q "No run record in this file" all.html
check "no script, no external resource" \
  test -z "$(grep -o -i -e '<script' -e 'src=' -e 'href=' -e 'url(' -e '@import' -e 'https\?://[a-z0-9.]*' all.html |
             grep -v -x -e 'http://www.w3.org')"

# markup and control bytes in a title stay text; a link to a file stays a link
expect 0 "wrote t.html" "${R[@]}" "${F[3]}" --title $'<i>&"x"</i> ]]> \x01 <!--' --output t.html
check "a hostile title: still well-formed" well_formed t.html
check "a hostile title: shown as text" \
  test "$(xmllint --xpath 'string(//*[local-name()="h1"])' t.html)" = '<i>&"x"</i> ]]> \x01 <!--'
echo old > target.html && ln -s target.html link.html
expect 0 "wrote link.html" "${R[@]}" "${F[3]}" --output link.html
check "the link is kept and its target replaced" test -L link.html -a "$(head -c 15 target.html)" = "<!DOCTYPE html>"

# the trainer's own file (today's format: no run record, no rank_bytes)
expect 0 "test accuracy" "$FG" train "$DEMO" --epochs 5 --metrics m.jsonl --quiet
expect 0 "wrote real.html \(1 run\)" "${R[@]}" m.jsonl --output real.html
check "the trainer's file: well-formed" well_formed real.html
expected m.jsonl 0 > want_real
plotted real.html > got_real
check "the trainer's file: every value plotted ($(wc -l < want_real) values)" same want_real got_real
check "the trainer's file: 5 epochs of 10 series" \
  test "$(awk '$2 !~ /[.]/ && $2 != "predicted" && $2 != "measured"' want_real | wc -l)" = 50

# under mpiexec rank 0 writes it, once
if command -v "$MPIEXEC" > /dev/null; then
  expect 0 "wrote mpi.html" "$MPIEXEC" -n 2 --oversubscribe "${R[@]}" "${F[0]}" --output mpi.html
  check "the page under mpiexec is the same" cmp -s mpi.html <("${R[@]}" "${F[0]}" --output /dev/stdout | sed '$d')
  expect 1 "nope.jsonl: cannot open" "$MPIEXEC" -n 2 --oversubscribe "${R[@]}" nope.jsonl --output o.html
fi

# ---- what a browser shows ---------------------------------------------------------------------
skip=0
if command -v chromium > /dev/null; then
  # as root Chromium needs --no-sandbox; the page has no script and loads nothing
  start=$SECONDS
  timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
    --window-size=1040,2400 --screenshot="$T/all.png" "file://$T/all.html" > chromium.log 2>&1
  echo "    chromium took $((SECONDS - start)) s"
  check "chromium wrote a screenshot" test -s "$T/all.png"
  # blue (#0072B2: run 1, SpMM, forward) and orange (#E69F00: run 2, GEMM, backward) are drawn
  read -r w h colours permille blue orange < <("$PNGC" "$T/all.png" 0072B2 E69F00)
  echo "    screenshot ${w:-?}x${h:-?}: ${colours:-?} colours, ${permille:-?} permille not background, blue ${blue:-?}, orange ${orange:-?} pixels"
  check "the screenshot is not blank" test "${colours:-0}" -ge 32 -a "${permille:-0}" -ge 50
  check "the charts' colours are in it" test "${blue:-0}" -ge 2000 -a "${orange:-0}" -ge 2000
  # and png_colors itself: a blank page (a Chromium screenshot of an empty body, committed) is
  # one colour, a cut file is refused
  read -r _ _ ecolours epermille < <("$PNGC" "$CORPUS/blank.png")
  check "png_colors finds a blank page blank (${ecolours:-?} colour)" test "${ecolours:-0}" = 1 -a "${epermille:-1}" = 0
  head -c 3000 "$T/all.png" > cut.png
  expect 1 "cut.png: a chunk runs past the end of the file" "$PNGC" cut.png
else
  echo "SKIP: chromium is not installed (scripts/install-deps.sh installs it): the rendering is not checked"
  skip=1
fi

echo "report_test: $pass passed, $fail failed"
[ "$fail" -eq 0 ] || exit 1
[ "$skip" -eq 0 ] || exit 77
