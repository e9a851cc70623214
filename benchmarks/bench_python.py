"""Generated Python beside m2cgen's Python, same rows, same process: us/row and exactness.

    python3 benchmarks/bench_python.py --ir /tmp/proto/dt_d8_bin.json --ir /tmp/proto/xgb500_d6_bin.json \\
        --rows /tmp/proto/x.bin --m2cgen-python /tmp/benchvenv/bin/python \\
        --bench-dir ../shared/bench --cache /tmp/rgbench/cache --work /tmp/pybench

Each IR file is the rulegen import of a model of the shared harness (``../shared/bench``; the
file's stem is the model's name there, ``models.get_model(name)`` loads the live estimator from
``--cache``); m2cgen (installed only in the ``--m2cgen-python`` environment) exports that live
estimator with ``export_to_python``. Both modules are imported into this interpreter and called
one row at a time, as a service would: rulegen's ``predict_proba(row)`` (compiled with the
default ``--rows any`` and with ``--rows floats``, m2cgen's input contract) and m2cgen's
``score(row)``, each row a list of Python floats (float32 rows of ``--rows`` widened). Rounds
alternate between the two (``--rounds``), each timing ``--rows-per-model`` rows; the best round
is reported. Every row's probabilities are compared with rulegen's evaluator (which equals
XGBoost and scikit-learn: tests/test_import_*.py).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import m2cgen_export  # noqa: E402
from rulegen.codegen.registry import generate  # noqa: E402
from rulegen.ir import evaluate as ev  # noqa: E402
from rulegen.ir.serialize import loads  # noqa: E402


def load(path: Path, name: str):
    sys.setrecursionlimit(100_000)  # m2cgen's modules nest one block per tree level
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def per_row(fn, rows) -> float:
    t0 = time.perf_counter()
    for r in rows:
        fn(r)
    return (time.perf_counter() - t0) / len(rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ir", action="append", required=True, help="rulegen IR of a harness model (repeatable)")
    ap.add_argument("--rows", required=True, help="float32 rows, row-major")
    ap.add_argument("--m2cgen-python", required=True)
    ap.add_argument("--bench-dir", default=str(ROOT.parent / "shared" / "bench"))
    ap.add_argument("--cache", default="/tmp/rgbench/cache")
    ap.add_argument("--work", default="/tmp/pybench")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rows-per-model", default="dt=1000,default=100",
                    help="rows timed per round: NAME-PREFIX=N pairs, 'default' for the rest")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    counts = dict(kv.split("=") for kv in args.rows_per_model.split(","))
    irs = [Path(p) for p in args.ir]
    names = [p.stem for p in irs]
    export = [m2cgen_export.job(name, "python", work / f"m2c_{name}.py", function_name="score")
              for name in names if not (work / f"m2c_{name}.py").exists()]
    version = m2cgen_export.export(args.m2cgen_python, args.bench_dir, args.cache, export) if export else "(cached)"
    X = np.fromfile(args.rows, dtype=np.float32)
    results = []
    for ir, name in zip(irs, names):
        model = loads(ir.read_text())
        n = int(next((v for k, v in counts.items() if name.startswith(k)), counts["default"]))
        X_m = X.reshape(-1, len(model.features))[:max(n, 1000)]
        rows = [r.tolist() for r in X_m]
        (work / f"rg_{name}.py").write_text(generate(model, "python", name=f"rg_{name}")[f"rg_{name}.py"])
        (work / f"rgf_{name}.py").write_text(
            generate(model, "python", name=f"rgf_{name}", rows="floats")[f"rgf_{name}.py"])
        t0 = time.perf_counter()
        rg = load(work / f"rg_{name}.py", f"rg_{name}")
        rg_import = time.perf_counter() - t0
        rgf = load(work / f"rgf_{name}.py", f"rgf_{name}")
        t0 = time.perf_counter()
        m2c = load(work / f"m2c_{name}.py", f"m2c_{name}")
        m2c_import = time.perf_counter() - t0
        want = ev.predict_proba(model, X_m.astype(np.float64)).astype(np.float64)
        exact = {}
        fns = {"rulegen": rg.predict_proba, "floats": rgf.predict_proba, "m2cgen": m2c.score}
        for label, fn in fns.items():
            got = np.array([fn(r) for r in rows], dtype=np.float64)
            diff = np.abs(got - want).max(axis=1)
            exact[label] = (int((diff > 0).sum()), float(diff.max()))
        best = dict.fromkeys(fns, 1e9)
        timed = rows[:n]
        for _ in range(args.rounds):  # interleaved, best round of each
            for label, fn in fns.items():
                best[label] = min(best[label], per_row(fn, timed))
        results.append({"model": name, "rows": len(timed), "rulegen_us": best["rulegen"] * 1e6,
                        "floats_us": best["floats"] * 1e6, "m2cgen_us": best["m2cgen"] * 1e6,
                        "ratio": best["rulegen"] / best["m2cgen"], "floats_ratio": best["floats"] / best["m2cgen"],
                        "rulegen_off": exact["rulegen"], "floats_off": exact["floats"],
                        "m2cgen_off": exact["m2cgen"], "checked_rows": len(rows),
                        "rulegen_import_s": rg_import, "m2cgen_import_s": m2c_import})
    print(f"m2cgen {version}; CPython {sys.version.split()[0]}")
    print("| model | rulegen us/row | ratio | rulegen --rows floats us/row | ratio | m2cgen us/row | "
          "rulegen rows off (any / floats) | m2cgen rows off (max) | import s (rulegen / m2cgen) |")
    print("|---|---:|---:|---:|---:|---:|---|---|---|")
    for r in results:
        print(f"| {r['model']} | {r['rulegen_us']:.2f} | {r['ratio']:.2f} | {r['floats_us']:.2f} | "
              f"{r['floats_ratio']:.2f} | {r['m2cgen_us']:.2f} | "
              f"{r['rulegen_off'][0]} / {r['floats_off'][0]} of {r['checked_rows']} | "
              f"{r['m2cgen_off'][0]} ({r['m2cgen_off'][1]:.1e}) | "
              f"{r['rulegen_import_s']:.2f} / {r['m2cgen_import_s']:.2f} |")
    (work / "results.json").write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
