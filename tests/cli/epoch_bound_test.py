#!/usr/bin/python3
"""epoch_bound_test.py FULLGRAPH DEMO_DATA -- bench/epoch_bound.py's counts of an epoch (what
bench/bench_single.sh turns into the epoch's lower bound) and `fullgraph bench gemm`.

1. Two tiny GCNs counted by hand (one aggregating first in layer 0, one last, so both branches
   of the backward), every GEMM shape, flop, SpMM byte and elementwise byte; the bound and the
   gap's split from given times.
2. The model against the program: `fullgraph train` on the demo data (3 layers, layer 0
   aggregating last; 2 layers, layer 0 aggregating first) reports gemm_flops and spmm_bytes in
   its metrics, and the model of its epoch must give the same numbers.
3. `fullgraph bench gemm` times a shape and refuses bad ones (exit 2, the problem named).
"""
import json
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "bench"))
import epoch_bound as eb  # noqa: E402

failures = 0


def check(what, got, want):
    global failures
    if got != want:
        print(f"FAIL: {what}: got {got!r}, want {want!r}")
        failures += 1


def main():
    fg, demo = sys.argv[1], sys.argv[2]

    # --- 1a. n 10, nnz 30, widths 4 -> 8 -> 2, dropout 0.5, 5 training rows of 10 labelled:
    # layer 0 aggregates first (4 < 16), layer 1 last (8 >= 2)
    c = eb.gcn_epoch(10, 30, [4, 8, 2], 0.5, 5, 10)
    check("1a GEMM calls", c["gemms"], {("n", "n", 10, 8, 4): 2, ("n", "n", 10, 2, 8): 2,
                                        ("t", "n", 8, 2, 10): 1, ("n", "t", 10, 8, 2): 1,
                                        ("t", "n", 4, 8, 10): 1})
    # forward 2 x (640 + 320), backward 320 + 320 + 640
    check("1a flops", c["gemm_flops"], 3200)
    # SpMM at width 4: 30*8 + 30*4*4 + 10*4*4 = 880; width 2: 240 + 240 + 80 = 560;
    # forward 2 x (880 + 560), backward 560 (layer 0 aggregating first passes nothing back)
    check("1a SpMM bytes", c["spmm_bytes"], 3440)
    # each input row once: 240 + 2*10*4*4 = 560 at width 4, 240 + 160 = 400 at width 2
    check("1a SpMM bytes, rows read once", c["spmm_min_bytes"], 2 * (560 + 400) + 400)
    # input dropout 320; fused passes 2 x (640 + 160); training loss (2*5 + 10)*2*4 = 160,
    # evaluation loss 2*10*2*4 = 160; bias gradients 80 + 320; mask 3*10*8*4 = 960;
    # Adam 7*4*(4*8 + 8 + 8*2 + 2) = 1624
    check("1a elementwise bytes", c["elem_bytes"], 5224)
    check("1a Adam", c["elem"]["Adam"], 1624)

    # --- 1b. n 6, nnz 20, widths 20 -> 4 -> 2, 3 training rows of 6: both layers aggregate
    # last, so layer 0's backward redoes the input dropout and multiplies by Âᵀ
    c = eb.gcn_epoch(6, 20, [20, 4, 2], 0.5, 3, 6)
    check("1b GEMM calls", c["gemms"], {("n", "n", 6, 4, 20): 2, ("n", "n", 6, 2, 4): 2,
                                        ("t", "n", 4, 2, 6): 1, ("n", "t", 6, 4, 2): 1,
                                        ("t", "n", 20, 4, 6): 1})
    check("1b flops", c["gemm_flops"], 3264)
    # width 4: 160 + 320 + 96 = 576, width 2: 160 + 160 + 48 = 368; forward
    # 2 x (576 + 368), backward 368 + 576
    check("1b SpMM bytes", c["spmm_bytes"], 2832)
    # training forward 960 + 192 + 96 + 96, backward 48 + 288 + 96 + 960, Adam 7*4*94 = 2632,
    # evaluation 192 + 96 + 96
    check("1b elementwise bytes", c["elem_bytes"], 5752)
    check("1b input passes", c["elem"]["input dropout / gather"], 1920)
    # without dropout and with rows in their own order: no input pass at all
    c0 = eb.gcn_epoch(6, 20, [20, 4, 2], 0.0, 3, 6)
    check("1b no dropout", c0["elem_bytes"], 5752 - 1920)
    # rows in another order: gathered in both forwards and again in the backward
    cg = eb.gcn_epoch(6, 20, [20, 4, 2], 0.0, 3, 6, gathered=True)
    check("1b gathered", cg["elem"]["input dropout / gather"], 3 * 960)

    # --- 1c. the bound and its split: 1b's shapes at 1 ms a call, a triad of 1 GB/s
    times = {eb.shape_name(k): 1e-3 for k in c["gemms"]}
    b = eb.bound(c, times, 1e9)
    check("1c GEMM bound", round(b["gemm"], 12), 7e-3)
    check("1c total bound", round(b["total"], 12), round(7e-3 + (2832 + 5752) / 1e9, 12))
    g = eb.gap({"gemm": 0.014, "spmm": b["spmm"] * 2, "rest": b["rest"],
                "total": 0.014 + b["spmm"] * 2 + b["rest"]}, b)
    b2 = eb.bound(c, times, 1e9, "spmm_min_bytes")
    check("1c stricter SpMM part", round(b2["spmm"] * 1e9, 6), float(c["spmm_min_bytes"]))
    check("1c furthest", g["furthest"], "gemm")
    check("1c GEMM over its bound", round(g["parts"]["gemm"]["over_bound"], 9), 2.0)
    check("1c rest's share of the gap", g["parts"]["rest"]["gap_share"], 0.0)

    # --- 2. the program's own counters
    info = subprocess.run([fg, "info", demo], stdout=subprocess.PIPE, text=True, check=True).stdout
    n = int(re.search(r"nodes\s+(\d+)", info).group(1))
    nnz = int(re.search(r"adjacency\s+(\d+)", info).group(1))
    sp = [int(x) for x in re.search(r"split\s+train (\d+)\s+valid (\d+)\s+test (\d+)",
                                     info).groups()]
    with tempfile.TemporaryDirectory() as tmp:
        for layers, hidden in ((3, 16), (2, 1024)):
            path = os.path.join(tmp, f"m{layers}.json")
            subprocess.run([fg, "train", demo, "--epochs", "2", "--layers", str(layers),
                            "--hidden", str(hidden), "--threads", "1", "--quiet",
                            "--metrics", path], check=True, stdout=subprocess.DEVNULL)
            lines = [json.loads(x) for x in open(path)]
            opts = next(x for x in lines if "run" in x)["run"]["options"]
            eps = [x for x in lines if "epoch" in x]
            c = eb.gcn_epoch(n, nnz, opts["widths"], opts["dropout"], sp[0], sum(sp))
            for e in eps:
                check(f"{layers} layers epoch {e['epoch']}: gemm_flops", e["gemm_flops"],
                      c["gemm_flops"])
                check(f"{layers} layers epoch {e['epoch']}: spmm_bytes", e["spmm_bytes"],
                      c["spmm_bytes"])
            first = eb.agg_first(0, opts["widths"][0], opts["widths"][1])
            check(f"{layers} layers: layer 0 aggregates first", first, layers == 2)

    # --- 3. bench gemm
    r = subprocess.run([fg, "bench", "gemm", "--threads", "1", "--reps", "2", "--shapes",
                        "nn:64x32x16,tn:16x32x64"], stdout=subprocess.PIPE, text=True)
    check("bench gemm exit", r.returncode, 0)
    got = re.findall(r"gemm (\w\w) (\d+x\d+x\d+): ([0-9.e+-]+) s, ([0-9.]+) GFLOP/s", r.stdout)
    check("bench gemm shapes", [(a, b) for a, b, _, _ in got],
          [("nn", "64x32x16"), ("tn", "16x32x64")])
    for _, _, t, rate in got:
        if not float(t) > 0 or abs(2 * 64 * 32 * 16 / float(t) / 1e9 - float(rate)) > 0.01 * \
                float(rate) + 0.01:
            print(f"FAIL: bench gemm: time {t} and rate {rate} disagree")
            failures_add()
    for bad in ("nn:64x32", "xn:1x1x1", "nn:0x1x1", "nn:1x1x1,", "nn:1x1x1x", "nn:1x-1x1"):
        r = subprocess.run([fg, "bench", "gemm", "--shapes", bad], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        check(f"bench gemm --shapes {bad}: exit", r.returncode, 2)
        check(f"bench gemm --shapes {bad}: message", "bad shape in --shapes" in r.stderr, True)
    r = subprocess.run([fg, "bench", "gemm"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       text=True)
    check("bench gemm without --shapes", (r.returncode, "--shapes is required" in r.stderr),
          (2, True))

    print("epoch_bound_test: " + ("ok" if failures == 0 else f"{failures} failure(s)"))
    return 1 if failures else 0


def failures_add():
    global failures
    failures += 1


if __name__ == "__main__":
    sys.exit(main())
