"""rulegen's JavaScript target beside m2cgen's JavaScript, side by side in one node process.

Models: the shared harness's 500-tree XGBoost (depth 6, binary) and 100-tree random forest
(depth 10, binary), as rulegen IR (``--ir-dir``) and as the live models m2cgen reads (pickles in
the harness's cache, loaded by the harness's ``models.get_model`` in the venv that has m2cgen,
xgboost and scikit-learn: ``--venv``). Rows: 100,000 x 20 float32, row-major (``--rows``).

One run: every implementation scores 10,000 rows to warm V8's JIT, then all 100,000 rows once,
timed. Reported: ns/row, and exactness of P(class 1) against rulegen's evaluator (the IR's
meaning, glibc's exp) and against the library's own predict_proba.

    python3 benchmarks/bench_javascript.py    # defaults: /tmp/proto, /tmp/benchvenv, /tmp/rgbench/cache
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from rulegen.codegen.registry import generate  # noqa: E402
from rulegen.ir import evaluate as ev  # noqa: E402
from rulegen.ir.serialize import loads  # noqa: E402

MODELS = ("xgb500_d6_bin", "rf100_d10_bin")
N_FEATURES = 20

# Runs in the venv with m2cgen: m2cgen's JavaScript and the library's P(class 1) on the rows.
EXPORT = r"""
import os, sys, threading, json
import numpy as np
os.environ["RG_BENCH_CACHE"] = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import models, m2cgen
out, rows = sys.argv[3], sys.argv[4]
X = np.fromfile(rows, dtype=np.float32).reshape(-1, 20)
for name in sys.argv[5:]:
    e = models.get_model(name)
    res = {}
    def run():
        res["code"] = m2cgen.export_to_javascript(e.model)
    sys.setrecursionlimit(1_000_000)
    threading.stack_size(512 * 1024 * 1024)
    t = threading.Thread(target=run); t.start(); t.join()
    open(os.path.join(out, name + ".m2c.js"), "w").write(res["code"])
    np.asarray(e.model.predict_proba(X)[:, 1], dtype=np.float64).tofile(os.path.join(out, name + ".lib.bin"))
"""

RUNNER = r"""
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [dir, rowsPath, ...names] = process.argv.slice(2);
const buf = readFileSync(rowsPath);
const X = new Float32Array(buf.buffer, buf.byteOffset, buf.length / 4);
const NF = 20, n = X.length / NF, WARM = 10000;
const rows = [];
for (let i = 0; i < n; i++) rows.push(Array.from(X.subarray(i * NF, (i + 1) * NF)));
const results = {};
function time(label, fn) {
  fn(0, WARM);
  const t0 = process.hrtime.bigint();
  const out = fn(0, n);
  const ns = Number(process.hrtime.bigint() - t0) / n;
  return { ns, out };
}
for (const name of names) {
  const m2c = new Function(readFileSync(`${dir}/${name}.m2c.js`, "utf8") + "\nreturn score;")();
  const rg = await import(pathToFileURL(`${dir}/${name}.mjs`).href);
  const runs = {
    m2cgen: (a, b) => { const o = new Float64Array(b - a); for (let i = a; i < b; i++) o[i - a] = m2c(rows[i])[1]; return o; },
    rulegen_row: (a, b) => { const o = new Float64Array(b - a); for (let i = a; i < b; i++) o[i - a] = rg.predictProba(rows[i])[1]; return o; },
    rulegen_batch: (a, b) => {
      const p = rg.predictProbaBatch(X.subarray(a * NF, b * NF));
      return Float64Array.from(p, (v) => v[1]);
    },
  };
  results[name] = {};
  for (const [impl, fn] of Object.entries(runs)) {
    const { ns, out } = time(impl, fn);
    writeFileSync(`${dir}/${name}.${impl}.bin`, Buffer.from(out.buffer));
    results[name][impl] = ns;
  }
}
console.log(JSON.stringify(results));
"""


def exactness(got: np.ndarray, want: np.ndarray, f32: bool) -> dict:
    """Rows equal bit for bit (compared in float32 when the model's outputs are float32),
    the largest absolute difference and the rows whose label (p > 0.5) differs."""
    g, w = (got.astype(np.float32), want.astype(np.float32)) if f32 else (got, want)
    return {"same": int((g == w).sum()), "rows": len(got),
            "max_abs": float(np.max(np.abs(got - want))), "flips": int(((got > 0.5) != (want > 0.5)).sum())}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ir-dir", default="/tmp/proto")
    ap.add_argument("--rows", default="/tmp/proto/x.bin")
    ap.add_argument("--venv", default="/tmp/benchvenv")
    ap.add_argument("--cache", default="/tmp/rgbench/cache")
    ap.add_argument("--harness", default="/work/shared/bench")
    args = ap.parse_args()
    X = np.fromfile(args.rows, dtype=np.float32).reshape(-1, N_FEATURES)
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        (d / "export.py").write_text(EXPORT)
        subprocess.run([f"{args.venv}/bin/python", str(d / "export.py"), args.cache, args.harness, str(d),
                        args.rows, *MODELS], check=True)
        irs = {}
        for name in MODELS:
            irs[name] = loads(Path(args.ir_dir, name + ".json").read_text())
            (d / f"{name}.mjs").write_text(generate(irs[name], "javascript", name=name)[f"{name}.mjs"])
        (d / "run.mjs").write_text(RUNNER)
        proc = subprocess.run(["node", str(d / "run.mjs"), str(d), args.rows, *MODELS],
                              check=True, capture_output=True, text=True)
        timing = json.loads(proc.stdout)
        report = {}
        for name in MODELS:
            model = irs[name]
            with np.errstate(all="ignore"):
                want = ev.predict_proba(model, X.astype(np.float64))[:, 1].astype(np.float64)
            lib = np.fromfile(d / f"{name}.lib.bin")
            f32 = model.dtype == "float32"
            report[name] = {}
            for impl, ns in timing[name].items():
                got = np.fromfile(d / f"{name}.{impl}.bin")
                report[name][impl] = {"ns_per_row": round(ns, 1),
                                      "vs_evaluator": exactness(got, want, f32),
                                      "vs_library": exactness(got, lib, f32)}
    print(json.dumps(report, indent=2))
    for name, impls in report.items():
        for impl, r in impls.items():
            e, lib = r["vs_evaluator"], r["vs_library"]
            print(f"{name:15} {impl:14} {r['ns_per_row']:9.1f} ns/row   evaluator: {e['same']}/{e['rows']} same, "
                  f"max {e['max_abs']:.2e}, {e['flips']} flips   library: {lib['same']}/{lib['rows']} same, "
                  f"max {lib['max_abs']:.2e}, {lib['flips']} flips")


if __name__ == "__main__":
    main()
