"""Selection bias of QUEST against exhaustive search (CART), the experiment of Loh & Shih (1997).

The class is independent of every feature, so an unbiased learner picks each feature for the
root split equally often. Features: a categorical one with 2 levels, one with 20 levels and,
with --numeric, a standard normal one. QUEST picks by p-values; CART takes the best Gini split,
and a 20-level feature offers 2^19 - 1 subsets to fit noise with, so it wins far more often.

    python benchmarks/quest_bias.py                   # 1000 replications, n = 500, 2 classes
    python benchmarks/quest_bias.py --reps 200 --numeric --classes 3
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rulegen.ir.nodes import Split
from rulegen.learn import CARTClassifier
from rulegen.learn.trees.quest import QUESTClassifier


def noise_data(rng, n: int, n_classes: int, numeric: bool):
    """(X, y, names): y independent of X; categorical codes are uniform over their levels."""
    cols = [rng.integers(0, 2, n), rng.integers(0, 20, n)]
    names = ["cat2", "cat20"]
    if numeric:
        cols.append(rng.normal(size=n))
        names.append("num")
    return np.column_stack(cols).astype(np.float64), rng.integers(0, n_classes, n), names


def root_feature(model) -> str:
    root = model.trees[0].nodes[0]
    return model.features[root.test.feature].name if isinstance(root, Split) else "no split"


def simulate(reps: int, n: int = 500, n_classes: int = 2, numeric: bool = False, seed: int = 0):
    """{learner: {root feature: count}} over ``reps`` noise data sets."""
    rng = np.random.default_rng(seed)
    counts = {"quest": {}, "cart": {}}
    for rep in range(reps):
        X, y, names = noise_data(rng, n, n_classes, numeric)
        # the 20-level codes are 0..19; declare all 20 even if a level happens to be absent
        cats = {1: list(range(20))}
        quest = QUESTClassifier(max_depth=1, max_surrogates=0).fit(
            X, y, feature_names=names, categorical_features=[0, 1], categories=cats)
        cart = CARTClassifier(max_depth=1, random_state=rep).fit(
            X, y, feature_names=names, categorical_features=[0, 1], categories=cats)
        for name, est in (("quest", quest), ("cart", cart)):
            key = root_feature(est.model_)
            counts[name][key] = counts[name].get(key, 0) + 1
    return counts


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=1000, help="noise data sets (default 1000)")
    ap.add_argument("--n", type=int, default=500, help="rows per data set (default 500)")
    ap.add_argument("--classes", type=int, default=2, help="number of classes (default 2)")
    ap.add_argument("--numeric", action="store_true", help="add a standard normal feature")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args(argv)
    counts = simulate(args.reps, args.n, args.classes, args.numeric, args.seed)
    names = ["cat2", "cat20"] + (["num"] if args.numeric else []) + ["no split"]
    print(f"root split variable over {args.reps} data sets, n = {args.n}, "
          f"{args.classes} classes, y independent of X (share of data sets)")
    print(f"| learner | {' | '.join(names)} |")
    print("|---" * (len(names) + 1) + "|")
    for learner, c in counts.items():
        cells = [f"{c.get(k, 0) / args.reps:.3f}" for k in names]
        print(f"| {learner} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
