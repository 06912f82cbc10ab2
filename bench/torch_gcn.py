#!/usr/bin/python3
"""torch_gcn.py -- the PyTorch peer of `fullgraph train` (--model gcn|sage|gin) for
bench/single_process.py.

The same full-graph GCN as fullgraph: Â = D^-1/2 (A + I) D^-1/2 of the undirected,
deduplicated graph (a SNAP edge list, nodes numbered as fullgraph does), random features uniform in [-1, 1),
labels from degree quantiles, a random 60/20/20 split; layers of the given widths, Glorot
weights, zero biases, dropout on every layer's input, ReLU between layers, each layer
aggregating before or after its weight product by fullgraph's rule (layer 0 first when
w_in < 2 w_out, others when w_in < w_out), cross-entropy on the training nodes, Adam with L2
weight decay on the first layer. One epoch is the same work fullgraph does: a training step
(forward with dropout, loss, backward, Adam step) and an evaluation forward without dropout
with the accuracy of each split and the validation loss.

--model sage: GraphSAGE with the mean aggregator, as `fullgraph train --model sage`: the
operator Ã = D^-1 A of the same graph without self loops (row i the mean over i's neighbours; a
node without neighbours gets 0), each layer lin_neigh(Ã D) + lin_self(D), or Ã lin_neigh(D) +
lin_self(D) where fullgraph's rule aggregates last, with one bias (lin_neigh's), Glorot weights
and the L2 decay on both of the first layer's weights; everything else as the GCN.

--model gin: GIN as `fullgraph train --model gin` (eps 0): the operator A of the same graph
without self loops, every entry 1 (row i the sum over i's neighbours), each layer
Linear_2(ReLU(Linear_1(Ã D + (1 + eps) D))), always aggregating first, both Linears mapping to
the layer's output width, Glorot weights, zero biases, and the L2 decay on both of the first
layer's weights (fullgraph decays the first GIN layer's two stack layers); everything else as
the GCN.

Sparse format: the one (COO or CSR) whose product Â·X (SAGE and GIN: Ã·X) is fastest on this
graph, timed before training.

--precision bf16-autocast: mixed precision the way PyTorch users write it on a CPU: the training
forward and the loss, and the evaluation forward, run under torch.autocast("cpu",
dtype=torch.bfloat16); parameters, their gradients and Adam's moments stay fp32 (autocast casts
the weights to bf16 in each product), and bf16 needs no GradScaler. Autocast runs the dense
products (Linear, D·Wᵀ) as bf16 matmuls (oneDNN) and keeps cross_entropy in fp32. The sparse
product cannot follow: torch 1.13 (Debian's python3-torch) has no bf16 kernel for it in either
format ("addmm_sparse_dense" not implemented for 'BFloat16'), and under autocast a plain
torch.sparse.mm of fp32 operands fails the same way, because autocast casts them to bf16. So the
peer's sparse product leaves autocast and runs in fp32: a bf16 input is widened first (Â·H in
fp32, the result fp32; the next Linear casts it back to bf16). A bf16 operator with bf16
features ("coo-bf16", "csr-bf16") is also tried, forward and backward, where the installed torch
supports it, and then timed against the fp32 formats; with 1.13 the trial reports it unsupported
and the epoch is "bf16 dense, fp32 sparse". (Aggregating with index_add_ over the edge list,
which does take bf16, was 30x slower than the fp32 CSR product on a graph of ca-AstroPh's size,
so it is not a candidate.) The trial of every format times the product as the epoch calls it,
the bf16 input's widening included. Prints one JSON object: epoch seconds, the mean of the epochs
after the first two, the sparse format used, the peak resident memory of the process, the model,
the precision, the sparse operator's dtype, and the graph's sizes (to check that it is the graph
fullgraph read; SAGE's and GIN's Ã have no diagonal, so n entries fewer than Â).

usage: torch_gcn.py EDGES --threads T [--model gcn|sage|gin] [--epochs 10]
                    [--widths 128,128,128,32] [--format auto|coo|csr|coo-bf16|csr-bf16]
                    [--dropout 0.5] [--seed 0] [--keep-ids] [--precision fp32|bf16-autocast]
"""
import argparse
import json
import resource
import sys
import time
import warnings

import numpy as np
import scipy.sparse as sp
import torch


def read_snap(path, keep_ids=False):
    """Edge list 'u v' per line with '#' comments (plain or gzip) -> (src, dst, n), with
    fullgraph's node numbering: a "# Nodes: N" comment with every id below N gives N nodes,
    otherwise the ids that occur are renumbered 0..n-1 in increasing order."""
    opener = open
    if path.endswith(".gz"):
        import gzip
        opener = gzip.open
    with opener(path, "rb") as f:
        data = f.read()
    declared = 0
    lines = []
    for ln in data.split(b"\n"):
        t = ln.lstrip()
        if t.startswith((b"#", b"%")):
            if b"Nodes:" in t:
                word = t.split(b"Nodes:", 1)[1].split()
                if word and word[0].isdigit():
                    declared = max(declared, int(word[0]))
        elif t:
            lines.append(t)
    arr = np.array(b" ".join(lines).split(), dtype=np.int64)
    src, dst = arr[0::2], arr[1::2]
    if declared > int(arr.max()):
        return src, dst, declared
    if keep_ids:                                  # fullgraph --keep-ids: node = id
        return src, dst, int(arr.max()) + 1
    ids, inv = np.unique(arr, return_inverse=True)
    return inv[0::2].astype(np.int64), inv[1::2].astype(np.int64), len(ids)


def normalized_adjacency(src, dst, n, model="gcn"):
    """The model's operator (CSR, float32) and each node's degree in A + I (the labels' key):
    gcn Â = D^-1/2 (A + I) D^-1/2, sage Ã = D^-1 A without self loops (empty rows stay empty),
    gin Ã = A without self loops."""
    ones = np.ones(len(src), dtype=np.float32)
    a = sp.coo_matrix((ones, (dst, src)), shape=(n, n)).tocsr()
    a = a + a.T                                   # undirected
    a = a - sp.diags(a.diagonal(), format="csr")  # no self loops yet
    a.eliminate_zeros()
    a.data[:] = 1.0                               # deduplicated
    if model == "gin":
        a.sort_indices()                          # the plain sum: A as it is
        return a.astype(np.float32), np.asarray(a.sum(axis=1)).ravel() + 1
    if model == "sage":
        a.sort_indices()
        deg = np.asarray(a.sum(axis=1)).ravel()
        dinv = np.where(deg > 0, 1.0 / np.maximum(deg, 1), 0.0).astype(np.float32)
        a = (sp.diags(dinv) @ a).tocsr().astype(np.float32)   # rows: the neighbours' mean
        a.sort_indices()                          # torch's CSR takes sorted columns only
        return a, deg + 1
    a = a + sp.identity(n, dtype=np.float32, format="csr")  # one self loop per node
    a.sort_indices()
    deg = np.asarray(a.sum(axis=1)).ravel()
    dinv = 1.0 / np.sqrt(deg)
    a = sp.diags(dinv.astype(np.float32)) @ a @ sp.diags(dinv.astype(np.float32))
    return a.tocsr().astype(np.float32), deg


def to_torch(a, fmt):
    """fmt coo or csr (fp32 values), coo-bf16 or csr-bf16 (bf16 values)."""
    kind, _, bf16 = fmt.partition("-")
    dtype = torch.bfloat16 if bf16 else torch.float32
    if kind == "csr":
        return torch.sparse_csr_tensor(torch.from_numpy(a.indptr.astype(np.int64)),
                                       torch.from_numpy(a.indices.astype(np.int64)),
                                       torch.from_numpy(a.data).to(dtype), size=a.shape)
    c = a.tocoo()
    idx = torch.from_numpy(np.vstack([c.row, c.col]).astype(np.int64))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(c.data).to(dtype),
                                   size=a.shape).coalesce()


def spmm(a, h):
    """Â·H as every model calls it. A bf16 operator multiplies bf16 rows (only chosen where the
    installed torch has that kernel); under autocast an fp32 operator leaves autocast, which
    would cast it to bf16 and fail, and multiplies H widened to fp32; otherwise plain fp32."""
    if a.dtype == torch.bfloat16:
        with torch.autocast("cpu", enabled=False):
            return torch.sparse.mm(a, h.to(torch.bfloat16))
    if torch.is_autocast_cpu_enabled():
        with torch.autocast("cpu", enabled=False):
            return torch.sparse.mm(a, h.float())
    return torch.sparse.mm(a, h)


class GCN(torch.nn.Module):
    def __init__(self, widths, p):
        super().__init__()
        self.p = p
        self.lins = torch.nn.ModuleList()
        self.first = []
        for l in range(len(widths) - 1):
            wi, wo = widths[l], widths[l + 1]
            lin = torch.nn.Linear(wi, wo)
            torch.nn.init.xavier_uniform_(lin.weight)
            torch.nn.init.zeros_(lin.bias)
            self.lins.append(lin)
            self.first.append(wi < 2 * wo if l == 0 else wi < wo)

    def forward(self, a, x):
        h = x
        for l, lin in enumerate(self.lins):
            h = torch.nn.functional.dropout(h, self.p, self.training)
            if self.first[l]:
                h = lin(spmm(a, h))                   # (Â D) W + b
            else:
                h = spmm(a, h @ lin.weight.t()) + lin.bias       # Â (D W) + b
            if l + 1 < len(self.lins):
                h = torch.relu(h)
        return h

    def first_weights(self):
        return [self.lins[0].weight]


class SAGE(torch.nn.Module):
    """Z = D W_self + (Ã D) W_neigh + b: lin_neigh carries the bias, lin_self none."""

    def __init__(self, widths, p):
        super().__init__()
        self.p = p
        self.neigh = torch.nn.ModuleList()
        self.self_ = torch.nn.ModuleList()
        self.first = []
        for l in range(len(widths) - 1):
            wi, wo = widths[l], widths[l + 1]
            neigh, self_ = torch.nn.Linear(wi, wo), torch.nn.Linear(wi, wo, bias=False)
            torch.nn.init.xavier_uniform_(neigh.weight)
            torch.nn.init.xavier_uniform_(self_.weight)
            torch.nn.init.zeros_(neigh.bias)
            self.neigh.append(neigh)
            self.self_.append(self_)
            self.first.append(wi < 2 * wo if l == 0 else wi < wo)

    def forward(self, a, x):
        h = x
        for l, (neigh, self_) in enumerate(zip(self.neigh, self.self_)):
            h = torch.nn.functional.dropout(h, self.p, self.training)
            if self.first[l]:
                z = neigh(spmm(a, h))                 # (Ã D) W_n + b
            else:
                z = spmm(a, h @ neigh.weight.t()) + neigh.bias   # Ã (D W_n) + b
            h = z + self_(h)                              # + D W_s
            if l + 1 < len(self.neigh):
                h = torch.relu(h)
        return h

    def first_weights(self):
        return [self.neigh[0].weight, self.self_[0].weight]


class GIN(torch.nn.Module):
    """Z = Linear_2(ReLU(Linear_1(Ã D + (1 + eps) D))), eps 0 (GINConv's form, eps not learned):
    both Linears map to the layer's output width."""

    def __init__(self, widths, p, eps=0.0):
        super().__init__()
        self.p = p
        self.eps = eps
        self.lin1 = torch.nn.ModuleList()
        self.lin2 = torch.nn.ModuleList()
        for l in range(len(widths) - 1):
            wi, wo = widths[l], widths[l + 1]
            lin1, lin2 = torch.nn.Linear(wi, wo), torch.nn.Linear(wo, wo)
            for lin in (lin1, lin2):
                torch.nn.init.xavier_uniform_(lin.weight)
                torch.nn.init.zeros_(lin.bias)
            self.lin1.append(lin1)
            self.lin2.append(lin2)

    def forward(self, a, x):
        h = x
        for l, (lin1, lin2) in enumerate(zip(self.lin1, self.lin2)):
            h = torch.nn.functional.dropout(h, self.p, self.training)
            y = spmm(a, h) + (1 + self.eps) * h         # Ã D + (1 + eps) D
            h = lin2(torch.relu(lin1(y)))
            if l + 1 < len(self.lin1):
                h = torch.relu(h)
        return h

    def first_weights(self):
        return [self.lin1[0].weight, self.lin2[0].weight]


def run(a, x, y, masks, widths, args, epochs):
    torch.manual_seed(args.seed)
    model = {"gcn": GCN, "sage": SAGE, "gin": GIN}[args.model](widths, args.dropout)
    # L2 weight decay on the first layer's weights only, as fullgraph (Kipf & Welling)
    first = {id(w) for w in model.first_weights()}
    decay = [w for w in model.parameters() if id(w) in first]
    rest = [w for w in model.parameters() if id(w) not in first]
    opt = torch.optim.Adam([{"params": decay, "weight_decay": 5e-4},
                            {"params": rest, "weight_decay": 0.0}], lr=0.01)
    train, valid, test = masks
    bf16 = args.precision == "bf16-autocast"
    times, losses = [], []
    for _ in range(epochs):
        t0 = time.perf_counter()
        model.train()
        opt.zero_grad(set_to_none=True)
        with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(a, x)
            loss = torch.nn.functional.cross_entropy(out[train], y[train])
        loss.backward()                           # outside autocast, as its documentation says
        opt.step()
        model.eval()
        with torch.no_grad(), torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
            out = model(a, x).float()
            pred = out.argmax(1)
            accs = [float((pred[m] == y[m]).float().mean()) for m in (train, valid, test)]
            vloss = float(torch.nn.functional.cross_entropy(out[valid], y[valid]))
        times.append(time.perf_counter() - t0)
        losses.append(float(loss))
    return times, losses, accs, vloss


def main():
    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
    ap = argparse.ArgumentParser()
    ap.add_argument("edges")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--model", default="gcn", choices=["gcn", "sage", "gin"])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--widths", default="128,128,128,32")
    ap.add_argument("--format", default="auto", choices=["auto", "coo", "csr", "coo-bf16", "csr-bf16"])
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--keep-ids", action="store_true",
                    help="as fullgraph --keep-ids: nodes 0..max id, absent ids isolated")
    ap.add_argument("--precision", default="fp32", choices=["fp32", "bf16-autocast"],
                    help="bf16-autocast: forward and loss under torch.autocast('cpu', "
                    "dtype=torch.bfloat16), the sparse product in fp32 unless torch has a bf16 "
                    "one and it is faster")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    widths = [int(w) for w in args.widths.split(",")]

    src, dst, n = read_snap(args.edges, args.keep_ids)
    a, deg = normalized_adjacency(src, dst, n, args.model)
    n = a.shape[0]
    rng = np.random.default_rng(args.seed)
    x = torch.from_numpy((rng.random((n, widths[0]), dtype=np.float32) * 2 - 1))
    classes = widths[-1]
    order = np.lexsort((rng.random(n), deg))      # degree quantiles, ties broken at random
    labels = np.empty(n, dtype=np.int64)
    labels[order] = np.arange(n) * classes // n
    y = torch.from_numpy(labels)
    u = rng.random(n)
    masks = (torch.from_numpy(u < 0.6), torch.from_numpy((u >= 0.6) & (u < 0.8)),
             torch.from_numpy(u >= 0.8))

    bf16 = args.precision == "bf16-autocast"
    formats = ["coo", "csr"] if args.format == "auto" else [args.format]
    if bf16 and args.format == "auto":
        formats += ["coo-bf16", "csr-bf16"]
    trial = {}
    if len(formats) > 1:   # the format whose Â·X (n x w_0; SAGE, GIN Ã·X) is fastest, best of 3
        # under autocast X arrives in bf16 (a Linear's output), so the trial feeds it so
        xin = x.to(torch.bfloat16) if bf16 else x
        for f in formats:
            try:
                at = to_torch(a, f)
                with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
                    if at.dtype == torch.bfloat16:   # its backward must exist too
                        xg = xin.detach().requires_grad_()
                        spmm(at, xg).float().sum().backward()
                    spmm(at, xin)
                    best = float("inf")
                    for _ in range(3):
                        t0 = time.perf_counter()
                        spmm(at, xin)
                        best = min(best, time.perf_counter() - t0)
                trial[f] = best
            except (RuntimeError, NotImplementedError) as e:
                trial[f] = None
                print(f"torch_gcn: format {f} failed: {str(e).splitlines()[0]}",
                      file=sys.stderr)
        ok = {k: v for k, v in trial.items() if v is not None}
        if not ok:
            sys.exit("torch_gcn: no sparse format works with this torch")
        fmt = min(ok, key=ok.get)
        at = None
    else:
        fmt = formats[0]
    at = to_torch(a, fmt)
    times, losses, accs, vloss = run(at, x, y, masks, widths, args, args.epochs)
    tail = times[2:] if len(times) > 2 else times
    print(json.dumps({
        "model": args.model, "nodes": n, "adjacency_entries": int(a.nnz), "format": fmt, "trial_seconds": trial,
        "precision": args.precision,
        "sparse_dtype": "bfloat16" if fmt.endswith("-bf16") else "float32",
        "threads": torch.get_num_threads(), "epoch_seconds": times,
        "mean_epoch_seconds": sum(tail) / len(tail), "losses": losses,
        "final_acc": accs, "final_valid_loss": vloss,
        "peak_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "torch": torch.__version__}))


if __name__ == "__main__":
    main()
