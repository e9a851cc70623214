"""Generated C in its three forms (nested if/else, goto, table) against XGBoost's own
predict, on a 500-tree depth-6 XGBoost model: ns per row at -O2 and build time.

    python benchmarks/bench_c_forms.py [--rows 100000] [--trees 500]

Prints a markdown table (wall clock, best of --repeat, one thread for XGBoost).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_cart import best_of, c_ns_per_row, make_data  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--rows", type=int, default=100_000)
    ap.add_argument("--trees", type=int, default=500)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    import xgboost as xgb

    from rulegen.importers.xgboost import from_booster
    from rulegen.ir import evaluate

    X, y, Xt, _ = make_data(args.rows, 20, "classification")
    y = (y == 2).astype(int)
    booster = xgb.train({"objective": "binary:logistic", "max_depth": 6, "eta": 0.05,
                         "nthread": 1, "tree_method": "hist"}, xgb.DMatrix(X, y), args.trees)
    model = from_booster(booster)
    margin = booster.inplace_predict(Xt[:2000], predict_type="margin")
    assert np.array_equal(evaluate.raw_scores(model, Xt[:2000])[:, 0].astype(np.float32), margin)
    peer = best_of(lambda: booster.inplace_predict(Xt), args.repeat) * 1e9 / len(Xt)
    rows = ["| implementation | ns/row (-O2) | ratio to XGBoost | generate + compile |",
            "|---|---|---|---|",
            f"| XGBoost {xgb.__version__} inplace_predict (1 thread) | {peer:.0f} | 1.00 | - |"]
    for form in ("nested", "goto", "table"):
        ns, build = c_ns_per_row(model, Xt, reps=args.repeat, form=form)
        rows.append(f"| rulegen C, {form} form | {ns:.0f} | {ns / peer:.2f} | {build:.1f} s |")
        print(rows[-1], file=sys.stderr, flush=True)
    print(f"{args.trees} trees, depth 6, {args.rows} test rows x 20 features. "
          "Command: `python benchmarks/bench_c_forms.py`.\n")
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
