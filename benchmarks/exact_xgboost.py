"""How often each target's XGBoost probabilities are bit-identical to XGBoost's own.

    python benchmarks/exact_xgboost.py [--rows N] [--write]

Three models fitted here with XGBoost's Python API: ``binary:logistic`` with 500 rounds of
depth 6 on bench_sql.py's data (20 features), ``multi:softprob`` with 3 classes and 100 rounds,
and ``count:poisson`` with 100 rounds. Each target scores the same rows (drawn from the same
distribution, one in twenty values missing); a row counts as identical when every output
(probability or value) equals ``Booster.inplace_predict`` bit for bit, and the worst
difference is in float32 ulps. The C library here is the one XGBoost calls ``expf`` from.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))


def models(n_train: int) -> dict:
    import xgboost as xgb
    from bench_sql import make_data

    X, y = make_data(n_train, 1)
    score = X[:, 0] + 0.5 * X[:, 1] - 0.3 * X[:, 16]
    y3 = np.digitize(score, np.quantile(score, [1 / 3, 2 / 3]))
    counts = np.random.default_rng(0).poisson(np.exp(np.clip(0.4 * score, -3, 3)))
    common = {"max_depth": 6, "tree_method": "hist", "nthread": 1, "seed": 0}
    fit = lambda params, target, rounds: xgb.train({**common, **params}, xgb.DMatrix(X, target), rounds)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {
            "binary:logistic, 500 x depth 6": fit({"objective": "binary:logistic", "eta": 0.1,
                                                   "base_score": 0.5}, y, 500),
            "multi:softprob, 3 classes, 100 x depth 6": fit({"objective": "multi:softprob",
                                                             "num_class": 3, "eta": 0.2}, y3, 100),
            "count:poisson, 100 x depth 6": fit({"objective": "count:poisson", "eta": 0.1}, counts, 100),
        }


def outputs(model, out) -> np.ndarray:
    """A target's outputs as XGBoost's predict gives them (binary: P(class 1) only)."""
    out = np.asarray(out, dtype=np.float64)
    binary = model.target.task == "classification" and model.n_raw == 1
    return out[:, 1:] if binary else out


def targets(model, X, pg_conn):
    """(name, outputs) for every target, each run for real."""
    from irfixtures import labels_for
    from run_c import run_c
    from run_python import import_source
    import run_sql

    from rulegen.codegen.registry import generate
    from rulegen.ir import evaluate

    classifier = model.target.task == "classification"
    yield "evaluator", outputs(model, (evaluate.predict_proba if classifier else evaluate.predict_value)(model, X))
    res = run_c(generate(model, "c", name="xgbm"), "xgbm", X, opt="-O2")
    yield "C (cc -O2)", outputs(model, res["out"])
    module = import_source(generate(model, "python", name="xgbm"))
    rows = labels_for(model, X)
    batch = module.predict_proba_batch if classifier else module.predict_batch
    yield "Python", outputs(model, np.array(batch(rows), dtype=np.float64).reshape(len(X), -1))
    for dialect in ("sqlite", "duckdb", "postgres"):
        conn = pg_conn if dialect == "postgres" else None
        if dialect == "postgres" and conn is None:
            continue
        sql = generate(model, "sql", dialect=dialect, passthrough=[run_sql.row_column(model)])["model.sql"]
        res = run_sql.run_sql(sql, model, rows, dialect, conn=conn)
        got = res.proba if classifier else res.values
        yield f"SQL ({dialect})", outputs(model, got)


def ulps(a, b) -> np.ndarray:
    def key(x):
        i = np.asarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(a) - key(b))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--write", action="store_true", help="put the table into docs/BENCHMARKS.md")
    args = ap.parse_args()
    from bench_sql import make_data
    from pgserver import PgServer
    import run_sql

    from rulegen.importers.xgboost import from_booster

    X, _ = make_data(args.rows, 2)
    X = X.astype(np.float64)
    X[np.random.default_rng(3).random(X.shape) < 0.05] = np.nan
    server, conn = PgServer(), None
    if server.why_unavailable() is None:
        conn = run_sql.connect("postgres", server.start())
    lines = ["| model | target | rows identical to XGBoost | worst difference (float32 ulps) |",
             "|---|---|---|---|"]
    try:
        for name, booster in models(20_000).items():
            model = from_booster(booster)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                theirs = np.asarray(booster.inplace_predict(X)).reshape(len(X), -1).astype(np.float32)
            for target, got in targets(model, X, conn):
                got32 = got.astype(np.float32)
                same = ((got32 == theirs) | (np.isnan(got32) & np.isnan(theirs))).all(axis=1)
                worst = int(ulps(got32, theirs).max()) if len(X) else 0
                lines.append(f"| {name} | {target} | {int(same.sum()):,} of {len(X):,} | {worst} |")
                print(lines[-1], file=sys.stderr, flush=True)
    finally:
        if conn is not None:
            conn.close()
            server.stop()
    text = (f"Command: `python benchmarks/exact_xgboost.py --rows {args.rows}` "
            f"(XGBoost's `inplace_predict` as the reference).\n\n" + "\n".join(lines))
    from docsection import publish
    publish("XGBoost probabilities, bit for bit", text, args.write)
    return 0


if __name__ == "__main__":
    sys.exit(main())
