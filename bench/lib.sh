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
