#!/usr/bin/python3
"""epoch_bound.py -- what one epoch of `fullgraph train` on one process (scheme serial) must
compute and move, and the lower bound on its time that this gives on a machine: the epoch's GEMMs
at the sgemm time measured for each of their shapes, plus its SpMM bytes and its elementwise
bytes at the STREAM triad bandwidth. bench/single_process.py prints it beside every measured
epoch; tests/cli/epoch_bound_test.py checks the counts.

An epoch (src/train/trainer.c) is a training step -- forward with dropout, softmax
cross-entropy, backward, Adam -- and an evaluation forward without dropout with the loss of the
three splits. For a GCN of widths w_0 .. w_L on n nodes and an Â of nnz stored entries
(src/model/layer_gcn.c, model.c; layer l aggregates first when w_l < 2 w_{l+1} for l = 0 and
w_l < w_{l+1} after, as fg_agg_first decides), with f = 4 bytes a float:

GEMMs (C = op(A) op(B), M x N by K; flops 2 M N K each; the count must equal the metrics'
`gemm_flops`):
  each forward, layer l: nn M = n, N = w_{l+1}, K = w_l (S W or D W)
  backward, layer l: tn M = w_l, N = w_{l+1}, K = n (dW = Sᵀ dZ or Dᵀ dT), and for l > 0
    nt M = n, N = w_l, K = w_{l+1} (dD = dZ Wᵀ or dT Wᵀ)
SpMMs (each: nnz (4 + 4) bytes of column index and value, nnz w f of gathered rows, n w f
written -- exactly the `spmm_bytes` counter of src/schemes/scheme.c, whose total this must
equal): each forward one per layer at w_l (first) or w_{l+1} (last); backward one per layer at
w_{l+1} (last) or, for l > 0, w_l (first). That counter takes every gathered row from memory;
a second, stricter figure (`spmm_min_bytes`) reads each input row once -- nnz (4 + 4) + n w f
read + n w f written a SpMM -- which is what an SpMM whose gathers all hit the cache would move:
on R-MAT and social graphs the kernel runs well below the first, so the second is the one that
says how far its part still is from the limit.
Elementwise passes, each reading and writing every element it touches once (what the kernels in
src/kernels/fused.c, elementwise.c, loss.c and optim.c do):
  the input pass (training forward with dropout or rows in another order; evaluation forward
    with rows in another order; the backward of a layer 0 that aggregates last, which redoes
    it): read and write n w_0 f
  after each layer's product, bias (+ ReLU + dropout): read and write n w_{l+1} f
  training loss: the softmax statistics read the training rows' logits (t w_L f), the gradient
    reads them again and writes every row of dZ (n w_L f)
  evaluation loss: the statistics read every labelled row (m w_L f), the three splits' passes
    read each labelled row once more (m w_L f)
  backward, layer l: the bias gradient reads dZ (n w_{l+1} f); for l > 0 the ReLU / dropout
    mask reads dD and D and writes dD (3 n w_l f)
  Adam: every parameter, its gradient and two moments read, the parameter and moments written
    (7 f a parameter, parameters = sum of w_l w_{l+1} + w_{l+1})
  Left out (under 1 % of these bytes at width 128): the labels and row masks the loss passes
  read, the bias and the dropout draws (computed, not loaded), the loss's per-row statistics.
A pass over data that stays in cache moves fewer bytes than this, so on a small graph the
bound can sit below what the machine does; on a large one it is what a kernel that streams each
array once, at the triad's rate, would take.
"""

F = 4  # bytes a float


def agg_first(l, w_in, w_out):
    """fg_agg_first with --agg-order auto (src/schemes/scheme.c)."""
    return w_in < 2 * w_out if l == 0 else w_in < w_out


def spmm_bytes(nnz, rows, width):
    return nnz * 8 + nnz * width * F + rows * width * F


def gcn_epoch(n, nnz, widths, dropout, train_rows, labelled_rows, gathered=False):
    """The counts of one epoch: {"gemms": {(ta, tb, M, N, K): calls}, "gemm_flops",
    "spmm_bytes", "elem_bytes", "elem": {pass: bytes}}. gathered: the features are read through
    a row map (a --reorder that moved rows)."""
    L = len(widths) - 1
    gemms, elem = {}, {}
    spmm = spmm_min = 0

    def gemm(ta, tb, m, nn, k):
        key = (ta, tb, m, nn, k)
        gemms[key] = gemms.get(key, 0) + 1

    def agg(width):
        nonlocal spmm, spmm_min
        spmm += spmm_bytes(nnz, n, width)
        spmm_min += nnz * 8 + 2 * n * width * F

    def add(what, b):
        elem[what] = elem.get(what, 0) + b

    input_pass = 2 * n * widths[0] * F
    for training in (True, False):
        if (training and dropout > 0) or gathered:
            add("input dropout / gather", input_pass)
        for l in range(L):
            wi, wo = widths[l], widths[l + 1]
            agg(wi if agg_first(l, wi, wo) else wo)
            gemm("n", "n", n, wo, wi)
            add("bias, ReLU, dropout", 2 * n * wo * F)
        C = widths[L]
        if training:
            add("loss", (2 * train_rows + n) * C * F)
        else:
            add("loss", 2 * labelled_rows * C * F)
    for l in reversed(range(L)):
        wi, wo = widths[l], widths[l + 1]
        add("bias gradient", n * wo * F)
        if agg_first(l, wi, wo):
            gemm("t", "n", wi, wo, n)
            if l > 0:
                gemm("n", "t", n, wi, wo)
                agg(wi)
        else:
            agg(wo)
            if l == 0 and (dropout > 0 or gathered):
                add("input dropout / gather", input_pass)
            gemm("t", "n", wi, wo, n)
            if l > 0:
                gemm("n", "t", n, wi, wo)
        if l > 0:
            add("ReLU / dropout mask", 3 * n * wi * F)
    params = sum(widths[l] * widths[l + 1] + widths[l + 1] for l in range(L))
    add("Adam", 7 * params * F)
    return {"gemms": gemms,
            "gemm_flops": sum(2 * m * nn * k * c for (_, _, m, nn, k), c in gemms.items()),
            "spmm_bytes": spmm, "spmm_min_bytes": spmm_min, "elem_bytes": sum(elem.values()), "elem": elem}


def shape_name(key):
    ta, tb, m, n, k = key
    return f"{ta}{tb}:{m}x{n}x{k}"


def bound(counts, gemm_seconds, triad, spmm_key="spmm_bytes"):
    """The lower bound in seconds, by part: gemm_seconds maps shape_name to the measured time of
    one call; triad in bytes per second; spmm_key "spmm_min_bytes" for the stricter SpMM part."""
    g = sum(c * gemm_seconds[shape_name(k)] for k, c in counts["gemms"].items())
    s = counts[spmm_key] / triad
    e = counts["elem_bytes"] / triad
    return {"gemm": g, "spmm": s, "rest": e, "total": g + s + e}


def gap(measured, b):
    """measured: {"gemm", "spmm", "rest", "total"} seconds of the epoch; b: bound(). Each part's
    time over its bound and its share of the gap (epoch - bound); the part whose excess is
    largest is `furthest`."""
    total_gap = measured["total"] - b["total"]
    parts = {}
    for p in ("gemm", "spmm", "rest"):
        ex = measured[p] - b[p]
        parts[p] = {"over_bound": measured[p] / b[p] if b[p] > 0 else float("inf"),
                    "excess_seconds": ex,
                    "gap_share": ex / total_gap if total_gap > 0 else 0.0}
    return {"epoch_over_bound": measured["total"] / b["total"], "parts": parts,
            "furthest": max(parts, key=lambda p: parts[p]["excess_seconds"])}
