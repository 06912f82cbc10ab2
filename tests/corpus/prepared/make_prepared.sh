#!/bin/sh
# make_prepared.sh FULLGRAPH -- regenerates the prepared-dataset corpus in this folder: `ok/`, the
# 6-node OGB corpus graph (../ogb/ok) prepared in 2 x 2 blocks, and one copy per fault, each
# broken in one way (tests/cli/prepare_test.sh lists the message each must give). The outputs
# are committed; run this only to change them:  sh tests/corpus/prepared/make_prepared.sh build/release/fullgraph
set -eu
FG=$1
cd "$(dirname "$0")"
# Rewrite the manifest of directory $1 with python expression $2 applied to its bytes `b`
# (a bytearray), then its CRC-32 (the last 4 bytes) recomputed: a manifest whose own CRC is
# right but whose content is not.
patch() {
  /usr/bin/python3 - "$1/manifest.fgprep" "$2" <<'PY'
import struct, sys, zlib
path, expr = sys.argv[1], sys.argv[2]
b = bytearray(open(path, 'rb').read())
exec(expr)
b[-4:] = struct.pack('<I', zlib.crc32(bytes(b[:-4])) & 0xffffffff)
open(path, 'wb').write(b)
PY
}
flip() { # flip the byte at offset $2 of file $1
  b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
  printf "$(printf '\\%03o' $((b ^ 255)))" | dd of="$1" bs=1 seek="$2" conv=notrunc 2>/dev/null
}
for d in ok bad_magic bad_version bad_crc bad_sizes bad_name bad_offsets truncated_block \
         crc_block missing_block crc_nodes; do
  rm -rf "$d"
done
"$FG" prepare ../ogb/ok --blocks 2 --output ok > /dev/null
for d in bad_magic bad_version bad_crc bad_sizes bad_name bad_offsets truncated_block crc_block \
         missing_block crc_nodes; do
  cp -r ok "$d"
done
flip bad_magic/manifest.fgprep 0
patch bad_version 'b[8] = 2'
flip bad_crc/manifest.fgprep 64                          # the seed: its CRC no longer matches
patch bad_sizes 'b[168 + 8 * 3] += 1'                    # block (0, 0) one entry more than nnz
patch bad_name 'b[168 + 8 * 3 + 8 * 4:168 + 8 * 3 + 8 * 4 + 14] = b"../../etc/pwd\0"'
patch bad_offsets 'b[168 + 8] = 5'                       # row block 0 ends past block 1's end
head -c 20 ok/adj-0000-0000.bin > truncated_block/adj-0000-0000.bin
flip crc_block/adj-0001-0001.bin 30
rm missing_block/adj-0000-0001.bin
flip crc_nodes/nodes-0001.bin 4
