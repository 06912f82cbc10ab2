#!/usr/bin/python3
"""make_ogbbin.py -- the corpus of OGB's binary raw layout (tests/corpus/ogbbin), the layout
ogbn-papers100M ships in: raw/data.npz (np.savez_compressed: edge_index (2, E) int64,
num_nodes_list, num_edges_list, node_feat (N, F)), raw/node-label.npz (node_label (N, 1) or
(N, T)) and split/<name>/{train,valid,test}.csv.gz as in the csv layout.

  cora/      data/cora re-encoded exactly: float32 node_feat, int64 labels, the Planetoid split
             (its csv.gz files copied byte for byte)
  cora_f16/  node_feat as float16 (Cora's 0/1 features are exact in it), labels as float32
  cora_nan/  no node_feat; float64 labels with NaN for nodes 700..709 (in no split), the rest as
             Cora's
  <case>/    a 6-node graph, good (ok_*) or broken in one way each (see tests/corpus/README.md)

Run from anywhere: /usr/bin/python3 tests/corpus/ogbbin/make_ogbbin.py
"""
import gzip
import os
import shutil

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CORA = os.path.join(ROOT, "data", "cora")


def read_csv(path, dtype):
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)


def fresh(name):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "raw"))
    return d


def write_split(d, name, parts):
    s = os.path.join(d, "split", name)
    os.makedirs(s)
    for k, ids in parts.items():
        with open(os.path.join(s, k + ".csv.gz"), "wb") as raw:
            with gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as g:
                g.write("".join("%d\n" % v for v in ids).encode())


def write_data(d, **arrays):
    np.savez_compressed(os.path.join(d, "raw", "data.npz"), **arrays)


def write_label(d, **arrays):
    np.savez_compressed(os.path.join(d, "raw", "node-label.npz"), **arrays)


def write_cora():
    e = read_csv(os.path.join(CORA, "raw", "edge.csv.gz"), np.int64)
    x = read_csv(os.path.join(CORA, "raw", "node-feat.csv.gz"), np.float32)
    y = read_csv(os.path.join(CORA, "raw", "node-label.csv.gz"), np.int64)
    n, m = x.shape[0], e.shape[0]
    counts = dict(num_nodes_list=np.array([n], dtype=np.int64),
                  num_edges_list=np.array([m], dtype=np.int64))
    for name, feat, label in (("cora", x, y), ("cora_f16", x.astype(np.float16),
                                               y.astype(np.float32))):
        d = fresh(name)
        write_data(d, edge_index=np.ascontiguousarray(e.T), node_feat=feat, **counts)
        write_label(d, node_label=label)
        shutil.copytree(os.path.join(CORA, "split"), os.path.join(d, "split"))
    d = fresh("cora_nan")
    write_data(d, edge_index=np.ascontiguousarray(e.T), **counts)
    yn = y.astype(np.float64)
    yn[700:710] = np.nan
    write_label(d, node_label=yn)
    shutil.copytree(os.path.join(CORA, "split"), os.path.join(d, "split"))


# ---- the 6-node cases ------------------------------------------------------------------------

EDGES = np.array([[0, 1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 0]], dtype=np.int64)
X = np.arange(18, dtype=np.float32).reshape(6, 3) / 4
Y = np.array([[0], [1], [2], [0], [1], [2]], dtype=np.int64)
SPLIT = {"train": [0, 1], "valid": [2, 3], "test": [4, 5]}


def tiny(name, label=True, split=SPLIT, **over):
    d = fresh(name)
    arrays = dict(edge_index=EDGES, num_nodes_list=np.array([6]), num_edges_list=np.array([6]),
                  node_feat=X, node_year=np.arange(6, dtype=np.int64) + 2000)
    for k, v in over.items():
        if k.startswith("label_"):
            continue
        if v is None:
            arrays.pop(k, None)
        else:
            arrays[k] = v
    write_data(d, **arrays)
    if label:
        write_label(d, node_label=over.get("label_node_label", Y))
    if split:
        write_split(d, "s", split)
    return d


def write_tiny():
    tiny("ok_tiny")
    tiny("ok_nolabel", label=False, split=None, node_feat=None)
    tiny("ok_f16_nan", node_feat=X.astype(np.float16),
         label_node_label=np.array([[0], [1], [2], [0], [1], [np.nan]], dtype=np.float32),
         edge_feat=np.ones((6, 2), dtype=np.float32),
         split={"train": [0, 1], "valid": [2, 3], "test": [4]})
    tiny("ok_multi", label_node_label=np.array([[0, 1, 1], [1, 0, np.nan], [0, 0, 1],
                                                [1, 1, 0], [0, 1, 0], [1, 0, 0]],
                                               dtype=np.float32))
    tiny("edge_shape", edge_index=np.ascontiguousarray(EDGES.T))
    tiny("edge_range", edge_index=np.array([[0, 1, 2, 3, 4, 5], [1, 2, 3, 9, 5, 0]]))
    tiny("edge_float", edge_index=EDGES.astype(np.float64))
    tiny("edge_missing", edge_index=None)
    tiny("edges_count", num_edges_list=np.array([7]))
    tiny("nodes_count", num_nodes_list=np.array([5]))
    tiny("nodes_feat_rows", node_feat=X[:5])
    tiny("nodes_two_graphs", num_nodes_list=np.array([3, 3]))
    tiny("feat_nan", node_feat=np.where(X == 1.0, np.nan, X).astype(np.float32))
    tiny("label_rows", label_node_label=np.array([[0], [1], [2], [0], [1]]))
    tiny("label_fraction", label_node_label=np.array([[0], [1], [2], [0.5], [1], [2]]))
    tiny("label_target_value", label_node_label=np.array([[0, 1], [1, 0], [0, 2], [1, 1],
                                                          [0, 0], [1, 0]]))
    d = tiny("label_missing_member", label=False)
    np.savez_compressed(os.path.join(d, "raw", "node-label.npz"), labels=Y)
    tiny("split_unlabelled",
         label_node_label=np.array([[0], [1], [np.nan], [0], [1], [2]], dtype=np.float32))
    d = tiny("both_layouts")
    with open(os.path.join(d, "raw", "edge.csv"), "w") as f:
        f.write("0,1\n")
    d = tiny("data_truncated")
    p = os.path.join(d, "raw", "data.npz")
    b = open(p, "rb").read()
    open(p, "wb").write(b[:len(b) // 2])


if __name__ == "__main__":
    write_cora()
    write_tiny()
