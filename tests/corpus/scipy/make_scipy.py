#!/usr/bin/python3
"""make_scipy.py -- regenerates tests/corpus/scipy (scipy.sparse .npz files),
tests/corpus/reddit (PyG/DGL Reddit pairs) and tests/corpus/reddit_fuzz (the small pairs, each
concatenated into one input for fuzz_reddit): exact re-encodings of the bundled Cora (data/cora,
the OGB raw layout) written by scipy.sparse.save_npz and numpy.savez themselves, small
well-formed cases, and broken ones (README.md in each folder says what each must produce;
tests/io/test_io_corpus.c and tests/io/test_io_scipy.c check it).

The outputs are committed; run this only to change them (Debian's python3-numpy and
python3-scipy):   /usr/bin/python3 tests/corpus/scipy/make_scipy.py
"""
import gzip
import io
import os
import shutil
import zipfile

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", "..", ".."))
REDDIT = os.path.normpath(os.path.join(HERE, "..", "reddit"))
CORA = os.path.join(ROOT, "data", "cora")


def csv(rel, dtype):
    with gzip.open(os.path.join(CORA, rel), "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=1)


def cora():
    """Cora as data/cora holds it: edges (u < v, once each), features, labels, split."""
    n = int(csv("raw/num-node-list.csv.gz", np.int64)[0])
    edges = csv("raw/edge.csv.gz", np.int64).reshape(-1, 2)
    feat = csv("raw/node-feat.csv.gz", np.float32).reshape(n, -1)
    label = csv("raw/node-label.csv.gz", np.int64).reshape(n)
    types = np.zeros(n, dtype=np.int64)  # 0: in no split (Cora's nodes 640..1707)
    for k, part in enumerate(["train", "valid", "test"]):
        types[csv("split/planetoid/%s.csv.gz" % part, np.int64)] = k + 1
    return n, edges, feat, label, types


def adjacency(n, edges):
    """The symmetric 0/1 pattern, both directions of each edge, as a user's adjacency holds it."""
    u, v = edges[:, 0], edges[:, 1]
    rows = np.concatenate([u, v])
    cols = np.concatenate([v, u])
    return sp.coo_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                         shape=(n, n)).tocsr()


def npy_bytes(a):
    b = io.BytesIO()
    np.lib.format.write_array(b, np.asanyarray(a), allow_pickle=False)
    return b.getvalue()


def write_zip(path, members, compress=False):
    """An .npz from (name, bytes) pairs: for members numpy would not write (a cut .npy)."""
    method = zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members:
            z.writestr(zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0)), data)


def savez(path, **arrays):
    """np.savez with its members written in the order given."""
    write_zip(path, [(k + ".npy", npy_bytes(v)) for k, v in arrays.items()])


# The small matrix of the broken cases: 5 x 5, entries (0,1) (0,2) (1,2) (2,0) (3,4) (4,0).
TINY = sp.csr_matrix((np.ones(6), ([0, 0, 1, 2, 3, 4], [1, 2, 2, 0, 4, 0])), shape=(5, 5))


def csr_members(**over):
    m = dict(indices=TINY.indices.astype(np.int32), indptr=TINY.indptr.astype(np.int32),
             format=np.array(b"csr"), shape=np.array([5, 5], dtype=np.int64),
             data=TINY.data)
    m.update(over)
    return m


def coo_members(**over):
    c = TINY.tocoo()
    m = dict(row=c.row.astype(np.int32), col=c.col.astype(np.int32), format=np.array(b"coo"),
             shape=np.array([5, 5], dtype=np.int64), data=c.data)
    m.update(over)
    return m


def scipy_corpus(n, edges):
    d = HERE
    for f in os.listdir(d):
        if f.endswith(".npz"):
            os.remove(os.path.join(d, f))
    A = adjacency(n, edges)
    # Cora's adjacency as save_npz writes it: csr and csc deflated (its default), coo stored
    sp.save_npz(os.path.join(d, "cora_csr.npz"), A)
    sp.save_npz(os.path.join(d, "cora_csc.npz"), A.tocsc())
    sp.save_npz(os.path.join(d, "cora_coo.npz"), A.tocoo(), compressed=False)

    # well-formed variants of the small matrix
    savez(os.path.join(d, "ok_tiny_csr.npz"), **csr_members())
    savez(os.path.join(d, "ok_tiny_u3.npz"), **csr_members(format=np.array("csr")))  # old scipy
    savez(os.path.join(d, "ok_tiny_i64.npz"),
          **csr_members(indices=TINY.indices.astype(np.int64),
                        indptr=TINY.indptr.astype(np.int64), data=np.ones(6, dtype=np.bool_)))
    savez(os.path.join(d, "ok_tiny_coo.npz"), **coo_members())
    savez(os.path.join(d, "ok_tiny_csc.npz"),
          **csr_members(format=np.array(b"csc"), indices=TINY.tocsc().indices.astype(np.int32),
                        indptr=TINY.tocsc().indptr.astype(np.int32)))

    # broken
    savez(os.path.join(d, "bad_format.npz"), **csr_members(format=np.array(b"csx")))
    sp.save_npz(os.path.join(d, "format_dia.npz"), sp.dia_matrix(TINY))
    savez(os.path.join(d, "format_int.npz"), **csr_members(format=np.array(7)))
    savez(os.path.join(d, "not_square.npz"), **csr_members(shape=np.array([5, 6])))
    savez(os.path.join(d, "shape_three.npz"), **csr_members(shape=np.array([5, 5, 5])))
    savez(os.path.join(d, "zero_nodes.npz"),
          **csr_members(shape=np.array([0, 0]), indptr=np.array([0], dtype=np.int32),
                        indices=np.zeros(0, dtype=np.int32), data=np.zeros(0)))
    savez(os.path.join(d, "indptr_length.npz"),
          **csr_members(indptr=np.array([0, 2, 3, 4, 5], dtype=np.int32)))
    savez(os.path.join(d, "indptr_decreasing.npz"),
          **csr_members(indptr=np.array([0, 2, 3, 2, 5, 6], dtype=np.int32)))
    savez(os.path.join(d, "indptr_end.npz"),
          **csr_members(indptr=np.array([0, 2, 3, 4, 5, 5], dtype=np.int32)))
    savez(os.path.join(d, "index_range.npz"),
          **csr_members(indices=np.array([1, 2, 2, 0, 5, 0], dtype=np.int32)))
    csc = TINY.tocsc()
    bad_rows = csc.indices.astype(np.int64)
    bad_rows[3] = -1
    savez(os.path.join(d, "csc_index_range.npz"),
          **csr_members(format=np.array(b"csc"), indices=bad_rows,
                        indptr=csc.indptr.astype(np.int64)))
    savez(os.path.join(d, "coo_range.npz"),
          **coo_members(col=np.array([1, 2, 7, 0, 4, 0], dtype=np.int32)))
    savez(os.path.join(d, "coo_lengths.npz"),
          **coo_members(col=np.array([1, 2, 2, 0, 4], dtype=np.int32)))
    savez(os.path.join(d, "data_length.npz"), **csr_members(data=np.ones(5)))
    # the same deflated: only data.npy's header is inflated, its length still checked
    np.savez_compressed(os.path.join(d, "data_length_deflated.npz"),
                        **csr_members(data=np.ones(5)))
    m = csr_members()
    del m["indices"]
    savez(os.path.join(d, "missing_indices.npz"), **m)
    m = csr_members()
    del m["data"]
    savez(os.path.join(d, "missing_data.npz"), **m)
    m = coo_members()
    del m["row"]
    savez(os.path.join(d, "missing_row.npz"), **m)
    savez(os.path.join(d, "index_dtype.npz"),
          **csr_members(indices=TINY.indices.astype(np.int16)))
    # indices.npy cut short inside its data: the zip is sound, the .npy is not
    members = [(k + ".npy", npy_bytes(v)) for k, v in csr_members().items()]
    members[0] = (members[0][0], members[0][1][:-6])
    write_zip(os.path.join(d, "trunc_member.npz"), members, compress=True)
    # the archive cut in half: no end-of-central-directory record
    with open(os.path.join(d, "cora_csr.npz"), "rb") as f:
        whole = f.read()
    with open(os.path.join(d, "truncated.npz"), "wb") as f:
        f.write(whole[: len(whole) // 2])


def reddit_pair(name, feature, label, types, graph, data_extra=None, skip=()):
    d = os.path.join(REDDIT, name)
    os.makedirs(d)
    arrays = dict(feature=feature, label=label, node_types=types)
    arrays.update(data_extra or {})
    for k in skip:
        arrays.pop(k, None)
    if "data" not in skip:
        np.savez_compressed(os.path.join(d, "reddit_data.npz"), **arrays)
    if graph is not None:
        sp.save_npz(os.path.join(d, "reddit_graph.npz"), graph)
    return d


def reddit_corpus(n, edges, feat, label, types):
    if os.path.isdir(REDDIT):
        for e in os.listdir(REDDIT):
            if os.path.isdir(os.path.join(REDDIT, e)):
                shutil.rmtree(os.path.join(REDDIT, e))
    os.makedirs(REDDIT, exist_ok=True)
    A = adjacency(n, edges).tocoo()  # Reddit's own graph is a coo matrix
    # Cora as a Reddit pair, float32 and float16 features (Cora's 0/1 are exact in either)
    reddit_pair("cora", feat, label, types, A)
    reddit_pair("cora_f16", feat.astype(np.float16), label, types, A)

    # the small pair: 5 nodes, 3 features, types 1 1 2 3 0
    G = TINY.tocoo()
    f = np.array([[1, 0, 0], [0, 1, 0], [0, 0, 1], [1, 1, 0], [0.5, 0, 2]], dtype=np.float32)
    lab = np.array([0, 1, 2, 1, 0], dtype=np.int64)
    ty = np.array([1, 1, 2, 3, 0], dtype=np.int64)
    reddit_pair("ok", f, lab, ty, G, data_extra={"node_ids": np.arange(5)})
    # float16 exactly: the smallest subnormal, a normal subnormal mix, the largest half, -0
    h = np.array([[2.0 ** -24, 0.1, -65504.0], [1.5, 2.0 ** -14, 3.0 * 2.0 ** -20],
                  [-0.0, 1024.0, 0.333], [1, 1, 0], [0.5, 0, 2]], dtype=np.float16)
    reddit_pair("ok_f16", h, lab, ty, G.tocsr())
    hn = h.copy()
    hn[3, 1] = np.nan
    reddit_pair("f16_nan", hn, lab, ty, G)
    hi = h.copy()
    hi[0, 2] = -np.inf
    reddit_pair("f16_inf", hi, lab, ty, G)
    reddit_pair("bad_type", f, lab, np.array([1, 1, 4, 3, 0]), G)
    reddit_pair("rows", f[:4], lab, ty, G)
    reddit_pair("no_graph", f, lab, ty, None)
    reddit_pair("no_data", f, lab, ty, G, skip=("data",))
    reddit_pair("no_label", f, lab, ty, G, skip=("label",))
    reddit_pair("unlabelled_split", f, np.array([-1, 1, 2, 1, 0]), ty, G)
    # multi-label: 2 tasks, int8 with -1 missing, and float32 with NaN missing
    t2 = np.array([[1, 0], [0, 1], [1, -1], [0, -1], [-1, -1]], dtype=np.int8)
    reddit_pair("ok_multilabel", f, t2, ty, G)
    tf = t2.astype(np.float32)
    tf[tf < 0] = np.nan
    reddit_pair("ok_multilabel_nan", f, tf, ty, G)
    reddit_pair("multilabel_value", f, np.array([[1, 0], [0, 1], [1, 2], [0, 0], [0, 0]]), ty, G)
    t3 = t2.copy()
    t3[0] = -1
    reddit_pair("multilabel_unlabelled", f, t3, ty, G)
    reddit_pair("label_3d", f, t2.reshape(5, 2, 1), ty, G)
    reddit_pair("float_types", f, lab, ty.astype(np.float32), G)
    bad = G.copy()
    bad.row = bad.row.copy()
    bad.row[5] = 9
    d = reddit_pair("graph_range", f, lab, ty, None)
    savez(os.path.join(d, "reddit_graph.npz"), row=bad.row.astype(np.int32),
          col=bad.col.astype(np.int32), format=np.array(b"coo"), shape=np.array([5, 5]),
          data=bad.data)
    d = reddit_pair("data_not_zip", f, lab, ty, G, skip=("data",))
    with open(os.path.join(d, "reddit_data.npz"), "wb") as out:
        out.write(b"feature,label,node_types\n")


def reddit_fuzz_seeds():
    """fuzz_reddit's seeds: each small pair as one input, reddit_data.npz then reddit_graph.npz."""
    d = os.path.join(REDDIT, "..", "reddit_fuzz")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    for case in sorted(os.listdir(REDDIT)):
        src = os.path.join(REDDIT, case)
        parts = [os.path.join(src, f) for f in ("reddit_data.npz", "reddit_graph.npz")]
        if case.startswith("cora") or not all(os.path.exists(p) for p in parts):
            continue
        with open(os.path.join(d, case + ".bin"), "wb") as out:
            for p in parts:
                with open(p, "rb") as f:
                    out.write(f.read())


def main():
    n, edges, feat, label, types = cora()
    scipy_corpus(n, edges)
    reddit_corpus(n, edges, feat, label, types)
    reddit_fuzz_seeds()


if __name__ == "__main__":
    main()
