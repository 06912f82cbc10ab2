"""Tests of the Python binding (python/fullgraph) against the CLI on Cora.

usage: test_fullgraph.py driver CLI MPIEXEC DATA TMPDIR
       test_fullgraph.py worker OUT.json DATA      (run by the driver under mpiexec -n 4)

The driver checks at one rank, in this process, that fullgraph.train on fullgraph.load's arrays
gives the CLI's losses (the %.9g text the metrics file prints, character for character), its
predictions and embeddings equal the CLI's .npy files, that other spellings of the
same input (an edge array, masks as a dict, non-contiguous features) give the same run, and that
bad arrays raise an exception carrying the message; then under mpiexec -n 4, for every parallel
scheme (1d, 1d-sa, 1.5d with c = 2, halo, 3d on 2x1x2), that the workers' losses equal the CLI's
at 4 ranks, every rank returns the same, and the predictions match the CLI's. Exit 0 when all hold, 1 otherwise.
"""

import json
import os
import subprocess
import sys

import numpy as np

import fullgraph

EPOCHS = 8
RANKS = 4
# every parallel scheme, with the options that pick its layout at 4 ranks (the CLI's flags)
SCHEMES = (("1d", {}), ("1d-sa", {}), ("1.5d", {"replicate": "2"}), ("halo", {}),
           ("3d", {"grid": "2x1x2"}))
failures = []


def expect(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)


def cli_losses(metrics_path):
    """The losses of a --metrics file: the printed text (%.9g) and the float64 it parses to."""
    text = []
    with open(metrics_path) as f:
        for line in f:
            rec = json.loads(line)
            if "epoch" in rec:
                # the printed token itself, not a re-formatted one
                text.append(line.split('"loss": ')[1].split(",")[0])
    return text, [float(t) for t in text]


def same_losses(name, got, metrics_path):
    text, values = cli_losses(metrics_path)
    mine = ["%.9g" % v for v in got]
    expect(len(text) == EPOCHS, "%s: the CLI wrote %d epochs" % (name, len(text)))
    expect(mine == text, "%s: losses %s differ from the CLI's %s" % (name, mine, text))
    # the float64 values agree to the digits printed (the logits, compared bit for bit below,
    # are the stronger check; test_world compares the doubles themselves)
    expect(all(abs(g - v) <= 5e-9 * abs(v) for g, v in zip(got, values)),
           "%s: float64 losses differ" % name)


def expect_error(kind, needle, fn, what):
    try:
        fn()
    except kind as e:
        expect(needle in str(e), "%s: message %r lacks %r" % (what, str(e), needle))
        return
    except Exception as e:  # noqa: BLE001 -- any other kind is a failure to report
        expect(False, "%s: raised %s (%s), expected %s" % (what, type(e).__name__, e,
                                                          kind.__name__))
        return
    expect(False, "%s: no exception" % what)


def run_one_rank(cli, data, tmp):
    d = fullgraph.load(data)
    n = d["features"].shape[0]
    expect(n == 2708 and d["num_classes"] == 7, "load: Cora's sizes")
    expect(d["adj"].shape == (n, n) and d["adj"].nnz == d["indices"].shape[0], "load: adj")
    expect(list(d["node_ids"][:3]) == [0, 1, 2], "load: node ids")
    expect(int(d["masks"]["train"].sum()) == 140, "load: Cora's 140 training nodes")

    metrics, pred, emb = (os.path.join(tmp, x) for x in ("m1.jsonl", "p1.npy", "e1.npy"))
    subprocess.run([cli, "train", data, "--epochs", str(EPOCHS), "--quiet", "--metrics", metrics,
                    "--save-predictions", pred, "--save-embeddings", emb, "--seed", "3"],
                   check=True, stdout=subprocess.DEVNULL)
    r = fullgraph.train(d["adj"], d["features"], d["labels"], d["split"], epochs=EPOCHS,
                        seed=3)
    same_losses("1 rank", r["metrics"]["loss"], metrics)
    expect(np.array_equal(r["predictions"], np.load(pred)), "predictions differ from the CLI's")
    expect(np.array_equal(r["embeddings"], np.load(emb)), "embeddings differ from the CLI's")
    expect(r["epochs_run"] == EPOCHS and 1 <= r["best_epoch"] <= EPOCHS, "result fields")
    expect(r["test_acc"] == r["metrics"]["test_acc"][r["best_epoch"] - 1], "test_acc at best")
    expect(np.all(r["metrics"]["seconds"] > 0), "seconds per epoch")
    # the run record: this interpreter's command line, the options in force, the dataset's
    # fingerprint equal to the CLI's run on the file (the same graph, features, labels, split)
    run = r["run"]
    with open(metrics) as f:
        cli_run = json.loads(f.readline())["run"]
    expect(run is not None and run["command"] == [sys.executable] + sys.argv,
           "run record: command %r" % (run and run.get("command")))
    expect(run["options"]["epochs"] == EPOCHS and run["options"]["seed"] == 3 and
           run["ranks"] == 1, "run record: options %r" % run.get("options"))
    expect(run["dataset"]["fingerprint"] == cli_run["dataset"]["fingerprint"],
           "run record: fingerprint %s, the CLI's %s" % (run["dataset"]["fingerprint"],
                                                         cli_run["dataset"]["fingerprint"]))
    expect(run["commit"] == cli_run["commit"], "run record: commit")

    # the same run spelled otherwise: an edge array, masks as a dict, Fortran-ordered float64
    # features (copied to C order; non-contiguous input is copied, never refused)
    coo = d["adj"].tocoo()
    edges = np.stack([coo.col, coo.row], axis=1)
    feats = np.asfortranarray(d["features"].astype(np.float64))
    r2 = fullgraph.train(edges, feats, d["labels"].astype(np.int64), d["masks"], epochs=EPOCHS,
                         seed=3)
    expect(np.array_equal(r2["metrics"]["loss"], r["metrics"]["loss"]),
           "edge array / dict masks / non-contiguous features: other losses")
    m = d["masks"]
    r3 = fullgraph.train(d["adj"].tocsc(), d["features"][:, ::1], d["labels"],
                         (m["train"], m["valid"], m["test"]), epochs=2, seed=3, layers=1)
    expect(r3["embeddings"] is None and r3["predictions"].shape == (n, 7), "layers=1 outputs")

    bad_arrays(d, n)


def bad_arrays(d, n):
    A, X, y, s = d["adj"], d["features"], d["labels"], d["split"]
    tr = fullgraph.train
    E = fullgraph.Error
    expect_error(TypeError, "complex", lambda: tr(A, X.astype(np.complex64), y, s, epochs=1),
                 "complex features")
    expect_error(TypeError, "labels has dtype float", lambda: tr(A, X, y.astype(float), s),
                 "float labels")
    expect_error(ValueError, "2-dimensional", lambda: tr(A, X[:, 0], y, s), "1-D features")
    expect_error(ValueError, "features has 2707 rows for 2708 nodes",
                 lambda: tr(A, X[1:], y, s), "features rows")
    expect_error(ValueError, "labels has 2707 entries", lambda: tr(A, X, y[1:], s), "labels")
    expect_error(ValueError, "split has 2700 entries", lambda: tr(A, X, y, s[:2700]), "split")
    expect_error(ValueError, "square", lambda: tr(A[:5], X, y, s), "non-square adj")
    expect_error(ValueError, "shape (E, 2)", lambda: tr(np.zeros((4, 3), int), X, y, s),
                 "edge array shape")
    expect_error(ValueError, "labels[0] = 4294967296 out of range",
                 lambda: tr(A, X, np.full(n, 2**32), s), "labels beyond int32")
    expect_error(ValueError, "in the train and the valid mask",
                 lambda: tr(A, X, y, {"train": d["masks"]["train"],
                                      "valid": d["masks"]["train"]}), "overlapping masks")
    xn = X.copy()
    xn[3, 4] = np.nan
    expect_error(E, "arrays: features[3, 4] = nan", lambda: tr(A, xn, y, s, epochs=1),
                 "NaN features")
    xb = X.astype(np.float64)
    xb[7, 1] = 1e300  # beyond float32: Inf after the cast, refused by the library
    expect_error(E, "features[7, 1] = inf", lambda: tr(A, xb, y, s, epochs=1), "huge features")
    coo = A.tocoo()
    edges = np.stack([coo.col, coo.row], axis=1)
    edges[10, 0] = n + 5
    expect_error(E, "arrays: src[10] = 2713 out of range [0, 2708)",
                 lambda: tr(edges, X, y, s, epochs=1), "edge id out of range")
    yb = y.copy()
    yb[12] = -3
    expect_error(E, "arrays: labels[12] = -3 out of range", lambda: tr(A, X, yb, s, epochs=1),
                 "label below -1")
    sb = s.copy()
    sb[5] = 7
    expect_error(E, "arrays: split[5] = 7", lambda: tr(A, X, y, sb, epochs=1), "split value")
    expect_error(E, "unknown training option 'epoch'", lambda: tr(A, X, y, s, epoch=1),
                 "unknown option")
    expect_error(E, "--epochs must be >= 1", lambda: tr(A, X, y, s, epochs=0), "epochs 0")
    expect_error(E, "scheme", lambda: tr(A, X, y, s, epochs=1, scheme="bogus"), "bad scheme")
    expect_error(E, "no such file", lambda: fullgraph.load("/nonexistent/cora"), "load path")
    expect_error(TypeError, "unknown option", lambda: fullgraph.load("x", epochs=3),
                 "load option")
    # the library is still sound after all that
    r = tr(A, X, y, s, epochs=1)
    expect(np.isfinite(r["metrics"]["loss"][0]), "a run after the errors")


def run_ranks(cli, mpiexec, data, tmp):
    out = os.path.join(tmp, "workers.json")
    env = dict(os.environ)
    subprocess.run([mpiexec, "-n", str(RANKS), "--oversubscribe", sys.executable,
                    os.path.abspath(__file__), "worker", out, data], check=True, env=env,
                   stdout=subprocess.DEVNULL)
    with open(out) as f:
        got = json.load(f)
    for scheme, opts in SCHEMES:
        name = "%d ranks, %s" % (RANKS, scheme)
        metrics = os.path.join(tmp, "m%d_%s.jsonl" % (RANKS, scheme))
        pred = os.path.join(tmp, "p%d_%s.npy" % (RANKS, scheme))
        cmd = [mpiexec, "-n", str(RANKS), "--oversubscribe", cli, "train", data, "--epochs",
               str(EPOCHS), "--quiet", "--metrics", metrics, "--scheme", scheme,
               "--save-predictions", pred]
        for k, v in opts.items():
            cmd += ["--" + k, v]
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        same_losses(name, got[scheme]["loss"], metrics)
        expect(got[scheme]["ranks_agree"], "%s: ranks returned different results" % name)
        expect(np.array_equal(np.array(got[scheme]["predictions_sum"], dtype=np.float64),
                              np.load(pred).astype(np.float64).sum(axis=0)),
               "%s: predictions differ from the CLI's" % name)


def worker(out, data):
    """Under mpiexec: every rank trains on the same arrays; rank 0 writes what they returned."""
    d = fullgraph.load(data)
    res = {}
    for scheme, opts in SCHEMES:
        r = fullgraph.train(d["adj"], d["features"], d["labels"], d["split"], epochs=EPOCHS,
                            scheme=scheme, **opts)
        # each rank writes its own digest; rank 0 compares them
        digest = [float(v) for v in r["metrics"]["loss"]] + \
            [float(r["predictions"].astype(np.float64).sum())]
        mine = "%s.%s.%d" % (out, scheme, fullgraph.rank())
        with open(mine + ".part", "w") as f:
            json.dump(digest, f)
        os.rename(mine + ".part", mine)  # whole when it appears
        res[scheme] = {"loss": [float(v) for v in r["metrics"]["loss"]],
                       "predictions_sum": [float(v) for v in
                                           r["predictions"].astype(np.float64).sum(axis=0)],
                       "digest": digest}
    expect(fullgraph.size() == RANKS, "worker: %d ranks" % RANKS)
    if fullgraph.rank() == 0:
        import time
        deadline = time.time() + 30
        for scheme in res:
            res[scheme]["ranks_agree"] = True
            for k in range(1, fullgraph.size()):
                path = "%s.%s.%d" % (out, scheme, k)
                while not os.path.exists(path) and time.time() < deadline:
                    time.sleep(0.1)
                try:
                    with open(path) as f:
                        other = json.load(f)
                except (OSError, ValueError):
                    other = None
                if other != res[scheme]["digest"]:
                    res[scheme]["ranks_agree"] = False
        with open(out, "w") as f:
            json.dump(res, f)
    return 0 if not failures else 1


def multilabel(cli, tmp):
    """A 2-D labels array is multi-label targets: trained with the sigmoid BCE as the CLI trains
    the same graph from an OGB directory with several label columns (the same losses), load()
    returns the targets, and the refusals name the task."""
    n, tasks = 40, 3
    rng = np.random.default_rng(1)
    src = np.arange(n)
    edges = np.concatenate([np.stack([src, (src + 1) % n], 1), np.stack([src, (src * 7 + 3) % n], 1)])
    x = rng.standard_normal((n, 5)).astype(np.float32)
    y = (rng.random((n, tasks)) < 0.4).astype(np.int8)
    y[0, 1] = -1
    split = np.zeros(n, dtype=np.int8)
    split[20:30], split[30:] = 1, 2
    d = os.path.join(tmp, "ml")
    os.makedirs(os.path.join(d, "raw"))
    os.makedirs(os.path.join(d, "split", "s"))
    w = lambda name, rows: open(os.path.join(d, name), "w").write(
        "".join(",".join(str(v) for v in r) + "\n" for r in rows))
    w("raw/num-node-list.csv", [[n]])
    w("raw/num-edge-list.csv", [[len(edges)]])
    w("raw/edge.csv", edges.tolist())
    w("raw/node-feat.csv", [["%.9g" % v for v in r] for r in x])
    w("raw/node-label.csv", [["" if v < 0 else v for v in r] for r in y.tolist()])
    for k, name in enumerate(("train", "valid", "test")):
        w("split/s/%s.csv" % name, [[v] for v in np.flatnonzero(split == k)])
    metrics = os.path.join(tmp, "ml.jsonl")
    subprocess.run([cli, "train", d, "--epochs", str(EPOCHS), "--hidden", "4", "--metrics",
                    metrics, "--quiet"], check=True, stdout=subprocess.DEVNULL)
    r = fullgraph.train(edges, x, y, split, epochs=EPOCHS, hidden=4)
    same_losses("multi-label arrays", r["metrics"]["loss"], metrics)
    back = fullgraph.load(d)
    expect(back["num_tasks"] == tasks and np.array_equal(back["targets"], y),
           "load: the targets of a multi-label directory")
    expect((back["labels"] == -1).all(), "load: multi-label labels are -1")
    r2 = fullgraph.train(edges, x, y.astype(bool), split, epochs=2, hidden=4, metric="f1-micro")
    expect(0.0 <= r2["test_acc"] <= 1.0, "bool targets with f1-micro")
    expect_error(fullgraph.Error, "--task multiclass: arrays has multi-label targets (3 tasks",
                 lambda: fullgraph.train(edges, x, y, epochs=2, task="multiclass"),
                 "multiclass of multi-label arrays")
    bad = y.copy()
    bad[3, 2] = 2
    expect_error(ValueError, "labels[3, 2] = 2 out of range [-1, 1]",
                 lambda: fullgraph.train(edges, x, bad, epochs=2), "a target of 2")


def main(argv):
    if argv[1] == "worker":
        return worker(argv[2], argv[3])
    cli, mpiexec, data, tmp = argv[2:6]
    print("fullgraph %s from %s" % (fullgraph.version(), fullgraph.library_path))
    run_one_rank(cli, data, tmp)
    multilabel(cli, tmp)
    run_ranks(cli, mpiexec, data, tmp)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
