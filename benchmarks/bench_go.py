"""Generated Go beside m2cgen's Go, same rows, same run: ns/row and exactness.

    python benchmarks/bench_go.py --ir /tmp/proto/xgb500_d6_bin.json --ir /tmp/proto/rf100_d10_bin.json \\
        --rows /tmp/proto/x.bin --m2cgen-python /tmp/benchvenv/bin/python \\
        --bench-dir ../shared/bench --cache /tmp/rgbench/cache --work /tmp/gobench

Each IR file is the rulegen import of a model of the shared harness (``../shared/bench``,
``models.get_model(name)`` loads the live estimator from ``--cache``); m2cgen (only installed in
the ``--m2cgen-python`` environment) exports that live estimator with ``export_to_go``. One Go
program imports both packages of every model and, per model, scores every row (float32 rows of
``--rows``, row-major, widened to float64 once) one row at a time through each: rulegen's
``Predict(x, out)`` and m2cgen's ``Score(x)``, a warm-up pass, then ``--passes`` timed passes,
round robin over the libraries, the best reported. Both libraries' outputs for every row are compared with rulegen's evaluator
(which equals XGBoost and scikit-learn: tests/test_import_*.py): rows whose positive-class
probability differs, the largest difference, and predicted labels that differ.

m2cgen's Go for a big forest is large (19 MB for 100 depth-10 trees): its export and build are
kept in ``--work`` and reused when present. Nothing here loops: one run gives one table.
"""

from __future__ import annotations

import argparse
import subprocess
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

MAIN = r"""package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"time"
@IMPORTS@
)

var _ = math.NaN

func main() {
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		panic(err)
	}
	nf := @NF@
	passes := @PASSES@
	n := len(data) / 4 / nf
	X := make([]float64, n*nf)
	for i := range X {
		X[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(data[4*i:])))
	}
	type lib struct {
		name string
		f    func(x []float64) float64
		p    []float64
		best float64
	}
	var libs []*lib
	add := func(name string, f func(x []float64) float64) {
		libs = append(libs, &lib{name, f, make([]float64, n), math.Inf(1)})
	}
@RUNS@
	// round robin: every library once per pass, so a change in the machine's load hits them alike
	for pass := 0; pass <= passes; pass++ {
		for _, l := range libs {
			t0 := time.Now()
			for i := 0; i < n; i++ {
				l.p[i] = l.f(X[i*nf : (i+1)*nf])
			}
			if ns := float64(time.Since(t0).Nanoseconds()) / float64(n); pass > 0 && ns < l.best {
				l.best = ns
			}
		}
	}
	for _, l := range libs {
		out := make([]byte, 8*n)
		for i, v := range l.p {
			binary.LittleEndian.PutUint64(out[8*i:], math.Float64bits(v))
		}
		if err := os.WriteFile(l.name+".p1", out, 0o644); err != nil {
			panic(err)
		}
		fmt.Printf("%s %.1f\n", l.name, l.best)
	}
}
"""


def export_m2cgen(args, names: list[str], work: Path) -> str:
    todo = []
    for name in names:
        pkg = "m2c_" + name
        path = work / pkg / f"{pkg}.go"
        if not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
            todo.append(m2cgen_export.job(name, "go", path, f"package {pkg}\n\n", function_name="Score"))
    if not todo:
        return "(cached)"
    t0 = time.perf_counter()
    version = m2cgen_export.export(args.m2cgen_python, args.bench_dir, args.cache, todo)
    print(f"m2cgen {version} export: {time.perf_counter() - t0:.0f} s", flush=True)
    return version


def build_alone(work: Path, pkg: str, env: dict, memory_gb: float, timeout: float):
    """Build one of m2cgen's packages on its own, its compiler capped at ``memory_gb`` of address
    space (the 100-tree forest's 19 MB of Go grew past 18 GB and was killed by the kernel's
    out-of-memory killer on this 24 GB machine, uncapped): True, or why it did not build."""
    import resource

    def cap():
        limit = int(memory_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    failed = work / f"{pkg}.failed"  # a build that failed is not tried again (delete this to retry)
    if failed.exists():
        return failed.read_text().strip() + " (an earlier run)"
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(["go", "build", f"./{pkg}"], cwd=work, env=env, capture_output=True, text=True,
                              timeout=timeout, preexec_fn=cap)
    except subprocess.TimeoutExpired:
        failed.write_text(f"go build did not finish in {timeout:.0f} s")
        return failed.read_text()
    seconds = time.perf_counter() - t0
    if proc.returncode != 0:
        oom = "out of memory" in proc.stderr or "cannot allocate memory" in proc.stderr
        failed.write_text(f"go build failed after {seconds:.0f} s, "
                          f"{'out of memory ' if oom else ''}within {memory_gb:g} GB")
        return failed.read_text()
    print(f"go build {pkg}: {seconds:.0f} s", flush=True)
    return True


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ir", action="append", required=True, help="rulegen IR of a harness model (repeatable)")
    ap.add_argument("--rows", required=True, help="float32 rows, row-major")
    ap.add_argument("--m2cgen-python", required=True)
    ap.add_argument("--bench-dir", default=str(ROOT.parent / "shared" / "bench"))
    ap.add_argument("--cache", default="/tmp/rgbench/cache")
    ap.add_argument("--work", default="/tmp/gobench")
    ap.add_argument("--passes", type=int, default=3)
    ap.add_argument("--memory-gb", type=float, default=8.0, help="address-space cap for building m2cgen's code")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds allowed for building m2cgen's code")
    args = ap.parse_args()
    work = Path(args.work)
    work.mkdir(parents=True, exist_ok=True)
    ir = {Path(p).stem: loads(Path(p).read_text()) for p in args.ir}
    names = list(ir)
    nf = {len(m.features) for m in ir.values()}
    assert len(nf) == 1, "every model reads the same rows"
    nf = nf.pop()
    export_m2cgen(args, names, work)
    env = {"GOCACHE": str(work / "gocache"), "GOPATH": str(work / "gopath"), "GOFLAGS": "-mod=mod",
           "GOPROXY": "off", "PATH": "/usr/bin:/bin:/usr/local/bin", "HOME": str(work)}
    (work / "go.mod").write_text("module bench\n\ngo 1.19\n")
    built = {name: build_alone(work, "m2c_" + name, env, args.memory_gb, args.timeout) for name in names}
    imports, runs = [], []
    for name, model in ir.items():
        pkg = "rg_" + name
        (work / pkg).mkdir(exist_ok=True)
        for fname, text in generate(model, "go", name=pkg).items():
            (work / pkg / fname).write_text(text)
        m2c = "m2c_" + name
        imports.append(f'\t"bench/{pkg}"')
        n_out = len(model.target.classes)
        runs += [f'\tvar o_{name} [{n_out}]float64',
                 f'\tadd("rulegen_{name}", func(x []float64) float64 {{ {pkg}.Predict(x, o_{name}[:]); '
                 f'return o_{name}[1] }})']
        if built[name] is True:
            imports.append(f'\t"bench/{m2c}"')
            runs.append(f'\tadd("m2cgen_{name}", func(x []float64) float64 {{ return {m2c}.Score(x)[1] }})')
    (work / "main.go").write_text(MAIN.replace("@IMPORTS@", "\n".join(imports)).replace("@RUNS@", "\n".join(runs))
                                  .replace("@NF@", str(nf)).replace("@PASSES@", str(args.passes)))
    t0 = time.perf_counter()
    subprocess.run(["go", "build", "-o", "bench", "."], cwd=work, env=env, check=True)
    print(f"go build: {time.perf_counter() - t0:.0f} s (m2cgen's packages are cached once built)", flush=True)
    out = subprocess.run([str(work / "bench"), str(Path(args.rows).resolve())], cwd=work, capture_output=True,
                         text=True, check=True).stdout
    ns = dict((line.split()[0], float(line.split()[1])) for line in out.splitlines())
    X = np.fromfile(args.rows, dtype="<f4").reshape(-1, nf).astype(np.float64)
    go = subprocess.run(["go", "version"], capture_output=True, text=True, env=env).stdout.strip()
    print(f"\n{len(X):,} rows of {nf} features; {go}; best of {args.passes} passes, one row per call\n")
    print("| model | library | ns/row | rows whose P(1) differs from the evaluator | largest difference | labels differing |")
    print("|---|---|---|---|---|---|")
    for name, model in ir.items():
        with np.errstate(all="ignore"):
            want = ev.predict_proba(model, X)[:, 1].astype(np.float64)
        labels = want > 0.5 if model.dtype == "float32" else ev.predict_class_index(model, X) == 1
        for lib in ("rulegen", "m2cgen"):
            if lib == "m2cgen" and built[name] is not True:
                print(f"| {name} | m2cgen | - | {built[name]} | | |")
                continue
            got = np.fromfile(work / f"{lib}_{name}.p1", dtype="<f8")
            differ = got != want
            flips = (got > 0.5 if model.dtype == "float32" else got > 1 - got) != labels
            print(f"| {name} | {lib} | {ns[f'{lib}_{name}']:.0f} | {differ.sum():,} of {len(X):,} | "
                  f"{np.abs(got - want).max():.3g} | {flips.sum():,} |")


if __name__ == "__main__":
    main()
