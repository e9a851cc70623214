"""Build generated C with a real compiler and run it on rows, exactly.

Rows travel as raw float64 (or float32) bytes (``fread``), results come back as raw bytes
(``fwrite``), so nothing is lost in decimal text. Each ``.c`` file (the generated ones and a
driver) compiles as its own translation unit, in parallel, then everything links. `rulegen
verify` builds with the user's compiler and flags; the tests build every model this way.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

from rulegen.errors import RulegenError

STRICT = ("-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic")

_DRIVER = r"""
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "@H@"

#ifdef P_N_CLASSES
#define HAS_NAMES 1
#define HAS_CLASS (P_N_OUTPUTS == P_N_CLASSES)  /* a positive-only build has no class */
#else
#define HAS_NAMES 0
#define HAS_CLASS 0
#endif
#if P_PRECISION == 32
typedef float real;  /* the float profile: float rows in, float results out */
#else
typedef double real;
#endif

static void put_strings(FILE *f, const char *const *s, int n)
{
    int i;
    for (i = 0; i < n; i++) fwrite(s[i], 1, strlen(s[i]) + 1, f);
}

/* Rows (n x N_FEATURES of real) come in whole; per row: raw, out, out_f (double profile),
   class, unseen as real; then every row's batch outputs, and batch_f's (double profile). */
int main(int argc, char **argv)
{
    FILE *in, *out, *names;
    real *X, *B, raw[P_N_RAW], o[P_N_OUTPUTS], cls, unseen;
    long size;
    size_t n, i;
    int k;
    if (argc != 4) return 2;
    in = fopen(argv[1], "rb");
    out = fopen(argv[2], "wb");
    names = fopen(argv[3], "wb");
    if (!in || !out || !names) return 3;
    put_strings(names, P_FEATURE_NAMES, P_N_FEATURES);
#if HAS_NAMES
    put_strings(names, P_CLASSES, P_N_CLASSES);
#endif
    fseek(in, 0, SEEK_END);
    size = ftell(in);
    fseek(in, 0, SEEK_SET);
    n = (size_t)size / (sizeof(real) * P_N_FEATURES);
    X = malloc((n + 1) * sizeof(real) * P_N_FEATURES);
    B = malloc((n + 1) * sizeof(real) * P_N_OUTPUTS);
    if (!X || !B || fread(X, sizeof(real) * P_N_FEATURES, n, in) != n) return 4;
    for (i = 0; i < n; i++) {
        const real *x = X + i * P_N_FEATURES;
        P_predict_raw(x, raw);
        fwrite(raw, sizeof(real), P_N_RAW, out);
        P_predict(x, o);
        fwrite(o, sizeof(real), P_N_OUTPUTS, out);
#if P_PRECISION != 32
        {
            float xf[P_N_FEATURES];
            for (k = 0; k < P_N_FEATURES; k++) xf[k] = (float)x[k];
            P_predict_f(xf, o);
            fwrite(o, sizeof(real), P_N_OUTPUTS, out);
        }
#endif
#if HAS_CLASS
        cls = (real)P_predict_class(x);
#else
        cls = -1;
#endif
        fwrite(&cls, sizeof(real), 1, out);
        unseen = (real)P_unseen(x);
        fwrite(&unseen, sizeof(real), 1, out);
#ifdef P_N_TREES
        {
            int lv[P_N_TREES];
            real v;
            P_predict_leaves(x, lv);
            for (k = 0; k < P_N_TREES; k++) {
                v = (real)lv[k];
                fwrite(&v, sizeof(real), 1, out);
            }
        }
#endif
    }
    (void)k;
    P_predict_batch(X, n, B);
    fwrite(B, sizeof(real), n * P_N_OUTPUTS, out);
#if P_PRECISION != 32
    {
        float *XF = malloc((n + 1) * sizeof(float) * P_N_FEATURES);
        if (!XF) return 4;
        for (i = 0; i < n * P_N_FEATURES; i++) XF[i] = (float)X[i];
        P_predict_batch_f(XF, n, B);
        fwrite(B, sizeof(real), n * P_N_OUTPUTS, out);
        free(XF);
    }
#endif
    free(X);
    free(B);
    return fclose(out) != 0 || fclose(names) != 0;
}
"""


class BuildError(RulegenError):
    """The compiler or the program failed (its command and output are in the message)."""


def cc_path() -> str | None:
    return os.environ.get("CC") or shutil.which("cc")


def have_cc() -> bool:
    return cc_path() is not None


def _prefix(files: dict[str, str], name: str) -> str:
    if f"{name}.h" in files:
        return name
    headers = [f[:-2] for f in files if f.endswith(".h")]
    if len(headers) != 1:
        raise ValueError(f"cannot tell which header is {name!r}: {sorted(files)}")
    return headers[0]


def _run_all(commands: list[list[str]], cwd: Path) -> None:
    """Run commands, at most one per CPU at a time; raise on the first failure."""
    pending = list(commands)
    running: list[tuple[list[str], subprocess.Popen]] = []
    limit = max(1, os.cpu_count() or 1)
    while pending or running:
        while pending and len(running) < limit:
            cmd = pending.pop(0)
            running.append((cmd, subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE,
                                                  stderr=subprocess.STDOUT, text=True)))
        cmd, proc = running.pop(0)
        output, _ = proc.communicate()
        if proc.returncode != 0:
            for _c, p in running:
                p.kill()
                p.wait()
            first = next((line for line in output.splitlines() if "error" in line),
                         output.strip().splitlines()[0] if output.strip() else f"exit {proc.returncode}")
            raise BuildError(f"{' '.join(cmd)} failed: {first}\n{output[-6000:]}")


def build(files: dict[str, str], name: str, directory: Path, *, opt: str = "-O1",
          cflags=STRICT, cc: str | None = None) -> Path:
    """Write the files and the driver into ``directory``, compile and link; return the program."""
    prefix = _prefix(files, name)
    for fname, text in files.items():
        (directory / fname).write_text(text, encoding="utf-8")
    driver = _DRIVER.replace("@H@", f"{prefix}.h").replace("P_", f"{prefix}_")
    (directory / "rulegen_driver_main.c").write_text(driver, encoding="utf-8")
    cc = cc or cc_path()
    if cc is None:
        raise BuildError("no C compiler: set CC or pass --cc")
    sources = sorted(f for f in files if f.endswith(".c")) + ["rulegen_driver_main.c"]
    opts = [opt] if opt else []
    _run_all([[cc, *cflags, *opts, "-c", src, "-o", src[:-2] + ".o"] for src in sources], directory)
    exe = directory / "rulegen_driver"
    _run_all([[cc, *opts, *[s[:-2] + ".o" for s in sources], "-o", exe.name, "-lm"]], directory)
    return exe


def run_c(files: dict[str, str], name: str, X, *, opt: str = "-O1", cflags=STRICT,
          directory: str | Path | None = None, cc: str | None = None) -> dict:
    """Compile ``files`` (as generated, ``name`` the C prefix) and run every row of ``X``.

    Returns ``raw`` (n, N_RAW), ``out`` (n, N_OUTPUTS) from NAME_predict, ``batch`` from
    NAME_predict_batch on all rows at once, ``class`` (n,) int (-1 for regressors),
    ``unseen`` (n,) from NAME_unseen, ``leaves`` (n, N_TREES) from NAME_predict_leaves (built with
    ``leaves=True``; no columns otherwise), ``feature_names`` and ``classes`` as read back from
    the C string tables, and ``compile_seconds``. The double profile also gives ``out_f``
    from NAME_predict_f and ``batch_f`` from NAME_predict_batch_f, on the rows rounded to
    float. The float profile (``NAME_PRECISION`` 32) reads the rows rounded to float32 and
    returns float32 arrays."""
    header = files[f"{_prefix(files, name)}.h"]
    f32 = _define(header, "_PRECISION") == 32
    real = np.float32 if f32 else np.float64
    with np.errstate(over="ignore"):  # a float row holds inf where a double overflows float
        X = np.ascontiguousarray(np.asarray(X, dtype=np.float64).astype(real))
    with tempfile.TemporaryDirectory(prefix="rulegen_c_") as tmp:
        work = Path(directory) if directory is not None else Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        t0 = time.perf_counter()
        exe = build(files, name, work, opt=opt, cflags=cflags, cc=cc)
        seconds = time.perf_counter() - t0
        (work / "rows.bin").write_bytes(X.tobytes())
        proc = subprocess.run([str(exe), "rows.bin", "out.bin", "names.bin"], cwd=work,
                              capture_output=True, text=True, timeout=600, check=False)
        if proc.returncode != 0:
            raise BuildError(f"the built program exited with {proc.returncode}: {proc.stderr[-2000:]}")
        data = np.frombuffer((work / "out.bin").read_bytes(), dtype=real)
        strings = [s.decode("utf-8") for s in (work / "names.bin").read_bytes().split(b"\0")[:-1]]
    n, n_features = X.shape
    n_raw, n_out = (_define(header, key) for key in ("_N_RAW", "_N_OUTPUTS"))
    n_trees = _define(header, "_N_TREES") if "_N_TREES " in header else 0
    width = n_raw + (1 if f32 else 2) * n_out + 2 + n_trees
    per_row = data[:n * width].reshape(n, width)
    batches = data[n * width:].reshape(-1, n, n_out)
    res = {
        "raw": per_row[:, :n_raw],
        "out": per_row[:, n_raw:n_raw + n_out],
        "class": per_row[:, width - n_trees - 2].astype(np.int64),
        "unseen": per_row[:, width - n_trees - 1].astype(np.int64),
        "leaves": per_row[:, width - n_trees:].astype(np.int64),
        "batch": batches[0],
        "feature_names": strings[:n_features],
        "classes": strings[n_features:],
        "compile_seconds": seconds,
    }
    if not f32:
        res["out_f"] = per_row[:, n_raw + n_out:n_raw + 2 * n_out]
        res["batch_f"] = batches[1]
    return res


def _define(header: str, suffix: str) -> int:
    for line in header.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "#define" and parts[1].endswith(suffix):
            return int(parts[2])
    raise ValueError(f"no #define ..{suffix} in the header")
