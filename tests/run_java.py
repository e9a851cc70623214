"""Executor for generated Java: compile many classes in ONE javac run, run them in ONE JVM.

    from run_java import run_java, have_java
    results = run_java([(files, X), ...])      # files: {"Name.java": text} from the target
    results[0]["raw"], ["out"], ["boxed"], ["class"], ["unseen"], ["batch"], ["flat"], ["names"]

Rows travel as big-endian float64 bytes and results come back the same way
(DataOutputStream.writeDouble writes the exact 64-bit pattern), so nothing passes through
decimal text. A small reflective driver calls each class's public static methods.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

_DRIVER = r"""
import java.io.*;
import java.lang.reflect.*;
import java.nio.file.*;
import java.util.*;

public class RunJava {
    public static void main(String[] args) throws Exception {
        for (String line : Files.readAllLines(Paths.get(args[0]))) {
            String[] p = line.split("\t");
            run(Class.forName(p[0]), p[1], p[2], p[3]);
        }
    }

    static Object call(Class<?> c, String name, Class<?> type, Object arg) throws Exception {
        try {
            return c.getMethod(name, type).invoke(null, arg);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    static void strings(DataOutputStream o, String[] s) throws IOException {
        o.writeInt(s.length);
        for (String v : s) { o.writeInt(v.length()); o.writeChars(v); }
    }

    static void run(Class<?> c, String in, String out, String names) throws Exception {
        int nf = c.getField("N_FEATURES").getInt(null), no = c.getField("N_OUTPUTS").getInt(null);
        boolean classifier = false;
        try { c.getField("N_CLASSES"); classifier = true; } catch (NoSuchFieldException e) { }
        DataInputStream di = new DataInputStream(new BufferedInputStream(new FileInputStream(in)));
        int n = di.readInt();
        double[][] X = new double[n][nf];
        for (int i = 0; i < n; i++) for (int j = 0; j < nf; j++) X[i][j] = di.readDouble();
        di.close();
        DataOutputStream o = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(out)));
        long t0 = System.nanoTime();
        for (int i = 0; i < n; i++) {
            for (double v : (double[]) call(c, "predictRaw", double[].class, X[i])) o.writeDouble(v);
            for (double v : (double[]) call(c, "predict", double[].class, X[i])) o.writeDouble(v);
            Double[] boxed = new Double[nf];
            for (int j = 0; j < nf; j++) boxed[j] = X[i][j] != X[i][j] ? null : X[i][j];
            for (double v : (double[]) call(c, "predict", Double[].class, boxed)) o.writeDouble(v);
            o.writeDouble(classifier ? (Integer) call(c, "predictClass", double[].class, X[i]) : -1);
            o.writeDouble((Integer) call(c, "unseen", double[].class, X[i]));
        }
        for (double[] row : (double[][]) call(c, "predictBatch", double[][].class, X)) {
            for (double v : row) o.writeDouble(v);
        }
        double[] flat = new double[n * nf], res = new double[n * no];
        for (int i = 0; i < n; i++) System.arraycopy(X[i], 0, flat, i * nf, nf);
        c.getMethod("predictBatch", double[].class, int.class, double[].class).invoke(null, flat, n, res);
        for (double v : res) o.writeDouble(v);
        o.writeDouble((System.nanoTime() - t0) / 1e9);
        o.close();
        DataOutputStream s = new DataOutputStream(new BufferedOutputStream(new FileOutputStream(names)));
        strings(s, (String[]) c.getMethod("features").invoke(null));
        strings(s, classifier ? (String[]) c.getMethod("classes").invoke(null) : new String[0]);
        for (int j = 0; j < nf; j++) strings(s, (String[]) c.getMethod("categories", int.class).invoke(null, j));
        s.close();
    }
}
"""


class CompileError(AssertionError):
    pass


def have_java() -> bool:
    return shutil.which("javac") is not None and shutil.which("java") is not None


def compile_java(sources: dict[str, str], workdir: Path) -> float:
    """Write the sources and compile them all in one javac run (Java 11 level, every lint
    warning but strictfp's an error); return the seconds it took."""
    src = workdir / "src"
    src.mkdir(parents=True, exist_ok=True)
    for fname, text in sources.items():
        (src / fname).write_text(text, encoding="utf-8")
    t0 = time.perf_counter()
    proc = subprocess.run(["javac", "--release", "11", "-encoding", "UTF-8", "-Xlint:all,-strictfp",
                           "-Werror", "-J-Xss16m", "-d", str(workdir / "classes"),
                           *sorted(str(src / f) for f in sources)],
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise CompileError(proc.stdout + proc.stderr)
    return time.perf_counter() - t0


def _strings(buf: bytes, at: int) -> tuple[list[str], int]:
    n = int.from_bytes(buf[at:at + 4], "big")
    at += 4
    out = []
    for _ in range(n):
        k = int.from_bytes(buf[at:at + 4], "big")
        at += 4
        out.append(buf[at:at + 2 * k].decode("utf-16-be", "surrogatepass"))
        at += 2 * k
    return out, at


def run_java(jobs: list[tuple[dict[str, str], np.ndarray]], keep: Path | None = None) -> list[dict]:
    """Compile every job's class in one javac run, run them all in one JVM; per job a dict
    of float64 arrays (and "names": features, classes, categories per feature)."""
    tmp = Path(tempfile.mkdtemp(prefix="rulegen_java_")) if keep is None else keep
    try:
        sources = {"RunJava.java": _DRIVER}
        for files, _X in jobs:
            sources.update(files)
        compile_s = compile_java(sources, tmp)
        lines, metas = [], []
        for i, (files, X) in enumerate(jobs):
            (cls,) = [f[:-5] for f in files]
            text = files[cls + ".java"]
            X = np.asarray(X, dtype=np.float64)
            (tmp / f"in{i}").write_bytes(len(X).to_bytes(4, "big") + X.astype(">f8").tobytes())
            lines.append(f"{cls}\t{tmp / f'in{i}'}\t{tmp / f'out{i}'}\t{tmp / f'names{i}'}")
            metas.append((text, X))
        (tmp / "jobs.txt").write_text("\n".join(lines) + "\n")
        t0 = time.perf_counter()
        proc = subprocess.run(["java", "-Xss16m", "-cp", str(tmp / "classes"), "RunJava", str(tmp / "jobs.txt")],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise AssertionError(proc.stdout + proc.stderr)
        run_s = time.perf_counter() - t0
        results = []
        for i, (text, X) in enumerate(metas):
            n, nf = X.shape
            n_raw = int(_field(text, "N_RAW"))
            no = int(_field(text, "N_OUTPUTS"))
            data = np.frombuffer((tmp / f"out{i}").read_bytes(), dtype=">f8").astype(np.float64)
            per_row = n_raw + 2 * no + 2
            rows = data[:n * per_row].reshape(n, per_row)
            rest = data[n * per_row:]
            res = {"raw": rows[:, :n_raw], "out": rows[:, n_raw:n_raw + no],
                   "boxed": rows[:, n_raw + no:n_raw + 2 * no], "class": rows[:, n_raw + 2 * no].astype(int),
                   "unseen": rows[:, n_raw + 2 * no + 1].astype(int),
                   "batch": rest[:n * no].reshape(n, no), "flat": rest[n * no:2 * n * no].reshape(n, no),
                   "seconds": float(rest[-1]), "compile_s": compile_s, "run_s": run_s}
            buf = (tmp / f"names{i}").read_bytes()
            features, at = _strings(buf, 0)
            classes, at = _strings(buf, at)
            cats = []
            for _ in range(nf):
                c, at = _strings(buf, at)
                cats.append(c)
            res["names"] = (features, classes, cats)
            results.append(res)
        return results
    finally:
        if keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


def _field(text: str, name: str) -> str:
    key = f"public static final int {name} = "
    return text.split(key, 1)[1].split(";", 1)[0]
