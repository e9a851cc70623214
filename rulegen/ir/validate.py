"""Check that a Model means something (docs/IR.md); raise at the first problem.

Every entry point (JSON loader, learners, importers, the rules parser) calls
:func:`validate`, so code generators may assume a valid model. Messages name
the place as a JSON path, e.g. ``trees[3].nodes[17].children[1]``.
"""

from __future__ import annotations

import math
import re

import numpy as np

from rulegen.errors import IRValidationError
from rulegen.ir.nodes import (
    AGGREGATIONS,
    DTYPES,
    FEATURE_KINDS,
    LINKS,
    OPS,
    TASKS,
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
)

_BINARY = (NumericTest, CategoricalTest, ObliqueTest)


def _fail(path: str, msg: str):
    raise IRValidationError(path, msg)


def _one_of(value, allowed, path):
    if value not in allowed:
        _fail(path, f"expected one of {', '.join(map(repr, allowed))}, got {value!r}")


def _finite(v, path):
    if not isinstance(v, (int, float)) or isinstance(v, bool) or not math.isfinite(v):
        _fail(path, f"expected a finite number, got {v!r}")


def _not_nan(v, path):
    if not isinstance(v, (int, float)) or isinstance(v, bool) or math.isnan(v):
        _fail(path, f"expected a number (not NaN), got {v!r}")


_UNSPELLABLE = re.compile("[\x00\ud800-\udfff]")


def _text(s: str, path: str):
    """User text reaches every target as identifiers and string literals. NUL has no
    spelling in SQL (PostgreSQL rejects it in text and names) nor in a C string, and a lone
    surrogate is not text at all: no UTF-8 file can hold it."""
    bad = _UNSPELLABLE.search(s)
    if bad:
        what = "a NUL character" if bad.group() == "\x00" else "a lone surrogate (not valid Unicode)"
        _fail(path, f"{s!r} contains {what}, which no target can write; remove it")


def _labels(labels, path):
    seen = set()
    for i, lab in enumerate(labels):
        if isinstance(lab, bool) or not isinstance(lab, (str, int)):
            _fail(f"{path}[{i}]", f"expected a string or integer label, got {lab!r}")
        if isinstance(lab, str):
            _text(lab, f"{path}[{i}]")
        key = (type(lab), lab)
        if key in seen:
            _fail(f"{path}[{i}]", f"duplicate label {lab!r}")
        seen.add(key)


def _feature(model: Model, f, path, kinds):
    if isinstance(f, bool) or not isinstance(f, int) or not 0 <= f < len(model.features):
        _fail(path, f"feature index {f!r} out of range (model has {len(model.features)} features)")
    kind = model.features[f].kind
    if kind not in kinds:
        _fail(path, f"feature {model.features[f].name!r} is {kind}; this test needs "
                    f"a {' or '.join(kinds)} feature")
    return model.features[f]


def _codes(codes, n_cat, path):
    prev = -1
    for i, c in enumerate(codes):
        if isinstance(c, bool) or not isinstance(c, int) or not 0 <= c < n_cat:
            _fail(f"{path}[{i}]", f"category code {c!r} out of range 0..{n_cat - 1}")
        if c <= prev:
            _fail(f"{path}[{i}]", "category codes must be sorted and unique")
        prev = c


def _threshold(t, dtype, path):
    _not_nan(t, path)
    if dtype == "float32" and math.isfinite(t) and float(np.float32(t)) != t:
        _fail(path, f"threshold {t!r} is not a float32 value but the test compares in float32")


def _check_test(model: Model, test, path) -> int:
    """Validate a test; return how many children it needs."""
    if isinstance(test, NumericTest):
        _feature(model, test.feature, f"{path}.feature", ("numeric",))
        _one_of(test.op, OPS, f"{path}.op")
        _one_of(test.dtype, DTYPES, f"{path}.dtype")
        _threshold(test.threshold, test.dtype, f"{path}.threshold")
        return 2
    if isinstance(test, CategoricalTest):
        feat = _feature(model, test.feature, f"{path}.feature", ("categorical",))
        _codes(test.categories, len(feat.categories), f"{path}.categories")
        return 2
    if isinstance(test, IntervalTest):
        _feature(model, test.feature, f"{path}.feature", ("numeric",))
        _one_of(test.op, OPS, f"{path}.op")
        _one_of(test.dtype, DTYPES, f"{path}.dtype")
        if not test.bounds:
            _fail(f"{path}.bounds", "an interval test needs at least one bound")
        for i, b in enumerate(test.bounds):
            _threshold(b, test.dtype, f"{path}.bounds[{i}]")
            if i and not b > test.bounds[i - 1]:
                _fail(f"{path}.bounds[{i}]", "bounds must be strictly increasing")
        return len(test.bounds) + 1
    if isinstance(test, MultiwayTest):
        feat = _feature(model, test.feature, f"{path}.feature", ("categorical",))
        if len(test.groups) < 2:
            _fail(f"{path}.groups", "a multiway test needs at least two groups")
        seen: set[int] = set()
        for i, g in enumerate(test.groups):
            _codes(g, len(feat.categories), f"{path}.groups[{i}]")
            if seen & set(g):
                _fail(f"{path}.groups[{i}]", "a category code appears in two groups")
            seen |= set(g)
        return len(test.groups)
    if isinstance(test, ObliqueTest):
        if not test.features or len(test.features) != len(test.weights):
            _fail(path, "an oblique test needs as many weights as features (at least one)")
        for i, f in enumerate(test.features):
            _feature(model, f, f"{path}.features[{i}]", ("numeric",))
        for i, w in enumerate(test.weights):
            _finite(w, f"{path}.weights[{i}]")
        _one_of(test.op, OPS, f"{path}.op")
        _not_nan(test.threshold, f"{path}.threshold")
        return 2
    _fail(path, f"unknown test {type(test).__name__}")


def _child_index(i, n, path):
    if isinstance(i, bool) or not isinstance(i, int) or not 0 <= i < n:
        _fail(path, f"child index {i!r} out of range 0..{n - 1}")


def _check_split(model: Model, node: Split, node_id: int, n_nodes: int, path: str, parent):
    n_children = _check_test(model, node.test, f"{path}.test")
    if len(node.children) != n_children:
        _fail(f"{path}.children", f"this test needs {n_children} children, got {len(node.children)}")
    for i, c in enumerate(node.children):
        cp = f"{path}.children[{i}]"
        if isinstance(c, bool) or not isinstance(c, int) or not node_id < c < n_nodes:
            _fail(cp, f"child id {c!r} must be a node id after {node_id} and below {n_nodes}")
        if parent[c] is not None:
            _fail(cp, f"node {c} is already a child of node {parent[c]}")
        parent[c] = node_id
    m = node.missing
    mp = f"{path}.missing"
    if isinstance(m, DefaultChild):
        _child_index(m.child, n_children, f"{mp}.child")
    elif isinstance(m, Surrogates):
        if not isinstance(node.test, _BINARY):
            _fail(mp, "surrogates need a binary split")
        for i, s in enumerate(m.surrogates):
            sp = f"{mp}.surrogates[{i}]"
            if not isinstance(s.test, _BINARY):
                _fail(f"{sp}.test", "a surrogate test must be numeric, categorical or oblique")
            _check_test(model, s.test, f"{sp}.test")
            _child_index(s.child_if_true, 2, f"{sp}.child_if_true")
        _child_index(m.default, n_children, f"{mp}.default")
    elif isinstance(m, Blend):
        if len(m.weights) != n_children:
            _fail(f"{mp}.weights", f"need one weight per child ({n_children}), got {len(m.weights)}")
        for i, w in enumerate(m.weights):
            _finite(w, f"{mp}.weights[{i}]")
            if w < 0:
                _fail(f"{mp}.weights[{i}]", "blend weights cannot be negative")
    else:
        _fail(mp, f"unknown missing rule {type(m).__name__}")
    if node.unseen is not None:
        if not isinstance(node.test, (CategoricalTest, MultiwayTest)):
            _fail(f"{path}.unseen", "only categorical splits route unseen categories")
        _child_index(node.unseen, n_children, f"{path}.unseen")
    elif isinstance(node.test, MultiwayTest):
        _fail(f"{path}.unseen", "a multiway split must say where unseen categories go")


def _check_support(node, path):
    if node.samples is not None:
        _finite(node.samples, f"{path}.samples")
    if node.distribution is not None:
        for i, v in enumerate(node.distribution):
            _finite(v, f"{path}.distribution[{i}]")
    if node.impurity is not None:
        _finite(node.impurity, f"{path}.impurity")


def _floats_ok(vs) -> bool:
    for v in vs:
        if type(v) is not float:
            return False
    return math.isfinite(sum(vs))  # (a sum that overflows only sends them to the full check)


def _plain_ok(node, ni, n, width, numeric, parent) -> bool:
    """The common node (a leaf of floats; a float threshold split with a default child),
    checked without formatting paths: learners make hundreds of thousands. False sends it
    to the full checks, which say what is wrong; True has recorded a split's children."""
    s, d, imp = node.samples, node.distribution, node.impurity
    if not ((s is None or (type(s) is float and math.isfinite(s)))
            and (imp is None or (type(imp) is float and math.isfinite(imp)))
            and (d is None or _floats_ok(d))):
        return False
    if type(node) is Leaf:
        return len(node.value) == width and _floats_ok(node.value)
    if type(node) is not Split or type(node.test) is not NumericTest or node.unseen is not None:
        return False
    t, kids, m = node.test, node.children, node.missing
    f, thr = t.feature, t.threshold
    if not (type(f) is int and 0 <= f < len(numeric) and numeric[f] and t.op in OPS
            and t.dtype in DTYPES and type(thr) is float and not math.isnan(thr)
            and (t.dtype != "float32" or math.isinf(thr) or float(np.float32(thr)) == thr)
            and type(m) is DefaultChild and type(m.child) is int and 0 <= m.child < 2
            and len(kids) == 2):
        return False
    a, b = kids
    if not (type(a) is int and type(b) is int and ni < a < n and ni < b < n and a != b
            and parent[a] is None and parent[b] is None):
        return False
    parent[a] = parent[b] = ni
    return True


def validate(model: Model, plain: dict | None = None) -> Model:
    """Return ``model`` unchanged if it is valid; raise IRValidationError otherwise.

    ``plain`` (learners only): {tree index: (leaf width, split features)} for trees whose
    nodes the learner built from arrays it checked in bulk for everything
    :func:`_plain_ok` checks but the model's width and feature kinds (finite floats,
    float32-exact thresholds, each node but the root the child of one earlier split). Their
    nodes are not checked again when that width is the model's and those features numeric."""
    if not model.features:
        _fail("features", "a model needs at least one feature")
    names = set()
    for i, f in enumerate(model.features):
        p = f"features[{i}]"
        if not isinstance(f.name, str) or not f.name:
            _fail(f"{p}.name", "feature names must be non-empty strings")
        _text(f.name, f"{p}.name")
        if f.name in names:
            _fail(f"{p}.name", f"duplicate feature name {f.name!r}")
        names.add(f.name)
        _one_of(f.kind, FEATURE_KINDS, f"{p}.kind")
        if f.kind == "categorical":
            if not f.categories:
                _fail(f"{p}.categories", "a categorical feature needs at least one category")
            _labels(f.categories, f"{p}.categories")
        elif f.categories:
            _fail(f"{p}.categories", "a numeric feature has no categories")

    t = model.target
    _one_of(t.task, TASKS, "target.task")
    if isinstance(t.name, str):
        _text(t.name, "target.name")
    n_raw = len(model.base_score)
    if n_raw < 1:
        _fail("base_score", "need one base score per raw output (at least one)")
    for i, b in enumerate(model.base_score):
        _finite(b, f"base_score[{i}]")
    if t.task == "classification":
        if not t.classes:
            _fail("target.classes", "a classifier needs its class labels")
        _labels(t.classes, "target.classes")
        if n_raw != len(t.classes) and not (n_raw == 1 and len(t.classes) == 2):
            _fail("base_score", f"{len(t.classes)} classes need {len(t.classes)} raw outputs "
                                f"(or 1 for two classes), got {n_raw}")
    elif n_raw != t.n_outputs:
        _fail("base_score", f"{t.n_outputs} regression outputs need {t.n_outputs} base scores, got {n_raw}")
    _one_of(model.aggregation, AGGREGATIONS, "aggregation")
    _one_of(model.link, LINKS, "link")
    _one_of(model.dtype, DTYPES, "dtype")
    if not model.trees:
        _fail("trees", "a model needs at least one tree")

    numeric = [f.kind == "numeric" for f in model.features]
    for ti, tree in enumerate(model.trees):
        tp = f"trees[{ti}]"
        if tree.output is not None:
            _child_index(tree.output, n_raw, f"{tp}.output")
            if model.aggregation == "vote":
                _fail(f"{tp}.output", "voting trees vote over the full class vector; "
                                      "they cannot feed a single output")
        _finite(tree.weight, f"{tp}.weight")
        if model.aggregation == "vote" and not tree.weight > 0:
            _fail(f"{tp}.weight", "voting trees need a positive weight")
        width = 1 if tree.output is not None else n_raw
        n = len(tree.nodes)
        if n == 0:
            _fail(f"{tp}.nodes", "a tree needs at least one node")
        checked = plain.get(ti) if plain else None
        if (checked is not None and checked[0] == width
                and all(type(f) is int and 0 <= f < len(numeric) and numeric[f]
                        for f in checked[1])):
            continue
        parent: list[int | None] = [None] * n
        for ni, node in enumerate(tree.nodes):
            if _plain_ok(node, ni, n, width, numeric, parent):
                continue
            np_ = f"{tp}.nodes[{ni}]"
            if isinstance(node, Leaf):
                if len(node.value) != width:
                    _fail(f"{np_}.value", f"expected {width} value(s), got {len(node.value)}")
                for k, v in enumerate(node.value):
                    _finite(v, f"{np_}.value[{k}]")
            elif isinstance(node, Split):
                _check_split(model, node, ni, n, np_, parent)
            else:
                _fail(np_, f"not a node: {type(node).__name__}")
            _check_support(node, np_)
        for ni in range(1, n):
            if parent[ni] is None:
                _fail(f"{tp}.nodes[{ni}]", "node is not the child of any split (unreachable)")
    return model
