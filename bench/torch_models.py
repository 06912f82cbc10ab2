#!/usr/bin/python3
"""torch_models.py -- the same models as `fullgraph train --model gcn|sage|gin`, written in plain
PyTorch the way its users write them, for bench/quality.sh.

Reads the dataset files fullgraph reads (an OGB raw directory such as data/cora, gnn-benchmark's
cora.npz, or a heterophilous-graphs .npz) and the split a fullgraph run wrote with --save-split,
so that both train on the very same nodes. The graph is made undirected and deduplicated, as
fullgraph loads it.

  gcn:  H' = Â D W + b, Â = D^-1/2 (A + I) D^-1/2
  sage: H' = D W_self + (D^-1 A) D W_neigh + b  (mean over the neighbours, no self loop;
        a node without neighbours gets 0)
  gin:  H' = Linear_2(relu(Linear_1((1 + eps) D + A D)))  (sum over the neighbours, no self
        loop; eps 0, or learned from 0 with --gin-eps learn: GINConv's train_eps)
with D = dropout(H) on every layer's input, ReLU between layers, Glorot weights, zero biases,
--norm layer|batch on every hidden layer's output after the bias and before its ReLU
(torch.nn.LayerNorm, or torch.nn.BatchNorm1d over all nodes with its running statistics in
evaluation; under BatchNorm the hidden layers have no bias: BatchNorm's shift takes its place, as
in fullgraph, where a bias before the batch mean gets the exact gradient 0 and stays 0),
cross-entropy on the training nodes, Adam with L2 weight decay on the first layer's weights
(Kipf & Welling). Reports the test accuracy at the epoch of best validation accuracy (ties: the
lower validation loss), as fullgraph does. Prints one JSON object.

usage: torch_models.py DATA --split SPLIT.npy --model gcn|sage|gin [--gin-eps 0|learn]
                       [--norm none|layer|batch]
                       [--hidden 16] [--layers 2]
                       [--epochs 200] [--lr 0.01] [--weight-decay 5e-4] [--dropout 0.5]
                       [--seed 0] [--normalize-features] [--threads 2] [--split-index 0]
"""
import argparse
import gzip
import json
import os

import numpy as np
import scipy.sparse as sp
import torch


def read_csv_gz(path, dtype):
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)


def load(path, split_index):
    """(n, src, dst, features, labels) of an OGB raw directory or an .npz."""
    if os.path.isdir(path):
        raw = os.path.join(path, "raw")
        edges = read_csv_gz(os.path.join(raw, "edge.csv.gz"), np.int64)
        x = read_csv_gz(os.path.join(raw, "node-feat.csv.gz"), np.float32)
        y = read_csv_gz(os.path.join(raw, "node-label.csv.gz"), np.int64).ravel()
        return x.shape[0], edges[:, 0], edges[:, 1], x, y
    z = np.load(path)
    if "adj_indptr" in z:  # gnn-benchmark: CSR adjacency and CSR features
        a = sp.csr_matrix((z["adj_data"], z["adj_indices"], z["adj_indptr"]),
                          shape=tuple(z["adj_shape"])).tocoo()
        x = sp.csr_matrix((z["attr_data"], z["attr_indices"], z["attr_indptr"]),
                          shape=tuple(z["attr_shape"])).toarray().astype(np.float32)
        return x.shape[0], a.row.astype(np.int64), a.col.astype(np.int64), x, \
            z["labels"].astype(np.int64)
    e = z["edges"]  # heterophilous-graphs
    return z["node_features"].shape[0], e[:, 0], e[:, 1], \
        z["node_features"].astype(np.float32), z["node_labels"].astype(np.int64)


def operator(n, src, dst, model):
    """The aggregation operator as a coalesced torch COO tensor (rows = destinations)."""
    keep = src != dst
    a = sp.coo_matrix((np.ones(int(keep.sum()), np.float32), (dst[keep], src[keep])), shape=(n, n))
    a = ((a + a.T) > 0).astype(np.float32).tocsr()  # undirected, deduplicated, no self loops
    if model == "gcn":
        a = a + sp.identity(n, dtype=np.float32, format="csr")
        d = np.asarray(a.sum(axis=1)).ravel()
        s = sp.diags(1.0 / np.sqrt(d))
        a = s @ a @ s
    elif model == "sage":
        d = np.asarray(a.sum(axis=1)).ravel()
        a = sp.diags(np.where(d > 0, 1.0 / np.maximum(d, 1), 0.0)) @ a
    a = sp.coo_matrix(a, dtype=np.float32)
    idx = torch.from_numpy(np.vstack([a.row, a.col]).astype(np.int64))
    return torch.sparse_coo_tensor(idx, torch.from_numpy(a.data), (n, n)).coalesce()


def norms(widths, norm):
    """The hidden layers' norms (an empty list without one)."""
    if norm == "none":
        return torch.nn.ModuleList()
    make = torch.nn.LayerNorm if norm == "layer" else torch.nn.BatchNorm1d
    return torch.nn.ModuleList(make(w) for w in widths[1:-1])


def biased(k, widths, norm):
    """Whether layer k has a bias: not a hidden layer under BatchNorm."""
    return norm != "batch" or k + 2 == len(widths)


class GCN(torch.nn.Module):
    def __init__(self, widths, p, norm="none"):
        super().__init__()
        self.lins = torch.nn.ModuleList(torch.nn.Linear(i, o, bias=biased(k, widths, norm))
                                        for k, (i, o) in enumerate(zip(widths, widths[1:])))
        self.norms = norms(widths, norm)
        self.p = p
        for lin in self.lins:
            torch.nn.init.xavier_uniform_(lin.weight)
            if lin.bias is not None:
                torch.nn.init.zeros_(lin.bias)

    def forward(self, a, h):
        for k, lin in enumerate(self.lins):
            h = torch.nn.functional.dropout(h, self.p, self.training)
            h = a @ lin(h)
            if k + 1 < len(self.lins):
                if self.norms:
                    h = self.norms[k](h)
                h = torch.relu(h)
        return h

    def first_weights(self):
        return [self.lins[0].weight]


class SAGE(torch.nn.Module):
    def __init__(self, widths, p, norm="none"):
        super().__init__()
        pairs = list(zip(widths, widths[1:]))
        self.neigh = torch.nn.ModuleList(torch.nn.Linear(i, o, bias=biased(k, widths, norm))
                                         for k, (i, o) in enumerate(pairs))
        self.self_ = torch.nn.ModuleList(torch.nn.Linear(i, o, bias=False) for i, o in pairs)
        self.norms = norms(widths, norm)
        self.p = p
        for lin in list(self.neigh) + list(self.self_):
            torch.nn.init.xavier_uniform_(lin.weight)
        for lin in self.neigh:
            if lin.bias is not None:
                torch.nn.init.zeros_(lin.bias)

    def forward(self, a, h):
        for k in range(len(self.neigh)):
            h = torch.nn.functional.dropout(h, self.p, self.training)
            h = self.neigh[k](a @ h) + self.self_[k](h)
            if k + 1 < len(self.neigh):
                if self.norms:
                    h = self.norms[k](h)
                h = torch.relu(h)
        return h

    def first_weights(self):
        return [self.neigh[0].weight, self.self_[0].weight]


class GIN(torch.nn.Module):
    def __init__(self, widths, p, learn_eps, norm="none"):
        super().__init__()
        pairs = list(zip(widths, widths[1:]))
        # fullgraph's stack: every Linear but the last is a hidden layer (the norm's place)
        stack = [w for o in widths[1:] for w in (o, o)]
        last = len(pairs) - 1
        self.lin1 = torch.nn.ModuleList(torch.nn.Linear(i, o, bias=norm != "batch")
                                        for i, o in pairs)
        self.lin2 = torch.nn.ModuleList(
            torch.nn.Linear(o, o, bias=norm != "batch" or k == last)
            for k, (_, o) in enumerate(pairs))
        self.norms = norms([widths[0]] + stack, norm)
        eps = torch.zeros(len(pairs))
        if learn_eps:
            self.eps = torch.nn.Parameter(eps)
        else:
            self.register_buffer("eps", eps)
        self.p = p
        for lin in list(self.lin1) + list(self.lin2):
            torch.nn.init.xavier_uniform_(lin.weight)
            if lin.bias is not None:
                torch.nn.init.zeros_(lin.bias)

    def forward(self, a, h):
        for k in range(len(self.lin1)):
            h = torch.nn.functional.dropout(h, self.p, self.training)
            h = self.lin1[k]((1 + self.eps[k]) * h + a @ h)
            if self.norms:
                h = self.norms[2 * k](h)
            h = self.lin2[k](torch.relu(h))
            if k + 1 < len(self.lin1):
                if self.norms:
                    h = self.norms[2 * k + 1](h)
                h = torch.relu(h)
        return h

    def first_weights(self):
        return [self.lin1[0].weight, self.lin2[0].weight]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--split", required=True)
    ap.add_argument("--model", choices=["gcn", "sage", "gin"], default="gcn")
    ap.add_argument("--gin-eps", choices=["0", "learn"], default="0")
    ap.add_argument("--norm", choices=["none", "layer", "batch"], default="none")
    ap.add_argument("--hidden", type=int, default=16)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--weight-decay", type=float, default=5e-4)
    ap.add_argument("--dropout", type=float, default=0.5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--normalize-features", action="store_true")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--split-index", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)

    n, src, dst, x, y = load(args.data, args.split_index)
    if args.normalize_features:
        s = x.sum(axis=1, keepdims=True)
        x = np.where(s > 0, x / np.where(s > 0, s, 1), 0).astype(np.float32)
    split = np.load(args.split)
    assert split.shape == (n,), "the split file is not this dataset's"
    masks = [torch.from_numpy(split == k) for k in range(3)]
    a = operator(n, src, dst, args.model)
    x, y = torch.from_numpy(x), torch.from_numpy(y)
    widths = [x.shape[1]] + [args.hidden] * (args.layers - 1) + [int(y.max()) + 1]
    if args.model == "gin":
        net = GIN(widths, args.dropout, args.gin_eps == "learn", args.norm)
    else:
        net = (GCN if args.model == "gcn" else SAGE)(widths, args.dropout, args.norm)
    first = {id(w) for w in net.first_weights()}
    decay = [w for w in net.parameters() if id(w) in first]
    rest = [w for w in net.parameters() if id(w) not in first]
    opt = torch.optim.Adam([{"params": decay, "weight_decay": args.weight_decay},
                            {"params": rest, "weight_decay": 0.0}], lr=args.lr)
    best = (-1.0, float("inf"), 0, 0.0)  # valid acc, valid loss, epoch, test acc
    for epoch in range(1, args.epochs + 1):
        net.train()
        opt.zero_grad()
        out = net(a, x)
        loss = torch.nn.functional.cross_entropy(out[masks[0]], y[masks[0]])
        loss.backward()
        opt.step()
        net.eval()
        with torch.no_grad():
            out = net(a, x)
            pred = out.argmax(dim=1)
            acc = [float((pred[m] == y[m]).float().mean()) for m in masks]
            vloss = float(torch.nn.functional.cross_entropy(out[masks[1]], y[masks[1]]))
        if acc[1] > best[0] or (acc[1] == best[0] and vloss < best[1]):
            best = (acc[1], vloss, epoch, acc[2])
    print(json.dumps({"model": args.model, "norm": args.norm, "seed": args.seed,
                      "best_epoch": best[2],
                      "valid_acc": best[0], "test_acc": best[3]}))


if __name__ == "__main__":
    main()
