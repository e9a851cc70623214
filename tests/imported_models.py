"""The imported models every language's test runs (Go, Java, JavaScript, Rust): one table,
trained once per test session (small data, one thread).

Each importer's own test holds its models to the library bit for bit; here they only need to
match the evaluator, through each language's real toolchain. A library that is not installed
leaves its models out, and ``missing(cases, lib)`` lets each language's test say so (CI installs
every library, and there a skip is a failure).
"""

from __future__ import annotations

import functools
import importlib.util
import warnings

import irfixtures
import numpy as np

from rulegen.ir.nodes import Model

# library (as imported) -> the cases it gives
LIBRARIES: dict[str, tuple[str, ...]] = {
    "xgboost": ("xgb_binary", "xgb_softprob", "xgb_poisson", "xgb_categorical"),
    "lightgbm": ("lgbm_binary", "lgbm_multiclass_categorical"),
    "sklearn": ("sklearn_forest", "sklearn_gbdt", "sklearn_hgb"),
    "catboost": ("catboost_binary", "catboost_multiclass_categorical"),
}


def _data(seed: int, n: int = 300, p: int = 5, nan: float = 0.1):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p))
    X[rng.random(X.shape) < nan] = np.nan
    return rng, X, np.nan_to_num(X)


def _xgboost() -> dict[str, tuple[Model, np.ndarray]]:
    import xgboost as xgb

    from rulegen.importers import xgboost as xi

    def train(params, X, y, rounds, **dmatrix):
        params = {"nthread": 1, "seed": 0, "eta": 0.3, **params}
        return xi.from_booster(xgb.train(params, xgb.DMatrix(X, y, nthread=1, **dmatrix), rounds))

    _rng, X, X0 = _data(7)
    y = (X0[:, 0] + X0[:, 1] * X0[:, 2] + np.isnan(X[:, 3]) > 0.3).astype(int)
    y4 = np.digitize(X0[:, 0] + 0.5 * X0[:, 1], [-0.8, 0.0, 0.8])
    out = {"xgb_binary": (train({"objective": "binary:logistic", "max_depth": 4}, X, y, 40), X),
           "xgb_softprob": (train({"objective": "multi:softprob", "num_class": 4, "max_depth": 3},
                                  X, y4, 15), X),
           "xgb_poisson": (train({"objective": "count:poisson", "max_depth": 4}, X,
                                 np.abs(X0[:, 0]) * 3, 20), X)}
    rng = np.random.default_rng(5)
    n = 600
    Xc = np.c_[rng.normal(size=n), rng.integers(0, 8, n), rng.integers(0, 3, n), rng.normal(size=n)]
    Xc[rng.random(n) < 0.1, 1] = np.nan
    yc = (np.isin(Xc[:, 1], [1, 4, 6]) ^ (Xc[:, 2] == 2) | (Xc[:, 0] > 1)).astype(int)
    out["xgb_categorical"] = (train({"objective": "binary:logistic", "max_depth": 4,
                                     "max_cat_to_onehot": 1}, Xc, yc, 25,
                                    feature_types=["q", "c", "c", "q"], enable_categorical=True), Xc)
    return out


def _lightgbm() -> dict[str, tuple[Model, np.ndarray]]:
    import lightgbm as lgb

    from rulegen.importers import lightgbm as li

    quiet = {"verbose": -1, "num_threads": 1, "seed": 0, "deterministic": True}
    rng, X, X0 = _data(11, n=400)
    y = (X0[:, 0] + X0[:, 3] / 3 + rng.normal(size=len(X)) * 0.3 > 0.5).astype(int)
    out = {"lgbm_binary": (li.from_booster(lgb.train({"objective": "binary", "num_leaves": 15,
                                                       **quiet}, lgb.Dataset(X, y), 30)), X)}
    Xc = X.copy()
    Xc[:, 4] = rng.integers(0, 12, len(Xc))
    labels = np.array(["ant", "bee", "cat", "dog"])[(np.isin(Xc[:, 4], [1, 4, 9]) * 2 + (X0[:, 0] > 0)) % 4]
    est = lgb.LGBMClassifier(n_estimators=25, num_leaves=8, min_child_samples=5,
                             min_data_per_group=5, cat_smooth=1, n_jobs=1, verbose=-1, random_state=0)
    est.fit(Xc, labels, categorical_feature=[4])
    out["lgbm_multiclass_categorical"] = (li.from_booster(est), Xc)
    return out


def _sklearn() -> dict[str, tuple[Model, np.ndarray]]:
    from sklearn import ensemble

    from rulegen.importers.sklearn import from_sklearn

    _rng, X, X0 = _data(3)
    y = (X0[:, 0] + X0[:, 1] * X0[:, 2] > 0.2).astype(int)
    y3 = np.digitize(X0[:, 0] + 0.5 * X0[:, 1], [-0.5, 0.5])
    rf = ensemble.RandomForestClassifier(n_estimators=10, max_depth=6, random_state=0, n_jobs=1)
    gb = ensemble.GradientBoostingClassifier(n_estimators=15, max_depth=3, random_state=0)
    hgb = ensemble.HistGradientBoostingClassifier(max_iter=20, random_state=0)
    return {"sklearn_forest": (from_sklearn(rf.fit(X0, y3)), X0),
            "sklearn_gbdt": (from_sklearn(gb.fit(X0, y)), X0),
            "sklearn_hgb": (from_sklearn(hgb.fit(X, y)), X)}


def _catboost() -> dict[str, tuple[Model, np.ndarray]]:
    import catboost

    from rulegen.importers import catboost as ci

    quiet = {"thread_count": 1, "random_seed": 0, "allow_writing_files": False, "verbose": 0}
    rng, X, X0 = _data(13)
    y = (X0[:, 0] - X0[:, 2] + np.isnan(X[:, 1]) > 0.2).astype(int)
    binary = catboost.CatBoostClassifier(iterations=30, depth=4, nan_mode="Max", **quiet).fit(X, y)
    words = np.array(["ant", "bee", "cat", "dog", "é x"])
    picked = words[rng.integers(0, len(words), len(X))]
    data = np.empty((len(X), 3), dtype=object)
    data[:, 0], data[:, 1], data[:, 2] = X0[:, 0], picked, X0[:, 3]
    y3 = np.isin(picked, ["bee", "dog"]).astype(int) + (X0[:, 0] > 0.5)
    pool = catboost.Pool(data, y3, cat_features=[1])
    multi = catboost.CatBoostClassifier(iterations=20, depth=3, one_hot_max_size=10,
                                        loss_function="MultiClass", **quiet).fit(pool)
    model = ci.from_catboost(multi, pool=pool)
    labels = list(model.features[1].categories)
    codes = np.array([labels.index(w) if w in labels else np.nan for w in picked])
    return {"catboost_binary": (ci.from_catboost(binary), X),
            "catboost_multiclass_categorical": (model, np.c_[X0[:, 0], codes, X0[:, 3]])}


_TRAIN = {"xgboost": _xgboost, "lightgbm": _lightgbm, "sklearn": _sklearn, "catboost": _catboost}


def installed(lib: str) -> bool:
    return importlib.util.find_spec(lib) is not None


@functools.lru_cache(maxsize=None)
def imported_models(limit: int = 1500) -> dict[str, tuple[Model, np.ndarray]]:
    """name -> (model, rows): each model's training rows, then probes at every threshold
    (and one float step either side), NaN, +-inf and unseen categories, at most ``limit``."""
    out: dict[str, tuple[Model, np.ndarray]] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lib, train in _TRAIN.items():
            if installed(lib):
                out.update(train())
    return {name: (model, np.vstack([X, irfixtures.probe_rows(model, limit=limit)]))
            for name, (model, X) in out.items()}


def missing(cases, lib: str) -> list[str]:
    """The models of an installed ``lib`` that ``cases`` lacks (empty when all are there)."""
    return [name for name in LIBRARIES[lib] if name not in cases]
