"""The Rust target: one module (``NAME.rs``), no crates, exact bit for bit.

Every tree is a set of constant node arrays (:mod:`rulegen.targets.rust.table`) that one small
loop descends, so any depth runs without recursion and a 1,000-tree ensemble is a few hundred
kilobytes of numbers that rustc compiles in seconds (branchy code grows its compile time with
the tree; docs/targets/rust.md has the measurements).

Exactness notes (docs/IR.md is the specification):

- Comparisons are in f64; float32 tests use the exact float64 bound of
  :func:`rulegen.codegen.lower.float64_bound`. NaN fails every comparison and is tested
  explicitly (``v != v``) before a missing-value rule applies.
- Rust never contracts ``a * b + c`` into a fused multiply-add (it has no fast-math and no
  ``-ffp-contract``; ``mul_add`` is the only way to get one), so oblique sums and blend
  weights are written as the IR orders them. Leaves have the tree weight folded in.
- float32 models accumulate in ``f32`` (each ``+`` and ``/`` rounds to f32; ``as f32`` rounds
  to nearest, ties to even, overflowing to infinity) and run XGBoost's float32 link.
- ``f64::exp`` / ``f32::exp`` are calls to the platform's ``exp`` / ``expf`` (glibc on Linux):
  the evaluator's functions, so links agree bit for bit there (tests/test_target_rust.py
  checks it); another C library may differ in the last place.
"""

from __future__ import annotations

import numpy as np

import rulegen
from rulegen.codegen import lower
from rulegen.codegen.jinja import render
from rulegen.codegen.literals import (
    rust_comment,
    rust_f32,
    rust_f64,
    rust_identifier,
    rust_string,
)
from rulegen.errors import RulegenError, UnsupportedFeatureError
from rulegen.ir.nodes import Model
from rulegen.targets.rust import table as rust_table
from rulegen.targets.base import Target
from rulegen.targets.brace_trees import show

_PER_LINE = 16  # numbers per line in the tables

# (type, kind of literal) of every table; "acc" is the accumulation type (f64 or f32)
_TYPES = {
    "NK": "u8", "NF": "u32", "NV": "f64", "NC": "u32", "NM": "i32", "NU": "u16", "NA": "u32",
    "NN": "u32", "CH": "u32", "TK": "u8", "TF": "u32", "TT": "f64", "TA": "u32", "TN": "u32",
    "CM": "u16", "IB": "f64", "IL": "u8", "OF": "u32", "OW": "f64", "ST": "u32", "SC": "u8",
    "BW": "f64", "LV": "acc", "BV": "f64", "RK": "u8", "RR": "u32", "RE": "u32", "RS": "u32",
    "RW": "f64", "RV": "acc", "FR": "R", "SG_FIRST": "u32", "SG_COUNT": "u32", "SG_STEPS": "u32",
}


class RustTarget(Target):
    name = "rust"
    description = "one Rust module (NAME.rs), no crates, no unsafe"

    def generate(self, model: Model, *, name: str = "model", **options) -> dict[str, str]:
        comments = bool(options.pop("comments", True))
        if options:
            raise RulegenError(f"unknown option(s) for the rust target: {', '.join(sorted(options))}")
        stem = rust_identifier(str(name))
        try:
            return {f"{stem}.rs": render("rust/module.rs.j2", self.context(model, stem, comments))}
        except ValueError as e:  # a lone surrogate in a name or label
            raise UnsupportedFeatureError("rust", str(e)) from None

    def context(self, model: Model, stem: str, comments: bool = True) -> dict:
        f32 = model.dtype == "float32"
        acc = "f32" if f32 else "f64"
        lit = {"f64": rust_f64, "acc": rust_f32 if f32 else rust_f64}
        t = rust_table.Tables(model)
        tables = []
        for name, ty in _TYPES.items():
            values = t.a[name]
            fmt = lit.get(ty, str)
            if ty == "R":  # fast rows: R(bound or payload, slot, first child)
                text, per = [f"R({rust_f64(v)}, {f}, {c})" for v, f, c in values], _PER_LINE // 4
            else:
                text, per = [fmt(v) for v in values], _PER_LINE
            lines = [", ".join(text[i:i + per]) + "," for i in range(0, len(text), per)]
            tables.append({"name": name, "type": acc if ty == "acc" else ty, "len": len(values),
                           "lines": lines})
        m, prov = model, model.provenance
        classifier = m.target.task == "classification"
        divisor = None
        if m.aggregation == "mean":
            divisor = lit["acc"](np.float32(len(m.trees)) if f32 else float(len(m.trees)))
        elif m.aggregation == "vote":
            w = lower.total_weight(m)
            divisor = lit["acc"](float(np.float32(w)) if f32 else w)
        features = []
        for i, f in enumerate(m.features):
            cats = [f"{k} = {rust_comment(show(c))}" for k, c in enumerate(f.categories)] if comments else []
            features.append({"index": i, "name": rust_comment(show(f.name)), "kind": f.kind,
                             "categories": cats})
        return {
            "stem": stem, "version": rulegen.__version__, "comments": comments,
            "source": ", ".join(rust_comment(s) for s in (prov.algorithm, prov.library) if s),
            "n_trees": len(m.trees), "n_nodes": sum(len(tree.nodes) for tree in model.trees), "aggregation": m.aggregation,
            "link": m.link, "dtype": m.dtype, "f32": f32, "acc": acc, "task": m.target.task,
            "target_name": rust_comment(show(m.target.name)), "classifier": classifier,
            "binary": classifier and m.n_raw == 1 and len(m.target.classes) == 2,
            "vote": m.aggregation == "vote", "divisor": divisor,
            "n_features": len(m.features), "n_raw": m.n_raw,
            "n_outputs": len(m.target.classes) if classifier else m.n_raw,
            "features": features, "feature_names": [rust_string(f.name) for f in m.features],
            "n_categories": [len(f.categories) for f in m.features],
            "classes": [{"string": rust_string(c), "comment": rust_comment(show(c))}
                        for c in m.target.classes] if classifier else [],
            "base": [lit["acc"](float(np.float32(b)) if f32 else b) for b in m.base_score],
            "tables": tables,
            "has_blend": rust_table.R_BLEND in t.a["RK"],
            "chains": rust_table.CHAINS,
        }
