#!/usr/bin/python3
"""single_process.py -- one process, full-graph GCN (or GraphSAGE or GIN, --model): fullgraph
against the machine's memory bandwidth and against PyTorch, on the same machine in one go.

For each graph: R-MAT scale 18 and 20 (edge factor 16, generated with `fullgraph generate
rmat`) and the largest SNAP graph in ../shared/data/snap/ (its nodes the ids that occur, as
fullgraph reads SNAP files; and again with --keep-ids, every id up to the largest a node, as
earlier versions read it) -- with 128 random features and 32 degree-quantile classes (train's
--gen-features 128 --gen-classes 32) -- it
  1. measures the STREAM triad (`fullgraph bench stream`) with the run's thread count,
  2. trains a 3-layer GCN of hidden width 128 for 10 epochs (`fullgraph train --metrics`, once
     per --reorder given, all that --repeat times over, orders interleaved, with a triad after
     every run) and
     takes the mean of the last 8 epochs: epoch time split into SpMM, GEMM and the rest, peak
     resident memory, and the SpMM's effective bandwidth: per SpMM nnz (4 + 4) bytes of indices
     and values, nnz x width x 4 bytes of gathered feature rows and rows x width x 4 bytes
     written, summed over the epochs' SpMMs and divided by their time; a run's SpMM / triad
     divides by the mean of the triads just before and after it, and the table shows the
     median over the repeats of each figure (peak: the largest) and SpMM / triad's range,
     because on a shared host the same binary's SpMM moves by +-20% from run to run,
  3. for the GCN, computes the epoch's lower bound on this machine (bench/epoch_bound.py, where
     the formulas are): the epoch's GEMMs, each shape timed with `fullgraph bench gemm` right
     after the run (the best of 3 calls), plus its SpMM bytes and elementwise bytes at the mean
     of the triads just before and after the run; the flop and SpMM byte counts are checked
     against the run's own `gemm_flops` and `spmm_bytes` metrics. The second table gives epoch
     / bound and, for GEMM, SpMM and the rest, the measured time over its part of the bound and
     the part whose excess is largest (its share of epoch - bound). Medians over the repeats.
  4. trains the same model in PyTorch (bench/torch_gcn.py: same graph, widths, thread count,
     the faster of its COO and CSR formats, the same work per epoch) right after each model's
     fullgraph runs of a repeat, and reports the ratio of the medians. With --peer-precision
     fp32,bf16-autocast the peer runs in both (torch_gcn.py --precision: fp32, and the
     forward under torch.autocast("cpu", dtype=torch.bfloat16)), one after the other after
     fullgraph in every repeat, and the table adds the peer's best (the faster precision's
     median) and fullgraph's speedup over it, also per repeat (that repeat's fullgraph epoch
     against its faster peer run: the interleaved ratio, which a shared host disturbs least).
With --model gcn,sage (or gcn,sage,gin, or gcn,gin) each repeat runs every model in turn
(fullgraph, then its peer), so that all see the same load, and a second table gives for each
graph, order and model other than the GCN its epoch over the GCN epoch of the same widths
(fullgraph's and PyTorch's: the median over the repeats of each repeat's ratio) and the SpMM and
GEMM shares of fullgraph's epoch for both models.
Peak memory is also compared with graph + features + (L + 3) activation buffers of
nodes x 128 floats + parameters (the issue's yardstick; the parameters the model's: SAGE two
matrices of w_in x w_out a layer, GIN w_in x w_out and w_out x w_out and two biases) and with
`fullgraph info`'s estimate.

usage: bench/single_process.py [--out DIR] [--fullgraph PATH] [--threads T] [--epochs E]
           [--omp-wait default,passive,active]
           [--graphs rmat18,rmat20,snap,snap-keep-ids,snap:NAME,het:NAME] [--no-peer]
           [--peer-precision fp32|bf16-autocast|fp32,bf16-autocast] [--reorder auto|none|degree|rcm]
           [--snap FILE] [--name NAME] [--repeat K] [--model gcn|sage|gin|gcn,sage,gin]
           [--precision fp32|bf16|fp32,bf16]
--precision fp32,bf16 runs fullgraph in both, one after the other in every repeat (a row each,
"ORDER, bf16"; the epoch bound and info's memory estimate are fp32's).
Graphs: rmatS is `fullgraph generate rmat` at scale S; snap:NAME the file of ../shared/data/snap
whose name starts with NAME; het:NAME the edges of ../shared/data/heterophilous/NAME.npz, written
once as DIR/NAME.txt (a SNAP edge list with its "# Nodes:" line) so that both programs read it.
Writes DIR/NAME.md (markdown) and DIR/NAME.json (everything measured), and prints the table;
each run's own record as it ends (fullgraph's metrics, DIR/NAME_GRAPH_..._K.json; the peer's
JSON, DIR/NAME_GRAPH_MODEL_torch_PRECISION_K.json), so a run cut off keeps what it measured.
Uses only the Python standard library here; the peer needs Debian's python3-torch, -numpy and
-scipy (FG_PEER_PYTHON names another interpreter for it, e.g. one with a newer PyTorch).
"""
import argparse
import array
import ast
import gzip
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time
import zipfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import epoch_bound  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LAYERS, HIDDEN, FEATURES, CLASSES = 3, 128, 128, 32


def run(cmd, **kw):
    print("+ " + " ".join(cmd), file=sys.stderr, flush=True)
    return subprocess.run(cmd, check=True, stdout=subprocess.PIPE, text=True, **kw).stdout


def cpu_model():
    try:
        out = subprocess.run(["lscpu"], stdout=subprocess.PIPE, text=True).stdout
        m = re.search(r"Model name:\s*(.*)", out)
        if m:
            return m.group(1).strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def blas_kernels(fg):
    """The OpenBLAS kernel set fullgraph runs, and where it came from: the GEMM's speed depends
    on it, and OPENBLAS_CORETYPE in the environment overrides OpenBLAS's own pick."""
    out = subprocess.run([fg, "--version"], stdout=subprocess.PIPE, text=True).stdout
    m = re.search(r"OpenBLAS kernels: ([^)\n]*)", out)
    name = m.group(1).strip() if m else "unknown"
    forced = os.environ.get("OPENBLAS_CORETYPE")
    return name + (f" (OPENBLAS_CORETYPE={forced} in the environment)" if forced else
                   " (OpenBLAS's own pick)")


def snap_edges(path):
    """Uncompressed size, to find the largest SNAP file (gzip keeps it in its last 4 bytes)."""
    if path.endswith(".gz"):
        with open(path, "rb") as f:
            f.seek(-4, 2)
            return int.from_bytes(f.read(4), "little")
    return os.path.getsize(path)


def largest_snap(folder):
    files = [os.path.join(folder, f) for f in sorted(os.listdir(folder))
             if f.endswith((".txt", ".txt.gz"))]
    if not files:
        sys.exit(f"single_process.py: no SNAP edge lists in {folder}")
    return max(files, key=snap_edges)


def triad(fg, threads):
    out = run([fg, "bench", "stream", "--threads", str(threads)])
    return float(re.search(r"stream triad: ([0-9.]+) GB/s", out).group(1)) * 1e9


def info(fg, path, extra, reorder="none", model="gcn", split=None):
    """Nodes, Â entries (as loaded, self loops included) and the memory estimate of a run of
    this model with this reorder (its setup term differs); split (a dict) gets the train,
    valid and test row counts."""
    out = run([fg, "info", path, "--layers", str(LAYERS), "--hidden", str(HIDDEN),
               "--gen-features", str(FEATURES), "--gen-classes", str(CLASSES),
               "--reorder", reorder, "--model", model] + extra)
    nodes = int(re.search(r"nodes\s+(\d+)", out).group(1))
    entries = int(re.search(r"adjacency\s+(\d+)", out).group(1))
    m = re.search(r"memory\s+(\d+) bytes", out)
    sp = re.search(r"split\s+train (\d+)\s+valid (\d+)\s+test (\d+)", out)
    if split is not None and sp:
        split.update(train=int(sp.group(1)), valid=int(sp.group(2)), test=int(sp.group(3)))
    return nodes, entries, int(m.group(1)) if m else None


def train(fg, path, extra, threads, epochs, reorder, metrics, model="gcn", env=None):
    cmd = [fg, "train", path, "--layers", str(LAYERS), "--hidden", str(HIDDEN),
           "--epochs", str(epochs), "--threads", str(threads),
           "--gen-features", str(FEATURES), "--gen-classes", str(CLASSES),
           "--metrics", metrics, "--quiet", "--reorder", reorder, "--model", model] + extra
    t0 = time.time()
    run(cmd, env=env)
    wall = time.time() - t0
    eps = [json.loads(l) for l in open(metrics) if l.startswith('{"epoch"')]
    final = [json.loads(l) for l in open(metrics) if l.startswith('{"final"')][-1]
    tail = eps[-8:] if len(eps) > 8 else eps[1:] or eps
    k = len(tail)
    r = {
        "wall_seconds": wall,
        "epochs_averaged": [e["epoch"] for e in tail],
        "epoch_seconds": sum(e["seconds"] for e in tail) / k,
        "spmm_seconds": sum(e["seconds_spmm"] for e in tail) / k,
        "gemm_seconds": sum(e["seconds_gemm"] for e in tail) / k,
        "peak_rss_bytes": max(e["peak_rss_bytes"] for e in eps),
        "spmm_bytes": sum(e["spmm_bytes"] for e in tail) / k,
        "gemm_flops": sum(e.get("gemm_flops", 0) for e in tail) / k,
        "options": [json.loads(l) for l in open(metrics) if l.startswith('{"run"')][-1]["run"]
                   ["options"],
        "losses": [e["loss"] for e in eps],
        "reorder_used": final.get("reorder", reorder),
    }
    r["rest_seconds"] = r["epoch_seconds"] - r["spmm_seconds"] - r["gemm_seconds"]
    r["spmm_bandwidth"] = r["spmm_bytes"] / r["spmm_seconds"] if r["spmm_seconds"] > 0 else 0
    return r


def peer(path, extra, threads, epochs, model="gcn", precision="fp32", keep=None):
    """The peer's JSON; keep (a path) also gets it, so that a run cut off later keeps it, as
    fullgraph's metrics files are kept."""
    out = run([os.environ.get("FG_PEER_PYTHON", "/usr/bin/python3"),
               os.path.join(HERE, "torch_gcn.py"), path,
               "--threads", str(threads), "--epochs", str(epochs), "--model", model,
               "--precision", precision,
               "--widths", ",".join(str(w) for w in [FEATURES] + [HIDDEN] * (LAYERS - 1)
                                    + [CLASSES])] + extra)
    if keep:
        with open(keep, "w") as f:
            f.write(out.strip().splitlines()[-1] + "\n")
    return json.loads(out.strip().splitlines()[-1])


def npy_header(z, member):
    """(dtype descr, shape) of a .npy member of an open zipfile, and the member's file object
    positioned at the data (the format: magic, version, header length, a Python dict literal)."""
    f = z.open(member)
    magic = f.read(8)
    if magic[:6] != b"\x93NUMPY":
        sys.exit(f"single_process.py: {member} is not a .npy array")
    size = int.from_bytes(f.read(2 if magic[6] == 1 else 4), "little")
    head = ast.literal_eval(f.read(size).decode("latin1"))
    if head["fortran_order"]:
        sys.exit(f"single_process.py: {member} is in Fortran order")
    return head["descr"], head["shape"], f


def heterophilous_snap(npz, out):
    """Write the edges of a heterophilous-graphs .npz (edges: int64 E x 2, each undirected edge
    once; node_labels: N) as a SNAP edge list with a "# Nodes: N" line, so that fullgraph and the
    peer read the same graph, isolated nodes included. Standard library only."""
    with zipfile.ZipFile(npz) as z:
        _, (n,), _ = npy_header(z, "node_labels.npy")
        descr, shape, f = npy_header(z, "edges.npy")
        if descr != "<i8" or len(shape) != 2 or shape[1] != 2:
            sys.exit(f"single_process.py: {npz}: edges is {descr} {shape}, not <i8 (E, 2)")
        ids = array.array("q")
        ids.frombytes(f.read(8 * shape[0] * 2))
    with open(out, "w") as o:
        o.write(f"# {os.path.basename(npz)}: edges of the heterophilous-graphs .npz\n"
                f"# Nodes: {n} Edges: {shape[0]}\n")
        o.writelines(f"{ids[i]} {ids[i + 1]}\n" for i in range(0, len(ids), 2))


def gemm_times(fg, threads, shapes, env=None):
    """Seconds of one call of each shape ("nn:MxNxK"), from `fullgraph bench gemm`."""
    out = run([fg, "bench", "gemm", "--threads", str(threads), "--reps", "3",
               "--shapes", ",".join(shapes)], env=env)
    t = {}
    for m in re.finditer(r"gemm (\w\w) (\d+)x(\d+)x(\d+): ([0-9.e+-]+) s", out):
        t[f"{m.group(1)}:{m.group(2)}x{m.group(3)}x{m.group(4)}"] = float(m.group(5))
    missing = [x for x in shapes if x not in t]
    if missing:
        sys.exit(f"single_process.py: bench gemm gave no time for {missing}")
    return t


def epoch_bound_of(fg, threads, r, nodes, entries, split, env=None):
    """The bound of run r (a GCN run, its triad already set): counts, GEMM times, bound, gap."""
    o = r["options"]
    counts = epoch_bound.gcn_epoch(
        nodes, entries, o["widths"], o["dropout"], split.get("train", nodes),
        split.get("train", nodes) + split.get("valid", 0) + split.get("test", 0),
        gathered=r["reorder_used"] != "none")
    times = gemm_times(fg, threads, [epoch_bound.shape_name(k) for k in counts["gemms"]], env)
    b = epoch_bound.bound(counts, times, r["triad_bytes_per_s"])
    strict = epoch_bound.bound(counts, times, r["triad_bytes_per_s"], "spmm_min_bytes")
    measured = {"gemm": r["gemm_seconds"], "spmm": r["spmm_seconds"],
                "rest": r["rest_seconds"], "total": r["epoch_seconds"]}
    own = None
    if (env or os.environ).get("OPENBLAS_CORETYPE"):
        # what the GEMM part would be with the kernels OpenBLAS picks for this CPU itself
        own_env = {k: v for k, v in (env or os.environ).items() if k != "OPENBLAS_CORETYPE"}
        t = gemm_times(fg, threads, list(times), own_env)
        own = sum(c * t[epoch_bound.shape_name(k)] for k, c in counts["gemms"].items())
    # the model of the epoch must be the epoch the program ran: its own counters agree
    check = {"gemm_flops": (counts["gemm_flops"], r["gemm_flops"]),
             "spmm_bytes": (counts["spmm_bytes"], r["spmm_bytes"])}
    for key, (want, got) in check.items():
        if abs(want - got) > 1e-9 * max(want, 1):
            print(f"warning: the bound's {key} {want:.0f} differs from the run's {got:.0f}: "
                  "bench/epoch_bound.py no longer models this epoch", file=sys.stderr)
    return {"counts": {k: v for k, v in counts.items() if k != "gemms"},
            "gemm_calls": {epoch_bound.shape_name(k): c for k, c in counts["gemms"].items()},
            "gemm_call_seconds": times, "bound_seconds": b, "gap": epoch_bound.gap(measured, b),
            "strict_bound_seconds": strict, "strict_gap": epoch_bound.gap(measured, strict),
            "gemm_bound_own_pick_seconds": own,
            "counts_match": all(abs(w - g) <= 1e-9 * max(w, 1) for w, g in check.values())}


MEDIANS = ("epoch_seconds", "spmm_seconds", "gemm_seconds", "rest_seconds", "spmm_bandwidth",
           "triad_bytes_per_s", "spmm_over_triad")


def yardstick(nodes, entries, model="gcn"):
    """graph + features + (L + 3) activation buffers of nodes x HIDDEN + parameters, bytes
    (SAGE: two weight matrices a layer; GIN: the MLP's two Linears, w_in -> w_out -> w_out)."""
    graph = 8 * (nodes + 1) + 8 * entries
    feats = 4 * nodes * FEATURES
    bufs = (LAYERS + 3) * 4 * nodes * HIDDEN
    widths = [FEATURES] + [HIDDEN] * (LAYERS - 1) + [CLASSES]
    mats = 2 if model == "sage" else 1
    params = 4 * sum(mats * widths[i] * widths[i + 1] + widths[i + 1] for i in range(LAYERS))
    if model == "gin":                            # Linear_2: w_out x w_out and its bias
        params += 4 * sum(widths[i + 1] * widths[i + 1] + widths[i + 1] for i in range(LAYERS))
    return graph + feats + bufs + params


def bound_table(report):
    """The markdown lines of the epoch-bound table (none when no run has a bound)."""
    md = []
    brows = []
    any_wait = any(x.get("omp_wait", "default") != "default" for g in report["graphs"]
                   for rs in g["fullgraph"].values() for x in rs)
    for g in report["graphs"]:
        for o, rs in g["fullgraph"].items():
            rs = [x for x in rs if "bound" in x]
            if not rs:
                continue
            med = statistics.median
            over = med(x["bound"]["gap"]["epoch_over_bound"] for x in rs)
            parts = {p: med(x["bound"]["bound_seconds"][p] for x in rs)
                     for p in ("gemm", "spmm", "rest", "total")}
            each = {p: med(x["bound"]["gap"]["parts"][p]["over_bound"] for x in rs)
                    for p in ("gemm", "spmm", "rest")}
            meas = {p: med(x[f"{p}_seconds"] for x in rs) for p in ("gemm", "spmm", "rest")}
            epoch = med(x["epoch_seconds"] for x in rs)

            def furthest(bparts):
                """The part of largest excess (medians) and its share of the median gap."""
                ex = {p: meas[p] - bparts[p] for p in ("gemm", "spmm", "rest")}
                far = max(ex, key=ex.get)
                gap = epoch - bparts["total"]
                return f"{far} ({ex[far] / gap:.0%} of the gap)" if gap > 0 else \
                    f"{far} (epoch within its bound)"
            strict_parts = {p: med(x["bound"]["strict_bound_seconds"][p] for x in rs)
                            for p in ("gemm", "spmm", "rest", "total")}
            strict = strict_parts["total"]
            sover = med(x["bound"]["strict_gap"]["epoch_over_bound"] for x in rs)
            owns = [x["bound"]["gemm_bound_own_pick_seconds"] for x in rs]
            own = f"{med(owns):.3f}" if None not in owns else "-"
            flops = rs[0]["bound"]["counts"]["gemm_flops"]
            rate = flops / parts["gemm"] / 1e9 if parts["gemm"] > 0 else 0
            ok = all(x["bound"]["counts_match"] for x in rs)
            used = "/".join(sorted(set(x.get("reorder_used", "?") for x in rs)))
            if any_wait:
                used += f", {rs[0].get('omp_wait', 'default')} wait"
            brows.append(
                f"| {g['graph']} | {used} | {epoch:.3f} "
                f"({meas['gemm']:.3f}, {meas['spmm']:.3f}, {meas['rest']:.3f}) | "
                f"{parts['total']:.3f} ({parts['gemm']:.3f} + {parts['spmm']:.3f} + "
                f"{parts['rest']:.3f}) | **{over:.2f}** "
                f"({min(x['bound']['gap']['epoch_over_bound'] for x in rs):.2f}–"
                f"{max(x['bound']['gap']['epoch_over_bound'] for x in rs):.2f}) | "
                f"{each['gemm']:.2f} | {each['spmm']:.2f} | {each['rest']:.2f} | "
                f"{furthest(parts)} | {strict:.3f} | **{sover:.2f}** | "
                f"{furthest(strict_parts)} | {own} | {flops / 1e9:.2f} at {rate:.0f} | "
                f"{rs[0]['bound']['counts']['spmm_bytes'] / 1e6:.0f} "
                f"({rs[0]['bound']['counts']['spmm_min_bytes'] / 1e6:.0f}) + "
                f"{rs[0]['bound']['counts']['elem_bytes'] / 1e6:.0f} | "
                f"{'yes' if ok else 'NO'} |")
    if brows:
        md = ["", "Each GCN epoch against its lower bound on this machine, measured in the same "
               "run (bench/epoch_bound.py): GEMMs at the sgemm time of each shape (`fullgraph "
               "bench gemm`, best of 3, right after the run) + SpMM bytes and elementwise bytes "
               "at the triad beside the run. Medians over the repeats (epoch / bound: range in "
               "brackets); a part's time / bound is its measured seconds over its share of the "
               "bound; furthest: the part with the largest excess (median seconds over its part of "
               "the median bound) and its share of median epoch − median bound; counts checked: the model's flops and SpMM bytes equal the run's "
               "`gemm_flops` and `spmm_bytes`. Stricter: the same with each SpMM reading its "
               "input rows once (an SpMM whose gathers all hit the cache); GEMM, own pick: the "
               "GEMM part with the kernels OpenBLAS picks for this CPU (the environment's "
               "OPENBLAS_CORETYPE removed; - when it is not set).", "",
               "| graph | reorder | epoch s (GEMM, SpMM, rest) | bound s (GEMM + SpMM + rest) | "
               "epoch / bound | GEMM / bound | SpMM / bound | rest / bound | furthest | "
               "stricter bound s | epoch / stricter | furthest (stricter) | GEMM bound s, own "
               "pick | GFLOP at GFLOP/s | MB SpMM (rows once) + elementwise | counts checked |",
               "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---|"
               ] + brows
    return md


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "single"))
    ap.add_argument("--fullgraph", default=os.environ.get(
        "FULLGRAPH", os.path.join(ROOT, "build", "release", "fullgraph")))
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--graphs", default="rmat18,rmat20,snap,snap-keep-ids",
                    help="rmatS, snap (the largest SNAP file), snap-keep-ids (the same file "
                    "read with --keep-ids: every id up to the largest is a node)")
    ap.add_argument("--no-peer", action="store_true")
    ap.add_argument("--peer-precision", default="fp32",
                    help="fp32, bf16-autocast, or both separated by commas: the peer runs in "
                    "each, one after the other after fullgraph in every repeat, and the table "
                    "adds the faster one and fullgraph's speedup over it")
    ap.add_argument("--reorder", default="auto",
                    help="fullgraph's --reorder, or several separated by commas (each is run; "
                    "PyTorch once)")
    ap.add_argument("--snap", default=None, help="SNAP file (default: the largest in "
                    "../shared/data/snap)")
    ap.add_argument("--name", default="single_process")
    ap.add_argument("--repeat", type=int, default=3,
                    help="fullgraph runs per graph and order, each between two triads; the "
                    "table gives their medians and the range of SpMM / triad (PyTorch runs once "
                    "a repeat too, after its model's fullgraph runs)")
    ap.add_argument("--omp-wait", default="default",
                    help="default (the environment's OMP_WAIT_POLICY, or none), passive, "
                    "active, or several separated by commas: each run of fullgraph and the "
                    "GEMM timings of its bound under that OMP_WAIT_POLICY, interleaved like "
                    "the orders")
    ap.add_argument("--gemm", default="default",
                    help="default (the environment's FULLGRAPH_GEMM, or auto), auto, openblas, "
                    "onednn, or several separated by commas: each run of fullgraph and the GEMM "
                    "timings of its bound with that fp32 GEMM library (FULLGRAPH_GEMM), "
                    "interleaved like the orders")
    ap.add_argument("--precision", default="fp32",
                    help="fullgraph's --precision: fp32, bf16, or fp32,bf16 (each a variant of "
                    "every repeat, run one after the other; the epoch bound is fp32's)")
    ap.add_argument("--model", default="gcn",
                    help="gcn, sage, gin, or several separated by commas: each graph is "
                    "trained with each, the models taking turns within every repeat")
    args = ap.parse_args()
    fg = os.path.abspath(args.fullgraph)
    if not os.access(fg, os.X_OK):
        sys.exit(f"single_process.py: {fg} is not built (set --fullgraph or FULLGRAPH)")
    os.makedirs(args.out, exist_ok=True)
    orders = args.reorder.split(",")
    if args.repeat < 1:
        sys.exit("single_process.py: --repeat must be at least 1")
    for o in orders:
        if o not in ("auto", "none", "degree", "rcm"):
            sys.exit(f"single_process.py: unknown --reorder '{o}' (auto, none, degree, rcm)")
    waits = args.omp_wait.split(",")
    for w in waits:
        if w not in ("default", "passive", "active") or waits.count(w) > 1:
            sys.exit(f"single_process.py: bad --omp-wait '{args.omp_wait}' (default, passive, "
                     "active, once each)")
    gemms = args.gemm.split(",")
    for g in gemms:
        if g not in ("default", "auto", "openblas", "onednn") or gemms.count(g) > 1:
            sys.exit(f"single_process.py: bad --gemm '{args.gemm}' (default, auto, openblas, "
                     "onednn, once each)")
    fprecs = args.precision.split(",")
    for p in fprecs:
        if p not in ("fp32", "bf16") or fprecs.count(p) > 1:
            sys.exit(f"single_process.py: bad --precision '{args.precision}' (fp32, bf16, once "
                     "each)")
    # the variants each repeat runs: (key in the tables, order, environment, fullgraph precision)
    variants = []
    for o in orders:
        for w in waits:
            for g in gemms:
                for p in fprecs:
                    env = None if w == "default" else dict(os.environ, OMP_WAIT_POLICY=w)
                    if g != "default":
                        env = dict(env or os.environ, FULLGRAPH_GEMM=g)
                    key = o if len(waits) == 1 else f"{o}, {w} wait"
                    key = key if len(gemms) == 1 else f"{key}, gemm {g}"
                    variants.append((key if len(fprecs) == 1 else f"{key}, {p}", o, env, p))
    keys = [v[0] for v in variants]
    precs = args.peer_precision.split(",")
    for pr in precs:
        if pr not in ("fp32", "bf16-autocast") or precs.count(pr) > 1:
            sys.exit(f"single_process.py: bad --peer-precision '{args.peer_precision}' (fp32, "
                     "bf16-autocast, once each)")
    models = args.model.split(",")
    for m in models:
        if m not in ("gcn", "sage", "gin") or models.count(m) > 1:
            sys.exit(f"single_process.py: bad --model '{args.model}' (gcn, sage, gin, once "
                     "each)")

    graphs = []
    for g in args.graphs.split(","):
        if g.startswith("rmat"):
            scale = int(g[4:])
            path = os.path.join(args.out, f"{g}.txt")
            if not os.path.exists(path):
                run([fg, "generate", "rmat", "--scale", str(scale), "--edge-factor", "16",
                     "--output", path])
            graphs.append((g, path, []))
        elif g.startswith("snap:"):
            folder = os.path.join(ROOT, "..", "shared", "data", "snap")
            hits = sorted(f for f in os.listdir(folder)
                          if f.startswith(g[5:]) and f.endswith((".txt", ".txt.gz")))
            if len(hits) != 1:
                sys.exit(f"single_process.py: '{g}' names {len(hits)} files in {folder}")
            graphs.append((hits[0].split(".")[0], os.path.join(folder, hits[0]), []))
        elif g in ("snap", "snap-keep-ids"):
            path = args.snap or largest_snap(os.path.join(ROOT, "..", "shared", "data", "snap"))
            keep = g == "snap-keep-ids"
            graphs.append((os.path.basename(path).split(".")[0] + (" --keep-ids" if keep else ""),
                           path, ["--keep-ids"] if keep else []))
        elif g.startswith("het:"):
            npz = os.path.join(ROOT, "..", "shared", "data", "heterophilous", g[4:] + ".npz")
            if not os.path.exists(npz):
                sys.exit(f"single_process.py: '{g}': no {npz}")
            path = os.path.join(args.out, f"{g[4:]}.txt")
            if not os.path.exists(path):
                heterophilous_snap(npz, path)
            graphs.append((g[4:], path, []))
        else:
            sys.exit(f"single_process.py: unknown graph '{g}' (rmatS, snap, snap-keep-ids, "
                     "snap:NAME or het:NAME)")

    report = {"machine": cpu_model(), "cpus": os.cpu_count(), "threads": args.threads,
              "blas": blas_kernels(fg),
              "epochs": args.epochs, "reorder": args.reorder, "models": models,
              "load_before": os.getloadavg(), "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "graphs": []}
    for name, path, extra in graphs:
        split = {}
        infos = {(m, o): info(fg, path, extra, o, m, split) for m in models for o in orders}
        nodes, entries, _ = infos[models[0], orders[0]]
        tri = [triad(fg, args.threads)]
        runs = {m: {key: [] for key in keys} for m in models}
        peers = {m: [] for m in models}           # the first precision's runs
        peers_by = {m: {pr: [] for pr in precs} for m in models}
        for k in range(args.repeat):  # models and orders interleaved, so drifts in the host
            for m in models:          # hit all alike
                for key, o, env, fprec in variants:
                    tagkey = re.sub(r"[^A-Za-z0-9]+", "_", key)
                    tag = f"{name.replace(' --', '_')}_{tagkey}_{k}"
                    if m != "gcn":
                        tag = f"{name.replace(' --', '_')}_{m}_{tagkey}_{k}"
                    r = train(fg, path, extra + ["--precision", fprec], args.threads,
                              args.epochs, o, os.path.join(args.out, f"{args.name}_{tag}.json"),
                              m, env)
                    r["precision"] = fprec
                    r["omp_wait"] = (env or {}).get("OMP_WAIT_POLICY", "default")
                    r["gemm_lib"] = (env or os.environ).get("FULLGRAPH_GEMM", "auto")
                    tri.append(triad(fg, args.threads))
                    # this run's triad: the two measured just before and just after it
                    r["triad_bytes_per_s"] = (tri[-2] + tri[-1]) / 2
                    r["spmm_over_triad"] = r["spmm_bandwidth"] / r["triad_bytes_per_s"]
                    if m == "gcn" and fprec == "fp32":  # its GEMMs timed now, beside the run
                        r["bound"] = epoch_bound_of(fg, args.threads, r, nodes, entries, split,
                                                    env)
                    runs[m][key].append(r)
                if not args.no_peer:
                    for pr in precs:             # each precision in turn, after fullgraph
                        keep = os.path.join(args.out, f"{args.name}_{name.replace(' --', '_')}"
                                            f"_{m}_torch_{pr}_{k}.json")
                        peers_by[m][pr].append(peer(path, extra, args.threads, args.epochs, m,
                                                    pr, keep))
                    peers[m] = peers_by[m][precs[0]]
                    if k + 1 < args.repeat or m != models[-1]:
                        tri.append(triad(fg, args.threads))  # the next run's triad before
        for m in models:
            g = {"graph": name, "model": m, "path": path, "nodes": nodes, "entries": entries,
                 "triad_bytes_per_s": tri,
                 "estimate_bytes": {key: infos[m, o][2] for key, o, _, _ in variants},
                 "yardstick_bytes": yardstick(nodes, entries, m), "fullgraph": runs[m],
                 "load": os.getloadavg()}
            if peers[m]:
                # the run of median epoch time (the lower of the middle two), and every run
                ts = peers[m]
                med = statistics.median_low(t["mean_epoch_seconds"] for t in ts)
                g["torch"] = next(t for t in ts if t["mean_epoch_seconds"] == med)
                g["torch_runs"] = ts
                if len(precs) > 1:
                    by = {}
                    for pr, prs in peers_by[m].items():
                        md = statistics.median_low(t["mean_epoch_seconds"] for t in prs)
                        by[pr] = {"median": next(t for t in prs if t["mean_epoch_seconds"] == md),
                                  "runs": prs}
                    g["torch_by_precision"] = by
                    # the peer's best: the faster precision's median; and each repeat's own
                    # best (the precisions' runs of that repeat, beside its fullgraph runs)
                    g["torch_best_precision"] = min(
                        by, key=lambda pr: by[pr]["median"]["mean_epoch_seconds"])
                    g["torch_best_per_repeat"] = [
                        min(peers_by[m][pr][k]["mean_epoch_seconds"] for pr in precs)
                        for k in range(args.repeat)]
                    ts = [t for prs in peers_by[m].values() for t in prs]
                # SAGE's and GIN's Ã drop the self loop every node has as loaded
                want = entries - (nodes if m in ("sage", "gin") else 0)
                for t in ts:
                    if t["adjacency_entries"] != want:
                        print(f"warning: PyTorch's {m} operator has {t['adjacency_entries']} "
                              f"entries, fullgraph's {want}", file=sys.stderr)
            report["graphs"].append(g)
        for mo in (m for m in models if m != "gcn" and "gcn" in models):
            for o in keys:
                ratio = [s["epoch_seconds"] / c["epoch_seconds"]
                         for s, c in zip(runs[mo][o], runs["gcn"][o])]
                c = {"graph": name, "reorder": o, "model": mo, "fullgraph_over_gcn": ratio,
                     "share": {m: {"spmm": statistics.median(r["spmm_seconds"] / r["epoch_seconds"]
                                                             for r in runs[m][o]),
                                   "gemm": statistics.median(r["gemm_seconds"] / r["epoch_seconds"]
                                                             for r in runs[m][o])}
                               for m in ("gcn", mo)}}
                if not args.no_peer:
                    c["torch_over_gcn"] = [
                        s["mean_epoch_seconds"] / t["mean_epoch_seconds"]
                        for s, t in zip(peers[mo], peers["gcn"])]
                report.setdefault("over_gcn", []).append(c)
    report["load_after"] = os.getloadavg()

    rows = []
    head = ("| graph | model | nodes | Â entries | reorder | epoch s | SpMM s | GEMM s | rest s | SpMM GB/s | "
            "triad GB/s | SpMM / triad | peak MB | peak / yardstick | estimate MB |")
    sep = "|---|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
    if not args.no_peer and len(precs) == 1:
        head += " PyTorch s (format) | speedup | PyTorch peak MB |"
        sep += "---:|---:|---:|"
    elif not args.no_peer:
        for pr in precs:
            head += f" PyTorch {pr} s (format) | speedup |"
            sep += "---:|---:|"
        head += (" PyTorch best | speedup over best | per repeat (range) | PyTorch peak MB "
                 f"({', '.join(precs)}) |")
        sep += "---|---:|---:|---:|"
    for g in report["graphs"]:
        for o, rs in g["fullgraph"].items():
            r = {key: statistics.median(x[key] for x in rs) for key in MEDIANS}
            r["peak_rss_bytes"] = max(x["peak_rss_bytes"] for x in rs)
            ratios = [x["spmm_over_triad"] for x in rs]
            spread = f" ({min(ratios):.0%}–{max(ratios):.0%})" if len(rs) > 1 else ""
            used = sorted(set(x.get("reorder_used", "?") for x in rs))
            used = o if not o.startswith("auto") else o.replace("auto", f"auto: {'/'.join(used)}", 1)
            row = (f"| {g['graph']} | {g['model']} | {g['nodes']} | {g['entries']} | {used} | "
                   f"{r['epoch_seconds']:.3f} | {r['spmm_seconds']:.3f} | "
                   f"{r['gemm_seconds']:.3f} | {r['rest_seconds']:.3f} | "
                   f"{r['spmm_bandwidth'] / 1e9:.1f} | {r['triad_bytes_per_s'] / 1e9:.1f} | "
                   f"{r['spmm_over_triad']:.0%}{spread} | {r['peak_rss_bytes'] / 1e6:.0f} | "
                   f"{r['peak_rss_bytes'] / g['yardstick_bytes']:.2f} | "
                   f"{(g['estimate_bytes'][o] or 0) / 1e6:.0f} |")
            if "torch_by_precision" in g:
                by = g["torch_by_precision"]
                for pr in precs:
                    t = by[pr]["median"]
                    fmts = "/".join(sorted(set(x["format"] for x in by[pr]["runs"])))
                    row += (f" {t['mean_epoch_seconds']:.3f} ({fmts}) | "
                            f"{t['mean_epoch_seconds'] / r['epoch_seconds']:.1f}x |")
                best = g["torch_best_precision"]
                tb = by[best]["median"]["mean_epoch_seconds"]
                each = [b / x["epoch_seconds"] for b, x in zip(g["torch_best_per_repeat"], rs)]
                row += (f" {best} | **{tb / r['epoch_seconds']:.1f}x** | "
                        f"{statistics.median(each):.1f}x ({min(each):.1f}–{max(each):.1f}) | "
                        + " / ".join(f"{max(t['peak_rss_bytes'] for t in by[pr]['runs']) / 1e6:.0f}"
                                     for pr in precs) + " |")
            elif "torch" in g:
                t = g["torch"]
                fmts = "/".join(sorted(set(x["format"] for x in g["torch_runs"])))
                row += (f" {t['mean_epoch_seconds']:.3f} ({fmts}) | "
                        f"{t['mean_epoch_seconds'] / r['epoch_seconds']:.1f}x | "
                        f"{t['peak_rss_bytes'] / 1e6:.0f} |")
            rows.append(row)
    md = [f"Machine: {report['machine']}, {report['cpus']} CPUs; {args.threads} thread(s); "
          f"OpenBLAS kernels {report['blas']}; "
          f"{' and '.join(m.upper() for m in models)} {FEATURES} -> {HIDDEN} x {LAYERS - 1} -> "
          f"{CLASSES}, {args.epochs} epochs, mean of the last 8; medians of {args.repeat} "
          f"run(s) a graph, model and order (PyTorch: the run of median epoch"
          + (f", in {' and '.join(precs)}; its best the faster median, per repeat each "
             f"repeat's fullgraph epoch against that repeat's faster peer run"
             if len(precs) > 1 and not args.no_peer else "") + "), "
          f"SpMM / triad's range in brackets; load average "
          f"{report['load_before'][0]:.2f} before, {report['load_after'][0]:.2f} after "
          f"({report['started']}).", "", head, sep] + rows
    if report.get("over_gcn"):
        md += ["", "Each model against GCN of the same widths: epoch time (fullgraph's SpMM share, "
               "GEMM share); model / GCN the median over the repeats of each repeat's ratio.", "",
               "| graph | reorder | model | GCN epoch s (SpMM, GEMM) | model epoch s (SpMM, GEMM) "
               "| model / GCN |" + (" PyTorch model / GCN |" if not args.no_peer else ""),
               "|---|---|---|---:|---:|---:|" + ("---:|" if not args.no_peer else "")]
        for c in report["over_gcn"]:
            cells = []
            for m in ("gcn", c["model"]):
                rs = next(g for g in report["graphs"]
                          if g["graph"] == c["graph"] and g["model"] == m)["fullgraph"]
                e = statistics.median(x["epoch_seconds"] for x in rs[c["reorder"]])
                cells.append(f"{e:.3f} ({c['share'][m]['spmm']:.0%}, "
                             f"{c['share'][m]['gemm']:.0%})")
            row = (f"| {c['graph']} | {c['reorder']} | {c['model'].upper()} | {cells[0]} | "
                   f"{cells[1]} | {statistics.median(c['fullgraph_over_gcn']):.2f} |")
            if "torch_over_gcn" in c:
                row += f" {statistics.median(c['torch_over_gcn']):.2f} |"
            md.append(row)
    md += bound_table(report)
    text = "\n".join(md) + "\n"
    with open(os.path.join(args.out, f"{args.name}.md"), "w") as f:
        f.write(text)
    with open(os.path.join(args.out, f"{args.name}.json"), "w") as f:
        json.dump(report, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
