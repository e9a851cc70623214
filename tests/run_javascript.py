"""Executor for the JavaScript target: write generated modules, run them all in ONE node process,
read every number back exactly (the raw bytes of Float64Arrays, never through text).

``run_js({key: (files, X)}, directory)`` returns, per key, a dict of numpy arrays:
``raw`` (n, N_RAW), ``out`` (n, N_OUTPUTS: probabilities or values), ``class`` (n,) or None,
``raw_f32`` (the raw scores of the Float32Array batch of X rounded to float32), and the counts
of rows where a variant disagreed bit for bit with the one-row form: ``batch_diff`` (the
batch forms over an array of rows and over a Float64Array) and ``null_diff`` (NaN passed as
null, undefined, or through an object keyed by feature name).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import warnings
from pathlib import Path

import numpy as np

RUNNER = r"""
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const jobs = JSON.parse(readFileSync(process.argv[2], "utf8"));
const same = (a, b) => Object.is(a, b) || (a !== a && b !== b);  // NaN payloads are not kept
const sameRow = (a, b) => a.length === b.length && a.every((v, i) => same(v, b[i]));
const flat = (rows) => Float64Array.from(rows.flat());

function apiChecks(m, row) {
  // what a caller gets for bad rows: the error's name, or "none"
  const tryIt = (f) => { try { f(); return "none"; } catch (e) { return e.name; } };
  const obj = {};
  m.FEATURES.forEach((name) => { obj[name] = 0.5; });
  const missingKey = {};
  return {
    string: tryIt(() => m.predictRaw(row.map((v, j) => (j === 0 ? "1.5" : v)))),
    bigint: tryIt(() => m.predictRaw(row.map((v, j) => (j === 0 ? 1n : v)))),
    boolean: tryIt(() => m.predictRaw(row.map((v, j) => (j === 0 ? true : v)))),
    short: tryIt(() => m.predictRaw(row.slice(1))),
    long: tryIt(() => m.predictRaw(row.concat([0]))),
    object: tryIt(() => m.predictRaw(obj)),
    objectMissingKey: tryIt(() => m.predictRaw(missingKey)),
    notARow: tryIt(() => m.predictRaw(42)),
    badTyped: tryIt(() => m.predictRawBatch(new Float64Array(m.N_FEATURES + 1))),
    unseen: m.unseenFeatures(row.map((v, j) => 0.5)),
    unseenNone: m.unseenFeatures(row.map((v, j) => 0)),
    unseenMissing: m.unseenFeatures(row.map((v, j) => null)),
    emptyBatch: m.predictBatch([]).length + m.predictBatch(new Float64Array(0)).length,
  };
}

for (const job of jobs) {
  const m = await import(pathToFileURL(job.module).href);
  const nf = m.N_FEATURES;
  const buf = readFileSync(job.rows);
  const X = new Float64Array(buf.buffer, buf.byteOffset, buf.length / 8);
  const n = X.length / nf;
  const rows = [];
  for (let i = 0; i < n; i++) rows.push(Array.from(X.subarray(i * nf, (i + 1) * nf)));
  const classifier = m.TASK === "classification";
  const outputs = (r) => {
    if (classifier) return m.predictProba(r);
    const v = m.predict(r);
    return typeof v === "number" ? [v] : v;
  };
  const raw = [], out = [], cls = [];
  let nullDiff = 0, batchDiff = 0;
  rows.forEach((r, i) => {
    const a = m.predictRaw(r);
    raw.push(a);
    out.push(outputs(r));
    if (classifier) {
      cls.push(m.predictClass(r));
      if (m.predict(r) !== m.CLASSES[cls[i]]) batchDiff++;
    }
    // missing as null / undefined / an object keyed by feature name
    const asNull = r.map((v) => (v !== v ? null : v));
    const asUndef = r.map((v) => (v !== v ? undefined : v));
    const asObj = {};
    m.FEATURES.forEach((name, j) => { asObj[name] = asNull[j]; });
    for (const alt of [asNull, asUndef, asObj]) {
      if (!sameRow(m.predictRaw(alt), a) || !sameRow(outputs(alt), out[i])) { nullDiff++; break; }
    }
  });
  // the batch forms, over an array of rows and over a Float64Array, equal the one-row form
  const rawB = m.predictRawBatch(rows), rawT = m.predictRawBatch(flat(rows));
  const predB = m.predictBatch(rows), predT = m.predictBatch(flat(rows));
  const probaB = classifier ? m.predictProbaBatch(rows) : null;
  const classT = classifier ? m.predictClassBatch(flat(rows)) : null;
  rows.forEach((r, i) => {
    let ok = sameRow(rawB[i], raw[i]) && sameRow(rawT[i], raw[i]);
    if (classifier) {
      ok = ok && sameRow(probaB[i], out[i]) && classT[i] === cls[i] && predB[i] === m.CLASSES[cls[i]]
        && predT[i] === predB[i];
    } else {
      const v = typeof predB[i] === "number" ? [predB[i]] : predB[i];
      const w = typeof predT[i] === "number" ? [predT[i]] : predT[i];
      ok = ok && sameRow(v, out[i]) && sameRow(w, out[i]);
    }
    if (!ok) batchDiff++;
  });
  const raw32 = m.predictRawBatch(Float32Array.from(X));
  writeFileSync(job.out + ".raw", Buffer.from(flat(raw).buffer));
  writeFileSync(job.out + ".raw32", Buffer.from(flat(raw32).buffer));
  writeFileSync(job.out + ".out", Buffer.from(flat(out).buffer));
  writeFileSync(job.out + ".cls", Buffer.from(Float64Array.from(cls).buffer));
  const label = (c) => (typeof c === "bigint" ? c.toString() + "n" : c);
  const api = job.api ? apiChecks(m, rows[0]) : null;
  writeFileSync(job.out + ".json", JSON.stringify({ nullDiff, batchDiff, n, nRaw: m.N_RAW,
                                                    nOut: m.N_OUTPUTS, classifier, api,
                                                    features: m.FEATURES,
                                                    classes: classifier ? m.CLASSES.map(label) : null }));
}
"""


def node_path() -> str | None:
    return shutil.which("node")


def have_node() -> bool:
    return node_path() is not None


def run_js(jobs: dict, directory: Path, timeout: float = 600, api=()) -> dict:
    """``jobs``: {key: (files, X)}; every key's files go in their own folder. For the keys in
    ``api`` the runner also reports how bad rows are refused (``api``)."""
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    specs = []
    for i, (key, (files, X)) in enumerate(jobs.items()):
        folder = directory / f"m{i}"
        folder.mkdir(exist_ok=True)
        for fname, text in files.items():
            (folder / fname).write_text(text, encoding="utf-8")
        module = next(f for f in files if f.endswith(".mjs"))
        rows = folder / "rows.bin"
        np.ascontiguousarray(X, dtype="<f8").tofile(rows)
        specs.append({"key": key, "module": str(folder / module), "rows": str(rows),
                      "out": str(folder / "result"), "api": key in api})
    (directory / "run.mjs").write_text(RUNNER, encoding="utf-8")
    (directory / "jobs.json").write_text(json.dumps(specs), encoding="utf-8")
    proc = subprocess.run([node_path(), str(directory / "run.mjs"), str(directory / "jobs.json")],
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError(f"node failed ({proc.returncode}):\n{proc.stderr[-4000:]}")
    results = {}
    for spec in specs:
        meta = json.loads(Path(spec["out"] + ".json").read_text())
        n = meta["n"]

        def read(ext, width):
            return np.fromfile(spec["out"] + ext, dtype="<f8").reshape(n, width)

        results[spec["key"]] = {
            "raw": read(".raw", meta["nRaw"]), "raw_f32": read(".raw32", meta["nRaw"]),
            "out": read(".out", meta["nOut"]),
            "class": read(".cls", 1)[:, 0].astype(np.int64) if meta["classifier"] else None,
            "null_diff": meta["nullDiff"], "batch_diff": meta["batchDiff"], "api": meta["api"],
            "features": meta["features"], "classes": meta["classes"],
        }
    return results


def as_f32_rows(X: np.ndarray) -> np.ndarray:
    """X as a Float32Array sees it (1e308 becomes inf, as C's and numpy's conversion)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return np.asarray(X, dtype=np.float64).astype(np.float32).astype(np.float64)
