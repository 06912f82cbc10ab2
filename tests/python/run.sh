#!/bin/sh
# run.sh LIB CLI MPIEXEC DATA SANITIZED -- the Python binding's tests (test_fullgraph.py) on the
# library and CLI this build made. Exit 77 (a skip) where they cannot run: no /usr/bin/python3
# or no NumPy/SciPy (the C library and CLI never need Python), or a sanitizer build (an
# AddressSanitizer libfullgraph.so cannot be loaded into an interpreter not built with it).
set -u
lib=$1 cli=$2 mpiexec=$3 data=$4 sanitized=$5
here=$(cd "$(dirname "$0")" && pwd)
py=/usr/bin/python3
case "$sanitized" in
  ON|on|1|TRUE|true|YES|yes) echo "SKIP: a sanitizer build's libfullgraph.so cannot be loaded into python"; exit 77 ;;
esac
if [ ! -x "$py" ]; then echo "SKIP: no $py"; exit 77; fi
if ! "$py" -c 'import numpy, scipy.sparse' 2>/dev/null; then
  echo "SKIP: NumPy or SciPy missing for $py (apt-get install python3-numpy python3-scipy)"
  exit 77
fi
if [ ! -d "$data" ]; then echo "SKIP: no Cora at $data"; exit 77; fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
FULLGRAPH_LIB=$lib PYTHONPATH=$here/../../python${PYTHONPATH:+:$PYTHONPATH} \
  "$py" "$here/test_fullgraph.py" driver "$cli" "$mpiexec" "$data" "$tmp"
