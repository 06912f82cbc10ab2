#!/usr/bin/python3
"""torch_peer_test.py FULLGRAPH DEMO_DATA -- bench/torch_gcn.py, the PyTorch peer of
bench/bench_single.sh, in both precisions, and single_process.py's het:NAME graph. Exits 77
(skip) where Debian's python3-torch is not installed: the peer is a benchmark's, never needed to
build or test fullgraph.

1. The demo graph (Cora's edges as a SNAP list) trained 30 epochs in fp32 and with
   --precision bf16-autocast: each names its precision, sparse format and operator dtype; both
   see the graph `fullgraph info` reads (nodes, Â entries); the first loss agrees within 1e-3
   (the same weights; only the forward's rounding differs), the bf16 losses differ from fp32's
   (autocast did run), and the last loss within 5 % of fp32's.
2. A bad --precision is refused with exit 2 and names the option.
3. single_process.heterophilous_snap writes minesweeper.npz's edges as a SNAP list that
   `fullgraph info` reads as 10,000 nodes (skipped without ../shared/data).
"""
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
BENCH = os.path.join(ROOT, "bench")
failures = 0


def check(what, ok, detail=""):
    global failures
    if not ok:
        print(f"FAIL: {what} {detail}")
        failures += 1


def info(fg, path):
    out = subprocess.run([fg, "info", path], check=True, stdout=subprocess.PIPE,
                         text=True).stdout
    return (int(re.search(r"nodes\s+(\d+)", out).group(1)),
            int(re.search(r"adjacency\s+(\d+)", out).group(1)))


def main():
    fg, demo = sys.argv[1], sys.argv[2]
    if subprocess.run(["/usr/bin/python3", "-c", "import torch"],
                      stderr=subprocess.DEVNULL).returncode != 0:
        print("skip: /usr/bin/python3 has no torch (scripts/install-deps.sh --bench)")
        return 77
    with tempfile.TemporaryDirectory() as tmp:
        edges = os.path.join(tmp, "cora.txt")
        with gzip.open(os.path.join(demo, "raw", "edge.csv.gz"), "rt") as f, \
                open(edges, "w") as o:
            o.writelines(line.replace(",", " ") for line in f)
        nodes, entries = info(fg, edges)

        # --- 1. both precisions on the same graph, weights and epochs
        res = {}
        for prec in ("fp32", "bf16-autocast"):
            p = subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "torch_gcn.py"), edges,
                                "--threads", "1", "--epochs", "30", "--precision", prec],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            check(f"torch_gcn.py --precision {prec} exit", p.returncode == 0, p.stderr[-2000:])
            if p.returncode != 0:
                continue
            r = res[prec] = json.loads(p.stdout.strip().splitlines()[-1])
            print(f"{prec}: format {r['format']} ({r['sparse_dtype']}), losses "
                  f"{r['losses'][0]:.5f} -> {r['losses'][-1]:.5f}, accuracy (train, valid, "
                  f"test) {', '.join(f'{a:.3f}' for a in r['final_acc'])}, trials "
                  f"{r['trial_seconds']}")
            check(f"{prec}: precision named", r.get("precision") == prec, str(r.get("precision")))
            check(f"{prec}: sizes", (r["nodes"], r["adjacency_entries"]) == (nodes, entries),
                  f"{(r['nodes'], r['adjacency_entries'])} against fullgraph's "
                  f"{(nodes, entries)}")
            want = ("coo", "csr") if prec == "fp32" else ("coo", "csr", "coo-bf16", "csr-bf16")
            check(f"{prec}: format", r["format"] in want, r["format"])
            check(f"{prec}: operator dtype", r["sparse_dtype"] ==
                  ("bfloat16" if r["format"].endswith("-bf16") else "float32"), r["sparse_dtype"])
            check(f"{prec}: finite losses", all(l == l and abs(l) < 1e3 for l in r["losses"]))
        if len(res) == 2:
            f32, b16 = res["fp32"]["losses"], res["bf16-autocast"]["losses"]
            check("first loss bf16 against fp32", abs(f32[0] - b16[0]) < 1e-3,
                  f"{b16[0]} against {f32[0]}")
            check("bf16 rounding shows in the losses", f32 != b16)
            check("last loss bf16 within 5 % of fp32", abs(f32[-1] - b16[-1]) < 0.05 * f32[-1],
                  f"{b16[-1]} against {f32[-1]}")
            check("training lowers the bf16 loss", b16[-1] < b16[0] - 0.1, str(b16))

        # --- 2. a bad precision
        p = subprocess.run(["/usr/bin/python3", os.path.join(BENCH, "torch_gcn.py"), edges,
                            "--threads", "1", "--precision", "fp16"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check("--precision fp16 exit 2", p.returncode == 2, str(p.returncode))
        check("--precision fp16 named", "--precision" in p.stderr, p.stderr[-500:])

        # --- 3. a heterophilous .npz as a SNAP list
        npz = os.path.join(ROOT, "..", "shared", "data", "heterophilous", "minesweeper.npz")
        if os.path.exists(npz):
            sys.path.insert(0, BENCH)
            import single_process  # noqa: E402
            out = os.path.join(tmp, "minesweeper.txt")
            single_process.heterophilous_snap(npz, out)
            with open(out) as f:
                lines = f.read().splitlines()
            check("minesweeper edge lines", len([l for l in lines if not l.startswith("#")])
                  == 39402, str(len(lines)))
            n, nnz = info(fg, out)
            # each undirected edge twice, one self loop a node
            check("minesweeper as fullgraph reads it", (n, nnz) == (10000, 2 * 39402 + 10000),
                  str((n, nnz)))
        else:
            print("skip part 3: no ../shared/data/heterophilous/minesweeper.npz")
    print("torch_peer_test: " + ("ok" if failures == 0 else f"{failures} failure(s)"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
