#!/usr/bin/python3
"""make_saint.py -- the GraphSAINT-layout corpus (tests/corpus/saint), written with numpy and
scipy as GraphSAINT's own files are (scipy.sparse.save_npz, numpy.save, json.dump):

  cora/        data/cora (the OGB csv layout) re-encoded exactly: adj_full.npz (the 5278 edges in
               both directions, CSR), feats.npy stored gzip'ed as feats.npy.gz (15.5 MB plain;
               the test inflates it), class_map.json (node -> class) and role.json (the
               Planetoid split)
  cora_multi/  class_map.json only: Cora's classes one-hot as 7 binary tasks (lists of 0/1), laid
               over cora/ by the test
  <case>/      a 6-node graph, good (ok_*) or broken in one way each (see tests/corpus/README.md)

Run from anywhere: /usr/bin/python3 tests/corpus/saint/make_saint.py
"""
import gzip
import io
import json
import os
import shutil

import numpy as np
import scipy.sparse as sp

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", "..", ".."))
CORA = os.path.join(ROOT, "data", "cora")


def read_csv(path, dtype):
    with gzip.open(path, "rt") as f:
        return np.loadtxt(f, delimiter=",", dtype=dtype, ndmin=2)


def cora():
    e = read_csv(os.path.join(CORA, "raw", "edge.csv.gz"), np.int64)
    x = read_csv(os.path.join(CORA, "raw", "node-feat.csv.gz"), np.float32)
    y = read_csv(os.path.join(CORA, "raw", "node-label.csv.gz"), np.int64)[:, 0]
    split = {}
    for k in ("train", "valid", "test"):
        split[k] = read_csv(os.path.join(CORA, "split", "planetoid", k + ".csv.gz"), np.int64)[:, 0]
    return e, x, y, split


def fresh(name):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def write_adj(d, n, edges, shape=None, name="adj_full.npz"):
    """Both directions of each edge, as GraphSAINT's symmetric adjacencies hold them."""
    src = np.concatenate([edges[:, 0], edges[:, 1]])
    dst = np.concatenate([edges[:, 1], edges[:, 0]])
    a = sp.csr_matrix((np.ones(len(src), dtype=np.float32), (src, dst)), shape=shape or (n, n))
    sp.save_npz(os.path.join(d, name), a)


def write_text(d, name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)


def class_map_text(labels):
    return json.dumps({str(i): int(c) for i, c in enumerate(labels)})


def role_text(tr, va, te):
    return json.dumps({"tr": [int(v) for v in tr], "va": [int(v) for v in va],
                       "te": [int(v) for v in te]})


def write_cora():
    e, x, y, split = cora()
    n = x.shape[0]
    d = fresh("cora")
    write_adj(d, n, e)
    buf = io.BytesIO()
    np.save(buf, x)
    with open(os.path.join(d, "feats.npy.gz"), "wb") as raw:
        with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0) as g:
            g.write(buf.getvalue())
    write_text(d, "class_map.json", class_map_text(y))
    write_text(d, "role.json", role_text(split["train"], split["valid"], split["test"]))
    d = fresh("cora_multi")
    onehot = {str(i): [int(c == k) for k in range(7)] for i, c in enumerate(y)}
    write_text(d, "class_map.json", json.dumps(onehot))


# ---- the 6-node cases ------------------------------------------------------------------------

TINY_EDGES = np.array([[0, 1], [1, 2], [2, 3], [3, 4], [4, 5], [5, 0]], dtype=np.int64)
TINY_X = np.arange(18, dtype=np.float32).reshape(6, 3) / 4
TINY_Y = [0, 1, 2, 0, 1, 2]
TINY_CM = class_map_text(TINY_Y)
TINY_ROLE = role_text([0, 1], [2, 3], [4, 5])


def tiny(name, adj=True, feats=None, cm=TINY_CM, role=TINY_ROLE, extra=None):
    d = fresh(name)
    if adj:
        write_adj(d, 6, TINY_EDGES)
    np.save(os.path.join(d, "feats.npy"), TINY_X if feats is None else feats)
    if cm is not None:
        write_text(d, "class_map.json", cm)
    if role is not None:
        write_text(d, "role.json", role)
    if extra:
        extra(d)
    return d


def write_tiny():
    tiny("ok_tiny")
    tiny("ok_multi", cm=json.dumps({str(i): [int(c == 0), int(c == 1), int(i % 2)]
                                    for i, c in enumerate(TINY_Y)}))
    # keys in any order, adj_train.npz beside (ignored), a role key GraphSAINT does not use,
    # a node in no role, float64 features, pretty-printed JSON over several lines
    tiny("ok_extra", feats=TINY_X.astype(np.float64),
         cm=json.dumps({str(i): TINY_Y[i] for i in (5, 3, 1, 0, 2, 4)}, indent=2),
         role='{"te": [4, 5],\n "note": {"made by": ["make_saint.py", null, true, 1.5e3]},\n'
              ' "tr": [0, 1], "va": [2]}',
         extra=lambda d: write_adj(d, 6, TINY_EDGES[:2], name="adj_train.npz"))
    tiny("ok_f16", feats=TINY_X.astype(np.float16))
    tiny("missing_role", role=None)
    tiny("missing_adj", adj=False)
    tiny("adj_not_square", extra=lambda d: write_adj(d, 6, TINY_EDGES[:3], shape=(6, 7)))
    tiny("feats_rows", feats=TINY_X[:5])
    tiny("feats_1d", feats=TINY_X.reshape(-1))
    tiny("feats_nan", feats=np.where(TINY_X == 2.5, np.nan, TINY_X).astype(np.float32))
    cm = '{"0": 0, "1": 1, "2": 2, "3": 0, "5": 2}'
    tiny("cm_missing_node", cm=cm)
    tiny("cm_not_int", cm='{"0": 0, "1": 1.5, "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_string_value", cm='{"0": 0, "1": "1", "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_negative", cm='{"0": 0, "1": -1, "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_dup_key", cm='{"0": 0, "1": 1, "2": 2, "3": 0, "4": 1, "1": 2}')
    tiny("cm_bad_key", cm='{"0": 0, "x1": 1, "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_key_range", cm='{"0": 0, "1": 1, "2": 2, "3": 0, "4": 1, "6": 2}')
    tiny("cm_leading_zero", cm='{"0": 0, "01": 1, "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_mixed", cm='{"0": 0, "1": [0, 1], "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_list_len", cm='{"0": [1, 0], "1": [0, 1], "2": [1, 1, 0], "3": [0, 0],'
                           ' "4": [1, 0], "5": [0, 1]}')
    tiny("cm_list_value", cm='{"0": [1, 0], "1": [0, 2], "2": [1, 1], "3": [0, 0],'
                             ' "4": [1, 0], "5": [0, 1]}')
    tiny("cm_trailing_comma", cm='{"0": 0, "1": 1, "2": 2, "3": 0, "4": 1, "5": 2,}')
    tiny("cm_unterminated", cm='{"0": 0, "1": 1, "2": 2, "3": 0, "4": 1, "5')
    tiny("cm_garbage_after", cm=TINY_CM + '\n}')
    tiny("cm_empty", cm='')
    tiny("cm_control_byte", cm='{"0": 0, "1\t": 1, "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_bad_utf8", cm=None,
         extra=lambda d: open(os.path.join(d, "class_map.json"), "wb").write(
             b'{"0": 0, "\xc3\x28": 1}'))
    tiny("cm_nan", cm='{"0": 0, "1": NaN, "2": 2, "3": 0, "4": 1, "5": 2}')
    tiny("cm_sparse_classes", cm='{"0": 0, "1": 1, "2": 2, "3": 0, "4": 1, "5": 99999}')
    tiny("role_range", role=role_text([0, 1], [2, 6], [4, 5]))
    tiny("role_two_roles", role=role_text([0, 1], [2, 3], [4, 1]))
    tiny("role_twice", role=role_text([0, 1, 0], [2, 3], [4, 5]))
    tiny("role_missing_te", role='{"tr": [0, 1], "va": [2, 3]}')
    tiny("role_dup_key", role='{"tr": [0], "va": [2, 3], "tr": [1]}')
    tiny("role_not_list", role='{"tr": 0, "va": [2, 3], "te": [4, 5]}')
    tiny("role_syntax", role='{\n  "tr": [0, 1],\n  "va": [2 3],\n  "te": [4, 5]\n}\n')
    tiny("role_deep", role='{"tr": [0], "va": [2], "te": [4], "x": ' + "[" * 100 + "]" * 100 + "}")
    tiny("role_not_object", role='[[0, 1], [2, 3], [4, 5]]')


if __name__ == "__main__":
    write_cora()
    write_tiny()
