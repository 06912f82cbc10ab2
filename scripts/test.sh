#!/usr/bin/env bash
# Install dependencies, build, and run the whole test suite: the main build (warnings are
# errors), an ASan+UBSan build, a build without OpenMP, and the fuzzers for a bounded time.
# The ASan build skips the "heavy" tests (minutes each under ASan: the equivalence sweep, the
# CLI's volume check, the CLI's functional scripts -- its hostile-input scripts still run), the
# "long" accuracy runs, every test on 5 ranks or more ("wide"), every MPI test's runs at rank
# counts other than one (3 where it runs on 3: "again") and the tests driven by Python ("python": the binding and
# the PyTorch peer, little C of ours). The build without OpenMP runs what the ASan build runs
# plus the main CLI script and the equivalence sweep on 3 ranks (every scheme and model without
# OpenMP); the main build runs everything, on 1 to 8 ranks. The fuzz targets run $(nproc) at a
# time, each for FG_FUZZ_SECONDS (default 5: a smoke run of the seeds and some mutation; a
# campaign is fuzz/run.sh with minutes a target, docs/fuzzing.md).
# Each stage's tests declare their cores (ctest PROCESSORS), so -j$(nproc) never oversubscribes.
# FG_QUICK=1 runs only the main build's tests.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
. scripts/env.sh
# The suite runs on one machine: Open MPI's shared-memory transport without probing UCX, and no
# helper daemon for a process started without mpirun, so each of the CLI tests' hundreds of
# `fullgraph` calls starts in 0.2 s instead of 0.9 s. Not for multi-node runs: hence here, not
# in env.sh.
export OMPI_MCA_pml=ob1 OMPI_MCA_btl=self,vader OMPI_MCA_ess_singleton_isolated=1
jobs=$(nproc)
run_suite() { # preset, extra ctest args
  local preset=$1; shift
  echo "== $preset: configure and build"
  cmake --preset "$preset" >/dev/null
  cmake --build "build/$preset" -j"$jobs"
  echo "== $preset: tests"
  ctest --test-dir "build/$preset" --output-on-failure -j"$jobs" "$@"
}
if [ "${FG_QUICK:-0}" != 1 ]; then
  # Open MPI, its dlopen'ed components and OpenBLAS keep memory until exit: keep components
  # loaded and unwind fully so tests/lsan.supp can name their libraries; our leaks still fail.
  OMPI_MCA_mca_base_component_disable_dlclose=1 ASAN_OPTIONS=fast_unwind_on_malloc=0 \
    LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0" \
    run_suite asan -LE "long|heavy|wide|again|python"
  run_suite noomp -LE "long|heavy|wide|again|python"
  ctest --test-dir build/noomp --output-on-failure -R "^(cli|test_equivalence_p3)$"
  if [ -x fuzz/run.sh ]; then
    echo "== fuzz: each target for ${FG_FUZZ_SECONDS:-5} s, $jobs at a time"
    fuzz/run.sh --jobs "$jobs" "${FG_FUZZ_SECONDS:-5}"
  fi
fi
run_suite ci
