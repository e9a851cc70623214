"""rulegen's Java target against m2cgen's Java output, side by side in one JVM (issue 17).

    python3 benchmarks/bench_java.py [--work DIR]

Models: the shared harness's 500-tree XGBoost (depth 6, binary) and 100-tree random forest
(depth 10, binary), as rulegen IR (--xgb, --rf) and as live models that m2cgen exports (run
by --m2cgen-python, which has m2cgen installed; the models load from --cache as in
/work/shared/bench). Rows: --rows, float32 row-major (100,000 x 20). Each class scores every
row once to warm up the JIT, then once timed (one run, not a loop); ns/row is that pass over
100,000 rows. Exactness: every output is compared with rulegen's evaluator on the same rows
(bit for bit; the class is the argmax / p > 0.5).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import m2cgen_export  # noqa: E402
import rulegen  # noqa: E402
from rulegen.ir import evaluate as ev  # noqa: E402
from rulegen.ir.serialize import loads  # noqa: E402

MODELS = {"xgb500_d6_bin": "Xgb", "rf100_d10_bin": "Rf"}

_DRIVER = textwrap.dedent("""
    import java.io.*;
    import java.nio.*;
    import java.nio.file.*;
    import java.util.function.Function;

    public class BenchJava {
        static double[][] X;

        static void run(String name, Function<double[], double[]> f, String out) throws IOException {
            for (double[] x : X) f.apply(x);  // warm-up: the JIT compiles what it will
            double[][] res = new double[X.length][];
            long t0 = System.nanoTime();
            for (int i = 0; i < X.length; i++) res[i] = f.apply(X[i]);
            long t1 = System.nanoTime();
            System.out.println(name + " " + (t1 - t0) / (double) X.length);
            DataOutputStream o = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out)));
            for (double[] r : res) o.writeDouble(r[r.length - 1]);
            o.close();
        }

        public static void main(String[] a) throws IOException {
            ByteBuffer bb = ByteBuffer.wrap(Files.readAllBytes(Paths.get(a[0]))).order(ByteOrder.LITTLE_ENDIAN);
            int p = Integer.parseInt(a[1]), n = bb.capacity() / 4 / p;
            X = new double[n][p];
            for (int i = 0; i < n; i++) for (int j = 0; j < p; j++) X[i][j] = bb.getFloat();
            @RUNS@
        }
    }
""")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--xgb", default="/tmp/proto/xgb500_d6_bin.json")
    ap.add_argument("--rf", default="/tmp/proto/rf100_d10_bin.json")
    ap.add_argument("--rows", default="/tmp/proto/x.bin")
    ap.add_argument("--features", type=int, default=20)
    ap.add_argument("--m2cgen-python", default="/tmp/benchvenv/bin/python")
    ap.add_argument("--cache", default="/tmp/rgbench/cache")
    ap.add_argument("--bench-lib", default="/work/shared/bench")
    ap.add_argument("--work", default="/tmp/bench_java")
    args = ap.parse_args()
    work = Path(args.work)
    (work / "src").mkdir(parents=True, exist_ok=True)
    irs = {"xgb": loads(Path(args.xgb).read_text()), "rf": loads(Path(args.rf).read_text())}
    for key, cls in (("xgb", "Xgb"), ("rf", "Rf")):
        (work / "src" / f"{cls}.java").write_text(rulegen.generate(irs[key], "java", name=cls)[f"{cls}.java"])
    if not (work / "src" / "M2Rf.java").exists():  # m2cgen takes minutes on these models: kept
        m2cgen_export.export(args.m2cgen_python, args.bench_lib, args.cache, [
            m2cgen_export.job(name, "java", work / "src" / f"{cls}.java", class_name=cls)
            for name, cls in (("xgb500_d6_bin", "M2Xgb"), ("rf100_d10_bin", "M2Rf"))])
    runs, report = [], {"java": _java_version()}
    for key, cls, method in (("rulegen_xgb", "Xgb", "predict"), ("m2cgen_xgb", "M2Xgb", "score"),
                             ("rulegen_rf", "Rf", "predict"), ("m2cgen_rf", "M2Rf", "score")):
        t0 = time.perf_counter()  # one javac run per class: m2cgen's may not compile at all
        proc = subprocess.run(["javac", "-J-Xmx3g", "-J-Xss64m", "--release", "11", "-nowarn", "-d",
                               str(work / "classes"), str(work / "src" / f"{cls}.java")],
                              capture_output=True, text=True)
        report[key] = {"javac_s": round(time.perf_counter() - t0, 1),
                       "source_mb": round((work / "src" / f"{cls}.java").stat().st_size / 1e6, 2)}
        if proc.returncode:
            report[key]["javac_error"] = " / ".join(sorted({line.split("error: ")[1] for line in proc.stderr.split("\n")
                                                            if "error: " in line}))
            continue
        runs.append(f'run("{key}", {cls}::{method}, a[2] + "/{key}.bin");')
    (work / "src" / "BenchJava.java").write_text(_DRIVER.replace("@RUNS@", "\n            ".join(runs)))
    subprocess.run(["javac", "--release", "11", "-cp", str(work / "classes"), "-d", str(work / "classes"),
                    str(work / "src" / "BenchJava.java")], check=True)
    proc = subprocess.run(["java", "-Xss64m", "-cp", str(work / "classes"), "BenchJava", args.rows,
                           str(args.features), str(work)], check=True, capture_output=True, text=True)
    ns = {k: float(v) for k, v in (line.split() for line in proc.stdout.split("\n") if line)}
    X = np.fromfile(args.rows, dtype=np.float32).reshape(-1, args.features).astype(np.float64)
    report["rows"] = len(X)
    report["load_average"] = Path("/proc/loadavg").read_text().split()[:3]
    for key in ("xgb", "rf"):
        want = ev.predict_proba(irs[key], X)[:, -1]
        for who in ("rulegen", "m2cgen"):
            if f"{who}_{key}" not in ns:
                continue
            got = np.fromfile(work / f"{who}_{key}.bin", dtype=">f8").astype(np.float64)
            diff = np.abs(got - want)
            report[f"{who}_{key}"].update({
                "ns_per_row": round(ns[f"{who}_{key}"], 1),
                "rows_exact": int((got == want).sum()),
                "max_abs_diff": float(diff.max()),
                "label_flips": int(((got > 0.5) != (want > 0.5)).sum()),
            })
    print(json.dumps(report, indent=1))


def _java_version() -> str:
    proc = subprocess.run(["java", "-version"], capture_output=True, text=True)
    return proc.stderr.split("\n")[0]


if __name__ == "__main__":
    main()
