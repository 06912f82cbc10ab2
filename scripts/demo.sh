#!/usr/bin/env bash
# Install dependencies, build, and train Kipf & Welling's GCN on the bundled Cora.
set -euo pipefail
cd "$(dirname "$0")/.."
FG_WITH_CLANG=0 ./scripts/install-deps.sh
. scripts/env.sh
cmake --preset release >/dev/null
cmake --build build/release -j"$(nproc)"
./build/release/fullgraph train data/cora --normalize-features "$@"
