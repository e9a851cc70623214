"""CART: rulegen's fit against scikit-learn's, and the generated C's speed against
scikit-learn's predict, on the same 100k x 20 data, reported as ratios.

    python benchmarks/bench_cart.py                 # full run (a few minutes)
    python benchmarks/bench_cart.py --rows 20000    # quicker
    PYTHONPATH=. python benchmarks/bench_cart.py --classes 200 --rows 20000 --depths 10 --fit-only
                                                    # fit only, many classes, interleaved

Prints a markdown table; ``--write`` also replaces the CART section of docs/BENCHMARKS.md.
Timings are the best of ``--repeat`` runs in one process (wall clock, one thread).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "model.h"
int main(int argc, char **argv) {
    long n = atol(argv[2]); int reps = atoi(argv[3]);
    double *X = malloc(sizeof(double) * n * model_N_FEATURES);
    double out[model_N_OUTPUTS + 1]; double sink = 0.0;
    FILE *f = fopen(argv[1], "rb");
    if (fread(X, sizeof(double), n * model_N_FEATURES, f) != (size_t)(n * model_N_FEATURES)) return 1;
    fclose(f);
    double best = 1e30;
    for (int r = 0; r < reps; r++) {
        struct timespec a, b; clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < n; i++) { model_predict(X + i * model_N_FEATURES, out); sink += out[0]; }
        clock_gettime(CLOCK_MONOTONIC, &b);
        double s = (b.tv_sec - a.tv_sec) + 1e-9 * (b.tv_nsec - a.tv_nsec);
        if (s < best) best = s;
    }
    printf("%.3f %g\n", best * 1e9 / n, sink);
    return 0;
}
"""


def make_data(n: int, p: int, task: str, seed: int = 0, classes: int = 3):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(2 * n, p))
    X[:, :4] = np.round(X[:, :4] * 3)  # integer-valued columns: ties at thresholds
    signal = X[:, 0] * X[:, 1] + np.sin(3 * X[:, 2]) + (X[:, 3] > 1) - 0.5 * X[:, 4] ** 2
    noise = rng.normal(scale=0.5, size=2 * n)
    if task == "classification" and classes == 3:
        y = np.digitize(signal + noise, [-1.0, 0.5])  # 3 classes
    elif task == "classification":  # classes of equal size: quantiles of the score
        score = signal + noise
        y = np.digitize(score, np.quantile(score[:n], np.linspace(0, 1, classes + 1)[1:-1]))
    else:
        y = signal + noise
    return X[:n], y[:n], X[n:], y[n:]


def best_of(fn, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def c_ns_per_row(model, X: np.ndarray, reps: int, form: str = "auto") -> tuple[float, float]:
    """(ns per row of the compiled C at -O2, seconds to generate + compile)."""
    import rulegen

    with tempfile.TemporaryDirectory() as d:
        d = Path(d)
        t = time.perf_counter()
        files = rulegen.generate(model, "c", name="model", form=form)
        for name, text in files.items():
            (d / name).write_text(text)
        (d / "driver.c").write_text(DRIVER)
        sources = [str(d / n) for n in files if n.endswith(".c")] + [str(d / "driver.c")]
        subprocess.run(["cc", "-O2", "-std=c99", "-D_POSIX_C_SOURCE=199309L", "-o", str(d / "run"),
                        *sources, "-lm"], check=True)
        build = time.perf_counter() - t
        X.astype(np.float64).tofile(d / "x.bin")
        out = subprocess.run([str(d / "run"), str(d / "x.bin"), str(len(X)), str(reps)],
                             check=True, capture_output=True, text=True).stdout.split()
        return float(out[0]), build


def bench(task: str, n: int, p: int, max_depth, repeat: int) -> dict:
    import sklearn
    from sklearn.tree import DecisionTreeClassifier as SkC
    from sklearn.tree import DecisionTreeRegressor as SkR

    from rulegen.ir import evaluate
    from rulegen.learn import CARTClassifier, CARTRegressor

    X, y, Xt, yt = make_data(n, p, task)
    ours = (CARTClassifier if task == "classification" else CARTRegressor)(
        max_depth=max_depth, random_state=0)
    theirs = (SkC if task == "classification" else SkR)(max_depth=max_depth, random_state=0)
    t_ours = best_of(lambda: ours.fit(X, y), repeat)
    t_theirs = best_of(lambda: theirs.fit(X, y), repeat)
    if task == "classification":
        score_ours = float(np.mean(ours.predict(Xt) == yt))
        score_theirs = float(np.mean(theirs.predict(Xt) == yt))
    else:
        score_ours = float(1 - np.mean((ours.predict(Xt) - yt) ** 2) / np.var(yt))
        score_theirs = float(1 - np.mean((theirs.predict(Xt) - yt) ** 2) / np.var(yt))
    sk_predict = best_of(lambda: theirs.predict(Xt), repeat) * 1e9 / len(Xt)
    c_ns, c_build = c_ns_per_row(ours.model_, Xt, reps=max(3, repeat))
    # the generated code must agree with the evaluator on these rows too (spot check)
    assert np.array_equal(np.asarray(ours.predict(Xt[:1000])),
                          np.asarray(evaluate.predict(ours.model_, Xt[:1000])))
    return {
        "task": task, "rows": n, "features": p, "max_depth": max_depth,
        "leaves": ours.get_n_leaves(), "sk_leaves": theirs.get_n_leaves(),
        "fit_rulegen_s": t_ours, "fit_sklearn_s": t_theirs,
        "score_rulegen": score_ours, "score_sklearn": score_theirs,
        "c_ns_row": c_ns, "c_build_s": c_build, "sk_predict_ns_row": sk_predict,
        "sklearn": sklearn.__version__,
    }


def bench_fit(n: int, p: int, max_depth, classes: int, repeat: int) -> dict:
    """Classification fit times only, rulegen and scikit-learn alternating (a loaded
    machine slows both alike); the first rulegen fit, which loads numba, kept apart."""
    import sklearn
    from sklearn.tree import DecisionTreeClassifier as SkC

    from rulegen.learn import CARTClassifier
    from rulegen.learn.compiled import cart_kernels

    X, y, _, _ = make_data(n, p, "classification", classes=classes)
    ours = CARTClassifier(max_depth=max_depth, random_state=0)
    theirs = SkC(max_depth=max_depth, random_state=0)
    t = time.perf_counter()
    ours.fit(X, y)
    first = time.perf_counter() - t
    t_ours, t_theirs = [], []
    for _ in range(repeat):
        t_ours.append(best_of(lambda: ours.fit(X, y), 1))
        t_theirs.append(best_of(lambda: theirs.fit(X, y), 1))
    return {"rows": n, "features": p, "classes": len(np.unique(y)), "max_depth": max_depth,
            "leaves": ours.get_n_leaves(), "sk_leaves": theirs.get_n_leaves(),
            "first_fit_s": first, "fit_rulegen_s": min(t_ours), "fit_sklearn_s": min(t_theirs),
            "compiled": bool(cart_kernels.load()) and n >= _min_compiled_work(),
            "sklearn": sklearn.__version__}


def _min_compiled_work() -> int:
    from rulegen.learn.ensembles import forest

    return forest.MIN_COMPILED_WORK


def fit_table(results: list[dict]) -> str:
    lines = [("| rows x features | classes | max_depth | leaves (rulegen / sklearn) | grower "
              "| first fit rulegen | fit rulegen | fit sklearn | rulegen / sklearn |"),
             "|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(
            f"| {r['rows']} x {r['features']} | {r['classes']} | {r['max_depth']} "
            f"| {r['leaves']} / {r['sk_leaves']} | {'compiled' if r['compiled'] else 'numpy'} "
            f"| {r['first_fit_s']:.2f} s | {r['fit_rulegen_s']:.2f} s "
            f"| {r['fit_sklearn_s']:.2f} s | {r['fit_rulegen_s'] / r['fit_sklearn_s']:.2f} |")
    return "\n".join(lines)


def table(results: list[dict]) -> str:
    lines = [
        "| task | max_depth | leaves (rulegen / sklearn) | fit rulegen | fit sklearn "
        "| fit time rulegen / sklearn | test score rulegen / sklearn | C ns/row (-O2) "
        "| sklearn predict ns/row | sklearn / C | C generate+compile |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        lines.append(
            f"| {r['task']} | {r['max_depth']} | {r['leaves']} / {r['sk_leaves']} "
            f"| {r['fit_rulegen_s']:.2f} s | {r['fit_sklearn_s']:.2f} s "
            f"| {r['fit_rulegen_s'] / r['fit_sklearn_s']:.2f} "
            f"| {r['score_rulegen']:.4f} / {r['score_sklearn']:.4f} "
            f"| {r['c_ns_row']:.1f} | {r['sk_predict_ns_row']:.1f} "
            f"| {r['sk_predict_ns_row'] / r['c_ns_row']:.1f} | {r['c_build_s']:.2f} s |")
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--depths", default="8,none",
                    help="comma-separated max_depth values ('none' = unlimited)")
    ap.add_argument("--classes", type=int, default=3,
                    help="classes of the classification target (3: the usual cut of the score)")
    ap.add_argument("--fit-only", action="store_true",
                    help="classification fit times only, rulegen and sklearn interleaved")
    ap.add_argument("--write", action="store_true", help="update docs/BENCHMARKS.md")
    args = ap.parse_args()
    depths = [None if d.strip().lower() == "none" else int(d) for d in args.depths.split(",")]
    if args.fit_only:
        import rulegen

        fits = [bench_fit(args.rows, args.features, d, args.classes, args.repeat) for d in depths]
        print(f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, scikit-learn {fits[0]['sklearn']}; rulegen from "
              f"{Path(rulegen.__file__).parent}; best of {args.repeat}, interleaved; load "
              f"{os.getloadavg()[0]:.2f}.\n\n{fit_table(fits)}")
        return 0
    results = []
    for task in ("classification", "regression"):
        for depth in depths:
            r = bench(task, args.rows, args.features, depth, args.repeat)
            results.append(r)
            print(table([r]).splitlines()[-1], file=sys.stderr, flush=True)
    header = (f"Machine: {platform.machine()}, {os.cpu_count()} cores, Python "
              f"{platform.python_version()}, scikit-learn {results[0]['sklearn']}; "
              f"{args.rows} training rows x {args.features} features, {args.rows} test rows; "
              f"best of {args.repeat}. Command: `python benchmarks/bench_cart.py`.")
    md = header + "\n\n" + table(results) + "\n"
    print(md)
    if args.write:
        from docsection import write_section

        write_section("CART: fit against scikit-learn, generated C against scikit-learn's predict",
                      md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
