"""The classic learners side by side: 10-fold cross-validated accuracy and fit time of every
single-tree rulegen classifier (CART, C4.5, ID3, CHAID, QUEST) on the datasets in ../shared/data,
beside scikit-learn's DecisionTreeClassifier (ensembles: bench_ensembles.py).

    python benchmarks/bench_learners.py                      # every dataset, 10 folds
    python benchmarks/bench_learners.py --datasets iris,vote --folds 5
    python benchmarks/bench_learners.py --write              # also update docs/BENCHMARKS.md

Data are read exactly as `rulegen fit` reads a CSV: text columns are categorical (codes in
sorted order), empty cells are missing. Folds are stratified and seeded (--seed), the same for
every learner. scikit-learn sees the same matrix (category codes as numbers, NaN for missing,
which its trees accept since 1.3): it has no categorical splits, so that column is "CART on
codes". ID3 takes categorical features only; on data with numeric columns it sees each numeric
column cut into quartiles (bin edges from the training fold), marked "binned" in the table.
Fit time is the mean over folds, one thread, wall clock.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rulegen.data import categorical_column, design_matrix, read_csv
from rulegen.learn.catalog import CATALOG

sys.path.insert(0, str(ROOT / "benchmarks"))
from docsection import write_section

DATA = ROOT.parent / "shared" / "data"
DATASETS = {  # file -> target column
    "weather.nominal": "play", "contact-lenses": "contact-lenses", "vote": "Class",
    "breast-cancer": "Class", "soybean": "class", "credit-g": "class", "iris": "class",
    "titanic": "Survived", "credit": "Status", "penguins": "species",
}


def load(name: str):
    table = read_csv(DATA / f"{name}.csv")
    t = table.index(DATASETS[name])
    _, y = categorical_column(table, t)
    X, names, categories = design_matrix(table, [j for j in range(len(table.columns)) if j != t])
    keep = ~np.isnan(y)
    return X[keep], y[keep].astype(int), names, sorted(categories)


def folds(y, k, seed):
    """Stratified fold ids: each class's rows dealt round-robin after a seeded shuffle."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(y), dtype=int)
    start = 0
    for c in np.unique(y):
        rows = rng.permutation(np.flatnonzero(y == c))
        fold[rows] = (np.arange(len(rows)) + start) % k
        start += len(rows)
    return fold


def quartiles(train, test, cats):
    """Numeric columns cut at the training fold's quartiles (ID3 needs categories)."""
    train, test = train.copy(), test.copy()
    for j in range(train.shape[1]):
        if j in cats:
            continue
        edges = np.unique(np.nanquantile(train[:, j], [0.25, 0.5, 0.75]))
        for A in (train, test):
            nan = np.isnan(A[:, j])
            A[:, j] = np.searchsorted(edges, A[:, j], side="left")
            A[nan, j] = np.nan
    return train, test


CLASSIC = ("cart", "c45", "id3", "chaid", "quest")  # single trees; ensembles: bench_ensembles


def run(name, X, y, names, cats, k, seed, chosen=CLASSIC):
    fold = folds(y, k, seed)
    rows = {}
    learners = [(n, CATALOG[n].estimator_class("classification")) for n in chosen]
    from sklearn.tree import DecisionTreeClassifier as SkTree
    learners.append(("sklearn", None))
    for lname, cls in learners:
        acc, secs, size, binned = [], [], [], False
        for f in range(k):
            tr, te = fold != f, fold == f
            Xtr, Xte, use_cats = X[tr], X[te], cats
            if lname == "id3" and len(cats) < X.shape[1]:
                Xtr, Xte = quartiles(Xtr, Xte, cats)
                use_cats, binned = list(range(X.shape[1])), True
            if cls is None:
                est = SkTree(random_state=seed)
                t0 = time.perf_counter()
                est.fit(Xtr, y[tr])
                secs.append(time.perf_counter() - t0)
                size.append(est.tree_.node_count)
            else:
                est = cls()
                if "random_state" in est.get_params():
                    est.set_params(random_state=seed)
                kw = {"categorical_features": use_cats} if use_cats else {}
                t0 = time.perf_counter()
                est.fit(Xtr, y[tr], feature_names=names, **kw)
                secs.append(time.perf_counter() - t0)
                size.append(len(est.model_.trees[0].nodes))
            acc.append(float(np.mean(est.predict(Xte) == y[te])))
        rows[lname] = (np.mean(acc), np.std(acc), np.mean(secs), np.mean(size), binned)
        print(f"{name:16s} {lname:8s} acc {np.mean(acc):.4f} fit {np.mean(secs)*1e3:8.1f} ms "
              f"nodes {np.mean(size):7.1f}", file=sys.stderr, flush=True)
    return rows


def table(results, learners) -> str:
    head = "| dataset | rows x features | " + " | ".join(learners) + " |"
    lines = [head, "|" + "---|" * (len(learners) + 2)]
    for name, (shape, rows) in results.items():
        cells = []
        for lname in learners:
            acc, sd, secs, size, binned = rows[lname]
            mark = " (binned)" if binned else ""
            cells.append(f"{acc:.3f} ± {sd:.3f}{mark}<br>{secs * 1e3:.1f} ms, {size:.0f} nodes")
        lines.append(f"| {name} | {shape[0]} x {shape[1]} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--learners", default=",".join(CLASSIC),
                    help="catalog names (classifiers); default: the single-tree learners")
    ap.add_argument("--write", action="store_true", help="update docs/BENCHMARKS.md")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    results = {}
    for name in args.datasets.split(","):
        X, y, names, cats = load(name)
        results[name] = (X.shape, run(name, X, y, names, cats, args.folds, args.seed,
                                      args.learners.split(",")))
    learners = list(next(iter(results.values()))[1])
    import sklearn
    header = (f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, scikit-learn {sklearn.__version__}. Each cell: mean "
              f"accuracy ± standard deviation over {args.folds} stratified folds (seed "
              f"{args.seed}), mean fit time, mean tree size in nodes; default parameters for every "
              "learner. Command: `python benchmarks/bench_learners.py`.")
    md = header + "\n\n" + table(results, learners) + "\n"
    print(md)
    if args.write:
        write_section("Classic learners: 10-fold accuracy beside scikit-learn", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
