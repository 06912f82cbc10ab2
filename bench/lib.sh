# lib.sh -- shell helpers the bench scripts share (sourced, not run).

# field FILE KEY: the mean of a top-level numeric field over the epoch lines of a metrics file,
# epoch 1 left out (the last epoch's value when there is only one); "-" when a line lacks it
field() {
  awk -v key="$2" 'index($0, "{\"epoch\":") == 1 {
      i = index($0, "\"" key "\": ")
      if (i == 0) { miss = 1; next }
      v = substr($0, i + length(key) + 4); sub(/[,}].*/, "", v)
      n++
      if (n >= 2) { sum += v; m++ }
      last = v
    }
    END {
      if (miss || n == 0) { print "-"; exit }
      if (m == 0) { sum = last; m = 1 }
      printf "%.6g\n", sum / m
    }' "$1"
}

# lib_program SRC BUILD: compile bench/SRC.c against BUILD/libfullgraph.a (the library's
# private headers; the libraries the build may have linked, those present) into $lib_out/SRC
# (a temporary folder removed when the script exits), and set the threads (OMP_NUM_THREADS,
# default 2, bound) for the run that follows
lib_program() {
  local root arch libs l
  lib_out=$(mktemp -d)
  trap 'rm -rf "$lib_out"' EXIT
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  arch=$(gcc -print-multiarch)
  libs=("/usr/lib/$arch/openblas-openmp/libopenblas.so" -lmetis -ltrilinos_zoltan -lz -lm)
  for l in dnnl ptscotch scotch ptscotcherr; do
    if [ -e "/usr/lib/$arch/lib$l.so" ]; then libs+=("-l$l"); fi
  done
  # shellcheck disable=SC2046 # mpicc's flags are lists
  gcc -O2 -march=native -fopenmp -std=c11 -I"$root/src" -I"$root/include" $(mpicc --showme:compile) \
    "$root/bench/$1.c" -o "$lib_out/$1" "$2/libfullgraph.a" "${libs[@]}" $(mpicc --showme:link)
  export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-true}
  echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
}
