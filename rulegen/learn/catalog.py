"""The learners the CLI offers: name, what each is for, its estimators and what each
parameter means. ``rulegen fit --help`` prints this table; a test checks that every
parameter of every estimator is described here, so help and code cannot drift.

Classes are named as ``module:Class`` strings and imported on first use, so that
``rulegen --help`` does not pay for scipy.
"""

from __future__ import annotations

import importlib
import textwrap
from dataclasses import dataclass, field


@dataclass(frozen=True)
class LearnerInfo:
    name: str
    title: str
    classifier: str | None  # "module:Class"
    regressor: str | None
    params: dict[str, str] = field(default_factory=dict)  # name -> one-line meaning

    def estimator_class(self, task: str):
        path = self.classifier if task == "classification" else self.regressor
        if path is None:
            return None
        module, name = path.split(":")
        return getattr(importlib.import_module(module), name)

    @property
    def tasks(self) -> tuple[str, ...]:
        return tuple(t for t, p in (("classification", self.classifier),
                                    ("regression", self.regressor)) if p)


_CART_PARAMS = {
    "criterion": "split quality: gini, entropy, log_loss (classes); squared_error, "
                 "absolute_error (regression)",
    "splitter": "best, or random (a random threshold per candidate feature)",
    "max_depth": "deepest level a node may have (None: grow until pure)",
    "min_samples_split": "fewest rows (or a fraction of all rows) a node needs to be split",
    "min_samples_leaf": "fewest rows (or a fraction) each child must keep",
    "min_weight_fraction_leaf": "smallest share of the total weight in a leaf",
    "max_features": "features tried per split: None (all), sqrt, log2, a count or a fraction",
    "random_state": "seed for the feature order (ties) and the random splitter",
    "max_leaf_nodes": "grow best-first up to this many leaves (None: depth-first, no limit)",
    "min_impurity_decrease": "split only if the weighted impurity falls at least this much",
    "ccp_alpha": "cost-complexity pruning after growth (0: none), or cv to choose it by "
                 "cross-validation",
    "missing": "learned (missing values go to a learned side) or surrogate (rpart's "
               "surrogate splits)",
    "max_surrogates": "surrogate splits kept per split with missing=surrogate",
    "cv_folds": "folds for ccp_alpha=cv",
    "one_se_rule": "with ccp_alpha=cv, the smallest tree within one standard error of the best",
}

CATALOG: dict[str, LearnerInfo] = {
    "cart": LearnerInfo(
        "cart", "CART: binary splits, categorical subsets, scikit-learn's semantics",
        "rulegen.learn.trees.cart:CARTClassifier", "rulegen.learn.trees.cart:CARTRegressor",
        _CART_PARAMS),
    "random_forest": LearnerInfo(
        "random_forest", "random forest: bootstrap samples, Forest-RI or Forest-RC (oblique) "
        "splits, soft or hard voting",
        "rulegen.learn.ensembles.forest:RandomForestClassifier",
        "rulegen.learn.ensembles.forest:RandomForestRegressor",
        {**_CART_PARAMS,
         "n_estimators": "number of trees",
         "max_features": "inputs drawn per node: None (all), sqrt, log2, log2+1, a count or a "
                         "fraction",
         "bootstrap": "grow each tree on a bootstrap sample (false: on all rows)",
         "max_samples": "bootstrap sample size: None (n rows), a count or a fraction",
         "oob_score": "compute the out-of-bag score (oob_score_ in the API)",
         "splitter": "best, or random (Extra-Trees with bootstrap=false)",
         "split": "axis (Forest-RI) or oblique (Forest-RC: random linear combinations)",
         "n_combined": "Forest-RC: inputs per combination (L)",
         "n_combinations": "Forest-RC: combinations tried per node (None: as max_features gives)",
         "standardize": "Forest-RC: divide the random coefficients by each input's standard "
                        "deviation",
         "random_state": "seed for bootstrap samples, input draws and ties",
         "voting": "soft (average the trees' probabilities) or hard (majority vote)",
         "n_jobs": "threads growing trees: None (1), a count, -1 every core (the same model)"}),
    "adaboost": LearnerInfo(
        "adaboost", "AdaBoost (SAMME): weighted votes of shallow CART trees",
        "rulegen.learn.ensembles.adaboost:AdaBoostClassifier", None,
        {**_CART_PARAMS,
         "n_estimators": "most boosting rounds (fewer after an early stop)",
         "learning_rate": "multiplies every tree's weight (its vote and the reweighting)",
         "max_depth": "depth of each tree (1: stumps)"}),
    "gradient_boosting": LearnerInfo(
        "gradient_boosting", "gradient boosting (Friedman): CART trees on negative gradients, "
        "per-leaf line search; squared, absolute, Huber, log-loss, softmax",
        "rulegen.learn.ensembles.gbdt:GradientBoostingClassifier",
        "rulegen.learn.ensembles.gbdt:GradientBoostingRegressor",
        {**_CART_PARAMS,
         "loss": "squared_error, absolute_error or huber (regression); log_loss (classes)",
         "alpha": "huber: the quantile of |residual| that sets delta, re-estimated each round",
         "learning_rate": "shrinkage of every tree",
         "n_estimators": "boosting rounds (one tree per class per round past two classes)",
         "subsample": "share of rows drawn without replacement for each round's trees",
         "max_depth": "deepest level of each tree",
         "validation_fraction": "share of rows held out for early stopping",
         "n_iter_no_change": "stop after this many rounds without a better validation loss "
                             "(None: no early stopping)",
         "tol": "the improvement of the validation loss that counts as better",
         "random_state": "seed for subsampling, the validation split and ties"}),
    "xgboost_style": LearnerInfo(
        "xgboost_style", "second-order (XGBoost-style) boosting: gradients and hessians, "
        "lambda, gamma, learned missing direction, exact or quantile splits; exact splits "
        "2-4x faster with numba installed (pip install 'rulegen[fast]')",
        "rulegen.learn.ensembles.xgb:XGBoostStyleClassifier",
        "rulegen.learn.ensembles.xgb:XGBoostStyleRegressor",
        {"n_estimators": "boosting rounds",
         "learning_rate": "eta: shrinkage folded into the leaves",
         "max_depth": "deepest level of each tree (None: no limit)",
         "reg_lambda": "L2 penalty on leaf weights: a leaf is -G/(H+lambda)",
         "gamma": "a split must gain at least this (the notes' 1/2[...] - gamma; XGBoost's "
                  "gamma is twice this)",
         "min_child_weight": "smallest hessian sum a child may keep",
         "subsample": "share of rows drawn for each round",
         "colsample_bytree": "share of features drawn per tree",
         "colsample_bylevel": "share of the tree's features drawn per level",
         "tree_method": "exact (every distinct value), approx (hessian-weighted quantile "
                        "bins, redrawn per tree) or hist (sample-weighted quantile bins made "
                        "once, histogram subtraction)",
         "max_bin": "most bins per feature with tree_method=approx or hist",
         "base_score": "starting prediction (None: estimated as XGBoost 3 does; a probability "
                       "for two classes)",
         "validation_fraction": "share of rows held out for early stopping",
         "early_stopping_rounds": "stop after this many rounds without a better validation "
                                  "loss, keeping the best (None: no early stopping)",
         "random_state": "seed for all sampling",
         "n_jobs": "threads scanning features (compiled kernels only): None (1), a count, -1 "
                   "every core (the same model)"}),
    "lightgbm_style": LearnerInfo(
        "lightgbm_style", "histogram (LightGBM-style) boosting: LightGBM's bins, scans and "
        "trees (bit for bit on numeric data), leaf-wise growth, histogram subtraction, "
        "gradient-sorted categorical splits; 2-5x faster "
        "with numba installed (pip install 'rulegen[fast]'; the first fit after installing "
        "compiles for ~15 s; RULEGEN_JIT=0 turns it off)",
        "rulegen.learn.ensembles.lgbm:LightGBMStyleClassifier",
        "rulegen.learn.ensembles.lgbm:LightGBMStyleRegressor",
        {"n_estimators": "boosting rounds (one tree per class per round past two classes)",
         "learning_rate": "shrinkage, folded into the leaf values",
         "num_leaves": "leaves per tree, grown leaf-wise (largest gain first)",
         "max_depth": "deepest level a leaf may have (None: no limit)",
         "min_child_samples": "fewest training rows in a leaf (classification: estimated "
                              "from hessians, as LightGBM)",
         "min_child_weight": "smallest hessian sum in a leaf",
         "reg_lambda": "L2 penalty on leaf values",
         "min_split_gain": "a split must gain more than this (LightGBM's gain scale)",
         "max_bin": "most bins per numeric feature (the missing bin included)",
         "subsample": "share of rows drawn every round",
         "colsample_bytree": "share of features drawn for every tree",
         "cat_smooth": "categories are sorted by G/(H+cat_smooth)",
         "cat_l2": "extra L2 penalty for categorical splits",
         "max_cat_threshold": "most categories on the set side of a split",
         "min_data_per_group": "fewest rows per group of categories between candidate cuts",
         "max_cat_to_onehot": "features with fewer categories than this split one category "
                              "against the rest (LightGBM counts a NaN bin too)",
         "min_data_in_bin": "fewest sample rows in a numeric bin (LightGBM's min_data_in_bin)",
         "validation_fraction": "share of rows held out for early stopping",
         "early_stopping_rounds": "stop after this many rounds without a better validation "
                                  "loss, keeping the best (None: no early stopping)",
         "random_state": "seed for sampling, the validation split and the bin sample",
         "n_jobs": "threads growing a round's class trees (three or more classes, compiled "
                   "kernels only): None (1), a count, -1 every core (the same model)"}),
    "id3": LearnerInfo(
        "id3", "ID3: information gain, one branch per category, categorical features only",
        "rulegen.learn.trees.id3:ID3Classifier", None,
        {"epsilon": "stop when the best information gain is below this (bits)",
         "max_depth": "deepest level a node may have (None: until features or gain run out)",
         "min_samples_split": "fewest rows a node needs to be split"}),
    "c45": LearnerInfo(
        "c45", "C4.5 (release 8) / Weka J48: gain ratio, multiway categorical splits, "
        "fractional missing values, pessimistic pruning",
        "rulegen.learn.trees.c45:C45Classifier", None,
        {"confidence": "pruning confidence CF in (0, 0.5]; smaller prunes more (J48 -C)",
         "min_instances": "a split needs two branches with at least this weight (J48 -M)",
         "pruning": "pessimistic error pruning (false: J48 -U)",
         "subtree_raising": "a split's largest branch may replace it (false: J48 -S)",
         "collapse": "before pruning, drop splits that do not lower the training error",
         "error_estimate": "c45 (C4.5 R8's deviate table) or weka (J48's exact quantile)",
         "mdl_correction": "charge numeric splits log2(number of cuts)/N bits"}),
    "chaid": LearnerInfo(
        "chaid", "CHAID: chi-square / F tests, merged categories, Bonferroni-adjusted "
        "multiway splits",
        "rulegen.learn.trees.chaid:CHAIDClassifier", "rulegen.learn.trees.chaid:CHAIDRegressor",
        {"criterion": "pearson or likelihood_ratio chi-square (classification)",
         "alpha_merge": "merge the two most similar categories while their p-value exceeds this",
         "alpha_split": "split only if the Bonferroni-adjusted p-value is at most this",
         "alpha_resplit": "re-split a merged group of 3+ categories whose best binary split has p at most "
                          "this (None: never, as SPSS)",
         "bonferroni": "adjust p-values for the number of ways the categories could merge",
         "max_depth": "deepest level a node may have",
         "min_parent_size": "fewest rows a node needs to be split",
         "min_child_size": "fewest rows in each child; smaller groups merge with a neighbour",
         "max_bins": "numeric features are cut into at most this many quantile bins"}),
    "quest": LearnerInfo(
        "quest", "QUEST: unbiased variable selection (F / chi-square / Levene), "
        "discriminant split points, category subsets",
        "rulegen.learn.trees.quest:QUESTClassifier", None,
        {"alpha": "significance level of the variable-selection tests (Bonferroni-adjusted "
                  "per node)",
         "max_depth": "deepest level a node may have (None: no limit)",
         "min_samples_split": "fewest rows a node needs to be split",
         "min_samples_leaf": "fewest rows each child must keep (the cut moves, or the next "
                             "variable is tried)",
         "max_surrogates": "surrogate splits kept per node for missing values (0: larger "
                           "child only)",
         "ccp_alpha": _CART_PARAMS["ccp_alpha"],
         "cv_folds": _CART_PARAMS["cv_folds"],
         "one_se_rule": _CART_PARAMS["one_se_rule"],
         "random_state": "seed for the folds of ccp_alpha=cv"}),
}

# single trees first, then ensembles: the order of `fit --help` (any other entry follows)
_ORDER = ("cart", "c45", "id3", "chaid", "quest", "random_forest", "adaboost",
          "gradient_boosting", "xgboost_style", "lightgbm_style")
CATALOG = {**{name: CATALOG[name] for name in _ORDER if name in CATALOG}, **CATALOG}

def parameters(info: LearnerInfo) -> dict[str, dict[str, object]]:
    """Every parameter of the learner's estimators: name -> {task: default}."""
    out: dict[str, dict[str, object]] = {}
    for task in info.tasks:
        for key, value in info.estimator_class(task)().get_params().items():
            out.setdefault(key, {})[task] = value
    return out


def describe(width: int = 100) -> list[str]:
    """Help lines: each learner, its tasks, and its parameters with defaults."""
    lines = []
    for info in CATALOG.values():
        lines += textwrap.wrap(f"{info.name}: {info.title} ({', '.join(info.tasks)})", width,
                               subsequent_indent="      ")
        for key, defaults in parameters(info).items():
            values = list(defaults.values())
            if len(set(map(repr, values))) == 1:
                shown = f"{key}={values[0]!r}"
            else:
                shown = f"{key}=" + " / ".join(f"{v!r} ({t})" for t, v in defaults.items())
            text = f"{shown}: {info.params.get(key, '')}"
            lines += textwrap.wrap(text, width, initial_indent="  ", subsequent_indent="      ")
    return lines
