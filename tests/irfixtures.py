"""Hand-written IR models covering every construct, and adversarial probe rows.

Every target test runs each model here through the target and compares with the
evaluator. Models are built in code (seeded) so they stay small in the repo.
"""

from __future__ import annotations

import math

import numpy as np

from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.ir.validate import validate
from rulegen.verify.probes import SPECIALS, category_probes, near, thresholds
from rulegen.verify.python import python_rows

F32MAX = float(np.finfo(np.float32).max)


def _f32(v: float) -> float:
    return float(np.float32(v))


def classifier() -> Model:
    """3 classes, mixed ops and comparison types, awkward thresholds."""
    feats = (Feature("a"), Feature("b"), Feature("c"))
    nodes = (
        Split(NumericTest(0, "<=", 0.1 + 0.2), (1, 2), DefaultChild(0)),
        Split(NumericTest(1, "<", _f32(1.1), "float32"), (3, 4), DefaultChild(1)),
        Split(NumericTest(2, "<=", 1e-300), (5, 6), DefaultChild(1)),
        Leaf((1.0, 0.0, 0.0), 10, (10.0, 0.0, 0.0)),
        Split(NumericTest(0, "<=", math.inf), (7, 8), DefaultChild(1)),
        Split(NumericTest(1, "<=", _f32(-2.5e-39), "float32"), (9, 10), DefaultChild(0)),
        Leaf((0.1, 0.2, 0.7), 30, (3.0, 6.0, 21.0)),
        Leaf((0.25, 0.5, 0.25), 4, (1.0, 2.0, 1.0)),
        Leaf((0.0, 0.0, 1.0), 1, (0.0, 0.0, 1.0)),
        Leaf((0.5, 0.5, 0.0), 2, (1.0, 1.0, 0.0)),
        Leaf((1 / 3, 1 / 3, 1 / 3), 3, (1.0, 1.0, 1.0)),
    )
    return validate(Model(feats, Target("classification", "kind", ("setosa", "versicolor", "virginica")),
                          (Tree(nodes),), (0.0, 0.0, 0.0)))


def regressor() -> Model:
    feats = (Feature("x1"), Feature("x2"))
    nodes = (
        Split(NumericTest(0, "<", 5.5), (1, 2), DefaultChild(1)),
        Split(NumericTest(1, "<=", -0.0), (3, 4), DefaultChild(0)),
        Split(NumericTest(1, "<", F32MAX, "float32"), (5, 6), DefaultChild(0)),
        Leaf((5.06,), 5), Leaf((1e-300,), 1), Leaf((0.30000000000000004,), 3), Leaf((-8.176e10,), 2),
    )
    return validate(Model(feats, Target("regression", "y"), (Tree(nodes),), (0.0,)))


def constant_trees() -> Model:
    """Trees that are one leaf, before and among split trees, from a zero base: each must add
    to the sum (the SQL once kept only the last of several leading constant trees)."""
    split = (Split(NumericTest(0, "<=", 0.5), (1, 2), DefaultChild(1)), Leaf((1.0,)), Leaf((2.0,)))
    trees = tuple(Tree(n) for n in ((Leaf((-0.0,)),), (Leaf((1.5,)),), (Leaf((0.25,)),), split,
                                    (Leaf((0.125,)),)))
    return validate(Model((Feature("x0"),), Target("regression", "y"), trees, (0.0,)))


def _random_tree(rng, n_features: int, max_depth: int, width: int, output=None,
                 dtype="float64", scale=1.0) -> Tree:
    """A random binary numeric tree, built breadth-first (ids increase downwards)."""
    nodes: list = [None]
    queue = [(0, 0)]
    while queue:
        node_id, d = queue.pop(0)
        if d >= max_depth or (d > 1 and rng.random() < 0.2):
            nodes[node_id] = Leaf(tuple(float(v) for v in rng.normal(size=width) * scale))
            continue
        f = int(rng.integers(n_features))
        t = float(np.round(rng.normal(), 2))
        if dtype == "float32" or rng.random() < 0.3:
            test = NumericTest(f, "<" if rng.random() < 0.5 else "<=", _f32(t), "float32")
        else:
            test = NumericTest(f, "<" if rng.random() < 0.5 else "<=", t)
        left, right = len(nodes), len(nodes) + 1
        nodes += [None, None]
        nodes[node_id] = Split(test, (left, right), DefaultChild(int(rng.integers(2))))
        queue += [(left, d + 1), (right, d + 1)]
    return Tree(tuple(nodes), output)


def sigmoid_ensemble(n_trees: int = 7, seed: int = 1) -> Model:
    rng = np.random.default_rng(seed)
    feats = tuple(Feature(f"f{i}") for i in range(4))
    trees = tuple(Tree(_random_tree(rng, 4, 4, 1).nodes, None, 0.1) for _ in range(n_trees))
    return validate(Model(feats, Target("classification", "label", (0, 1)), trees, (-0.3,),
                          link="sigmoid"))


def softmax_ensemble(dtype: str = "float32", rounds: int = 4, seed: int = 2) -> Model:
    rng = np.random.default_rng(seed)
    feats = tuple(Feature(f"f{i}") for i in range(5))
    trees = []
    for _ in range(rounds):
        for k in range(3):
            t = _random_tree(rng, 5, 3, 1, output=k, dtype=dtype)
            if dtype == "float32":
                t = Tree(tuple(Leaf((_f32(n.value[0]),)) if isinstance(n, Leaf) else n
                               for n in t.nodes), k)
            trees.append(t)
    base = (0.5, -0.25, 0.125)
    return validate(Model(feats, Target("classification", "species", ("a", "b", "c")), tuple(trees),
                          base, link="softmax", dtype=dtype))


def forest(aggregation: str = "mean", n_trees: int = 9, seed: int = 3) -> Model:
    rng = np.random.default_rng(seed)
    feats = tuple(Feature(f"v{i}") for i in range(3))
    trees = []
    for _ in range(n_trees):
        t = _random_tree(rng, 3, 4, 2)
        leaves = []
        for n in t.nodes:
            if isinstance(n, Leaf):
                p = float(rng.random())
                n = Leaf((p, 1.0 - p))
            leaves.append(n)
        weight = float(np.round(rng.random() + 0.5, 3)) if aggregation == "vote" else 1.0
        trees.append(Tree(tuple(leaves), None, weight))
    return validate(Model(feats, Target("classification", "c", ("no", "yes")), tuple(trees),
                          (0.0, 0.0), aggregation=aggregation))


def exp_regression(seed: int = 4) -> Model:
    rng = np.random.default_rng(seed)
    feats = tuple(Feature(f"z{i}") for i in range(3))
    trees = tuple(_random_tree(rng, 3, 3, 1, scale=0.3) for _ in range(5))
    return validate(Model(feats, Target("regression", "count"), trees, (0.7,), link="exp"))


def chain(depth: int = 2500) -> Model:
    """A degenerate tree: each split has a leaf on one side and the chain on the other."""
    feats = (Feature("p"), Feature("q"), Feature("r"))
    nodes: list = []
    for i in range(depth):
        node_id = len(nodes)
        test = NumericTest(i % 3, "<=" if i % 2 else "<", float(depth - i) / 7.0)
        if i % 5 == 4:
            test = NumericTest(i % 3, "<", _f32(float(depth - i) / 7.0), "float32")
        # the leaf is the next node, the chain goes on at the one after it
        nodes.append(Split(test, (node_id + 1, node_id + 2), DefaultChild(i % 2)))
        nodes.append(Leaf((float(i),)))
    nodes.append(Leaf((-1.0,)))
    return validate(Model(feats, Target("regression", "depth"), (Tree(tuple(nodes)),), (0.0,)))


def big_ensemble(n_trees: int = 1000, seed: int = 5) -> Model:
    rng = np.random.default_rng(seed)
    feats = tuple(Feature(f"x{i}") for i in range(10))
    trees = tuple(_random_tree(rng, 10, 5, 1, scale=0.1) for _ in range(n_trees))
    return validate(Model(feats, Target("classification", "y", ("neg", "pos")), trees, (0.0,),
                          link="sigmoid"))


def every_construct() -> Model:
    """Each split kind and each missing-value form at least once, with categorical features."""
    feats = (
        Feature("num"),
        Feature("colour", "categorical", ("red", "green", "blue", "it's")),
        Feature("size", "categorical", ("S", "M", "L", "XL")),
        Feature("w1"),
        Feature("w2"),
        Feature("code", "categorical", (10, 20, 30)),
    )
    L = Leaf
    nodes = (
        # 0: interval split on num, missing -> child 3 (its own branch, CHAID style)
        Split(IntervalTest(0, "<=", (-1.0, 0.5, _f32(2.25)), "float32"), (1, 2, 3, 4), DefaultChild(3)),
        # 1: binary categorical with surrogates (numeric, then categorical)
        Split(CategoricalTest(1, (0, 3)), (5, 6), Surrogates((
            Surrogate(NumericTest(3, "<", 0.25), 1, 0.8),
            Surrogate(CategoricalTest(2, (1,)), 0, 0.6)), 1)),
        # 2: multiway categorical with a blend for missing, unseen -> child 2
        Split(MultiwayTest(2, ((0,), (1, 2), (3,))), (7, 8, 9), Blend((0.5, 0.3, 0.2)), unseen=2),
        # 3: oblique split, missing -> child 0
        Split(ObliqueTest((3, 4), (0.5, -1.25), "<", 0.1), (10, 11), DefaultChild(0)),
        # 4: categorical test where unseen follows the missing child (HGB style)
        Split(CategoricalTest(5, (1,)), (12, 13), DefaultChild(0), unseen=0),
        L((0.9, 0.1)), L((0.2, 0.8)),
        L((0.6, 0.4)),
        # 8: nested blend under a blend
        Split(NumericTest(4, "<", -0.5), (14, 15), Blend((0.75, 0.25))),
        L((0.3, 0.7)),
        L((0.05, 0.95)), L((0.45, 0.55)),
        L((0.7, 0.3)), L((0.15, 0.85)),
        L((1.0, 0.0)), L((0.0, 1.0)),
    )
    return validate(Model(feats, Target("classification", "outcome", ("bad", "good")),
                          (Tree(nodes),), (0.0, 0.0)))


ADVERSARIAL_NAMES = ("select", "x y", 'a"b', "O'Brien", "*/ x /*", "年龄", "1st")


def adversarial_names() -> Model:
    """User text that must not break or inject into any target."""
    feats = tuple(Feature(n) for n in ADVERSARIAL_NAMES[:-1]) + (
        Feature(ADVERSARIAL_NAMES[-1], "categorical", ("it's", 'say "hi"', "*/", "\\n", "年")),)
    nodes = [None]
    queue = [(0, 0)]
    k = 0
    while queue:
        node_id, d = queue.pop(0)
        if d == 4:
            nodes[node_id] = Leaf(((k % 3) / 2, 1 - (k % 3) / 2, 0.0))
            k += 1
            continue
        left, right = len(nodes), len(nodes) + 1
        nodes += [None, None]
        if d == 3:
            test = CategoricalTest(6, (0, 2, 4))
        else:
            test = NumericTest((node_id * 3) % 6, "<=", 0.5 * (d + 1) - 1)
        nodes[node_id] = Split(test, (left, right), DefaultChild(d % 2))
        queue += [(left, d + 1), (right, d + 1)]
    classes = ("it's \"ok\"", "*/ end", "选择")
    return validate(Model(feats, Target("classification", "who's", classes), (Tree(tuple(nodes)),),
                          (0.0, 0.0, 0.0)))


def all_models() -> dict[str, Model]:
    """The standard set every target test runs (without the two big stress models)."""
    return {
        "classifier": classifier(),
        "regressor": regressor(),
        "constant_trees": constant_trees(),
        "sigmoid_ensemble": sigmoid_ensemble(),
        "softmax_f32": softmax_ensemble("float32"),
        "softmax_f64": softmax_ensemble("float64"),
        "forest_mean": forest("mean"),
        "forest_vote": forest("vote"),
        "exp_regression": exp_regression(),
        "every_construct": every_construct(),
        "adversarial_names": adversarial_names(),
    }


# --- random models mixing every construct ------------------------------------------------


NUMERIC, CATS = (0, 1, 2), {3: 3, 4: 5}


def _threshold(rng, dtype):
    r = rng.random()
    if r < 0.08:
        return math.inf if r < 0.05 else -math.inf
    t = float(np.round(rng.normal(), int(rng.integers(0, 4))))
    return float(np.float32(t)) if dtype == "float32" else t


def _rand_binary(rng):
    r, op = rng.random(), "<" if rng.random() < 0.5 else "<="
    if r < 0.5:
        dtype = "float32" if rng.random() < 0.4 else "float64"
        return NumericTest(int(rng.choice(NUMERIC)), op, _threshold(rng, dtype), dtype)
    if r < 0.8:
        f = int(rng.choice(list(CATS)))
        return CategoricalTest(f, tuple(sorted({int(c) for c in rng.integers(0, CATS[f], size=int(
            rng.integers(0, CATS[f] + 1)))})))
    fs = tuple(int(f) for f in rng.choice(NUMERIC, size=int(rng.integers(1, 4))))
    ws = tuple(float(np.round(rng.normal(), 3)) if rng.random() < 0.9 else 0.0 for _ in fs)
    return ObliqueTest(fs, ws, op, float(np.round(rng.normal(), 2)))


def _rand_split(rng, blend_ok):
    r, unseen = rng.random(), None
    if r < 0.45:
        test, n = _rand_binary(rng), 2
        if isinstance(test, CategoricalTest):
            unseen = [None, 0, 1][int(rng.integers(3))]
    elif r < 0.7:
        dtype = "float32" if rng.random() < 0.4 else "float64"
        bounds = tuple(sorted({_threshold(rng, dtype) for _ in range(int(rng.integers(1, 4)))}))
        op = "<" if rng.random() < 0.5 else "<="
        test, n = IntervalTest(int(rng.choice(NUMERIC)), op, bounds, dtype), len(bounds) + 1
    else:
        f = int(rng.choice(list(CATS)))
        perm = [int(c) for c in rng.permutation(CATS[f])]
        n_cuts = int(rng.integers(1, min(3, CATS[f] - 1) + 1))
        cuts = sorted(int(c) for c in rng.choice(np.arange(1, CATS[f]), size=n_cuts, replace=False))
        groups = [tuple(sorted(perm[a:b])) for a, b in zip([0] + cuts, cuts + [CATS[f]])]
        if rng.random() < 0.3 and len(groups[-1]) > 1:
            groups[-1] = groups[-1][1:]  # a listed code that no group holds goes to unseen
        test, n = MultiwayTest(f, tuple(groups)), len(groups)
        unseen = int(rng.integers(n))
    r = rng.random()
    if blend_ok and r < 0.25:
        w = [float(np.round(v, 3)) for v in rng.random(n)]
        if rng.random() < 0.3:
            w[int(rng.integers(n))] = 0.0
        missing = Blend(tuple(w))
    elif isinstance(test, (NumericTest, CategoricalTest, ObliqueTest)) and r < 0.5:
        missing = Surrogates(tuple(Surrogate(_rand_binary(rng), int(rng.integers(2)))
                                   for _ in range(int(rng.integers(0, 3)))), int(rng.integers(2)))
    else:
        missing = DefaultChild(int(rng.integers(n)))
    return test, n, missing, unseen


def random_model(seed: int) -> Model:  # (first written for the C target's tests)
    """Splits of every kind, every missing rule, unseen routes, +-inf thresholds, float32 tests,
    blends at any depth, tree weights and output indices, all aggregations, links and dtypes."""
    rng = np.random.default_rng(seed)
    feats = (Feature("n0"), Feature("n1"), Feature("n2"), Feature("c3", "categorical", ("a", "b", "c")),
             Feature("c4", "categorical", (10, 20, 30, 40, 50)))
    kind = int(rng.integers(4))
    n_raw = [1, 2, 3, int(rng.integers(1, 3))][kind]
    target = (Target("regression", "y", (), n_raw) if kind == 3 else
              Target("classification", "y", ("a", "b", "c") if kind == 2 else ("no", "yes")))
    trees = []
    aggregation = ["sum", "mean", "vote"][int(rng.integers(3))]
    for _ in range(int(rng.integers(1, 6))):
        output = (int(rng.integers(n_raw)) if n_raw > 1 and rng.random() < 0.4
                  and aggregation != "vote" else None)
        width = 1 if output is not None else n_raw
        blend_ok, depth = rng.random() < 0.4, int(rng.integers(0, 5))
        nodes, queue = [None], [(0, 0)]
        while queue:
            nid, d = queue.pop(0)
            if d >= depth or (d > 0 and rng.random() < 0.3):
                vals = [[0.0, -0.0][int(rng.integers(2))] if rng.random() < 0.1 else
                        float(rng.normal()) * 10.0 ** int(rng.integers(-3, 3)) for _ in range(width)]
                nodes[nid] = Leaf(tuple(vals), float(rng.integers(1, 50)))
                continue
            test, n, missing, unseen = _rand_split(rng, blend_ok)
            kids = tuple(range(len(nodes), len(nodes) + n))
            nodes += [None] * n
            nodes[nid] = Split(test, kids, missing, unseen)
            queue += [(k, d + 1) for k in kids]
        trees.append(Tree(tuple(nodes), output, [1.0, 0.1, 0.3, 2.5][int(rng.integers(4))]))
    base = tuple(float(np.round(rng.normal(), 3)) for _ in range(n_raw))
    return validate(Model(feats, target, tuple(trees), base, aggregation,
                          ["identity", "sigmoid", "softmax", "exp"][int(rng.integers(4))],
                          "float32" if rng.random() < 0.5 else "float64"))



# --- probe rows ---------------------------------------------------------------------------


_thresholds, _near = thresholds, near  # rulegen.verify.probes: the same probes `rulegen verify` uses


def probe_rows(model: Model, seed: int = 0, n_random: int = 200, limit: int | None = None) -> np.ndarray:
    """Rows (float64, categorical as codes) that sit on and around every threshold,
    plus NaN / +-inf / unseen categories, plus random rows. Deterministic for a seed."""
    rng = np.random.default_rng(seed)
    p = len(model.features)
    cat_sizes = [len(f.categories) for f in model.features]

    def random_row():
        row = rng.normal(size=p) * 2
        for j, n in enumerate(cat_sizes):
            if n:
                row[j] = rng.integers(-1, n + 1)  # -1 and n are unseen codes
        mask = rng.random(p) < 0.1
        row[mask] = np.nan
        return row

    rows = [random_row() for _ in range(n_random)]
    rows.append(np.full(p, np.nan))
    for f, ts in sorted(_thresholds(model).items()):
        for t in sorted(ts):
            for v in _near(t):
                row = random_row()
                row[f] = v
                rows.append(row)
        for v in SPECIALS:
            row = random_row()
            row[f] = v
            rows.append(row)
    for j, n in enumerate(cat_sizes):
        # every code, then unseen ones near and far (an int cast of a huge value is undefined in C)
        for code in category_probes(n):
            row = random_row()
            row[j] = code
            rows.append(row)
    X = np.vstack(rows)
    if limit is not None and len(X) > limit:
        X = X[np.sort(rng.choice(len(X), limit, replace=False))]
    return X




def labels_for(model: Model, X: np.ndarray, unseen_str: str = "never-seen", unseen_int: int = -999):
    """Rows as Python values (labels for categories, None for missing): what the Python and SQL
    targets take. The same conversion `rulegen verify` makes."""
    return python_rows(model, X, unseen_str, unseen_int)


# --- hostile text: what no target may let break out of a string, comment or literal ---

LONG = "é" * 2500  # 5,000 bytes
HOSTILE = ["a\nb", "a\r\nb", "t\tab", 'q"uo""te', "it's", "*/ -- ;", "年龄\u2028x", "L" + LONG,
           "--", ";"]


def hostile_model(dtype: str = "float64") -> Model:
    feats = tuple(Feature(n) for n in HOSTILE[:8]) + (
        Feature("c\n-- '", "categorical", ("a\nb", "a\r\nb", "\t", "'; DROP TABLE data; --", "*/",
                                           "年", "y" + LONG, "ab")),)
    rng = np.random.default_rng(3)
    nodes: list = [None]
    queue = [(0, 0)]
    while queue:
        node_id, depth = queue.pop(0)
        if depth == 5:
            nodes[node_id] = Leaf(tuple(float(v) for v in rng.random(3)))
            continue
        kids = (len(nodes), len(nodes) + 1)
        nodes += [None, None]
        if depth % 2:
            test = CategoricalTest(8, tuple(sorted(int(c) for c in rng.choice(8, 3, replace=False))))
            unseen = int(rng.integers(2))
        else:
            test = NumericTest(int(rng.integers(8)), "<=", float(np.round(rng.normal(), 1)))
            unseen = None
        nodes[node_id] = Split(test, kids, DefaultChild(int(rng.integers(2))), unseen)
        queue += [(k, depth + 1) for k in kids]
    classes = ("c\n1", "c\r1\t", "z" + LONG)
    tree = Tree(tuple(nodes))
    return validate(Model(feats, Target("classification", "t\n*/", classes), (tree, tree),
                          (0.0, 0.0, 0.0), aggregation="mean", dtype=dtype))
