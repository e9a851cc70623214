"""lightgbm_style against LightGBM per tree, with few and many classes (issue 20): a softmax
fit grows one tree per class per round, so what a tree costs beside its growth (gradients,
softmax, IR, score updates) weighs as much as the tree itself when classes are many.

    python benchmarks/bench_lgbm_classes.py                  # 3 and 200 classes
    python benchmarks/bench_lgbm_classes.py --classes 3,50,200 --repeat 5 --rows 20000
    python benchmarks/bench_lgbm_classes.py --classes 200 --threads 2   # n_jobs, wall time

Synthetic, seeded data: ``--rows`` rows x ``--features`` standard normal features, k classes
of as many rows each, a class's rows shifted by its own seeded centre in the first eight. Both sides fit
with the same parameters (31 leaves, rate 0.1, 20 rows per leaf, 255 bins, one thread, no
bagging); fits alternate between the two libraries and each keeps its best of ``--repeat``
CPU times (time.process_time: one thread each, steadier than wall time on a shared
machine); with ``--threads N`` both fit with ``n_jobs=N`` and the times are wall-clock
(process time would add the threads' times up). A tree's cost is the fit's time over its
trees (rounds x classes). The table
also gives the leaves per tree, which the two should share, and the training log-loss.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]


def make_data(rows: int, features: int, classes: int, seed: int = 20):
    rng = np.random.default_rng(seed)
    y = rng.permutation(np.arange(rows) % classes)  # every class, as many rows each
    X = rng.normal(size=(rows, features))
    X[:, :8] += rng.normal(size=(classes, 8))[y]
    return X, y


def params(rounds: int) -> dict:
    return {"n_estimators": rounds, "learning_rate": 0.1, "num_leaves": 31,
            "min_child_samples": 20, "max_bin": 255, "reg_lambda": 0.0}


def clock(threads):
    return time.process_time if threads == 1 else time.perf_counter


def fit_rulegen(X, y, rounds, threads=1):
    from rulegen.learn.ensembles.lgbm import LightGBMStyleClassifier

    est = LightGBMStyleClassifier(**params(rounds), random_state=0, n_jobs=threads)
    c0 = clock(threads)()
    est.fit(X, y)
    cpu = clock(threads)() - c0
    trees = est.model_.trees
    leaves = sum(1 for t in trees for nd in t.nodes if not hasattr(nd, "test"))
    return cpu, len(trees), leaves / len(trees), float(est.train_score_[-1])


def fit_lightgbm(X, y, rounds, threads=1):
    import lightgbm

    est = lightgbm.LGBMClassifier(**params(rounds), n_jobs=threads, verbose=-1, subsample=1.0,
                                  colsample_bytree=1.0, random_state=0)
    c0 = clock(threads)()
    est.fit(X, y)
    cpu = clock(threads)() - c0
    dump = est.booster_.dump_model()["tree_info"]
    leaves = sum(t["num_leaves"] for t in dump) / len(dump)
    p = np.clip(est.predict_proba(X)[np.arange(len(y)), y], 1e-300, None)
    return cpu, len(dump), leaves, float(-np.mean(np.log(p)))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--classes", default="3,200", help="comma-separated class counts")
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--trees", type=int, default=600,
                    help="about this many trees per fit: rounds = max(2, trees // classes)")
    ap.add_argument("--repeat", type=int, default=3, help="fits per side; the best counts")
    ap.add_argument("--threads", type=int, default=1,
                    help="n_jobs of both sides (default 1); above 1 the times are wall-clock")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))  # this checkout's rulegen
    from rulegen.learn.compiled import kernels

    compiled = kernels.enabled()
    print(f"rulegen's compiled kernels: {'yes' if compiled else 'no (numpy only)'}; "
          f"load average {os.getloadavg()[0]:.2f}; "
          f"{args.threads} thread(s), {'CPU' if args.threads == 1 else 'wall'} time")
    lines = [("| classes | rounds | trees | rulegen ms/tree | LightGBM ms/tree | ratio "
              "| leaves/tree (rulegen, LightGBM) | train log-loss (rulegen, LightGBM) |"),
             "|---|---|---|---|---|---|---|---|"]
    for k in [int(c) for c in args.classes.split(",")]:
        X, y = make_data(args.rows, args.features, k)
        rounds = max(2, args.trees // k)
        fit_rulegen(X[:500], y[:500], 2)  # numba's kernels load on first use
        best = {}
        for _ in range(args.repeat):
            for side, fit in (("rulegen", fit_rulegen), ("lightgbm", fit_lightgbm)):
                cpu, n_trees, leaves, loss = fit(X, y, rounds, args.threads)
                per = cpu / n_trees
                if side not in best or per < best[side][0]:
                    best[side] = (per, n_trees, leaves, loss)
        r, g = best["rulegen"], best["lightgbm"]
        lines.append(f"| {k} | {rounds} | {r[1]} / {g[1]} | {r[0] * 1e3:.2f} | {g[0] * 1e3:.2f} "
                     f"| {r[0] / g[0]:.2f}x | {r[2]:.1f}, {g[2]:.1f} | {r[3]:.4f}, {g[3]:.4f} |")
        print(lines[-1] if len(lines) > 3 else "\n".join(lines), flush=True)
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
