"""rulegen's generated C as a candidate of the shared benchmark harness (``../shared/bench``),
through the harness's ABI (``rg_predict_row`` / ``rg_predict_batch`` on float rows):

    cd ../shared/bench && python bench_c.py --models dt_d8_bin,rf100_d10_bin,xgb500_d6_bin \\
        --exporters emlearn,m2cgen --flags O2 \\
        --candidate candidates/flat_forest.py --candidate /path/to/rulegen/benchmarks/rulegen_candidate.py

Exporters: ``rulegen`` (the default double profile; batch through NAME_predict_batch_f, a
row through NAME_predict_f), ``rulegen_f32`` (``precision="float32"``: float rows straight in,
NAME_predict_batch), ``rulegen_f32_nested`` (the same in the nested if/else form, where the
float profile's auto picks the table for flash), ``rulegen_rowloop`` (the double profile with
the batch as a loop of one-row calls, as a user had before NAME_predict_batch existed). Each puts P(class 1) of a
binary model, every probability of a multiclass one or the value of a regressor in the
harness's output. The generated code is used as rulegen writes it; the adapter only maps
the ABI.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

NAME = "rulegen"
PREFIX = "rgm"

_ADAPTER = r"""
#include "rg_abi.h"
#include "%(p)s.h"
#define NOUT %(nout)d
#define PICK %(pick)d  /* the output the harness wants first: P(class 1) for binary models */
typedef %(real)s real;
int rg_num_features(void) { return %(p)s_N_FEATURES; }
int rg_num_outputs(void) { return NOUT; }
static void put(const real *o, double *out) {
    int k;
    for (k = 0; k < NOUT; k++) out[k] = (double)o[PICK + k];
}
void rg_predict_row(const float *x, double *out) {
    real o[%(p)s_N_OUTPUTS];
    %(row)s(x, o);
    put(o, out);
}
void rg_predict_batch(const float *X, long n, double *out) {
#if %(loop)d
    long i;
    for (i = 0; i < n; i++) rg_predict_row(X + i * %(p)s_N_FEATURES, out + i * NOUT);
#else
    enum { B = 256 };
    real o[B * %(p)s_N_OUTPUTS];
    long i, j;
    for (i = 0; i < n; i += B) {
        long m = n - i < B ? n - i : B;
        %(batch)s(X + i * %(p)s_N_FEATURES, (size_t)m, o);
        for (j = 0; j < m; j++) put(o + j * %(p)s_N_OUTPUTS, out + (i + j) * NOUT);
    }
#endif
}
"""


def _to_ir(entry):
    fam = entry.family
    if fam in ("sk_tree", "sk_forest", "sk_hgb"):
        from rulegen.importers.sklearn import from_sklearn
        return from_sklearn(entry.model)
    if fam == "xgb":
        from rulegen.importers.xgboost import from_booster
        return from_booster(entry.model.get_booster())
    if fam == "lgbm":
        from rulegen.importers.lightgbm import from_booster
        return from_booster(entry.model.booster_)
    raise ValueError(fam)


def _export(entry, outdir: Path, precision: str, loop: bool, form: str = "auto", **options) -> dict:
    import rulegen

    t0 = time.perf_counter()
    files = rulegen.generate(_to_ir(entry), "c", name=PREFIX, precision=precision, form=form, **options)
    seconds = time.perf_counter() - t0
    generated = []
    for fname, text in files.items():
        (outdir / fname).write_text(text)
        generated.append(outdir / fname)
    header = files[f"{PREFIX}.h"]
    n_out = int(re.search(rf"#define {PREFIX}_N_OUTPUTS (\d+)", header).group(1))
    f32 = precision == "float32"
    binary = entry.task == "binary"
    adapter = outdir / "rg_adapter.c"
    adapter.write_text(_ADAPTER % {
        "p": PREFIX, "nout": entry.n_outputs, "pick": n_out - 1 if binary else 0,
        "real": "float" if f32 else "double", "loop": int(loop),
        "row": f"{PREFIX}_predict" if f32 else f"{PREFIX}_predict_f",
        "batch": f"{PREFIX}_predict_batch" if f32 else f"{PREFIX}_predict_batch_f"})
    sources = sorted(p for p in generated if p.suffix == ".c") + [adapter]
    forms = sorted(set(re.findall(r"(nested|goto|table|blend) form", "".join(files.values()))))
    note = (f"precision {precision}; batch {'loop of rows' if loop else 'NAME_predict_batch'}; "
            f"forms {forms}; generate {seconds:.2f}s")
    return {"sources": sources, "generated": generated, "output_kind": "std", "cflags": [], "note": note}


def export_c(entry, outdir):
    return _export(entry, outdir, "float64", loop=False)


EXTRA_C_EXPORTERS = {
    "rulegen_f32": lambda entry, outdir: _export(entry, outdir, "float32", loop=False),
    "rulegen_rowloop": lambda entry, outdir: _export(entry, outdir, "float64", loop=True),
    # the float profile's auto form is the table (smallest in flash); branchy code is faster
    # on a desktop processor for a small tree
    "rulegen_f32_nested": lambda entry, outdir: _export(entry, outdir, "float32", loop=False, form="nested"),
}
