"""Ensembles side by side: rulegen's random forest, AdaBoost, gradient boosting, XGBoost-style
and LightGBM-style boosting against scikit-learn, XGBoost and LightGBM with matched parameters
on the same splits of the same data: fit time, peak memory, test accuracy or RMSE.

    python benchmarks/bench_ensembles.py                       # every dataset and pair
    python benchmarks/bench_ensembles.py --datasets credit-g --pairs forest,gb
    python benchmarks/bench_ensembles.py --write               # also update docs/BENCHMARKS.md
    python benchmarks/bench_ensembles.py --datasets syn-reg,syn-bin --pairs xgbhist,xgbapprox
    python benchmarks/bench_ensembles.py --datasets syn-reg --pairs xgbhist --threads 2

The pairs xgbhist and xgbapprox are xgboost_style's histogram modes against XGBoost's own:
tree_method="hist" against "hist", "approx" against "approx" (approxhist: rulegen's "approx"
against XGBoost's "hist", issue 20's first comparison); syn-reg and syn-bin are 100,000 synthetic rows x 20 normal
features (80,000 training rows), a regression and a binary target. Neither is in the default
run.

Each fit runs in a fresh process (one thread everywhere); peak memory is that process's peak
resident set during the fit above its resident set just before (Linux's VmHWM, reset with
/proc/self/clear_refs), comparable across libraries whatever allocator they use. Data are read as `rulegen fit` reads a CSV (text columns become
category codes, empty cells NaN); rows whose target is missing are dropped; seeded 80/20
splits: one on the big sets, five on the small ones (credit-g, credit), where a test set of a
few hundred rows makes one split's accuracy move by points from the draw alone -- there the
time and score are means over the five (the same splits for both sides). Categorical columns are categories for LightGBM, HistGradientBoosting and rulegen's
LightGBM-style learner; in every other pair both sides see their codes as numbers (the same
data). scikit-learn's GradientBoosting and AdaBoost refuse NaN,
so they get each column's training median in its place. Ratios are rulegen's time over the
peer's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"
DATASETS = {  # name -> (target, task)
    "credit-g": ("class", "classification"),
    "credit": ("Status", "classification"),
    "diamonds": ("price", "regression"),
    "flights": ("arr_delay", "regression"),
}
SYNTHETIC = {"syn-reg": ("y", "regression"), "syn-bin": ("y", "classification")}
ALL_DATASETS = {**DATASETS, **SYNTHETIC}

# pair -> (rulegen learner, peer, parameters both get, in each library's own names)
PAIRS = {
    "forest": ("random_forest", "sklearn_rf"),
    "adaboost": ("adaboost", "sklearn_ada"),
    "gb": ("gradient_boosting", "sklearn_gb"),
    "xgb": ("xgboost_style", "xgboost"),
    "lgbm": ("lightgbm_style", "lightgbm"),
    "hgb": ("lightgbm_style", "sklearn_hgb"),
}
# xgboost_style's histogram mode against XGBoost's two histogram methods (issue 20); not in
# the default run. The parameters each side gets on top of the pair's common ones:
EXTRA_PAIRS = {p: ("xgboost_style", "xgboost") for p in ("xgbhist", "xgbapprox", "approxhist")}
HIST_TITLE = "xgboost_style's histogram mode beside XGBoost hist (issue 20)"
PAIR_KW = {"xgbhist": ({"tree_method": "hist"}, {"tree_method": "hist"}),
           "xgbapprox": ({"tree_method": "approx"}, {"tree_method": "approx"}),
           "approxhist": ({"tree_method": "approx"}, {"tree_method": "hist"})}
N_TREES = 100
SPLITS = 5  # small sets: time and score are means over this many 80/20 splits
NO_NAN = ("sklearn_gb", "sklearn_ada")  # peers that cannot take missing values


def load_all(name):
    """(X, y, categorical columns): the CSV as `rulegen fit` reads it, rows with a target."""
    sys.path.insert(0, str(ROOT))
    from rulegen.data import categorical_column, design_matrix, numeric_column, read_csv

    if name in SYNTHETIC:
        return synthetic(name)
    target, task = DATASETS[name]
    table = read_csv(DATA / f"{name}.csv")
    t = table.index(target)
    y = (categorical_column(table, t)[1] if task == "classification"
         else numeric_column(table, t))
    X, _, categories = design_matrix(table, [j for j in range(len(table.columns)) if j != t])
    keep = ~np.isnan(y)
    return X[keep], y[keep], sorted(categories)


def synthetic(name):
    """100,000 rows x 20 standard normal features; y from four of them plus noise (the
    binary target: its sign)."""
    rng = np.random.default_rng(20)
    X = rng.normal(size=(100_000, 20))
    y = X[:, 0] * 2 + np.sin(3 * X[:, 1]) + X[:, 2] * X[:, 3] + rng.normal(size=len(X)) * 0.3
    return X, (y > 0).astype(float) if name == "syn-bin" else y, []


def load(name, seed=0):
    """(X_train, y_train, X_test, y_test, categorical columns, task): split ``seed``."""
    X, y, cats = load_all(name)
    test = split(len(y), seed)
    return X[~test], y[~test], X[test], y[test], cats, ALL_DATASETS[name][1]


def split(n, seed):
    """The test rows of split ``seed``: a seeded one in five."""
    return np.random.default_rng(seed).random(n) < 0.2


def make(lib, task, cats, p):
    """The estimator and the keyword arguments of its fit."""
    clf = task == "classification"
    depth_rf = 12 if p.get("big") else None
    if lib in ("random_forest", "sklearn_rf"):
        # on the big sets 20 trees of depth 12: fully grown trees there take rulegen minutes
        kw = {"n_estimators": 20 if p.get("big") else N_TREES, "max_depth": depth_rf,
              "random_state": 0, "max_features": "sqrt" if clf else 1.0}
        if lib == "sklearn_rf":
            from sklearn import ensemble
            return (ensemble.RandomForestClassifier if clf else ensemble.RandomForestRegressor)(
                n_jobs=p.get("threads", 1), **kw), {}
    elif lib in ("adaboost", "sklearn_ada"):
        kw = {"n_estimators": N_TREES, "random_state": 0}
        if lib == "sklearn_ada":
            from sklearn.ensemble import AdaBoostClassifier
            return AdaBoostClassifier(**kw), {}
    elif lib in ("gradient_boosting", "sklearn_gb"):
        kw = {"n_estimators": N_TREES, "max_depth": 3, "learning_rate": 0.1, "random_state": 0}
        if lib == "sklearn_gb":
            from sklearn import ensemble
            return (ensemble.GradientBoostingClassifier if clf
                    else ensemble.GradientBoostingRegressor)(**kw), {}
    elif lib in ("xgboost_style", "xgboost"):
        kw = {"n_estimators": N_TREES, "max_depth": 6, "learning_rate": 0.3, "reg_lambda": 1.0,
                  "min_child_weight": 1.0}
        if lib == "xgboost":
            import xgboost
            cls = xgboost.XGBClassifier if clf else xgboost.XGBRegressor
            return cls(n_jobs=p.get("threads", 1),
                       **{"tree_method": "exact", **kw, **p.get("extra", {})}), {}
    elif lib in ("lightgbm_style", "lightgbm", "sklearn_hgb"):
        # a seed for all three: above 200,000 rows the bins come from a random sample
        kw = {"n_estimators": N_TREES, "learning_rate": 0.1, "num_leaves": 31, "min_child_samples": 20,
              "reg_lambda": 0.0, "max_bin": 255, "random_state": 0}
        if lib == "lightgbm":
            import lightgbm
            cls = lightgbm.LGBMClassifier if clf else lightgbm.LGBMRegressor
            return cls(n_jobs=p.get("threads", 1), verbose=-1, subsample=1.0,
                       colsample_bytree=1.0, **kw), (
                {"categorical_feature": cats} if cats else {})
        if lib == "sklearn_hgb":
            from sklearn import ensemble
            cls = (ensemble.HistGradientBoostingClassifier if clf
                   else ensemble.HistGradientBoostingRegressor)
            return cls(max_iter=N_TREES, learning_rate=0.1, max_leaf_nodes=31,
                       min_samples_leaf=20, l2_regularization=0.0, max_bins=255,
                       early_stopping=False, categorical_features=cats or None,
                       random_state=0), {}
    from rulegen.learn.catalog import CATALOG

    cls = CATALOG[lib].estimator_class(task)
    known = cls().get_params()
    if p.get("threads", 1) != 1:  # --threads: the learners that take n_jobs
        kw["n_jobs"] = p["threads"]
    est = cls(**{k: v for k, v in {**kw, **p.get("extra", {})}.items() if k in known})
    # categorical columns as categories only where the peer takes them so too (lightgbm,
    # hgb); against the others both sides see the codes as numbers: the same data
    native = lib == "lightgbm_style"
    return est, ({"categorical_features": cats} if cats and native else {})


def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _reset_peak():
    """Resident size now, with the peak reset to it (Linux: clear_refs 5), so that the
    fit's peak is measured from here and not from an import's or a parse's."""
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return _status_kb("VmRSS")


def _peak_kb():
    return _status_kb("VmHWM")


def worker(spec):
    # this checkout's rulegen, not whichever one is installed
    sys.path.insert(0, str(ROOT))
    # the parent parsed the CSV once and saved the arrays: parsing here would set a peak
    # (Python objects per cell) that the fit might never exceed
    with np.load(spec["arrays"]) as z:
        X, y, cats = z["X"], z["y"], z["cats"]
    cats, task = [int(c) for c in cats], ALL_DATASETS[spec["dataset"]][1]
    runs = [fit_one(spec, task, cats, X, y, seed) for seed in range(spec["splits"])]
    return {"secs": float(np.mean([r[0] for r in runs])),
            "cpu_secs": float(np.mean([r[4] for r in runs])),
            "mem_mb": max(r[1] for r in runs), "score": float(np.mean([r[2] for r in runs])),
            "scores": [r[2] for r in runs], "rows": int((~split(len(y), 0)).sum()),
            "task": task, "warm_secs": runs[0][3]}


def fit_one(spec, task, cats, X, y, seed):
    """(fit seconds, peak MB above the start, test score, warm-up seconds, fit CPU seconds)
    on split ``seed``."""
    test = split(len(y), seed)
    Xtr, ytr, Xte, yte = X[~test], y[~test], X[test], y[test]
    est, fit_kw = make(spec["lib"], task, cats, spec)  # imports the library first
    if spec["lib"] in NO_NAN and np.isnan(Xtr).any():
        # these scikit-learn estimators refuse NaN: they get the training medians instead
        med = np.nanmedian(Xtr, axis=0)
        Xtr, Xte = np.where(np.isnan(Xtr), med, Xtr), np.where(np.isnan(Xte), med, Xte)
    warm = 0.0
    if spec["lib"] in ("lightgbm_style", "xgboost_style", "random_forest") and seed == 0:
        # its compiled kernels load (from numba's cache) on first use in a process, as a
        # library loads its extension modules on import: a small fit first, timed apart
        rows, trees = 500, 2
        if spec["lib"] == "random_forest":  # enough trees x rows for the compiled grower
            from rulegen.learn.ensembles.forest import MIN_COMPILED_WORK
            rows = min(len(ytr), 2_000)
            trees = -(-MIN_COMPILED_WORK // rows)
        t0 = time.perf_counter()
        type(est)(**{**est.get_params(), "n_estimators": trees}).fit(Xtr[:rows], ytr[:rows], **fit_kw)
        warm = time.perf_counter() - t0
    base = _reset_peak()
    t0, c0 = time.perf_counter(), time.process_time()
    est.fit(Xtr, ytr, **fit_kw)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = _peak_kb()
    pred = est.predict(Xte)
    if task == "classification":
        score = float(np.mean(np.asarray(pred).astype(float) == yte))
    else:
        score = float(np.sqrt(np.mean((np.asarray(pred, dtype=float) - yte) ** 2)))
    return secs, (peak - base) / 1024.0, score, warm, cpu


def run(spec, timeout):
    threads = str(spec.get("threads", 1))
    env = {**os.environ, "OMP_NUM_THREADS": threads, "OPENBLAS_NUM_THREADS": "1"}
    try:
        out = subprocess.run([sys.executable, __file__, "--worker", json.dumps(spec)], env=env,
                             capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"over {timeout}s"}
    if out.returncode != 0:
        return {"error": (out.stderr.strip().splitlines() or ["failed"])[-1][:120]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def table(rows, cpu=False) -> str:
    """The markdown table; with ``cpu`` also each side's CPU seconds in the fit and their
    ratio (steadier than wall time on a shared machine: one thread each)."""
    more = " rulegen CPU | peer CPU | CPU ratio |" if cpu else ""
    lines = [("| data (train rows) | pair | rulegen fit | peer fit | time ratio | rulegen memory "
             "| peer memory | rulegen score | peer score |" + more),
             "|" + "---|" * (12 if cpu else 9)]
    for (ds, pair), (a, b) in rows.items():
        if "error" in a or "error" in b:
            lines.append(f"| {ds} | {pair} | {a.get('error', '')} | {b.get('error', '')} |"
                         " | | | | |")
            continue
        metric = "acc" if a["task"] == "classification" else "RMSE"
        n = len(a["scores"])
        lines.append(
            f"| {ds} ({a['rows']}{f', {n} splits' if n > 1 else ''}) | {pair} | {a['secs']:.2f} s | {b['secs']:.2f} s | "
            f"{a['secs'] / b['secs']:.1f}x | {a['mem_mb']:.0f} MB | {b['mem_mb']:.0f} MB | "
            f"{metric} {a['score']:.4g} | {b['score']:.4g} |"
            + (f" {a['cpu_secs']:.2f} s | {b['cpu_secs']:.2f} s | "
               f"{a['cpu_secs'] / b['cpu_secs']:.1f}x |" if cpu else ""))
    return "\n".join(lines)


def _kernels_line(rows) -> str:
    from rulegen.learn.compiled import kernels

    if not kernels.enabled():
        return ("rulegen's forest and LightGBM- and XGBoost-style learners ran on numpy alone "
                "(numba not installed).")
    warm = [a["warm_secs"] for a, _ in rows.values() if a.get("warm_secs")]
    spent = f", {min(warm):.2f}-{max(warm):.2f} s" if warm else ""
    return ("rulegen's forest and LightGBM- and XGBoost-style learners ran their compiled kernels (numba "
            f"{kernels.numba.__version__}); each process first loaded them from numba's cache "
            f"with a fit of 2 rounds on 500 rows, not in the fit time{spent}.")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--datasets", default=",".join(DATASETS))
    ap.add_argument("--pairs", default=",".join(PAIRS))
    ap.add_argument("--timeout", type=int, default=1800, help="seconds per fit")
    ap.add_argument("--cpu", action="store_true", help="also CPU seconds per fit")
    ap.add_argument("--threads", type=int, default=1,
                    help="threads per fit, both sides (default 1): n_jobs for rulegen's\n"
                         "learners that take it (forest, xgboost_style), scikit-learn's\n"
                         "forest and XGBoost; OMP_NUM_THREADS in the worker. The other\n"
                         "pairs stay on one thread. Compare wall times then")
    ap.add_argument("--write", action="store_true", help="update docs/BENCHMARKS.md")
    args = ap.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    rows = {}
    load_start = os.getloadavg()[0]  # the machine may be shared: say how busy it was
    tmp = tempfile.mkdtemp(prefix="rulegen-bench-")
    for ds in args.datasets.split(","):
        task = ALL_DATASETS[ds][1]
        X, y, cats = load_all(ds)
        arrays = os.path.join(tmp, f"{ds}.npz")
        np.savez(arrays, X=X, y=y, cats=np.asarray(cats, dtype=int))
        for pair in args.pairs.split(","):
            ours, peer = {**PAIRS, **EXTRA_PAIRS}[pair]
            kw_ours, kw_peer = PAIR_KW.get(pair, ({}, {}))
            if pair == "adaboost" and task == "regression":
                continue
            big = ds in ("diamonds", "flights") or ds in SYNTHETIC
            spec = {"dataset": ds, "big": big, "arrays": arrays, "splits": 1 if big else SPLITS,
                    "threads": args.threads}
            a = run({**spec, "lib": ours, "extra": kw_ours}, args.timeout)
            b = run({**spec, "lib": peer, "extra": kw_peer}, args.timeout)
            rows[(ds, pair)] = (a, b)
            print(table({(ds, pair): (a, b)}, args.cpu).splitlines()[-1], file=sys.stderr,
                  flush=True)
    shutil.rmtree(tmp, ignore_errors=True)
    import sklearn
    per_fit = "one thread" if args.threads == 1 else f"{args.threads} threads (--threads)"
    header = (f"Machine: {platform.machine()}, {os.cpu_count()} cores, {per_fit} per fit, Python "
              f"{platform.python_version()}, scikit-learn {sklearn.__version__}. {N_TREES} trees "
              "or rounds; forest: sqrt/all features, fully grown (20 trees of depth 12 on diamonds "
              "and flights); "
              "AdaBoost: stumps; gb: depth 3, rate 0.1; xgb: exact, depth 6, eta 0.3, lambda 1; "
              "lgbm/hgb: 31 leaves, rate 0.1, 20 rows per leaf, 255 bins; xgbhist/xgbapprox/approxhist: "
              "as xgb but tree_method hist/hist, approx/approx, approx/hist, 256 bins. Memory: peak RSS "
              "during the fit above the RSS before it. Command: "
              f"`{' '.join(['python benchmarks/bench_ensembles.py', *sys.argv[1:]])}`.")
    header += (f" Load average (1 min) at start / end: {load_start:.2f} / "
               f"{os.getloadavg()[0]:.2f}. " + _kernels_line(rows))
    md = header + "\n\n" + table(rows, args.cpu) + "\n"
    print(md)
    if args.write:
        sys.path.insert(0, str(ROOT / "benchmarks"))
        from docsection import write_section

        extra = all(p in EXTRA_PAIRS for p in args.pairs.split(","))
        write_section(HIST_TITLE if extra else
                      "Ensembles: fit time, memory and accuracy beside the libraries", md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
