"""Rows that sit on and around every number a model compares with.

A target that rounds a threshold, compares in the wrong precision, or sends NaN the wrong way
differs from the evaluator only on rows near that threshold, or on missing and infinite values.
These rows put each feature in turn exactly on each of its thresholds, one and two float64
steps either side, on the threshold's float32 rounding and its float32 neighbours (and, for a
float32 test, on the float64 bound where float32 rounding flips the answer), and on NaN, +-inf,
+-0, the float32 maximum and beyond; each categorical feature on every code and on unseen
values. The other features of a probe row come from a base row (the user's data, cycled).
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.codegen.lower import float64_bound
from rulegen.ir.nodes import IntervalTest, Model, NumericTest, ObliqueTest, Split, Surrogates

F32MAX = float(np.finfo(np.float32).max)
SPECIALS = (math.nan, math.inf, -math.inf, 0.0, -0.0, F32MAX, 3.4028235677973366e38, 1e308)


def thresholds(model: Model) -> dict[int, set[float]]:
    """Every number a numeric feature is compared with, by feature. For float32 tests this also
    includes the float64 midpoint where float32 rounding flips the answer (the bound the targets
    compare with), so probes land exactly on it."""
    out: dict[int, set[float]] = {}

    def numeric(f, op, t, dtype):
        values = out.setdefault(f, set())
        values.add(t)
        if dtype == "float32":
            values.add(float64_bound(op, t, dtype)[1])

    def add(test):
        if isinstance(test, NumericTest):
            numeric(test.feature, test.op, test.threshold, test.dtype)
        elif isinstance(test, IntervalTest):
            for b in test.bounds:
                numeric(test.feature, test.op, b, test.dtype)
        elif isinstance(test, ObliqueTest):
            for f, w in zip(test.features, test.weights):
                if w:
                    out.setdefault(f, set()).add(test.threshold / w)

    for tree in model.trees:
        for node in tree.nodes:
            if isinstance(node, Split):
                add(node.test)
                if isinstance(node.missing, Surrogates):
                    for s in node.missing.surrogates:
                        add(s.test)
    return out


def near(t: float) -> list[float]:
    """t, one and two float64 steps either side, and float32(t) with its float32 neighbours."""
    vals = [t]
    if math.isfinite(t):
        up = down = t
        for _ in range(2):
            up, down = math.nextafter(up, math.inf), math.nextafter(down, -math.inf)
            vals += [up, down]
        with np.errstate(over="ignore"):
            f = np.float32(t)
            vals += [float(f), float(np.nextafter(f, np.float32(np.inf))),
                     float(np.nextafter(f, np.float32(-np.inf)))]
    return [v for v in vals if not math.isnan(v)]


def category_probes(n: int) -> list[float]:
    """Every code, then unseen ones near and far (an int cast of a huge value is undefined in C)."""
    return list(range(n)) + [-1, n, n + 1, 0.5, -0.0, 2.0**31, 1e300, math.inf, math.nan]


def probe_values(model: Model) -> list[tuple[int, float]]:
    """(feature, value) for every probe, in a fixed order."""
    out = []
    for f, ts in sorted(thresholds(model).items()):
        for t in sorted(ts):
            out += [(f, v) for v in near(t)]
        out += [(f, v) for v in SPECIALS]
    for j, feat in enumerate(model.features):
        if feat.kind == "categorical":
            out += [(j, v) for v in category_probes(len(feat.categories))]
    return out


def probe_rows(model: Model, base: np.ndarray) -> np.ndarray:
    """One row per probe: a base row (cycled) with that feature set to the probe value; plus a
    row of nothing but missing values. ``base`` is (n, n_features) float64, categorical codes."""
    p = len(model.features)
    base = np.asarray(base, dtype=np.float64).reshape(-1, p)
    if len(base) == 0:
        base = np.zeros((1, p))
    probes = probe_values(model)
    X = np.empty((len(probes) + 1, p))
    for i, (f, v) in enumerate(probes):
        X[i] = base[i % len(base)]
        X[i, f] = v
    X[-1] = np.nan
    return X
