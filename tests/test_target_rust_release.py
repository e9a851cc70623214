"""The Rust target built as users build it (rustc -C opt-level=3), in one rustc run.

tests/test_target_rust.py checks every model at opt-level 0 (fast to compile); Rust has no
fast-math and never contracts into FMA, so optimisation must not change a single bit. This
module holds a selection to that at opt-level 3, the two stress models (chain(2500),
big_ensemble(1000)) included; one rustc run for them all.
"""

from __future__ import annotations

import warnings

import irfixtures
import numpy as np
import pytest
from run_rust import RustJob, have_rustc, run_rust

import rulegen
from rulegen.ir import evaluate as ev

pytestmark = pytest.mark.skipif(not have_rustc(), reason="no Rust compiler (rustc) on PATH")


def _cases() -> dict:
    out = {name: irfixtures.all_models()[name]
           for name in ("sigmoid_ensemble", "softmax_f32", "exp_regression", "every_construct")}
    for seed in range(12):
        out[f"random_{seed}"] = irfixtures.random_model(seed)
    out["chain_2500"] = irfixtures.chain(2500)
    out["big_ensemble_1000"] = irfixtures.big_ensemble(1000)
    return out


@pytest.fixture(scope="module")
def built():
    cases = _cases()
    jobs = [RustJob(name, rulegen.generate(model, "rust", name=name),
                    irfixtures.probe_rows(model, limit=400), model.target.task == "classification")
            for name, model in cases.items()]
    results = run_rust(jobs, opt="3")
    print(f"\n{len(jobs)} modules: rustc -C opt-level=3 {results['chain_2500']['compile_seconds']:.1f} s")
    return cases, {j.name: j.X for j in jobs}, results


def test_opt_level_3_changes_no_bit(built):
    cases, rows, results = built
    for name, model in cases.items():
        X, got = rows[name], results[name]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            raw = ev.raw_scores(model, X)
            out = (ev.predict_proba(model, X) if model.target.task == "classification"
                   else ev.predict_value(model, X))
        assert np.array_equal(got["raw"], raw, equal_nan=True), name
        assert np.array_equal(got["out"], out, equal_nan=True), name
        assert np.array_equal(got["batch"].view(np.uint64), got["out"].view(np.uint64)), name
