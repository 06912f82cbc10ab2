"""fullgraph from Python: full-graph GNN training on arrays, over libfullgraph.so (ctypes).

    import fullgraph
    d = fullgraph.load("data/cora")                  # arrays: adj, features, labels, split, ...
    r = fullgraph.train(d["adj"], d["features"], d["labels"], d["split"], epochs=200)
    r["metrics"]["loss"], r["test_acc"], r["predictions"]

Nothing is compiled: PYTHONPATH=python with a built library is enough (FULLGRAPH_LIB, the build
tree, or an installed libfullgraph). Several processes: `mpirun -n P python3 script.py`, every
rank calling train with the same arrays (mpi4py is not needed). Failures of the library raise
fullgraph.Error with its message; mistakes Python can see first (a complex dtype, a wrong
shape) raise TypeError or ValueError.
"""

import json
import numbers
import sys

import numpy as np

from ._lib import Error  # noqa: F401  (public)
from . import _lib

__all__ = ["Error", "load", "train", "rank", "size", "version", "library_path"]

library_path = _lib.path


def version():
    """The library's version string."""
    return _lib.fg_version_string().decode()


def rank():
    """This process's rank in MPI_COMM_WORLD (0 without mpirun)."""
    return _lib.fg_world_rank()


def size():
    """The number of processes in MPI_COMM_WORLD (1 without mpirun)."""
    return _lib.fg_world_size()


# ---- load options (fg_load_config), named as the CLI's flags -----------------------------------

_LOAD_KEYS = ("directed", "keep_duplicates", "no_self_loops", "keep_ids", "split_index", "split",
              "gen_features", "gen_classes", "train_frac", "valid_frac", "seed", "mem_limit")


def _load_config(opts):
    """An fg_load_config from the CLI's load flags in opts (the keys used are removed)."""
    c = _lib.fg_load_config_default()
    keep = []  # bytes that c points to

    def flag(name):
        v = opts.pop(name, False)
        if not isinstance(v, (bool, np.bool_, numbers.Integral)) or int(v) not in (0, 1):
            raise TypeError("fullgraph: option %s expects True or False, got %r" % (name, v))
        return bool(v)

    def integer(name, v):
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Integral):
            raise TypeError("fullgraph: option %s expects an integer, got %r" % (name, v))
        return int(v)

    if flag("directed"):
        c.undirected = 0
    if flag("keep_duplicates"):
        c.dedup = 0
    if flag("no_self_loops"):
        c.self_loops = 0
    if flag("keep_ids"):
        c.keep_ids = 1
    for name in ("split_index", "gen_features", "gen_classes"):
        if name in opts:
            v = integer(name, opts.pop(name))
            if not -2**31 <= v < 2**31:
                raise ValueError("fullgraph: option %s out of range: %d" % (name, v))
            setattr(c, name, v)
    for name in ("train_frac", "valid_frac"):
        if name in opts:
            setattr(c, name, float(opts.pop(name)))
    if "split" in opts:
        b = str(opts.pop("split")).encode()
        keep.append(b)
        c.split_name = b
    # seed and mem_limit bound the training too: read, not removed (as the CLI shares them)
    if opts.get("seed") is not None:
        v = integer("seed", opts["seed"])
        if not 0 <= v < 2**64:
            raise ValueError("fullgraph: option seed must be in [0, 2^64), got %d" % v)
        c.seed = v
    if opts.get("mem_limit") is not None:
        c.mem_limit = _mem_limit(opts["mem_limit"])
    return c, keep


def _mem_limit(v):
    if v == "none":
        return -1.0
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, numbers.Real):
        raise TypeError("fullgraph: option mem_limit expects bytes (a number) or 'none', got %r"
                        % (v,))
    return float(v)


# ---- arrays ------------------------------------------------------------------------------------

def _ptr(a):
    return a.ctypes.data_as(_lib.ctypes.c_void_p) if a is not None else None


def _numeric(name, a, kinds):
    """a as an ndarray whose dtype kind is one of kinds (TypeError otherwise)."""
    a = np.asarray(a)
    if a.dtype.kind not in kinds:
        raise TypeError("fullgraph: %s has dtype %s; expected %s" % (
            name, a.dtype, {"b": "booleans", "iu": "integers", "biuf": "real numbers",
                            "iub": "integers"}.get(kinds, kinds)))
    return a


def _int_array(name, a, ndim, dtype, lo=None, hi=None):
    """a as a C-contiguous array of dtype (a copy where needed); ValueError when a value does not
    fit dtype, so that a cast never wraps it into a valid one."""
    a = _numeric(name, a, "iub")
    if a.ndim != ndim:
        raise ValueError("fullgraph: %s must be %d-dimensional, got shape %s" % (
            name, ndim, a.shape))
    info = np.iinfo(dtype)
    lo = info.min if lo is None else lo
    hi = info.max if hi is None else hi
    if a.size:
        amin, amax = a.min(), a.max()
        if amin < lo or amax > hi:
            bad = int(np.flatnonzero((a.ravel() < lo) | (a.ravel() > hi))[0])
            idx = np.unravel_index(bad, a.shape)
            raise ValueError("fullgraph: %s%s = %d out of range [%d, %d]" % (
                name, list(int(i) for i in idx), int(a[idx]), lo, hi))
    return np.ascontiguousarray(a, dtype=dtype)


def _edges(adj, n_hint):
    """(n, src, dst) from a scipy.sparse matrix (row v aggregates from the columns of its
    entries: src = column, dst = row) or an (E, 2) array of (src, dst) rows."""
    if hasattr(adj, "tocoo") and hasattr(adj, "shape") and not isinstance(adj, np.ndarray):
        if len(adj.shape) != 2 or adj.shape[0] != adj.shape[1]:
            raise ValueError("fullgraph: adj must be a square sparse matrix, got shape %s"
                             % (adj.shape,))
        coo = adj.tocoo()
        n = int(adj.shape[0])
        src = _int_array("adj column", coo.col, 1, np.int64)
        dst = _int_array("adj row", coo.row, 1, np.int64)
        return n, src, dst
    e = _numeric("adj", adj, "iu")
    if e.ndim != 2 or e.shape[1] != 2:
        raise ValueError("fullgraph: an edge array must have shape (E, 2), got %s" % (e.shape,))
    e = _int_array("adj", e, 2, np.int64)
    n = n_hint
    if n is None:
        n = int(e.max()) + 1 if e.size else 0
    return n, np.ascontiguousarray(e[:, 0]), np.ascontiguousarray(e[:, 1])


_SPLIT_NAMES = (("train",), ("valid", "val"), ("test",))


def _split(masks, n):
    """An int8 split (0 train, 1 valid, 2 test, -1 none) from masks: None (drawn at random), a
    dict or a (train, valid, test) sequence of boolean arrays, or an integer split array."""
    if masks is None:
        return None
    if isinstance(masks, dict):
        unknown = set(masks) - {k for names in _SPLIT_NAMES for k in names}
        if unknown:
            raise ValueError("fullgraph: masks has unknown keys %s (train, valid or val, test)"
                             % sorted(unknown))
        seq = [next((masks[k] for k in names if k in masks), None) for names in _SPLIT_NAMES]
    elif isinstance(masks, (tuple, list)):
        if len(masks) != 3:
            raise ValueError("fullgraph: masks must be (train, valid, test), got %d arrays"
                             % len(masks))
        seq = list(masks)
    else:
        s = _int_array("split", masks, 1, np.int8)
        if s.shape[0] != n:
            raise ValueError("fullgraph: split has %d entries for %d nodes" % (s.shape[0], n))
        return s
    split = np.full(n, -1, dtype=np.int8)
    for k, m in enumerate(seq):
        if m is None:
            continue
        name = _SPLIT_NAMES[k][0] + " mask"
        m = _numeric(name, m, "b")
        if m.shape != (n,):
            raise ValueError("fullgraph: %s has shape %s for %d nodes" % (name, m.shape, n))
        both = m & (split >= 0)
        if both.any():
            v = int(np.flatnonzero(both)[0])
            raise ValueError("fullgraph: node %d is in the %s and the %s mask" % (
                v, _SPLIT_NAMES[split[v]][0], _SPLIT_NAMES[k][0]))
        split[m] = k
    return split


def _build(adj, features, labels, masks, num_classes, lc):
    """An fg_dataset handle from the arrays (checked here for what Python can see, then by the
    library as it checks files)."""
    n_hint = None
    for a in (features, labels):
        if a is not None and np.ndim(a) >= 1:
            n_hint = int(np.shape(a)[0])
            break
    n, src, dst = _edges(adj, n_hint)
    f = 0
    if features is not None:
        x = _numeric("features", features, "biuf")
        if x.ndim != 2:
            raise ValueError("fullgraph: features must be 2-dimensional (nodes x features), got "
                             "shape %s" % (x.shape,))
        if x.shape[0] != n:
            raise ValueError("fullgraph: features has %d rows for %d nodes" % (x.shape[0], n))
        f = int(x.shape[1])
        with np.errstate(over="ignore"):  # beyond float32: Inf, which the library names
            features = np.ascontiguousarray(x, dtype=np.float32)
    targets, tasks = None, 0
    if labels is not None and np.ndim(labels) == 2:
        # (N, T) of 0/1 (bool or integers, -1 missing): multi-label targets
        targets = _int_array("labels", labels, 2, np.int8, -1, 1)
        if targets.shape[0] != n:
            raise ValueError("fullgraph: labels has %d rows for %d nodes" % (
                targets.shape[0], n))
        tasks, labels = int(targets.shape[1]), None
    if labels is not None:
        labels = _int_array("labels", labels, 1, np.int32)
        if labels.shape[0] != n:
            raise ValueError("fullgraph: labels has %d entries for %d nodes" % (
                labels.shape[0], n))
    split = _split(masks, n)
    arrays = _lib.Arrays(num_nodes=n, num_edges=src.shape[0], src=_ptr(src), dst=_ptr(dst),
                         num_features=f, features=_ptr(features), labels=_ptr(labels),
                         num_classes=int(num_classes or 0), split=_ptr(split),
                         targets=_ptr(targets), num_tasks=tasks)
    ds = _lib.ctypes.c_void_p()
    st = _lib.fg_dataset_from_arrays(_lib.ctypes.byref(arrays), _lib.ctypes.byref(lc),
                                     _lib.ctypes.byref(ds))
    return st, ds


# ---- training --------------------------------------------------------------------------------

_RECORD = np.dtype([("loss", "f8"), ("train_acc", "f8"), ("valid_acc", "f8"),
                    ("test_acc", "f8"), ("valid_loss", "f8"), ("seconds", "f8")])
# the CLI's defaults where they differ from fg_train_config_default's (a run here gives the
# CLI's losses for the same options)
_CLI_DEFAULTS = {"reorder": "auto", "verbose": "0", "progress": "0"}


def _option_text(key, v):
    if isinstance(v, (bool, np.bool_)):
        return "1" if v else "0"
    if key == "widths" and isinstance(v, (list, tuple, np.ndarray)):
        return ",".join(str(int(w)) for w in v)
    if key == "mem_limit":
        return repr(_mem_limit(v))
    if isinstance(v, numbers.Real) and not isinstance(v, numbers.Integral):
        return repr(float(v))  # round-trips the double exactly
    return str(v)


def train(adj, features=None, labels=None, masks=None, *, num_classes=None, **options):
    """Train on a graph in memory; every rank of an mpirun job calls it with the same arrays.

    adj: a scipy.sparse matrix (any format; N x N, row v lists the nodes v aggregates from, as
         fullgraph.load returns it) or an (E, 2) integer array of (source, destination) edges.
    features: (N, F) real array (cast to float32) or None (generated, gen_features wide).
    labels: (N,) integers, -1 unlabelled, or None (generated from degree quantiles); or (N, T)
    of 0/1 (bool or integers, -1 missing): multi-label targets of T tasks (task="multilabel",
    metric "rocauc" unless metric= names another).
    masks: {"train": b, "valid": b, "test": b} or (train, valid, test) boolean arrays, an (N,)
         split array (0 train, 1 valid, 2 test, -1 none), or None (drawn by train_frac,
         valid_frac).
    num_classes: the logits per node (default: the largest label + 1).
    options: the CLI's `fullgraph train` flags with underscores: epochs, hidden, layers, widths
         (a list), model, lr, dropout, weight_decay, scheme, order, grid, seed, ..., threads;
         the load flags directed, keep_duplicates, no_self_loops, gen_features, gen_classes,
         train_frac, valid_frac; verbose=True prints the epoch lines.

    Returns a dict: metrics (arrays per epoch: loss, train_acc, valid_acc, test_acc,
    valid_loss, seconds), best_epoch, best_valid_acc, test_acc (at best_epoch), epochs_run,
    mean_epoch_seconds, predictions (N, C) float32 logits, embeddings (N, H) float32 (the last
    hidden layer; None with layers=1), and run (the run record as a dict: version, commit, the
    command line -- this interpreter's argv --, every option's effective value, ranks, threads,
    hosts, BLAS kernels, the dataset's sizes and fingerprint), on every rank.
    """
    opts = dict(options)
    threads = opts.pop("threads", None)
    if threads is not None:
        t = int(threads)
        if t < 1 or t > _lib.fg_max_threads_allowed():
            raise ValueError("fullgraph: threads must be in [1, %d], got %d" % (
                _lib.fg_max_threads_allowed(), t))
    lc, keep = _load_config(opts)
    cfg = _lib.ctypes.c_void_p(_lib.fg_train_config_create())
    ds = _lib.ctypes.c_void_p()
    try:
        if not cfg.value:
            _lib.check(-4)
        settings = dict(_CLI_DEFAULTS)
        for k, v in opts.items():
            if v is None:
                continue
            settings[k] = _option_text(k, v)
        for k, v in settings.items():
            _lib.check(_lib.fg_train_config_set(cfg, k.encode(), v.encode()))
        # the run record's command line: this interpreter's, as the CLI records its own argv
        argv = [sys.executable] + list(sys.argv)
        words = (_lib.ctypes.c_char_p * len(argv))(
            *[a.encode("utf-8", "surrogateescape") for a in argv])
        _lib.check(_lib.fg_train_config_set_command(cfg, len(argv), words))
        # every rank builds the same dataset; one that fails stops them all with its message
        st, ds = _build(adj, features, labels, masks, num_classes, lc)
        _lib.check(_lib.fg_agree_world(st))
        classes, emb = _lib.ctypes.c_int64(), _lib.ctypes.c_int64()
        _lib.check(_lib.fg_train_output_widths(ds, cfg, _lib.ctypes.byref(classes),
                                               _lib.ctypes.byref(emb)))
        n = _lib.fg_dataset_num_nodes(ds)
        epochs = int(settings.get("epochs", "200"))
        if epochs < 1:
            epochs = 1  # the library refuses it with its message
        history = np.full(epochs, np.nan, dtype=_RECORD)
        predictions = np.empty((n, classes.value), dtype=np.float32)
        embeddings = np.empty((n, emb.value), dtype=np.float32) if emb.value > 0 else None
        _lib.check(_lib.fg_train_config_set_buffer(cfg, b"history", _ptr(history)))
        _lib.check(_lib.fg_train_config_set_buffer(cfg, b"predictions", _ptr(predictions)))
        if embeddings is not None:
            _lib.check(_lib.fg_train_config_set_buffer(cfg, b"embeddings", _ptr(embeddings)))
        if threads is not None:
            _lib.fg_set_threads(int(threads))
        res = _lib.TrainResult()
        # as the CLI: the dataset of rank 0 is laid out and sent to the others
        on_rank0 = ds if _lib.fg_world_rank() == 0 else None
        _lib.check(_lib.fg_train_world(on_rank0, cfg, _lib.ctypes.byref(res)))
        record = _lib.fg_last_run_record()
        run = json.loads(record.decode("utf-8"))["run"] if record else None
    finally:
        _lib.fg_dataset_destroy(_lib.ctypes.byref(ds))
        _lib.fg_train_config_destroy(_lib.ctypes.byref(cfg))
        del keep
    return {
        "metrics": {name: history[name].copy() for name in _RECORD.names},
        "best_epoch": res.best_epoch,
        "best_valid_acc": res.best_valid_acc,
        "test_acc": res.test_acc,
        "epochs_run": res.epochs_run,
        "mean_epoch_seconds": res.mean_epoch_seconds,
        "predictions": predictions,
        "embeddings": embeddings,
        "run": run,
    }


# ---- loading ---------------------------------------------------------------------------------

def load(path, **options):
    """Read a dataset as fullgraph train reads it (OGB directory, .npz, .npy, .mtx, SNAP edge
    list) on this process and return its arrays in node order:

    adj (scipy.sparse.csr_matrix N x N float32 of ones; row v lists the nodes v aggregates
    from, self loops included; None without SciPy), indptr (N+1 int64), indices (int32),
    features (N, F) float32, labels (N,) int32 (-1 unlabelled), split (N,) int8 (0 train,
    1 valid, 2 test, -1 none), masks (dict of boolean train/valid/test), node_ids (N,) int64 (the
    file's id of each node), num_classes; for multi-label data also targets (N, T) int8 (1, 0,
    -1 missing; labels are then all -1) and num_tasks T (0 otherwise).

    options: the CLI's load flags (directed, keep_duplicates, no_self_loops, keep_ids,
    split_index, split, gen_features, gen_classes, train_frac, valid_frac, seed, mem_limit).
    """
    opts = dict(options)
    lc, keep = _load_config(opts)
    opts.pop("seed", None)
    opts.pop("mem_limit", None)
    if opts:
        raise TypeError("fullgraph.load: unknown option(s) %s (load flags: %s)" % (
            ", ".join(sorted(opts)), ", ".join(_LOAD_KEYS)))
    ds = _lib.ctypes.c_void_p()
    try:
        _lib.check(_lib.fg_dataset_load(str(path).encode(), _lib.ctypes.byref(lc),
                                        _lib.ctypes.byref(ds)))
        n = _lib.fg_dataset_num_nodes(ds)
        nnz = _lib.fg_dataset_num_edges(ds)
        f = _lib.fg_dataset_num_features(ds)
        out = {
            "indptr": np.empty(n + 1, dtype=np.int64),
            "indices": np.empty(nnz, dtype=np.int32),
            "features": np.empty((n, f), dtype=np.float32),
            "labels": np.empty(n, dtype=np.int32),
            "split": np.empty(n, dtype=np.int8),
            "node_ids": np.empty(n, dtype=np.int64),
        }
        tasks = int(_lib.fg_dataset_num_tasks(ds))
        if tasks > 0:  # multi-label: targets (N, T); labels all -1
            out["targets"] = np.empty((n, tasks), dtype=np.int8)
        bufs = _lib.DatasetBuffers(**{k: _ptr(v) for k, v in out.items()})
        _lib.check(_lib.fg_dataset_copy_arrays(ds, _lib.ctypes.byref(bufs)))
        out["num_classes"] = int(_lib.fg_dataset_num_classes(ds))
        out["num_tasks"] = int(_lib.fg_dataset_num_tasks(ds))
    finally:
        _lib.fg_dataset_destroy(_lib.ctypes.byref(ds))
        del keep
    out["masks"] = {name: out["split"] == k for k, name in enumerate(("train", "valid", "test"))}
    try:
        import scipy.sparse
        out["adj"] = scipy.sparse.csr_matrix(
            (np.ones(nnz, dtype=np.float32), out["indices"], out["indptr"]), shape=(n, n))
    except ImportError:
        out["adj"] = None
    return out
