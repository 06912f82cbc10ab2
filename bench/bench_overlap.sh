#!/usr/bin/env bash
# bench_overlap.sh -- does --overlap hide the exchange? Builds of fullgraph (before and after a
# change to the overlap, or more) interleaved in one session, the 1D schemes with --overlap at
# P = 2 and 4 (one thread a rank): per run the means over epochs 2.. of the epoch, SpMM,
# communication and wait seconds (seconds_wait: the part of comm blocked in waits after the
# overlapped SpMM), each the maximum over ranks, and whether every build's losses are bitwise
# the first build's.
#
# usage: bench/bench_overlap.sh GRAPH OUTDIR LABEL=FULLGRAPH...
#   e.g. bench/bench_overlap.sh rmat17.txt out before=../main/build/release/fullgraph \
#          after=build/release/fullgraph
# environment: ROUNDS (3), EPOCHS (5), RANKS ("2 4"), SCHEMES ("1d 1d-sa"), MPIEXEC (mpiexec)
# Writes OUTDIR/runs.txt (a line a run), OUTDIR/overlap.md (medians over the rounds) and the
# metrics of every run. The machine is shared: only figures measured side by side compare.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/env.sh
. "$here/scripts/env.sh"
# shellcheck source=bench/lib.sh
. "$here/bench/lib.sh"
D=$1
O=$2
shift 2
builds=("$@")
rounds=${ROUNDS:-3}
epochs=${EPOCHS:-5}
ranks=${RANKS:-"2 4"}
schemes=${SCHEMES:-"1d 1d-sa"}
mpiexec=${MPIEXEC:-mpiexec}
export OMP_NUM_THREADS=1
mkdir -p "$O"
: >"$O/runs.txt"

# losses FILE: every epoch's training loss, one a line (compared as text: bitwise)
losses() { sed -n 's/^{"epoch": [0-9]*, "loss": \([^,]*\),.*/\1/p' "$1"; }

for r in $(seq "$rounds"); do
  for P in $ranks; do
    for s in $schemes; do
      for lb in "${builds[@]}"; do
        b=${lb%%=*}
        fg=${lb#*=}
        m=$O/p$P-$s-$b-$r.json
        "$mpiexec" -n "$P" --oversubscribe "$fg" train "$D" --scheme "$s" --overlap \
          --epochs "$epochs" --threads 1 --quiet --no-progress --metrics "$m" >"$O/last.log" 2>&1 ||
          { echo "FAILED p$P $s $b round $r"; cat "$O/last.log"; }
        echo "p$P $s $b $r epoch $(field "$m" seconds) spmm $(field "$m" seconds_spmm)" \
          "comm $(field "$m" seconds_comm) wait $(field "$m" seconds_wait)" | tee -a "$O/runs.txt"
      done
      if [ "$r" = 1 ]; then
        b0=${builds[0]%%=*}
        for lb in "${builds[@]:1}"; do
          b=${lb%%=*}
          if [ -n "$(losses "$O/p$P-$s-$b-1.json")" ] &&
            [ "$(losses "$O/p$P-$s-$b0-1.json")" = "$(losses "$O/p$P-$s-$b-1.json")" ]; then
            echo "p$P $s losses $b0 = $b: bitwise" | tee -a "$O/runs.txt"
          else
            echo "p$P $s losses $b0 != $b" | tee -a "$O/runs.txt"
          fi
        done
      fi
    done
  done
done

# the medians over the rounds, before against after
{
  echo "| P | scheme | build | epoch s | SpMM s | comm s | wait s | wait / comm |"
  echo "|---|---|---|---|---|---|---|---|"
  for P in $ranks; do
    for s in $schemes; do
      for lb in "${builds[@]}"; do
        b=${lb%%=*}
        awk -v P="p$P" -v s="$s" -v b="$b" '
          function median(a, n,   i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) {
              t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
          }
          $1 == P && $2 == s && $3 == b && $5 == "epoch" {
            n++; ep[n] = $6; sp[n] = $8; co[n] = $10; wa[n] = $12 }
          END {
            if (n == 0) exit
            e = median(ep, n); p = median(sp, n); c = median(co, n); w = median(wa, n)
            printf "| %s | %s | %s | %.3f | %.3f | %.3f | %.3f | %.0f %% |\n",
                   substr(P, 2), s, b, e, p, c, w, (c > 0 ? 100 * w / c : 0) }' "$O/runs.txt"
      done
    done
  done
} >"$O/overlap.md"
cat "$O/overlap.md"
