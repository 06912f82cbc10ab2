#!/usr/bin/env bash
# device_checks.sh -- on a lent machine (the device tool's run, repository root, $OUT set), the
# checks and measurements of the native bf16 path with what bench/device_bundle.sh packed:
#   1. the bf16 and scheme tests on the native path (ctest of .dev/build-MARCH, the device's
#      own Open MPI for the MPI ones);
#   2. `bench spmm` on facebook_combined and ca-AstroPh by thread count, alone and after the
#      GEMMs training runs between (the 16-thread bf16 SpMM question in docs/benchmarks.md);
#   3. bf16 native, bf16 convert and fp32 epochs on Cora, facebook_combined and ca-AstroPh at
#      the machine's threads and at 2, interleaved.
# usage: bash bench/device_checks.sh [MARCH] [SECTIONS]   (SECTIONS: e.g. "1 2"; default all)
# Everything goes to $OUT/device_checks.txt too.
set -u
MARCH=${1:-sapphirerapids}
SECTIONS=${2:-"1 2 3"}
R=$PWD
OUT=${OUT:-/tmp}
B=$R/.dev/build-$MARCH
T0=$(date +%s)
exec > >(tee -a "$OUT/device_checks.txt") 2>&1
el() { echo "=== [t=$(( $(date +%s) - T0 ))s] $*"; }
el "machine"
nproc; lscpu | grep -E "Model name|Socket|NUMA node\(s\)|L2|L3"
grep -o -w 'avx512_bf16\|amx_bf16\|avx512bw' /proc/cpuinfo | sort | uniq -c
mkdir -p /tmp/fgx && tar -C /tmp/fgx -xJf .dev/bundle.tar.xz || { echo "no .dev/bundle.tar.xz"; exit 1; }
L=/tmp/fgx/root/lib
# ctest's absolute paths and the tests' ../shared/data
mkdir -p /work ../shared
[ -e /work/main ] || ln -s "$R" /work/main
[ -e ../shared/data ] || ln -s "$R/.dev/data" ../shared/data
mkdir -p /work/shared; [ -e /work/shared/data ] || ln -s "$R/.dev/data" /work/shared/data
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_pml=ob1 \
  OMPI_MCA_btl=self,vader OMPI_MCA_ess_singleton_isolated=1
# fullgraph through a wrapper that sets the library path (a peer's Python keeps its own)
printf '#!/bin/sh\nexport LD_LIBRARY_PATH=%s\nexec %s "$@"\n' "$L" "$B/fullgraph" > /tmp/fg
chmod +x /tmp/fg
/tmp/fg --version | tail -3
LD_LIBRARY_PATH=$L ldd "$B/fullgraph" | grep "not found"
T=$(nproc)
FB=.dev/data/snap/facebook_combined.txt.gz
AP=.dev/data/snap/ca-AstroPh.txt
case " $SECTIONS " in *" 1 "*)
  el "1. tests on the native path"
  (cd "$B" && LD_LIBRARY_PATH=$L timeout 240 ctest -j "$T" --timeout 200 --output-on-failure \
    -R "kernels_|test_model_deep|cli_bf16_bench|mpi_bf16_3d_cli|test_wire16|test_equivalence_p(3|5|8)" |
    tail -25) ;;
esac
case " $SECTIONS " in *" 2 "*)
  el "2. bench spmm by thread count"
  for g in $FB $AP; do
    timeout 120 /tmp/fg bench spmm $g --thread-counts 1,2,4,8,$T --reps 20
    timeout 120 /tmp/fg bench spmm $g --thread-counts 2,$T --reps 20 --gemm-between
  done ;;
esac
case " $SECTIONS " in *" 3 "*)
  el "3. epochs: bf16 native, bf16 convert, fp32 (medians of epochs 3-12; Cora 3-30)"
  ep() {
    python3 - "$1" /tmp/m.jsonl <<'PY'
import json, sys
try:
    ep = [json.loads(l) for l in open(sys.argv[2]) if l.startswith('{"epoch"')][2:]
    m = lambda k: sorted(e[k] for e in ep)[len(ep) // 2]
    print(f"{sys.argv[1]:<44} epoch {m('seconds'):.5f} spmm {m('seconds_spmm'):.5f} "
          f"gemm {m('seconds_gemm'):.5f} other {m('seconds_other'):.5f} "
          f"peak {ep[-1]['peak_rss_bytes'] / 2**20:.0f} MB")
except Exception as e:
    print(sys.argv[1], "FAILED", e)
PY
  }
  A="--layers 3 --hidden 128 --gen-features 128 --gen-classes 32 --epochs 12"
  for g in data/cora $FB $AP; do for t in $T 2; do for rep in 1 2; do
    for p in "bf16" "bf16 --bf16-path convert" "fp32"; do
      x=$A; [ $g = data/cora ] && x="--epochs 30"
      rm -f /tmp/m.jsonl
      timeout 60 /tmp/fg train $g $x --threads $t --precision $p --quiet --metrics /tmp/m.jsonl \
        > /dev/null 2>&1
      ep "$(basename $g) t$t $p" /tmp/m.jsonl
    done; done; done; done ;;
esac
el done
