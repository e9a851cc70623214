"""Executor for generated Rust: many modules, one rustc run, one program run, exact results.

    from run_rust import RustJob, run_rust
    results = run_rust([RustJob("m0", files, X, classifier=True), ...])
    results["m0"]["raw"], ["out"], ["opt"], ["class"], ["unseen"], ["batch"], ["names"]

Every generated module becomes ``mod NAME;`` of one binary crate (rustc compiles a crate in one
invocation), whose ``main`` runs each module over its rows. Rows go in as raw little-endian f64
bytes and results come back as the 64-bit patterns of each f64, so nothing passes through decimal
text. A model's outputs read back exactly, NaN payloads included.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

# -D warnings: generated code must compile without a single warning
RUSTC_FLAGS = ("--edition", "2021", "-D", "warnings")


def rustc_path() -> str | None:
    return os.environ.get("RUSTC") or shutil.which("rustc")


def have_rustc() -> bool:
    return rustc_path() is not None


@dataclass
class RustJob:
    name: str  # the module's name (its file is NAME.rs)
    files: dict[str, str]  # rulegen.generate(model, "rust", name=NAME)
    X: np.ndarray  # rows, float64
    classifier: bool


_RUN = r"""
fn run_@M@(dir: &str) {
    use @M@ as m;
    let xs = read_rows(&format!("{}/@M@.in", dir));
    let nf = m::N_FEATURES;
    let n = xs.len() / nf;
    let mut o: Vec<u8> = Vec::new();
    for i in 0..n {
        let x: &[f64; m::N_FEATURES] = xs[i * nf..(i + 1) * nf].try_into().unwrap();
        for v in m::predict_raw(x) { put(&mut o, v); }
        for v in m::predict(x) { put(&mut o, v); }
        let opt: [Option<f64>; m::N_FEATURES] =
            std::array::from_fn(|j| if x[j].is_nan() { None } else { Some(x[j]) });
        for v in m::predict_opt(&opt) { put(&mut o, v); }
        put(&mut o, @CLASS@);
        put(&mut o, m::unseen(x) as f64);
    }
    let mut b = vec![0.0f64; n * m::N_OUTPUTS];
    m::predict_batch(&xs, &mut b);
    for v in b { put(&mut o, v); }
    std::fs::write(format!("{}/@M@.out", dir), o).unwrap();
    let mut names: Vec<u8> = Vec::new();
    for s in m::FEATURE_NAMES.iter() { names.extend_from_slice(s.as_bytes()); names.push(0); }
    @NAMES@
    std::fs::write(format!("{}/@M@.names", dir), names).unwrap();
}
"""

_CLASS = """{ let k = m::predict_class(x); assert_eq!(m::predict_label(x), m::CLASSES[k]);
                   assert_eq!(m::predict_proba(x).map(f64::to_bits), m::predict(x).map(f64::to_bits)); k as f64 }"""

_MAIN = r"""
fn read_rows(path: &str) -> Vec<f64> {
    std::fs::read(path).unwrap().chunks_exact(8)
        .map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn put(o: &mut Vec<u8>, v: f64) {
    o.extend_from_slice(&v.to_bits().to_le_bytes());
}

fn main() {
    let dir = std::env::args().nth(1).unwrap();
    @CALLS@
}
"""


def _driver(jobs: list[RustJob]) -> str:
    parts = [f"mod {j.name};" for j in jobs]
    for j in jobs:
        names = ("for s in m::CLASSES.iter() { names.extend_from_slice(s.as_bytes()); names.push(0); }"
                 if j.classifier else "")
        parts.append(_RUN.replace("@CLASS@", _CLASS if j.classifier else "-1.0")
                     .replace("@NAMES@", names).replace("@M@", j.name))
    calls = "\n    ".join(f"run_{j.name}(&dir);" for j in jobs)
    return "\n".join(parts) + _MAIN.replace("@CALLS@", calls)


def build(jobs: list[RustJob], directory: Path, opt: str = "2") -> tuple[Path, float]:
    """Write every module and the driver into ``directory`` and compile them with one rustc
    run; return the binary and rustc's wall time."""
    directory.mkdir(parents=True, exist_ok=True)
    for j in jobs:
        for fname, text in j.files.items():
            (directory / fname).write_text(text, encoding="utf-8")
    (directory / "main.rs").write_text(_driver(jobs), encoding="utf-8")
    binary = directory / "driver"
    t0 = time.perf_counter()
    proc = subprocess.run([rustc_path(), *RUSTC_FLAGS, "-C", f"opt-level={opt}", "-o", str(binary),
                           "main.rs"], cwd=directory, capture_output=True, text=True, check=False)
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        raise AssertionError(f"rustc failed:\n{proc.stderr[-6000:]}")
    return binary, seconds


def run_rust(jobs: list[RustJob], opt: str = "2", directory: Path | None = None) -> dict[str, dict]:
    """Build every job into one program, run it once, and read each module's results."""
    own = directory is None
    directory = Path(tempfile.mkdtemp(prefix="rulegen-rust-")) if own else directory
    try:
        binary, seconds = build(jobs, directory, opt)
        for j in jobs:
            (directory / f"{j.name}.in").write_bytes(np.ascontiguousarray(j.X, dtype="<f8").tobytes())
        t0 = time.perf_counter()
        subprocess.run([str(binary), str(directory)], check=True, capture_output=True)
        run_seconds = time.perf_counter() - t0
        return {j.name: _read(j, directory, seconds, run_seconds) for j in jobs}
    finally:
        if own:
            shutil.rmtree(directory, ignore_errors=True)


def _consts(text: str, name: str) -> int:
    import re

    return int(re.search(rf"pub const {name}: usize = (\d+);", text).group(1))


def _read(job: RustJob, directory: Path, seconds: float, run_seconds: float) -> dict:
    text = next(iter(job.files.values()))
    n_raw, n_out = _consts(text, "N_RAW"), _consts(text, "N_OUTPUTS")
    n = len(job.X)
    data = np.frombuffer((directory / f"{job.name}.out").read_bytes(), dtype="<u8").view("<f8")
    per_row = n_raw + 2 * n_out + 2
    rows = data[:n * per_row].reshape(n, per_row)
    names = (directory / f"{job.name}.names").read_bytes().split(b"\0")[:-1]
    return {
        "raw": rows[:, :n_raw],
        "out": rows[:, n_raw:n_raw + n_out],
        "opt": rows[:, n_raw + n_out:n_raw + 2 * n_out],
        "class": rows[:, -2].astype(np.int64),
        "unseen": rows[:, -1].astype(np.int64),
        "batch": data[n * per_row:].reshape(n, n_out),
        "names": [b.decode("utf-8") for b in names],
        "compile_seconds": seconds,
        "run_seconds": run_seconds,
    }
