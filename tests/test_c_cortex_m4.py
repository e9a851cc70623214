"""The C target on a Cortex-M4: cross-compiled with -Werror (ARM_FLAGS: hard float, single-
precision FPU, so every double operation is a libgcc call) and run under QEMU's mps2-an386,
compared with the evaluator bit for bit on probe rows at every threshold.

Raw scores and classes of tree sums must equal the evaluator's exactly. Outputs through a link
call the C library's exp/expf, and the board's is newlib's, not the host's glibc: newlib 3.3.0
built for thumb/v7e-m+fp/hard uses fdlibm's ``__ieee754_expf`` / ``__ieee754_exp`` (no
hardware double, so not the newer table-driven code glibc 2.36 uses). On the XGBoost model's
sigmoid inputs below, 289 of 3,000 expf results differ from glibc's by one ulp (glibc's is the
correctly rounded one on 288 of them) and 197 of the 3,000 probabilities differ in their last
bit. So the outputs are compared exactly with the evaluator's link applied to the board's own
exp/expf results (:func:`run_arm.arm_libm`), and the difference to the host is checked to be
one ulp of expf at most, not ignored.
"""

from __future__ import annotations

import irfixtures
import numpy as np
import pytest
import run_arm as run_arm_module
from run_arm import ARM_FLAGS, arm_libm, arm_size, have_arm, run_arm, undefined_symbols
from targetcheck import unseen_count

import rulegen
from rulegen.targets.c import profile as c_profile
from rulegen.ir import evaluate as ev
from rulegen.ir import libm

pytestmark = pytest.mark.skipif(not have_arm(), reason="no arm-none-eabi-gcc with newlib, or no qemu-system-arm")

PROBES = 3000  # rows per QEMU run: each run takes a second or two


def synthetic(n: int = 2000, seed: int = 0):
    """20 float32 features, the first five integer-valued (many ties on thresholds), with
    3-class and binary labels from a noisy non-linear score."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 20)).astype(np.float32)
    X[:, :5] = rng.integers(0, 8, size=(n, 5))
    s = X[:, 0] - 2 * X[:, 5] + X[:, 6] * X[:, 7] + np.sin(X[:, 8] * 3) + 0.5 * rng.normal(size=n)
    y3 = np.digitize(s, np.quantile(s, [1 / 3, 2 / 3]))
    return X, y3, (s > np.median(s)).astype(np.int64)


def fit_estimators() -> dict:
    """The three fitted estimators of the firmware benchmark (benchmarks/bench_firmware.py
    imports this): scikit-learn CART depth 8 and a 10-tree forest on the 3-class labels,
    XGBoost 100 rounds depth 6 on the binary ones; fixed seeds."""
    import xgboost as xgb
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.tree import DecisionTreeClassifier

    X, y3, yb = synthetic()
    return {
        "cart8": DecisionTreeClassifier(max_depth=8, random_state=0).fit(X, y3),
        "forest10": RandomForestClassifier(n_estimators=10, random_state=0, n_jobs=1).fit(X, y3),
        "xgb100": xgb.XGBClassifier(n_estimators=100, max_depth=6, random_state=0, n_jobs=1).fit(X, yb),
    }


def to_ir(key: str, est):
    from rulegen.importers.sklearn import from_sklearn
    from rulegen.importers.xgboost import from_booster

    return from_booster(est.get_booster()) if key.startswith("xgb") else from_sklearn(est)


def board_outputs(model, raw: np.ndarray) -> np.ndarray:
    """The evaluator's link and probabilities on ``raw``, with the board's exp/expf."""
    if model.dtype == "float32":
        out = ev.apply_link_f32(model.link, raw, expf=lambda a: arm_libm("expf", a))
    else:
        out = ev.apply_link(model.link, raw, exp=lambda a: arm_libm("exp", a))
    out = out.astype(np.float32 if model.dtype == "float32" else np.float64)
    return ev.proba_of(model, out) if model.target.task == "classification" else out


def bits(a) -> np.ndarray:
    """Bit patterns of a float64 array, every NaN as one pattern (NaN equals NaN)."""
    a = np.array(a, dtype=np.float64)
    a[np.isnan(a)] = np.nan
    return a.view(np.uint64)


class Run:
    """One model generated, cross-built and run once on its probe rows; kept per module."""

    def __init__(self, model, name: str):
        self.model, self.name = model, name
        self.files = rulegen.generate(model, "c", name=name)
        self.X = irfixtures.probe_rows(model, n_random=100, limit=PROBES)
        self.res = run_arm(self.files, name, self.X)
        self.raw = ev.raw_scores(model, self.X)
        with np.errstate(over="ignore", invalid="ignore"):
            self.Xf = self.X.astype(np.float32).astype(np.float64)
        self.board = board_outputs(model, self.raw)
        self.board_f = board_outputs(model, ev.raw_scores(model, self.Xf))


@pytest.fixture(scope="module")
def models():
    pytest.importorskip("sklearn")
    pytest.importorskip("xgboost")
    return {key: to_ir(key, est) for key, est in fit_estimators().items()}


@pytest.fixture(scope="module")
def runs(models):
    cache: dict[str, Run] = {}

    def get(key: str) -> Run:
        if key not in cache:
            if key in models:
                cache[key] = Run(models[key], key)
            else:
                cache[key] = Run(getattr(irfixtures, key)(), key)
        return cache[key]

    return get


ALL = ["cart8", "forest10", "xgb100", "classifier", "every_construct", "sigmoid_ensemble"]


@pytest.mark.parametrize("key", ALL)
def test_raw_scores_exact(runs, key):
    r = runs(key)
    np.testing.assert_array_equal(bits(r.res["raw"]), bits(r.raw))


@pytest.mark.parametrize("key", ALL)
def test_outputs_exact_with_the_boards_exp(runs, key):
    """NAME_predict and NAME_predict_f equal the evaluator's outputs computed with the board's
    exp/expf, bit for bit; and NAME_predict_class is their first maximum."""
    r = runs(key)
    np.testing.assert_array_equal(bits(r.res["out"]), bits(r.board))
    np.testing.assert_array_equal(bits(r.res["out_f"]), bits(r.board_f))
    if r.model.target.task == "classification":
        np.testing.assert_array_equal(r.res["class"], np.argmax(r.board, axis=1))
    np.testing.assert_array_equal(r.res["unseen"], unseen_count(r.model, r.X))


@pytest.mark.parametrize("key", ["cart8", "forest10", "classifier", "every_construct"])
def test_no_link_means_host_outputs_exactly(runs, key):
    """Without exp in the link, the board's outputs and classes are the host evaluator's."""
    r = runs(key)
    assert r.model.link == "identity"
    want = ev.predict_proba(r.model, r.X) if r.model.target.task == "classification" else \
        ev.predict_value(r.model, r.X)
    np.testing.assert_array_equal(bits(r.res["out"]), bits(want))
    np.testing.assert_array_equal(r.res["class"], ev.predict_class_index(r.model, r.X))


@pytest.mark.parametrize("key", ["xgb100", "sigmoid_ensemble"])
def test_boards_exp_against_glibc(runs, key):
    """Where the link's exp/expf inputs get the same result from newlib on the board and the
    host's C library, the outputs are the host evaluator's bit for bit; where they do not, the
    library results are one ulp apart. Counts are printed (pytest -s) for the record."""
    r = runs(key)
    raw = np.asarray(r.raw, dtype=np.float32 if r.model.dtype == "float32" else np.float64)
    v = -raw[:, 0]  # both models are binary with a sigmoid link: exp(-raw)
    if r.model.dtype == "float32":
        v = np.where(np.float32(88.7) < v, np.float32(88.7), v)
        host, board = libm.expf_array(v), arm_libm("expf", v)
        ulps = np.abs(host.view(np.int32).astype(np.int64) - board.view(np.int32).astype(np.int64))
    else:
        host, board = ev.apply_link("exp", v), arm_libm("exp", v)
        ulps = np.abs(host.view(np.int64) - board.view(np.int64))
    fine = np.isnan(host) & np.isnan(board)
    ulps[fine] = 0
    assert ulps.max() <= 1, f"newlib and the host's C library differ by {ulps.max()} ulp"
    want = ev.predict_proba(r.model, r.X)
    same_lib = ulps == 0
    np.testing.assert_array_equal(bits(r.res["out"][same_lib]), bits(want[same_lib]))
    rows_differ = (bits(r.res["out"]) != bits(want)).any(axis=1)
    assert not (rows_differ & same_lib).any()
    print(f"\n{key}: exp inputs {len(v)}, board's library differs by one ulp on {(~same_lib).sum()}, "
          f"outputs differ on {rows_differ.sum()} rows, classes differ on "
          f"{(r.res['class'] != ev.predict_class_index(r.model, r.X)).sum()}")


def test_model_code_calls(runs):
    """A model without a link calls no library function, only libgcc's double helpers (no FPU
    for double on the M4) and memset (gcc may call it in any program, freestanding or not:
    it clears the batch's leaf indices); XGBoost's float link calls expf and nothing of
    libm's double."""
    for key in ("cart8", "forest10"):
        syms = undefined_symbols(runs(key).files, key)
        assert syms and all(s.startswith("__aeabi_") or s == "memset" for s in syms), syms
        assert any(s.startswith("__aeabi_dcmp") for s in syms), syms
    syms = undefined_symbols(runs("xgb100").files, "xgb100")
    assert "expf" in syms and "exp" not in syms, syms


def test_sizes(runs):
    """arm_size reads the objects of the model code alone: no driver, no library."""
    small, big = arm_size(runs("cart8").files, "cart8"), arm_size(runs("forest10").files, "forest10")
    assert 0 < small["text"] < big["text"]
    assert small["bss"] == 0 and big["bss"] == 0  # no state: reentrant, as the header says
    assert small["data"] == 0 and big["data"] == 0  # tables and names are const: flash only


def test_libm_on_board_is_bit_exact_transport():
    """arm_libm's transport: special values come back as the bit patterns IEEE requires."""
    got = arm_libm("expf", np.array([0.0, -np.inf, np.inf, np.nan, 100.0, -200.0], dtype=np.float32))
    assert got[0] == 1 and got[1] == 0 and got[2] == np.inf and np.isnan(got[3])
    assert got[4] == np.inf and got[5] == 0
    got = arm_libm("exp", [0.0, 1e-320, -np.inf, 710.0])
    np.testing.assert_array_equal(got, [1.0, 1.0, 0.0, np.inf])


def test_compile_errors_exit_status_and_faults_are_reported(tmp_path):
    """-Werror applies to the generated code, a non-zero exit of the program on the board is
    an error, and so is a fault (the vector table sends every exception to exit status 99)."""
    model = irfixtures.classifier()
    files = rulegen.generate(model, "c", name="m")
    bad = dict(files)
    bad["m.c"] = files["m.c"].replace('#include "m.h"', '#include "m.h"\nstatic int unused;', 1)
    with pytest.raises(run_arm_module.CompileError, match="unused"):
        run_arm(bad, "m", irfixtures.probe_rows(model, limit=10))
    for body, status in (("return 7;", 7), ("((void (*)(void))0x30000001u)(); return 0;", 99)):
        (tmp_path / "main.c").write_text(f"int main(void);\nint main(void) {{ {body} }}\n")
        (tmp_path / "s.S").write_text(run_arm_module._STARTUP)
        (tmp_path / "l.ld").write_text(run_arm_module._LINKER_SCRIPT)
        run_arm_module._run([run_arm_module.GCC, *ARM_FLAGS, "-nostartfiles", "--specs=nosys.specs",
                             "-T", "l.ld", "s.S", "main.c", "-o", "p.elf"], tmp_path)
        with pytest.raises(AssertionError, match=f"exited with {status}"):
            run_arm_module.run_elf(tmp_path / "p.elf", timeout=60)


@pytest.mark.parametrize("key", ["cart8", "forest10", "xgb100"])
def test_float_profile(models, key):
    """The float-only profile (NAME_PRECISION 32: float inputs, float accumulation) calls no
    double helper on the board; on rows rounded to float, a float32 model's raw scores equal
    the evaluator's and its probabilities the evaluator's link with the board's expf, and a
    model that sums in double stays within the bound its header states."""
    model = models[key]
    files = rulegen.generate(model, "c", name="f32", precision="float32")
    assert "f32_PRECISION 32" in files["f32.h"]
    syms = undefined_symbols(files, "f32")
    assert not any(s.startswith("__aeabi_d") or s.endswith("2d") for s in syms), syms
    with np.errstate(over="ignore", invalid="ignore"):
        X = irfixtures.probe_rows(model, n_random=100, limit=PROBES).astype(np.float32)
    res = run_arm(files, "f32", X, precision="float32")
    raw = ev.raw_scores(model, X.astype(np.float64))
    assert res["raw"].dtype == np.float32 and res["out"].dtype == np.float32
    bounds = c_profile.float_bounds(model)
    if bounds["exact_f32"]:
        np.testing.assert_array_equal(bits(res["raw"]), bits(raw))
        board = board_outputs(model, raw)
        np.testing.assert_array_equal(bits(res["out"]), bits(board))
        np.testing.assert_array_equal(res["class"], np.argmax(board, axis=1))
        return
    want = ev.predict_proba(model, X.astype(np.float64))
    assert np.max(np.abs(res["raw"] - raw)) <= bounds["bound_raw_value"]
    assert np.max(np.abs(res["out"] - want)) <= bounds["bound_out_value"]


def test_flags_are_the_m4_hard_float_abi():
    assert ARM_FLAGS == ("-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16")


_HAND_H = """#ifndef HF_H
#define HF_H
#define hf_N_FEATURES 2
#define hf_N_OUTPUTS 2
#define hf_N_RAW 1
#define hf_N_CLASSES 2
#define hf_PRECISION 32
void hf_predict(const float *x, float *out);
void hf_predict_raw(const float *x, float *raw);
int hf_predict_class(const float *x);
#endif
"""

_HAND_C = """#include <math.h>
#include "hf.h"
void hf_predict_raw(const float *x, float *raw) { raw[0] = x[0] < 0.5f ? x[1] : -x[1]; }
void hf_predict(const float *x, float *out)
{
    float r;
    hf_predict_raw(x, &r);
    out[1] = 1.0f / (1.0f + expf(-r));
    out[0] = 1.0f - out[1];
}
int hf_predict_class(const float *x)
{
    float o[2];
    hf_predict(x, o);
    return o[1] > o[0];
}
"""


def test_driver_float_api_on_a_hand_written_profile():
    """run_arm's float path (NAME_PRECISION 32) on a hand-written two-feature model in that
    API: rows go as float bits, results come back as float32 bit for bit, and a precision=
    that does not match the header does not compile."""
    files = {"hf.h": _HAND_H, "hf.c": _HAND_C}
    X = np.array([[0.25, 1.5], [0.5, 1.5], [np.nan, -2.0], [1e300, 3.0], [-0.0, np.inf],
                  [0.4999999, 1e-45], [0.2, np.nan]])
    res = run_arm(files, "hf", X, precision="float32")
    with np.errstate(over="ignore"):
        xf = X.astype(np.float32)  # 1e300 becomes inf, as the C cast does
    raw = np.where(xf[:, 0] < np.float32(0.5), xf[:, 1], -xf[:, 1]).astype(np.float32)
    assert res["raw"].dtype == np.float32 and res["out"].dtype == np.float32
    np.testing.assert_array_equal(bits(res["raw"][:, 0]), bits(raw))
    p1 = np.float32(1) / (np.float32(1) + arm_libm("expf", -raw))
    np.testing.assert_array_equal(bits(res["out"][:, 1]), bits(p1))
    np.testing.assert_array_equal(bits(res["out"][:, 0]), bits(np.float32(1) - p1))
    np.testing.assert_array_equal(res["class"], (p1 > np.float32(1) - p1).astype(np.int64))
    assert "out_f" not in res
    with pytest.raises(run_arm_module.CompileError, match="precision= does not match"):
        run_arm(files, "hf", X)
