"""Import a fitted scikit-learn ``Pipeline``: column preprocessing, then a tree model, as one IR
model over the *raw* columns.

    model = from_sklearn(Pipeline([("pre", ColumnTransformer([...])), ("model", tree_model)]))

Preprocessing steps may be a ``ColumnTransformer`` of ``OneHotEncoder``, ``OrdinalEncoder``,
``SimpleImputer``, ``Pipeline`` chains of those, ``"passthrough"`` and ``"drop"`` (also as
``remainder``), or those transformers alone. Everything else is refused, naming the step.

How (exactly, not by approximation):

1. The final estimator is imported as it stands by :func:`rulegen.importers.sklearn.from_sklearn`
   over its own input columns (the "model columns"); that IR is exact for the estimator.
2. Each model column comes from one raw column (every allowed transformer works column by
   column); the structure of the steps says which one, and which raw columns are categorical
   (an encoder sits on their path, or the model has categories of its own for them, as
   HistGradientBoosting does) with which category values (``categories_``, the model's labels).
3. The preprocessing itself is run (``pipeline[:-1].transform``) on probe rows: every known
   category of each categorical column, NaN, ``None`` and a value no encoder knows; for a
   numeric column a few numbers and NaN. That gives, per raw value, the model column's value
   as the model receives it (imputed statistics in the dtype the imputer writes them).
4. Each split on model column ``k`` is evaluated (by the reference evaluator's own routing)
   on those values: a categorical column gets a ``CategoricalTest`` listing the categories
   that go left, with the missing (NaN / None) and unseen routes from their probes; a numeric
   column keeps its test and takes the route of its imputed value as the missing direction
   (a missing-indicator column becomes "present vs missing").

Rows the pipeline itself rejects (an unknown category with ``handle_unknown="error"``, NaN
for an estimator that refuses it) still get an answer from the IR: unseen categories go
right ("not in the set"), missing values the tree's own missing way.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass, field, replace

import numpy as np

from rulegen.errors import RulegenError
from rulegen.importers.sklearn import label, unsupported
from rulegen.ir.evaluate import child_index
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    Model,
    NumericTest,
    Split,
)
from rulegen.ir.validate import validate

ALLOWED = ("ColumnTransformer, OneHotEncoder, OrdinalEncoder, SimpleImputer, a Pipeline of "
           "those, 'passthrough' and 'drop'")
UNSEEN = "\x00rulegen: a category no encoder knows\x00"
NUMBER_PROBES = (-1.5, 0.0, 2.75)  # present numbers: a value column returns them unchanged


@dataclass
class ColumnMap:
    """What a transformer does to its ``n_in`` input columns, column by column."""

    src: list[int]  # for each output column, the input column it is computed from
    value: list[bool]  # the output is the input itself (missing values aside)
    categories: dict[int, list] = field(default_factory=dict)  # input -> known categories


def _is_missing(v) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _identity(n: int) -> ColumnMap:
    return ColumnMap(list(range(n)), [True] * n)


def _compose(a: ColumnMap, b: ColumnMap, where: str) -> ColumnMap:
    """``b`` applied to the outputs of ``a``."""
    cats = {i: list(c) for i, c in a.categories.items()}
    for i, known in b.categories.items():
        if not a.value[i]:
            raise unsupported(f"an encoder over an encoded or indicator column in {where} "
                              "(its categories are not values of a raw column)")
        _merge(cats, a.src[i], known)
    return ColumnMap([a.src[s] for s in b.src], [a.value[s] and b.value[k]
                                                 for k, s in enumerate(b.src)], cats)


def _merge(cats: dict, i: int, known) -> None:
    have = cats.setdefault(i, [])
    have.extend(c for c in known if c not in have)


def _step_map(step, n_in: int, where: str) -> ColumnMap:
    """The column map of one preprocessing step (recursing only into nested steps)."""
    from sklearn.compose import ColumnTransformer
    from sklearn.impute import SimpleImputer
    from sklearn.pipeline import Pipeline
    from sklearn.preprocessing import FunctionTransformer, OneHotEncoder, OrdinalEncoder

    if step is None or (isinstance(step, str) and step == "passthrough"):
        return _identity(n_in)
    if isinstance(step, FunctionTransformer) and step.func is None:
        return _identity(n_in)  # how a fitted ColumnTransformer stores "passthrough"
    if isinstance(step, Pipeline):
        out = _identity(n_in)
        for name, inner in step.steps:
            out = _compose(out, _step_map(inner, len(out.src), f"step {name!r} of {where}"),
                           where)
        return out
    if isinstance(step, ColumnTransformer):
        return _column_transformer(step, where)
    if isinstance(step, SimpleImputer):
        return _imputer(step, n_in, where)
    if isinstance(step, (OrdinalEncoder, OneHotEncoder)):
        # None stays in the list (it can be a category of its own); NaN never is one here
        known = [[c for c in cats.tolist() if c is None or not _is_missing(c)]
                 for cats in step.categories_]
        if isinstance(step, OrdinalEncoder):
            widths = [1] * n_in
        else:
            widths = list(getattr(step, "_n_features_outs", []))
            if len(widths) != n_in:
                raise unsupported(f"this OneHotEncoder ({where}): its output columns per "
                                  "input column could not be read")
        src = [i for i, w in enumerate(widths) for _ in range(w)]
        return ColumnMap(src, [False] * len(src), dict(enumerate(known)))
    raise unsupported(f"the scikit-learn Pipeline step {type(step).__name__} ({where}); "
                      f"supported before the model: {ALLOWED}")


def _imputer(imp, n_in: int, where: str) -> ColumnMap:
    mv = imp.missing_values
    if not (mv is None or (isinstance(mv, float) and math.isnan(mv))):
        raise unsupported(f"SimpleImputer(missing_values={mv!r}) ({where}): only NaN or None "
                          "can be read as missing; another marker is a present value the "
                          "imputer replaces")
    stats = np.asarray(imp.statistics_, dtype=object)
    keep = [i for i in range(n_in) if imp.keep_empty_features or not _is_missing(
        float(stats[i]) if isinstance(stats[i], (float, np.floating)) else stats[i])]
    src, value = list(keep), [True] * len(keep)
    if imp.add_indicator:
        feats = [int(i) for i in imp.indicator_.features_]
        src += feats
        value += [False] * len(feats)
    return ColumnMap(src, value)


def _column_transformer(ct, where: str) -> ColumnMap:
    n_out = max((s.stop for s in ct.output_indices_.values()), default=0)
    src, value, cats = [-1] * n_out, [False] * n_out, {}
    inputs = getattr(ct, "_transformer_to_input_indices", None)
    if inputs is None:
        raise unsupported("this ColumnTransformer: its input columns per transformer "
                          "could not be read")
    for name, trans, _cols in ct.transformers_:
        out = ct.output_indices_.get(name, slice(0, 0))
        if (isinstance(trans, str) and trans == "drop") or out.stop == out.start:
            continue
        idx = [int(i) for i in inputs[name]]
        sub = _step_map(trans, len(idx), f"transformer {name!r} of the ColumnTransformer")
        if len(sub.src) != out.stop - out.start:
            raise unsupported(f"transformer {name!r} of the ColumnTransformer: "
                              f"{out.stop - out.start} output columns, expected {len(sub.src)}")
        for k, s in enumerate(sub.src):
            src[out.start + k], value[out.start + k] = idx[s], sub.value[k]
        for i, known in sub.categories.items():
            _merge(cats, idx[i], known)
    if -1 in src:
        raise unsupported("a ColumnTransformer whose output columns could not all be traced "
                          "to an input column")
    return ColumnMap(src, value, cats)


# --- probing the preprocessing ------------------------------------------------------------


@dataclass
class Probes:
    """The model columns' values for probe values of each raw column."""

    known: dict[int, np.ndarray]  # raw column -> (n_values, n_model_columns) for its values
    special: dict[int, dict[str, np.ndarray | None]]  # "nan" / "none" / "unseen" -> row or None


def _probe(pre, n_raw: int, names, columns: dict[int, list], categorical, n_model: int) -> Probes:
    """Runs ``pre.transform`` on probe rows. ``columns`` maps each used raw column to its
    present probe values (its categories, or NUMBER_PROBES for the other columns)."""
    import pandas as pd

    base = [columns[j][0] if j in columns else 0.0 for j in range(n_raw)]
    text = {j for j, vals in columns.items() if any(isinstance(v, str) for v in vals)}

    def frame(rows):
        cols = list(zip(*rows)) if rows else [[] for _ in range(n_raw)]
        data = {j: pd.Series(list(cols[j]), dtype=object if j in text else float)
                for j in range(n_raw)}
        df = pd.DataFrame(data)
        if names is None:
            return df.to_numpy(dtype=object if text else float)
        df.columns = list(names)
        return df

    def run(rows):
        with warnings.catch_warnings():  # "unknown categories" is what the probes are for
            warnings.simplefilter("ignore")
            out = pre.transform(frame(rows))
        out = out.toarray() if hasattr(out, "toarray") else out
        try:
            out = np.asarray(out, dtype=np.float64)
        except (TypeError, ValueError):  # text, for HistGradientBoosting's own categories
            out = np.asarray(out, dtype=object)
        if out.shape != (len(rows), n_model):
            raise unsupported(f"a preprocessing with {out.shape[1]} output columns where the "
                              f"model reads {n_model}")
        return out

    rows, spans = [], {}
    for j, vals in sorted(columns.items()):
        spans[j] = (len(rows), len(rows) + len(vals))
        for v in vals:
            row = list(base)
            row[j] = v
            rows.append(row)
    out = run(rows)
    known = {j: out[a:b] for j, (a, b) in spans.items()}
    special = {}
    for j, vals in columns.items():
        tries = {"nan": math.nan}
        if j in text:
            tries["none"] = None
            tries["unseen"] = UNSEEN
        elif j in categorical:  # numbers as categories
            tries["unseen"] = max(vals) + 1.5
        special[j] = {}
        for key, v in tries.items():
            row = list(base)
            row[j] = v
            try:
                special[j][key] = run([row])[0]
            except (ValueError, TypeError):  # the pipeline rejects this value: no route to copy
                special[j][key] = None
    return Probes(known, special)


# --- translating the splits ---------------------------------------------------------------


def _route(split: Split, features, values) -> np.ndarray:
    """The child each model-column value takes at ``split`` (the evaluator's routing)."""
    f = split.test.feature
    if features[f].kind == "categorical":  # HistGradientBoosting's categories: value -> code
        index = {c: float(i) for i, c in enumerate(features[f].categories)}
        x = np.array([_code(v, index) for v in values], dtype=np.float64)
    else:
        try:
            x = np.asarray(values, dtype=np.float64)
        except (TypeError, ValueError):
            raise unsupported("a preprocessing whose output is not numeric where the model "
                              "reads numbers (a text column reaching the model)") from None
    X = np.full((len(x), len(features)), np.nan)
    X[:, f] = x
    child, missing = child_index(split, X, np.arange(len(x)), features)
    child[missing] = split.missing.child
    return child


def _code(v, index) -> float:
    """A model-column value as the code of one of the model's category labels (-1: unseen)."""
    if _is_missing(v) or (isinstance(v, (float, np.floating)) and math.isnan(v)):
        return math.nan
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v) == int(v):
        v = int(v)
    return index.get(v.item() if isinstance(v, np.generic) else v, -1.0)


class _Translator:
    def __init__(self, inner: Model, cmap: ColumnMap, probes: Probes, raw_names, new_index,
                 categorical):
        self.inner, self.cmap, self.probes = inner, cmap, probes
        self.names, self.new, self.categorical = raw_names, new_index, categorical
        self.none_seen = {j for j in categorical if None in cmap.categories[j]}

    def split(self, node: Split) -> Split:
        k = node.test.feature
        j = self.cmap.src[k]
        feats = self.inner.features
        if not isinstance(node.missing, DefaultChild):  # pragma: no cover - sklearn never
            raise unsupported("a split without a default child in a pipeline")
        special = self.probes.special[j]
        if j in self.categorical and self.cmap.value[k] and feats[k].kind != "categorical":
            # unseen numbers would go by their value, not one way: no unseen route says that
            raise unsupported(f"column {self.names[j]!r}, both encoded as categories and read "
                              "as a number by the model")
        if j in self.categorical:
            known = self.probes.known[j][:, k]
            extra = [special[key][k] for key in ("nan", "none", "unseen")
                     if special.get(key) is not None]
            routes = _route(node, feats, np.concatenate([known, extra]))
            n = len(known)
            tail = dict(zip([key for key in ("nan", "none", "unseen")
                             if special.get(key) is not None], routes[n:].tolist()))
            # missing is NaN's route (pandas' text columns hold NaN); None only counts where
            # an encoder learnt it as a category, and then it must agree with NaN
            missing = [tail[key] for key in ("nan", "none") if key in tail]
            if j in self.none_seen and len(set(missing)) > 1:
                raise unsupported(f"column {self.names[j]!r}, where None and NaN take different "
                                  "branches (an object column holding both; the IR has one "
                                  "missing value: convert None to NaN before fitting)")
            miss = missing[0] if missing else node.missing.child
            codes = tuple(int(c) for c in np.flatnonzero(routes[:n] == 0))
            return replace(node, test=CategoricalTest(self.new[j], codes),
                           missing=DefaultChild(int(miss)), unseen=tail.get("unseen"))
        if feats[k].kind == "categorical":
            raise unsupported(f"a categorical split of the model on column {self.names[j]!r}, "
                              "whose values are not those of a raw column (a missing indicator)")
        present = self.probes.known[j][:, k]
        nan_value = special["nan"][k] if special["nan"] is not None else math.nan
        if np.array_equal(present, NUMBER_PROBES):  # the value itself, imputed when missing
            miss = _route(node, feats, [nan_value])[0]
            return replace(node, test=replace(node.test, feature=self.new[j]),
                           missing=DefaultChild(int(miss)))
        if len(set(present.tolist())) == 1:  # a missing indicator: present vs missing
            here, miss = _route(node, feats, [present[0], nan_value]).tolist()
            test = NumericTest(self.new[j], "<=", math.inf) if here == 0 else \
                NumericTest(self.new[j], "<", -math.inf)
            return replace(node, test=test, missing=DefaultChild(int(miss)))
        raise unsupported(f"column {self.names[j]!r}: the preprocessing changes its present "
                          "values")  # pragma: no cover - allowed steps never do


# --- entry point --------------------------------------------------------------------------


def from_pipeline(pipe, feature_names=None) -> Model:
    """The IR of a fitted ``Pipeline`` over its raw input columns (see the module docstring)."""
    from sklearn.pipeline import Pipeline

    from rulegen.importers.sklearn import from_sklearn

    steps = list(pipe.steps)
    final_name, final = steps[-1]
    if final is None or (isinstance(final, str) and final == "passthrough"):
        raise unsupported("a Pipeline without a final model")
    if isinstance(final, Pipeline):  # its IR would read only the columns it uses
        raise unsupported("a Pipeline whose last step is a Pipeline (flatten it into one)")
    pre_steps = [(n, s) for n, s in steps[:-1] if not (s is None or s == "passthrough")]
    if not pre_steps:
        return from_sklearn(final, feature_names)
    for name, step in pre_steps:
        _check_fitted(step, name)
    first = pre_steps[0][1]
    n_raw = int(first.n_features_in_)
    cmap = _identity(n_raw)
    for name, step in pre_steps:
        cmap = _compose(cmap, _step_map(step, len(cmap.src), f"Pipeline step {name!r}"),
                        f"Pipeline step {name!r}")
    n_model = len(cmap.src)
    inner = from_sklearn(final, [f"column {k}" for k in range(n_model)]) \
        if int(getattr(final, "n_features_in_", n_model)) == n_model else None
    if inner is None or len(inner.features) != n_model:
        raise RulegenError(f"the Pipeline's model {final_name!r} reads "
                           f"{final.n_features_in_} columns, its preprocessing makes {n_model}")
    fitted_names = getattr(first, "feature_names_in_", None)
    names = _raw_names(feature_names, fitted_names, n_raw)
    for k, f in enumerate(inner.features):
        if f.kind == "categorical" and cmap.value[k]:  # the model's own categories of a raw column
            _merge(cmap.categories, cmap.src[k], f.categories)
    used = sorted(set(cmap.src))
    columns = {}
    for j in used:
        if j in cmap.categories:
            known = [c for c in cmap.categories[j] if c is not None]
            if not known:
                raise unsupported(f"column {names[j]!r}, whose encoder knows no category")
            columns[j] = known
        else:
            columns[j] = list(NUMBER_PROBES)
    probes = _probe(pipe[:-1], n_raw, fitted_names, columns, set(cmap.categories), n_model)
    new = {j: i for i, j in enumerate(used)}
    features = tuple(
        Feature(names[j], "categorical", tuple(label(c, f"category of {names[j]!r}")
                                               for c in columns[j]))
        if j in cmap.categories else Feature(names[j]) for j in used)
    for f in features:
        if f.kind == "categorical" and len(set(f.categories)) != len(f.categories):
            raise unsupported(f"column {f.name!r}, whose categories coincide as labels")
    tr = _Translator(inner, cmap, probes, names, new, set(cmap.categories))
    trees = tuple(replace(t, nodes=tuple(tr.split(nd) if isinstance(nd, Split) else nd
                                         for nd in t.nodes)) for t in inner.trees)
    steps_text = ", ".join(type(s).__name__ for _n, s in pre_steps)
    prov = replace(inner.provenance, n_features=len(features))
    return validate(replace(inner, features=features, trees=trees, provenance=prov,
                            comment=f"scikit-learn Pipeline ({steps_text}) folded into the "
                                    "splits: the model reads the raw columns"))


def _raw_names(feature_names, fitted_names, n_raw: int) -> list[str]:
    if feature_names is not None:
        names = [str(x) for x in feature_names]
        if len(names) != n_raw:
            raise RulegenError(f"{len(names)} feature names given, but the Pipeline reads "
                               f"{n_raw} columns")
        return names
    if fitted_names is not None:
        return [str(x) for x in fitted_names]
    return [f"x{i}" for i in range(n_raw)]


def _check_fitted(step, name: str) -> None:
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import check_is_fitted
    try:
        check_is_fitted(step)
    except NotFittedError:
        raise RulegenError(f"the Pipeline step {name!r} ({type(step).__name__}) is not fitted "
                           "yet; call fit() before importing it") from None
