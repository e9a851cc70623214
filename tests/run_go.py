"""Executor for generated Go: many models, one module, one ``go build``, one run.

    from run_go import run_go_many, have_go
    res = run_go_many({"m1": (GoTarget().generate(model, name="m1"), X), ...})
    res["m1"]["raw"], res["m1"]["out"], res["m1"]["class"], res["m1"]["batch"], ...

Each model's file goes into its own package directory of one module ``rgtest``; a generated
``main`` package imports them all and runs every model on its rows. Rows travel as raw
little-endian float64 bytes and results come back the same way (``binary.Write``), so nothing
is lost in decimal text. The build uses a private GOCACHE and GOPATH (kept between runs under
the temporary directory, so a rerun recompiles only what changed), GOFLAGS=-mod=mod and
GOPROXY=off: no network.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

_MAIN = r"""package main

import (
	"bufio"
	"encoding/binary"
	"os"
	"strings"
@IMPORTS@
)

type entry struct {
	nf, nraw, nout int
	raw, pred, batch func([]float64, []float64)
	pred32, batch32  func([]float32, []float64)
	class, unseen func([]float64) int
	names, classes []string
}

var models = map[string]entry{
@ENTRIES@
}

func check(err error) {
	if err != nil {
		panic(err)
	}
}

// Per row: raw, outputs, class (-1 for regressors), unseen, as float64; then the batch outputs,
// then PredictFloat32's and PredictBatchFloat32's on the rows rounded to float32.
// The names file holds the feature names and class labels, each ended by a NUL.
func run(name, rows, outPath, namesPath string) {
	m := models[name]
	data, err := os.ReadFile(rows)
	check(err)
	X := make([]float64, len(data)/8)
	check(binary.Read(strings.NewReader(string(data)), binary.LittleEndian, X))
	n := len(X) / m.nf
	f, err := os.Create(outPath)
	check(err)
	w := bufio.NewWriter(f)
	raw := make([]float64, m.nraw)
	out := make([]float64, m.nout)
	for i := 0; i < n; i++ {
		x := X[i*m.nf : (i+1)*m.nf]
		m.raw(x, raw)
		check(binary.Write(w, binary.LittleEndian, raw))
		m.pred(x, out)
		check(binary.Write(w, binary.LittleEndian, out))
		cls := -1.0
		if m.class != nil {
			cls = float64(m.class(x))
		}
		check(binary.Write(w, binary.LittleEndian, []float64{cls, float64(m.unseen(x))}))
	}
	B := make([]float64, n*m.nout)
	m.batch(X, B)
	check(binary.Write(w, binary.LittleEndian, B))
	X32 := make([]float32, len(X))
	for i, v := range X {
		X32[i] = float32(v)
	}
	for i := 0; i < n; i++ {
		m.pred32(X32[i*m.nf:(i+1)*m.nf], out)
		check(binary.Write(w, binary.LittleEndian, out))
	}
	m.batch32(X32, B)
	check(binary.Write(w, binary.LittleEndian, B))
	check(w.Flush())
	check(f.Close())
	var s strings.Builder
	for _, t := range append(append([]string{}, m.names...), m.classes...) {
		s.WriteString(t)
		s.WriteByte(0)
	}
	check(os.WriteFile(namesPath, []byte(s.String()), 0o644))
}

func main() {
	manifest, err := os.ReadFile(os.Args[1])
	check(err)
	for _, line := range strings.Split(strings.TrimSpace(string(manifest)), "\n") {
		p := strings.Split(line, "\t")
		run(p[0], p[1], p[2], p[3])
	}
}
"""


class BuildError(AssertionError):
    pass


def go_path() -> str | None:
    return shutil.which("go")


def have_go() -> bool:
    return go_path() is not None


def go_env(work: Path) -> dict:
    cache = Path(tempfile.gettempdir()) / "rulegen-go-cache"
    return {**os.environ, "GOCACHE": str(cache / "build"), "GOPATH": str(cache / "path"),
            "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GO111MODULE": "on", "CGO_ENABLED": "0"}


def _package(files: dict[str, str]) -> str:
    (fname,) = [f for f in files if f.endswith(".go")]
    return fname[:-3]


def build(cases: dict[str, dict[str, str]], work: Path) -> Path:
    """Write every case's files (case name -> generated files) and the driver; build it."""
    imports, entries = [], []
    for case, files in cases.items():
        pkg = _package(files)
        (work / pkg).mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            (work / pkg / fname).write_text(text, encoding="utf-8")
        text = next(iter(files.values()))
        classifier = "func PredictClass(" in text
        imports.append(f'\t{pkg} "rgtest/{pkg}"')
        entries.append(
            f'\t"{pkg}": {{{pkg}.NFeatures, {pkg}.NRaw, {pkg}.NOutputs, {pkg}.PredictRaw, {pkg}.Predict, '
            f'{pkg}.PredictBatch, {pkg}.PredictFloat32, {pkg}.PredictBatchFloat32, {f"{pkg}.PredictClass" if classifier else "nil"}, {pkg}.Unseen, '
            f'{pkg}.FeatureNames[:], {f"{pkg}.Classes[:]" if classifier else "nil"}}},')
    (work / "go.mod").write_text("module rgtest\n\ngo 1.19\n")
    (work / "main.go").write_text(_MAIN.replace("@IMPORTS@", "\n".join(imports))
                                  .replace("@ENTRIES@", "\n".join(entries)))
    proc = subprocess.run([go_path(), "build", "-o", "driver", "."], cwd=work, env=go_env(work),
                          capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        raise BuildError(f"go build failed:\n{proc.stderr[-8000:]}")
    return work / "driver"


def run_go_many(cases: dict[str, tuple[dict[str, str], np.ndarray]], directory: str | Path | None = None) -> dict:
    """Build every case (name -> (generated files, rows)) into one program, run each on its rows.

    Returns name -> {raw, out, class, unseen, batch, out_f, batch_f, feature_names, classes}
    (out_f and batch_f: PredictFloat32 and PredictBatchFloat32 on the rows rounded to float32), plus
    "_build_seconds" and "_run_seconds"."""
    with tempfile.TemporaryDirectory(prefix="rulegen_go_") as tmp:
        work = Path(directory) if directory is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        exe = build({name: files for name, (files, _X) in cases.items()}, work)
        t1 = time.perf_counter()
        lines, shapes = [], {}
        for name, (files, X) in cases.items():
            pkg = _package(files)
            X = np.ascontiguousarray(np.asarray(X, dtype="<f8"))
            (work / f"{pkg}.rows").write_bytes(X.tobytes())
            lines.append(f"{pkg}\t{pkg}.rows\t{pkg}.out\t{pkg}.names")
            shapes[name] = (pkg, X.shape, next(iter(files.values())))
        (work / "manifest").write_text("\n".join(lines) + "\n")
        proc = subprocess.run([str(exe), "manifest"], cwd=work, capture_output=True, text=True, timeout=1800)
        if proc.returncode != 0:
            raise AssertionError(f"driver exited with {proc.returncode}: {proc.stderr[-4000:]}")
        results = {"_build_seconds": t1 - t0, "_run_seconds": time.perf_counter() - t1}
        for name, (pkg, (n, n_features), text) in shapes.items():
            n_raw, n_out = _const(text, "NRaw"), _const(text, "NOutputs")
            data = np.frombuffer((work / f"{pkg}.out").read_bytes(), dtype="<f8")
            width = n_raw + n_out + 2
            per_row = data[:n * width].reshape(n, width)
            strings = [s.decode("utf-8", "surrogatepass")
                       for s in (work / f"{pkg}.names").read_bytes().split(b"\0")[:-1]]
            results[name] = {
                "raw": per_row[:, :n_raw], "out": per_row[:, n_raw:n_raw + n_out],
                "class": per_row[:, width - 2].astype(np.int64), "unseen": per_row[:, width - 1].astype(np.int64),
                "batch": data[n * width:].reshape(3, n, n_out)[0],
                "out_f": data[n * width:].reshape(3, n, n_out)[1],
                "batch_f": data[n * width:].reshape(3, n, n_out)[2],
                "feature_names": strings[:n_features], "classes": strings[n_features:],
            }
        return results


def _const(text: str, name: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == name and parts[1] == "=":
            return int(parts[2])
    raise ValueError(f"no constant {name} in the generated file")
