"""Random forests: bagged CART trees with random inputs (Forest-RI) or random linear
combinations of inputs (Forest-RC, oblique splits), after Breiman (2001).

Every tree is grown by the shared builder on a bootstrap sample. A row drawn c times
is one row of weight ``c * sample_weight`` (the builder needs distinct rows per node),
so ``min_samples_leaf`` and ``min_samples_split`` count distinct rows, as in
scikit-learn. The candidates per node are

* Forest-RI (``split="axis"``): ``max_features`` features drawn at random, each
  searched as in :mod:`rulegen.learn.trees.cart` (categorical features by subsets);
* Forest-RC (``split="oblique"``): ``n_combinations`` linear combinations of
  ``n_combined`` random numeric inputs, see :mod:`rulegen.learn.ensembles.oblique`.

The IR (docs/IR.md, "Ensemble conventions"): leaves are class probabilities or means;
``voting="soft"`` averages them (aggregation ``mean``), ``voting="hard"`` gives each
tree one vote for its leaf's most probable class (aggregation ``vote``, ties to the
lowest class index), and ``predict_proba`` is then the share of votes.
"""

from __future__ import annotations

import gc
import math
import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from rulegen.errors import LearnerError
from rulegen.ir import evaluate
from rulegen.ir.nodes import DefaultChild, Leaf, Split, Tree, nodes_in_bulk
from rulegen.learn import frames
from rulegen.learn.base import (
    ClassifierMixin,
    Estimator,
    RegressorMixin,
    bad,
    check_growth,
    check_progress,
    features_of,
    is_int,
    is_real,
    make_model,
    resolve_max_features,
)
from rulegen.learn.compiled import cart_kernels
from rulegen.learn.ensembles.oblique import ObliqueSplitFinder, input_scale
from rulegen.learn.importance import impurity_importances, r2
from rulegen.learn.splits.builder import (
    GrowthLimits,
    NumericSplitFinder,
    TreeBuilder,
    float32_test,
    presort,
)
from rulegen.learn.splits.categorical import CartSplitFinder
from rulegen.learn.splits.criteria import (
    CLASSIFICATION_CRITERIA,
    REGRESSION_CRITERIA,
    Gini,
    SquaredError,
)
from rulegen.learn.threads import threads as _threads

# --- parameters shared with AdaBoost ---------------------------------------------------


@dataclass(frozen=True)
class TreeSpec:
    """Checked CART parameters of the trees of an ensemble."""

    criterion: object  # a Criterion instance
    splitter: str
    max_features: int
    min_samples_leaf: int
    min_weight_fraction_leaf: float
    limits: GrowthLimits  # min_weight_leaf is filled in per tree


def tree_spec(est, n: int, p: int, criteria: dict, width: int) -> TreeSpec:
    """Check the CART parameters an ensemble estimator carries (same rules as cart.py)."""
    if est.criterion not in criteria:
        bad("criterion", est.criterion, " or ".join(map(repr, criteria)))
    if est.splitter not in ("best", "random"):
        bad("splitter", est.splitter, "'best' or 'random'")
    g = check_growth(est, n, p)
    msl = g.min_samples_leaf
    limits = GrowthLimits(max_depth=est.max_depth,
                          min_samples_split=max(g.min_samples_split, 2 * msl),
                          min_samples_leaf=msl,
                          min_impurity_decrease=float(est.min_impurity_decrease),
                          max_leaf_nodes=est.max_leaf_nodes)
    return TreeSpec(criteria[est.criterion](width), est.splitter, g.max_features, msl,
                    g.min_weight_fraction_leaf, limits)


_MISSING = {True: DefaultChild(0), False: DefaultChild(1)}  # missing left / right
_COMPILED_CRITERIA = {Gini: cart_kernels.GINI, SquaredError: cart_kernels.SQUARED}
_DRAWS = 100  # bootstrap samples a tree may draw before one holds a row of weight


# Trees x rows below which a forest (or CART, one tree) keeps the numpy finder (the same
# trees): loading numba and its cached kernels (~0.5 s) costs more than a few trees on a few
# hundred rows take.
MIN_COMPILED_WORK = 20_000


def compiled_covers(criterion, splitter: str, work: int) -> bool:
    """Whether trees of this criterion and splitter, ``work`` trees x rows in all, are worth
    asking of the compiled grower (which may still be missing: see ``TreeGrower.compiled``).
    Decided before anything is sorted or numba is loaded."""
    return (work >= MIN_COMPILED_WORK and splitter == "best"
            and type(criterion) in _COMPILED_CRITERIA)


class TreeGrower:
    """Grows CART trees on one data set under varying row weights (bootstrap counts,
    boosting weights). The transposed columns are shared by every tree's split finder."""

    def __init__(self, X32, T, spec: TreeSpec, cat_sizes: dict[int, int], oblique: dict | None = None,
                 compiled: bool = False):
        self.XT = np.ascontiguousarray(X32.T)  # X32 = XT.T is a view the finders do not copy
        self.T, self.spec, self.cat_sizes, self.oblique = T, spec, cat_sizes, oblique
        self.order = None
        if oblique is None and spec.splitter == "best":
            # every feature sorted once; each tree's root filters it instead of sorting
            # again (the sort was ~40% of a round of AdaBoost)
            self.order = presort(X32)
        crit = _COMPILED_CRITERIA.get(type(spec.criterion))
        # the compiled grower (cart_kernels) where it covers the case: the same trees
        # (asked for by the forest and by CART; AdaBoost's stumps would not repay loading numba)
        self.compiled = None
        if compiled and crit is not None and self.order is not None:
            self.compiled = cart_kernels.load()
        if self.compiled is not None:
            self.crit, self.key = crit, cart_kernels.register(spec.criterion)
            if crit == cart_kernels.GINI:
                self.T_codes, self.T_float = np.asarray(T, dtype=np.intp), np.zeros((1, 1))
            else:
                self.T_codes, self.T_float = np.zeros(1, dtype=np.intp), T
            self.width = spec.criterion.n_classes if crit == cart_kernels.GINI else T.shape[1]
            self.blas = (0, False) if crit == cart_kernels.GINI else cart_kernels.numpy_blas()
            self.tests = {}  # (feature, threshold) -> NumericTest: thresholds recur across trees
            # id(tree) -> (tree, leaf width, split features): trees whose arrays passed
            # _plain_arrays, for validate(plain=...)
            self.plain = {}

    def grow(self, w: np.ndarray, rng: np.random.Generator) -> Tree:
        spec = self.spec
        min_weight_leaf = spec.min_weight_fraction_leaf * float(w.sum())
        if self.compiled is not None and min_weight_leaf == 0 and self.oblique is None \
                and not self.cat_sizes and spec.splitter == "best":
            return self.grow_compiled(w, rng, node_values=False)[0]
        kw = {"splitter": spec.splitter, "max_features": spec.max_features,
              "min_samples_leaf": spec.min_samples_leaf, "min_weight_leaf": min_weight_leaf,
              "rng": rng}
        if self.oblique is not None:
            finder = ObliqueSplitFinder(self.XT.T, self.T, w, spec.criterion,
                                        categorical=self.cat_sizes, **self.oblique, **kw)
        elif self.cat_sizes:
            finder = CartSplitFinder(self.XT.T, self.T, w, spec.criterion,
                                     categorical=self.cat_sizes, **kw)
        else:
            finder = NumericSplitFinder(self.XT.T, self.T, w, spec.criterion, **kw)
        limits = GrowthLimits(**{**spec.limits.__dict__, "min_weight_leaf": min_weight_leaf})
        # rows of zero weight (not drawn) take no part in any node, as in scikit-learn
        root = finder.root(np.flatnonzero(w > 0), self.order)
        return TreeBuilder(finder, finder.summarize, limits).build(root)

    def grow_compiled(self, w, rng, node_values: bool = True) -> tuple[Tree, list | None]:
        """The tree (its numeric parts only: no categories, no minimum leaf weight) and, if
        ``node_values``, every node's value as a leaf (``TreeBuilder.node_values``, for
        CART's pruning)."""
        spec, lim = self.spec, self.spec.limits
        feat, thr, mleft, kids, vals, wsum, imps, count = self.compiled(
            self.crit, self.key, self.XT, self.T_codes, self.T_float, w, self.order, self.width,
            spec.max_features, spec.min_samples_leaf, 0.0,
            -1 if lim.max_depth is None else lim.max_depth, lim.min_samples_split,
            lim.min_impurity_decrease, lim.max_leaf_nodes or 0, float(w.sum()),
            *self.blas, rng)
        n = count
        feat, thr, mleft, kids, vals, ws, imps = (
            feat[:n], thr[:n], mleft[:n], kids[:n], vals[:n], wsum[:n], imps[:n])
        gini = self.crit == cart_kernels.GINI
        # _Classification.stats: value c / total (numpy divides as Python does)
        leaf_vals = vals / ws[:, None] if gini else vals
        is_split = feat >= 0
        plain = _plain_arrays(n, is_split, kids, leaf_vals, vals, ws, imps)
        li, si = np.flatnonzero(~is_split), np.flatnonzero(is_split)
        # the IR in bulk, a field at a time (the frozen classes' __init__ sets each field
        # through object.__setattr__, as long again as the rest): the same objects
        leaves = nodes_in_bulk(
            Leaf, li.size, value=list(map(tuple, leaf_vals[li].tolist())),
            samples=ws[li].tolist(), impurity=imps[li].tolist(),
            distribution=list(map(tuple, vals[li].tolist())) if gini else None)
        tests, keys = self.tests, list(zip(feat[si].tolist(), thr[si].tolist()))
        found = list(map(tests.get, keys))
        for k, test in enumerate(found):
            if test is None:
                test = tests.get(keys[k])  # a threshold may recur within the tree
                if test is None:
                    test = tests[keys[k]] = float32_test(*keys[k])
                    plain = plain and _plain_threshold(test.threshold)
                found[k] = test
        splits = nodes_in_bulk(
            Split, si.size, test=found, children=list(map(tuple, kids[si].tolist())),
            missing=list(map(_MISSING.__getitem__, mleft[si].tolist())),
            samples=ws[si].tolist(), impurity=imps[si].tolist(),
            distribution=list(map(tuple, vals[si].tolist())) if gini else None)
        nodes = [None] * n
        for i, node in zip(li.tolist(), leaves):
            nodes[i] = node
        for i, node in zip(si.tolist(), splits):
            nodes[i] = node
        tree = Tree(nodes=tuple(nodes))
        if plain:
            self.plain[id(tree)] = (tree, vals.shape[1], set(feat[si].tolist()))
        return tree, list(map(tuple, leaf_vals.tolist())) if node_values else None


def _plain_arrays(n, is_split, kids, *floats) -> bool:
    """What validate._plain_ok checks of each node, checked on the kernel's arrays at once
    (the nodes built from them are plain by construction: float fields, numeric tests in
    float32, a default child): every float finite, and every node but the root the child of
    exactly one earlier split."""
    if not all(np.isfinite(a).all() for a in floats):
        return False
    k = kids[:n][is_split]
    if not ((k > np.flatnonzero(is_split)[:, None]).all() and (k < n).all()):
        return False
    return bool((np.bincount(k.ravel(), minlength=n)[1:] == 1).all())


def _plain_threshold(t: float) -> bool:
    """validate._plain_ok's check of a float32 test's threshold."""
    return type(t) is float and not math.isnan(t) and (
        math.isinf(t) or float(np.float32(t)) == t)


# --- the forest ---------------------------------------------------------------------------

_PARAMS = ("n_estimators", "criterion", "max_depth", "min_samples_split", "min_samples_leaf",
           "min_weight_fraction_leaf", "max_features", "max_leaf_nodes", "min_impurity_decrease",
           "bootstrap", "max_samples", "oob_score", "splitter", "split", "n_combined",
           "n_combinations", "standardize", "random_state", "n_jobs")


class _BaseForest(Estimator):
    # subclasses set _params, _criteria (name -> criterion class) and _classifier

    def _check_forest(self, n: int, p: int, cat_labels: dict) -> tuple[int, dict | None]:
        ne = self.n_estimators
        if not (is_int(ne) and ne >= 1):
            bad("n_estimators", ne, "an integer >= 1")
        if not isinstance(self.bootstrap, (bool, np.bool_)):
            bad("bootstrap", self.bootstrap, "True or False")
        if not isinstance(self.oob_score, (bool, np.bool_)):
            bad("oob_score", self.oob_score, "True or False")
        if self.oob_score and not self.bootstrap:
            raise LearnerError("oob_score=True needs bootstrap=True (no row is out of bag otherwise)")
        ms = self.max_samples
        if ms is None:
            n_draw = n
        elif not self.bootstrap:
            raise LearnerError("max_samples needs bootstrap=True (it sizes the bootstrap sample)")
        elif is_int(ms) and 1 <= ms <= n:
            n_draw = int(ms)
        elif is_real(ms) and not is_int(ms) and 0.0 < ms <= 1.0:
            n_draw = max(1, round(ms * n))
        else:
            bad("max_samples", ms, f"None, an integer in 1..{n} or a fraction in (0, 1]")
        if self.split not in ("axis", "oblique"):
            bad("split", self.split, "'axis' (Forest-RI) or 'oblique' (Forest-RC)")
        if self.split == "axis":
            return n_draw, None
        if self.splitter != "best":
            raise LearnerError("split='oblique' searches the best threshold of each combination; "
                               "it needs splitter='best'")
        if not (is_int(self.n_combined) and self.n_combined >= 1):
            bad("n_combined", self.n_combined, "an integer >= 1")
        n_comb = self.n_combinations
        if n_comb is None:
            n_comb = resolve_max_features(self.max_features, p)
        elif not (is_int(n_comb) and n_comb >= 1):
            bad("n_combinations", n_comb, "None (as many as max_features gives) or an integer >= 1")
        if not isinstance(self.standardize, (bool, np.bool_)):
            bad("standardize", self.standardize, "True or False")
        return n_draw, {"n_combined": int(self.n_combined), "n_combinations": n_comb}

    def fit(self, X, y, sample_weight=None, feature_names=None, categorical_features=None,
            categories=None, progress=None):
        """Fit on ``X`` (n_samples, n_features); arguments as
        :meth:`rulegen.learn.trees.cart.CARTClassifier.fit`. ``progress(done, total)`` is
        called after each tree when given."""
        check_progress(progress)
        X32, names = self._check_X(X, feature_names)
        n, p = X32.shape
        cat_labels = self._check_categorical(X32, names, categorical_features, categories)
        n_draw, oblique = self._check_forest(n, p, cat_labels)
        n_jobs = _threads(self.n_jobs)
        if self._classifier and self.voting not in ("soft", "hard"):
            bad("voting", self.voting, "'soft' (average probabilities) or 'hard' (majority vote)")
        T, target, fitted = self._encode_y(y, n)
        w, _ = self._check_weights(sample_weight, n)
        width = len(target.classes) if self._classifier else target.n_outputs
        spec = tree_spec(self, n, p, self._criteria, width)
        X64 = None  # oblique sums use the inputs as the IR will, and so does OOB routing
        if oblique is not None or self.oob_score:
            X64 = np.asarray(frames.as_numbers(X), dtype=np.float64)
        scale = np.ones(p)
        if oblique is not None:
            scale = input_scale(X64, w, cat_labels) if self.standardize else scale
            oblique.update(X64T=np.ascontiguousarray(X64.T), scale=scale)
        features = features_of(names, cat_labels)
        grower = TreeGrower(X32, T, spec, {j: len(v) for j, v in cat_labels.items()}, oblique,
                            compiled=compiled_covers(spec.criterion, spec.splitter,
                                                     self.n_estimators * n))
        del X32  # the grower holds its own transposed copy
        self._seeds = np.random.SeedSequence(self.random_state).spawn(self.n_estimators)
        self._n_draw = n_draw if self.bootstrap else None  # None: no bootstrap
        oob = _OOB(n, width) if self.oob_score else None

        self._draws = {}  # tree -> bootstrap draws made, where more than one

        def grow(i):
            rng = np.random.default_rng(self._seeds[i])
            # a sample of only zero-weight rows has nothing to grow from: the tree draws
            # again from its own generator (so the fit stays the same for any n_jobs), a few
            # times, rather than fail at random (few weighted rows and a small max_samples)
            for draws in range(1, _DRAWS + 1):
                counts = self._counts(rng, n)
                wt = w * counts
                if (wt > 0).any():
                    break
            else:
                raise LearnerError(f"{_DRAWS} bootstrap samples of tree {i} held only rows of "
                                   "zero weight; raise max_samples or give those rows weight")
            if draws > 1:
                self._draws[i] = draws
            return counts, grower.grow(wt, rng)

        trees = []
        with _pool(n_jobs) as pool, _collector_paused():
            # threads: each tree draws from its own seed, so n_jobs cannot change a tree;
            # results come back in tree order (OOB sums and progress as with one thread)
            for i, (counts, tree) in enumerate(pool.map(grow, range(self.n_estimators))):
                trees.append(tree)
                if oob is not None:
                    oob.add(tree, X64, features, counts == 0,
                            self._classifier and self.voting == "hard")
                if progress is not None:
                    progress(i + 1, self.n_estimators)
        aggregation = "vote" if self._classifier and self.voting == "hard" else "mean"
        # n_jobs decides the time only: the model (its provenance too) is the same without it
        params = {k: v for k, v in self.get_params().items() if k != "n_jobs"}
        with _collector_paused():
            plain = {}  # trees the compiled grower built from checked arrays
            for i, tree in enumerate(trees):
                entry = grower.plain.get(id(tree)) if grower.compiled is not None else None
                if entry is not None and entry[0] is tree:
                    plain[i] = entry[1:]
            self.model_ = make_model(names, cat_labels, target, trees, "random_forest", params,
                                     n, plain=plain, aggregation=aggregation)
        self._set_fitted(fitted, names)
        self.input_scale_ = scale
        self.feature_importances_ = impurity_importances(self.model_, scale=scale)
        if oob is not None:
            self._set_oob(oob, T)
        return self

    def _counts(self, rng, n, draws=1):
        if self._n_draw is None:
            return np.ones(n, dtype=np.int64)
        for _ in range(draws):  # the last of ``draws`` samples (see fit's grow)
            counts = np.bincount(rng.integers(0, n, self._n_draw), minlength=n)
        return counts

    def sample_counts(self, i: int) -> np.ndarray:
        """How many times each training row is in tree ``i``'s bootstrap sample
        (regenerated from the seeds of the fit; all ones without bootstrap)."""
        self._fitted()
        return self._counts(np.random.default_rng(self._seeds[i]), self.model_.provenance.n_samples,
                            self._draws.get(i, 1))

    def _set_oob(self, oob, T):
        seen = oob.count > 0
        if not seen.all():
            warnings.warn(f"{int((~seen).sum())} rows were in every bootstrap sample and have no "
                          "out-of-bag prediction; the OOB score leaves them out (use more trees)",
                          stacklevel=3)
        with np.errstate(invalid="ignore", divide="ignore"):
            decision = oob.total / oob.count[:, None]
        if self._classifier:
            self.oob_decision_function_ = decision
            self.oob_score_ = float(np.mean(np.argmax(decision[seen], axis=1) == T[seen]))
        else:
            self.oob_prediction_ = decision[:, 0] if decision.shape[1] == 1 else decision
            self.oob_score_ = r2(T[seen], decision[seen])


@contextmanager
def _collector_paused():
    """Python's cyclic garbage collector off while trees are made: a forest is hundreds of
    thousands of small IR objects (no cycles among them), and each collection would walk
    all those made so far again -- a quarter of a fully grown forest's fit time. The
    collector's state is restored after (left off if it was off)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


class _Serial:
    """The pool of one thread: the trees grown in the caller's thread."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    @staticmethod
    def map(fn, items):
        return map(fn, items)


def _pool(n_jobs):
    if n_jobs == 1:
        return _Serial()
    from concurrent.futures import ThreadPoolExecutor

    return ThreadPoolExecutor(n_jobs)


class _OOB:
    """Running sums of each row's predictions by the trees it was out of bag for."""

    def __init__(self, n, width):
        self.total = np.zeros((n, width))
        self.count = np.zeros(n, dtype=np.int64)

    def add(self, tree, X64, features, out_of_bag, vote):
        rows = np.flatnonzero(out_of_bag)
        if rows.size == 0:
            return
        c = evaluate.tree_output(tree, X64[rows], features, self.total.shape[1])
        if vote:
            c = np.eye(c.shape[1])[np.argmax(c, axis=1)]
        self.total[rows] += c
        self.count[rows] += 1


class RandomForestClassifier(ClassifierMixin, _BaseForest):
    """Random forest of CART classifiers; see the module docstring."""

    _params = _PARAMS + ("voting",)
    _criteria = CLASSIFICATION_CRITERIA
    _classifier = True

    def __init__(self, n_estimators=100, criterion="gini", max_depth=None, min_samples_split=2,
                 min_samples_leaf=1, min_weight_fraction_leaf=0.0, max_features="sqrt",
                 max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=True, max_samples=None,
                 oob_score=False, splitter="best", split="axis", n_combined=3,
                 n_combinations=None, standardize=True, random_state=None, voting="soft",
                 n_jobs=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.splitter = splitter
        self.split = split
        self.n_combined = n_combined
        self.n_combinations = n_combinations
        self.standardize = standardize
        self.random_state = random_state
        self.voting = voting
        self.n_jobs = n_jobs


class RandomForestRegressor(RegressorMixin, _BaseForest):
    """Random forest of CART regressors; the prediction is the mean of the trees'."""

    _params = _PARAMS
    _criteria = REGRESSION_CRITERIA
    _classifier = False

    def __init__(self, n_estimators=100, criterion="squared_error", max_depth=None,
                 min_samples_split=2, min_samples_leaf=1, min_weight_fraction_leaf=0.0,
                 max_features=1.0, max_leaf_nodes=None, min_impurity_decrease=0.0, bootstrap=True,
                 max_samples=None, oob_score=False, splitter="best", split="axis", n_combined=3,
                 n_combinations=None, standardize=True, random_state=None, n_jobs=None):
        self.n_estimators = n_estimators
        self.criterion = criterion
        self.max_depth = max_depth
        self.min_samples_split = min_samples_split
        self.min_samples_leaf = min_samples_leaf
        self.min_weight_fraction_leaf = min_weight_fraction_leaf
        self.max_features = max_features
        self.max_leaf_nodes = max_leaf_nodes
        self.min_impurity_decrease = min_impurity_decrease
        self.bootstrap = bootstrap
        self.max_samples = max_samples
        self.oob_score = oob_score
        self.splitter = splitter
        self.split = split
        self.n_combined = n_combined
        self.n_combinations = n_combinations
        self.standardize = standardize
        self.random_state = random_state
        self.n_jobs = n_jobs
