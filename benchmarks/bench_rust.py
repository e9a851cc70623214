"""rulegen's Rust target beside m2cgen's Rust, side by side in one program: ns/row and exactness.

    python3 benchmarks/bench_rust.py            # the 500-tree XGBoost model and the 100-tree forest

Inputs (from the shared harness, ../shared/bench): the models' IR (``--ir DIR``, written by
/tmp/proto/mk3.py from the harness's cache), the same live models for m2cgen (loaded by
``--m2cgen-python``, the interpreter that has m2cgen 0.10, from ``RG_BENCH_CACHE``), and
100,000 float32 rows of 20 features (``--rows``, row-major). Each generated module is built
alone (rustc -C opt-level=3, stopped beyond 8 GB resident or 15 minutes: the machine is shared) with a driver that times it
over every row (the best of ``--passes`` full passes) and writes every output as its 64-bit
pattern; this script compares both with rulegen's evaluator (the oracle, itself bit-exact against
XGBoost and scikit-learn in tests/test_import_*.py). m2cgen's API is ``score(Vec<f64>) ->
Vec<f64>``: its time includes building that Vec per row, as a caller must.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import m2cgen_export
import rulegen
from rulegen.ir import evaluate as ev
from rulegen.ir.serialize import loads

MODELS = ("xgb500_d6_bin", "rf100_d10_bin")

_MAIN = r"""
mod @MOD@;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (rows, out_path, passes): (&str, &str, usize) = (&args[1], &args[2], args[3].parse().unwrap());
    let b = std::fs::read(rows).unwrap();
    let xs: Vec<f64> = b.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap()) as f64).collect();
    let n = xs.len() / 20;
    let mut out: Vec<f64> = Vec::with_capacity(n * 2);
    let mut best = f64::INFINITY;
    for _ in 0..passes {
        out.clear();
        let t = Instant::now();
        @SCORE@
        best = best.min(t.elapsed().as_nanos() as f64 / n as f64);
    }
    println!("{:.1}", best);
    let mut o = Vec::with_capacity(out.len() * 8);
    for x in &out { o.extend_from_slice(&x.to_bits().to_le_bytes()); }
    std::fs::write(out_path, o).unwrap();
}
"""

_RULEGEN = """out.resize(n * @MOD@::N_OUTPUTS, 0.0);
        @MOD@::predict_batch(&xs, &mut out);"""
_RULEGEN_ROW = """for row in xs.chunks_exact(20) {
            out.extend_from_slice(&@MOD@::predict(row.try_into().unwrap()));
        }"""
# m2cgen's API: score(Vec<f64>) -> Vec<f64>, one row at a time
_M2CGEN = """for row in xs.chunks_exact(20) {
            out.extend_from_slice(&@MOD@::score(row.to_vec()));
        }"""
MEMORY_LIMIT_KB = 8_000_000  # rustc is stopped beyond 8 GB resident: the machine is shared
TIME_LIMIT = 900  # and beyond 15 minutes


def _rustc(crate: Path) -> tuple[int, str, float]:
    """rustc -C opt-level=3 on crate/main.rs, watched: (exit code, last error line, seconds)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(["rustc", "--edition", "2021", "-C", "opt-level=3", "--cap-lints", "allow",
                             "-o", "bench", "main.rs"], cwd=crate, stderr=subprocess.PIPE, text=True)
    peak, why = 0, ""
    while proc.poll() is None:
        time.sleep(0.5)
        try:
            status = Path(f"/proc/{proc.pid}/status").read_text()
            rss = int(next(line.split()[1] for line in status.splitlines() if line.startswith("VmRSS")))
        except (OSError, StopIteration):
            continue
        peak = max(peak, rss)
        if rss > MEMORY_LIMIT_KB or time.perf_counter() - t0 > TIME_LIMIT:
            proc.kill()
            why = f"stopped at {rss / 1e6:.1f} GB resident"
    err = proc.stderr.read()
    seconds = time.perf_counter() - t0
    if proc.returncode and not why:
        why = (err.strip().splitlines() or [f"exit {proc.returncode}"])[-1][:120]
    return proc.returncode, why or f"peak {peak / 1e6:.1f} GB", seconds


def build_and_run(work: Path, module: str, score: str, rows: str, passes: int,
                  tag: str) -> tuple[str, float | None]:
    """One crate for one generated module: (what happened, ns/row or None)."""
    crate = work / f"crate_{tag}"
    crate.mkdir()
    (crate / f"{module}.rs").write_text((work / f"{module}.rs").read_text())
    (crate / "main.rs").write_text(_MAIN.replace("@SCORE@", score).replace("@MOD@", module))
    code, why, seconds = _rustc(crate)
    if code != 0:
        return f"rustc -C opt-level=3 failed after {seconds:.0f} s ({why})", None
    run = subprocess.run([str(crate / "bench"), rows, str(work / f"{tag}.out"), str(passes)],
                         check=True, capture_output=True, text=True).stdout
    return f"rustc -C opt-level=3 {seconds:.1f} s ({why})", float(run.strip())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ir", default="/tmp/proto")
    ap.add_argument("--rows", default="/tmp/proto/x.bin")
    ap.add_argument("--m2cgen-python", default="/tmp/benchvenv/bin/python")
    ap.add_argument("--cache", default="/tmp/rgbench/cache")
    ap.add_argument("--harness", default=str(ROOT.parent / "shared" / "bench"))
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--one-row", action="store_true", help="also time rulegen's one-row predict")
    ap.add_argument("--no-m2cgen", action="store_true", help="rulegen alone")
    args = ap.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bench-rust-"))
    X = np.fromfile(args.rows, dtype="<f4").astype(np.float64).reshape(-1, 20)
    lines = []
    for i, name in enumerate(MODELS):
        model = loads(Path(args.ir, f"{name}.json").read_text())
        rg, m2c = f"rg{i}", f"m2c{i}"
        t0 = time.perf_counter()
        (work / f"{rg}.rs").write_text(rulegen.generate(model, "rust", name=rg)[f"{rg}.rs"])
        t1 = time.perf_counter()
        if not args.no_m2cgen:
            out = work / f"{m2c}.rs"
            m2cgen_export.export(args.m2cgen_python, args.harness, args.cache,
                                 [m2cgen_export.job(name, "rust", out)])
            out.write_text(out.read_text().replace("fn score(", "pub fn score(", 1))
        t2 = time.perf_counter()
        print(f"{name}: rulegen generates {t1 - t0:.1f} s "
              f"({(work / f'{rg}.rs').stat().st_size / 1e6:.1f} MB)"
              + ("" if args.no_m2cgen else f", m2cgen {t2 - t1:.1f} s "
                 f"({(work / f'{m2c}.rs').stat().st_size / 1e6:.1f} MB)"), flush=True)
        want = ev.predict_proba(model, X)
        cls = np.argmax(want, axis=1)
        runs = [("rulegen predict_batch", rg, _RULEGEN)]
        runs += [("rulegen predict, row by row", rg, _RULEGEN_ROW)] if args.one_row else []
        runs += [] if args.no_m2cgen else [("m2cgen score, row by row", m2c, _M2CGEN)]
        for j, (label, who, score) in enumerate(runs):
            tag = f"{who}_{j}"
            built, ns = build_and_run(work, who, score.replace("@MOD@", who), args.rows, args.passes, tag)
            print(f"  {label}: {built}" + (f", {ns:.0f} ns/row" if ns else ""), flush=True)
            if ns is None:
                lines.append(f"| {name} | {label} | - | {built} |")
                continue
            got = np.fromfile(work / f"{tag}.out", dtype="<u8").view("<f8").reshape(want.shape)
            rows = (got != want).any(axis=1)
            flips = (np.argmax(got, axis=1) != cls).sum()
            err = np.abs(got - want).max()
            lines.append(f"| {name} | {label} | {ns:,.0f} | " + (
                "yes, bit for bit" if not rows.any() else
                f"no: {rows.sum():,} of {len(X):,} rows differ (max {err:.1e}), {flips} label flips") + " |")
    print(f"\n{len(X):,} rows; ns/row, the best of {args.passes} full passes; outputs against "
          "rulegen's evaluator\n")
    print("| model | code | ns/row | exact |")
    print("|---|---|---|---|")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
