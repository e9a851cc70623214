"""CHAID on one categorical predictor with many levels (issue 20): fit time and peak memory.

    python benchmarks/bench_chaid.py                  # up to 10,000 levels on 5,000 rows
    python benchmarks/bench_chaid.py --write          # also into docs/BENCHMARKS.md
    python benchmarks/bench_chaid.py --code <checkout> --timeout 600   # another checkout's code

The data are synthetic and seeded: codes drawn uniformly from ``levels`` (so most present
categories hold one or two rows), 2% missing, a normal effect per level; the class is
drawn from a logistic of it, the regression target is it plus normal noise. Default
parameters (depth 3, alpha 0.05, no re-splitting) unless ``--resplit``.

Each case runs in a fresh process, one thread; it reports the fit's wall and CPU seconds,
the process's peak RSS, and a fingerprint (hash of every split's groups, statistic and
p-values, bit for bit): the same fingerprint from two versions of the code is the same tree.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))

CASE = r"""
import hashlib, json, resource, sys, time
import numpy as np
sys.path.insert(0, sys.argv[1])
from rulegen.learn.trees.chaid import CHAIDClassifier, CHAIDRegressor
levels, rows, task, resplit = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5] == "1"
rng = np.random.default_rng(20)
x = rng.integers(0, levels, rows).astype(float)
effect = rng.normal(size=levels)[x.astype(int)]
x[rng.random(rows) < 0.02] = np.nan
kw = {"alpha_resplit": 0.05} if resplit else {}
if task == "classification":
    y = (rng.random(rows) < 1 / (1 + np.exp(-2 * effect))).astype(int)
    est = CHAIDClassifier(**kw)
else:
    y = effect + rng.normal(size=rows)
    est = CHAIDRegressor(**kw)
w0, c0 = time.perf_counter(), time.process_time()
est.fit(x[:, None], y, categorical_features=[0])
wall, cpu = time.perf_counter() - w0, time.process_time() - c0
h = hashlib.sha256()
for nid in sorted(est.splits_):
    s = est.splits_[nid]
    h.update(repr((nid, s["groups"], hex(s["multiplier"]))).encode())  # no decimal limit
    h.update(np.array([s["statistic"], *s["df"], s["p_value"], s["adjusted_p_value"]]).tobytes())
root = est.splits_.get(0)
print(json.dumps({"wall": wall, "cpu": cpu,
                  "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "splits": len(est.splits_), "root_groups": len(root["groups"]) if root else 0,
                  "present": int(np.unique(x[~np.isnan(x)]).size),
                  "fingerprint": h.hexdigest()[:12]}))
"""


def run_case(code: Path, levels: int, rows: int, task: str, resplit: bool, timeout: float):
    env = dict(os.environ, OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    args = [sys.executable, "-c", CASE, str(code), str(levels), str(rows), task,
            "1" if resplit else "0"]
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=timeout, env=env,
                             check=True).stdout
    except subprocess.TimeoutExpired:
        return None
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    from docsection import publish

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--code", type=Path, default=ROOT, help="checkout whose rulegen to time")
    ap.add_argument("--sizes", default="1000x2000,2000x2000,10000x5000",
                    help="levels x rows, comma separated")
    ap.add_argument("--tasks", default="classification,regression")
    ap.add_argument("--resplit", action="store_true", help="alpha_resplit=0.05")
    ap.add_argument("--timeout", type=float, default=1200.0, help="seconds per case")
    ap.add_argument("--write", action="store_true", help="replace the docs/BENCHMARKS.md section")
    a = ap.parse_args()
    lines = [("| task | levels | rows | present | fit wall s | fit CPU s | peak RSS MB | splits "
             "| root groups | fingerprint |"), "|---|--:|--:|--:|--:|--:|--:|--:|--:|---|"]
    for task in a.tasks.split(","):
        for size in a.sizes.split(","):
            levels, rows = map(int, size.split("x"))
            r = run_case(a.code.resolve(), levels, rows, task, a.resplit, a.timeout)
            if r is None:
                lines.append(f"| {task} | {levels} | {rows} | | > {a.timeout:.0f} | | | | | |")
            else:
                lines.append(f"| {task} | {levels} | {rows} | {r['present']} | {r['wall']:.2f} "
                             f"| {r['cpu']:.2f} | {r['rss']:.0f} | {r['splits']} "
                             f"| {r['root_groups']} | `{r['fingerprint']}` |")
            print(lines[-1], file=sys.stderr)
    text = ("`python benchmarks/bench_chaid.py" + (" --resplit" if a.resplit else "") + "`: "
            "one process per case, one thread, CHAID's default parameters,\none categorical "
            "predictor; *present*: the levels that occur. Peak RSS is the whole process's\n"
            "(Python, numpy and scipy alone take about 100 MB).\n\n" + "\n".join(lines))
    publish("CHAID on a categorical predictor with many levels (issue 20)", text,
            a.write and not a.resplit and a.code.resolve() == ROOT)


if __name__ == "__main__":
    main()
