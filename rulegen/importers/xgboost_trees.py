"""One XGBoost tree (the arrays of a JSON/UBJSON ``trees[i]`` object) to an IR :class:`Tree`.

XGBoost stores a tree as parallel arrays indexed by node id: ``left_children`` (-1 for a leaf),
``right_children``, ``split_indices``, ``split_conditions`` (the float32 threshold, or the leaf
value for a leaf), ``default_left``, ``split_type`` (0 numeric, 1 categorical) and, for
categorical nodes, ``categories_nodes`` / ``categories_segments`` / ``categories_sizes`` into
the flat ``categories`` list (the categories that go *right*). Multi-output trees
(``size_leaf_vector > 1``) keep their leaf vectors in ``leaf_weights``, indexed by the leaf's
``right_children`` entry.

Node ids are kept when every child id exceeds its parent's and every node is reachable (the
usual case, so ids match ``Booster.trees_to_dataframe``); otherwise nodes are renumbered in
preorder.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Leaf,
    NumericTest,
    Split,
    Tree,
)

MAX_CODE = 2**24  # XGBoost reads category codes as float32: larger ones are not exact


class Fail(Exception):
    """A malformed document: the JSON path and what is wrong (becomes ModelFormatError)."""

    def __init__(self, path: str, message: str):
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message


class Context:
    """What the trees tell about the features, gathered while converting them."""

    def __init__(self, n_features: int, n_raw: int, exact: bool):
        self.n_features = n_features
        self.n_raw = n_raw
        self.exact = exact
        self.cat_max: dict[int, int] = {}  # feature -> largest category code in any split
        self.cat_where: dict[int, str] = {}  # feature -> path of one categorical split on it
        self.numeric_used: dict[int, str] = {}  # feature -> path of one numeric split on it


def array(tree: dict, key: str, path: str, n: int | None, kind: str) -> np.ndarray:
    p = f"{path}.{key}"
    if key not in tree:
        raise Fail(p, "missing")
    raw = tree[key]
    if not isinstance(raw, (list, np.ndarray)):
        raise Fail(p, f"expected an array, got {type(raw).__name__}")
    try:
        arr = np.asarray(raw) if len(raw) else np.zeros(0, dtype=np.int64)
    except (ValueError, TypeError, OverflowError):
        arr = np.zeros((0, 0))
    ok = "iub" if kind == "int" else "iuf"
    if arr.ndim != 1 or arr.dtype.kind not in ok:
        what = "integers" if kind == "int" else "numbers"
        bad = next((v for v in raw if isinstance(v, (str, list, dict)) or v is None), None)
        raise Fail(p, f"expected an array of {what}" + (f", found {bad!r}" if bad is not None else ""))
    if n is not None and len(arr) != n:
        raise Fail(p, f"expected {n} entries (num_nodes), got {len(arr)}")
    if kind == "int":
        return arr.astype(np.int64)
    return arr.astype(np.float64)


class Ambiguous(Exception):
    """A JSON decimal parsed to float64 sits exactly between two float32 values: the caller
    re-reads the text, rounding each decimal once to float32."""


def f32_array(values: np.ndarray, exact: bool) -> np.ndarray:
    """float64 values -> float32; raise Ambiguous where JSON text must be re-read exactly."""
    with np.errstate(over="ignore"):
        f = values.astype(np.float32)
    if exact:
        return f
    back = f.astype(np.float64)
    off = (back != values) & np.isfinite(back)
    if off.any():
        v, b, g = values[off], back[off], f[off]
        with np.errstate(over="ignore"):  # FLT_MAX's next value up is infinity
            other = np.where(b < v, np.nextafter(g, np.float32(np.inf)), np.nextafter(g, np.float32(-np.inf)))
        if np.any(np.abs(v - b) == np.abs(other.astype(np.float64) - v)):
            raise Ambiguous
    return f



def _f32(tree, key, path, n, ctx) -> np.ndarray:
    return f32_array(array(tree, key, path, n, "float"), ctx.exact)


def _categories(tree: dict, path: str, n: int) -> dict[int, tuple[int, ...]]:
    nodes = array(tree, "categories_nodes", path, None, "int")
    segs = array(tree, "categories_segments", path, len(nodes), "int")
    sizes = array(tree, "categories_sizes", path, len(nodes), "int")
    cats = array(tree, "categories", path, None, "int")
    out: dict[int, tuple[int, ...]] = {}
    for k, (node, seg, size) in enumerate(zip(nodes.tolist(), segs.tolist(), sizes.tolist())):
        if not 0 <= node < n:
            raise Fail(f"{path}.categories_nodes[{k}]", f"node {node} out of range 0..{n - 1}")
        if size < 0 or seg < 0 or seg + size > len(cats):
            raise Fail(f"{path}.categories_segments[{k}]",
                       f"segment {seg}+{size} outside the {len(cats)} categories")
        codes = cats[seg:seg + size]
        if codes.size and (codes.min() < 0 or codes.max() > MAX_CODE):
            raise Fail(f"{path}.categories", f"category codes must be in 0..{MAX_CODE}")
        out[node] = tuple(sorted(set(codes.tolist())))
    return out


def _preorder(left: np.ndarray, right: np.ndarray, leaf: np.ndarray, path: str) -> list[int]:
    n = len(left)
    seen = np.zeros(n, dtype=bool)
    seen[0] = True
    order: list[int] = []
    stack = [0]
    while stack:
        i = stack.pop()
        order.append(i)
        if leaf[i]:
            continue
        for side, arr in (("right_children", right), ("left_children", left)):
            c = int(arr[i])
            if not 0 <= c < n:
                raise Fail(f"{path}.{side}[{i}]", f"child {c} out of range 0..{n - 1}")
            if seen[c]:
                raise Fail(f"{path}.{side}[{i}]", f"node {c} is already the root or another "
                                                  "split's child (not a tree)")
            seen[c] = True
            stack.append(c)
    return order


def convert_tree(tree: dict, path: str, ctx, output: int) -> Tree:
    if not isinstance(tree, dict):
        raise Fail(path, "expected an object")
    param = tree.get("tree_param")
    if not isinstance(param, dict) or "num_nodes" not in param:
        raise Fail(f"{path}.tree_param.num_nodes", "missing")
    try:
        n = int(param["num_nodes"])
        width = max(int(param.get("size_leaf_vector", 1)), 1)
    except (TypeError, ValueError):
        raise Fail(f"{path}.tree_param", "num_nodes and size_leaf_vector must be integers") from None
    if n < 1:
        raise Fail(f"{path}.tree_param.num_nodes", f"a tree needs at least one node, got {n}")
    left = array(tree, "left_children", path, n, "int")
    right = array(tree, "right_children", path, n, "int")
    feat = array(tree, "split_indices", path, n, "int")
    cond = _f32(tree, "split_conditions", path, n, ctx)
    dleft = array(tree, "default_left", path, n, "int")
    stype = array(tree, "split_type", path, n, "int") if "split_type" in tree else np.zeros(n, np.int64)
    leaf = left == -1
    cats = _categories(tree, path, n) if (stype[~leaf] == 1).any() else {}
    if width > 1:
        if width != ctx.n_raw:
            raise Fail(f"{path}.tree_param.size_leaf_vector",
                       f"leaf vectors of {width} values, but the model has {ctx.n_raw} outputs")
        leaf_weights = _f32(tree, "leaf_weights", path, None, ctx)
        scalar_out = None
    elif ctx.n_raw == 1:
        scalar_out = None
    else:
        scalar_out = output

    order = _preorder(left, right, leaf, path)
    keep = len(order) == n and all(leaf[i] or (left[i] > i and right[i] > i) for i in range(n))
    new_id = np.arange(n) if keep else np.full(n, -1, dtype=np.int64)
    if not keep:
        new_id[order] = np.arange(len(order))
    nodes: list = [None] * len(order)
    for i in order:
        if leaf[i]:
            if width > 1:
                k = int(right[i])
                if not 0 <= k or (k + 1) * width > len(leaf_weights):
                    raise Fail(f"{path}.right_children[{i}]", f"leaf index {k} outside leaf_weights")
                value = tuple(float(v) for v in leaf_weights[k * width:(k + 1) * width])
            else:
                value = (float(cond[i]),)
            if not all(math.isfinite(v) for v in value):
                raise Fail(f"{path}.split_conditions[{i}]", f"leaf value {value!r} is not finite")
            nodes[new_id[i]] = Leaf(value)
            continue
        f = int(feat[i])
        if not 0 <= f < ctx.n_features:
            raise Fail(f"{path}.split_indices[{i}]", f"feature {f} out of range 0..{ctx.n_features - 1}")
        lo, hi = int(new_id[left[i]]), int(new_id[right[i]])
        default_left = bool(dleft[i])
        if stype[i] == 0:
            t = float(cond[i])
            if math.isnan(t):
                raise Fail(f"{path}.split_conditions[{i}]", "a split threshold is NaN")
            ctx.numeric_used.setdefault(f, f"{path}.split_type[{i}]")
            nodes[new_id[i]] = Split(NumericTest(f, "<", t, "float32"), (lo, hi),
                                     DefaultChild(0 if default_left else 1))
        elif stype[i] == 1:
            if i not in cats:
                raise Fail(f"{path}.categories_nodes", f"no categories for categorical node {i}")
            codes = cats[i]
            ctx.cat_max[f] = max(ctx.cat_max.get(f, 0), codes[-1] if codes else 0)
            ctx.cat_where.setdefault(f, f"{path}.split_type[{i}]")
            # XGBoost: the listed categories go right; missing follows default_left.
            nodes[new_id[i]] = Split(CategoricalTest(f, codes), (hi, lo),
                                     DefaultChild(1 if default_left else 0))
        else:
            raise Fail(f"{path}.split_type[{i}]", f"unknown split type {int(stype[i])}")
    return Tree(tuple(nodes), scalar_out)
