"""CART surrogate splits (rpart's missing-value handling) for the CART learner.

:class:`SurrogateSplitFinder` wraps the CART split finder
(:class:`~rulegen.learn.splits.builder.NumericSplitFinder` or
:class:`~rulegen.learn.splits.categorical.CartSplitFinder`) and changes only what happens with
missing values (``CART*(missing="surrogate")``):

* **Primary split.** A feature's candidate splits are scored on the node's rows where that
  feature is present, and the improvement is scaled by the present share of the node's
  weight: ``W_present / W_total * (I_present - W_L/W_present * I_L - W_R/W_present * I_R)``
  (rpart computes the gain on the non-missing rows in absolute terms, which is the same
  thing). Features without a missing value at the node are searched exactly as with
  ``missing="learned"``, so a node (and a whole tree) without missing training values is
  split identically in both modes; only its missing rule differs. The best improvement
  wins; on ties the earlier of: complete numeric features, numeric features with missing
  values (visiting order), categorical features.
* **Surrogates.** For every other feature the split that best reproduces the primary
  split's directions, on the rows where the primary feature is present: for a numeric
  feature the best threshold in either direction ("x <= t goes left" or "goes right"), for
  a categorical one the best subset (each category goes where most of its weight goes).
  ``agreement`` is the weighted share of rows (primary and surrogate present) it sends
  the same way. A surrogate is kept only if it beats the majority rule on those rows, i.e.
  sends more weight the right way than sending all of them to the default child does.
  Kept surrogates are ranked by weight sent the right way (rpart's default
  ``surrogatestyle = 0``: a feature often missing ranks lower), ties by feature index, and
  at most ``max_surrogates`` are kept.
* **Default child** (rpart ``usesurrogate = 2``): the child taking more weight of the rows
  with the primary feature present, ties to the right child. (A node with no missing
  training value keeps the learned mode's choice: the child with more rows, ties right.)
* **Training rows** missing the primary feature are routed exactly as the IR's
  ``Surrogates`` rule routes them at prediction: the first surrogate whose feature is
  present decides, else the default child. Unseen and node-absent categories of a
  categorical surrogate count as "not in the set", which is the default child's side.
"""

from __future__ import annotations

import numpy as np

from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    NumericTest,
    Surrogate,
    Surrogates,
)
from rulegen.learn.splits.builder import _BLOCK, NodeWork, Partition, float32_test


class SurrogateSplitFinder:
    """``missing="surrogate"``: see the module docstring. ``base`` is a fresh CART split
    finder; it keeps its data, criterion and random generator."""

    def __init__(self, base, max_surrogates: int = 5):
        self.base = base
        self.max_surrogates = int(max_surrogates)
        self.categorical = dict(getattr(base, "categorical", {}))
        n_rows = base.XT.shape[1]
        self._toward = (np.zeros(n_rows), np.zeros(n_rows))  # scratch, indexed by row id

    def root(self, rows) -> NodeWork:
        return self.base.root(rows)

    def summarize(self, node: NodeWork):
        return self.base.summarize(node)

    # -- the primary split -----------------------------------------------------------

    def find_split(self, node: NodeWork) -> Partition | None:
        b = self.base
        if not b._missing_counts(node.rows).any():
            part = b.find_split(node)
            if part is None:
                return None
            left = np.isin(node.rows, part.children[0].rows)
            present = np.ones(len(node.rows), dtype=bool)
            return self._finish(node, part.test, part.unseen, present, left,
                                part.missing.child, part.children, part.improvement)
        found = self._primary(node)
        if found is None:
            return None
        improvement, f, present, left_p, rule = found
        rows = node.rows
        w = b.w[rows[present]]
        w_left = float(w[left_p].sum())
        default = 0 if w_left > float(w.sum()) - w_left else 1
        if not isinstance(rule, np.ndarray):
            test, unseen = float32_test(f, rule), None
        else:
            codes = rule
            in_set = np.zeros(self.categorical[f], dtype=bool)
            in_set[codes] = True
            seen = np.zeros_like(in_set)
            seen[b.XT[f, rows[present]].astype(np.intp)] = True
            if default == 0:
                in_set |= ~seen  # categories absent here go with the default child
            test = CategoricalTest(f, tuple(int(c) for c in np.flatnonzero(in_set)))
            unseen = default
        return self._finish(node, test, unseen, present, left_p, default, None, improvement)

    def _primary(self, node: NodeWork):
        """The best split scored on present rows: (improvement, feature, present mask,
        left mask over the present rows, threshold or array of the codes going left)."""
        b = self.base
        rows = node.rows
        nm, lo, hi, feats = b.candidates(node)
        drawn = getattr(b, "_drawn", np.zeros(0, dtype=np.intp))
        if hasattr(b, "_drawn"):
            b._drawn = np.zeros(0, dtype=np.intp)
        best = None

        def offer(improvement, f, present, left_p, rule):
            nonlocal best
            if best is None or improvement > best[0]:
                best = (improvement, f, present, left_p, rule)

        complete = feats[nm[feats] == 0]
        if complete.size:
            found = b.best_numeric(node, complete, nm, lo, hi)
            if found is not None:
                _, f, threshold, _ = found
                left = b.XT[f, rows].astype(np.float64) <= threshold
                all_rows = np.ones(len(rows), dtype=bool)
                offer(self._gain(node, all_rows, left), f, all_rows, left, threshold)
        zeros = np.zeros_like(nm)
        for f in feats[nm[feats] > 0]:
            f = int(f)
            sub, present = self._present_node(node, f, int(nm[f]))
            if sub is None:
                continue
            found = b.best_numeric(sub, np.array([f]), zeros, lo, hi)
            if found is not None:
                left = b.XT[f, sub.rows].astype(np.float64) <= found[2]
                offer(self._gain(node, present, left, sub), f, present, left, found[2])
        for f in drawn:
            f = int(f)
            if nm[f] == 0:
                sub, present = node, np.ones(len(rows), dtype=bool)
            else:
                sub, present = self._present_node(node, f, int(nm[f]))
                if sub is None:
                    continue
            found = b._best_categorical(sub, f)
            if found is not None:
                codes = np.asarray(found[2], dtype=np.intp)
                in_set = np.zeros(self.categorical[f], dtype=bool)
                in_set[codes] = True
                left = in_set[b.XT[f, sub.rows].astype(np.intp)]
                offer(self._gain(node, present, left, sub), f, present, left, codes)
        return best

    def _present_node(self, node: NodeWork, f: int, nm_f: int):
        """A stand-in node of the rows where feature f is present (None if under 2)."""
        b = self.base
        x = b.XT[f, node.rows]
        present = ~np.isnan(x)
        prows = node.rows[present]
        if len(prows) < 2:
            return None, present
        state = None
        if node.state[0] is not None:
            order = node.state[0][f, :len(node.rows) - nm_f]  # missing values sort last
            state = np.broadcast_to(order, (b.XT.shape[0], len(order)))  # only row f is read
        stats = b.criterion.stats(b.T, b.w, prows)
        return NodeWork(prows, b.w[prows], stats.impurity, node.depth, (state, stats)), present

    def _gain(self, node, present, left, sub=None) -> float:
        """rpart's improvement: the gain on the present rows, scaled by their weight."""
        b = self.base
        prows = node.rows[present]
        st = (sub if sub is not None else node).state[1]
        st_l, st_r = b.criterion.children_stats(b.T, b.w, prows[left], prows[~left])
        w_p = st.weight
        w_r = w_p - st_l.weight
        return (w_p / b.total_weight) * (st.impurity - (w_r / w_p * st_r.impurity)
                                         - (st_l.weight / w_p * st_l.impurity))

    # -- surrogates and routing ------------------------------------------------------------

    def _finish(self, node, test, unseen, present, left_p, default, children, improvement):
        b = self.base
        rows = node.rows
        f = test.feature
        prows = rows[present]
        surrogates = self.surrogates(node, f, prows, left_p, default) if self.max_surrogates else []
        missing = (Surrogates(tuple(surrogates), default) if surrogates
                   else DefaultChild(default))
        if children is None:
            left = np.zeros(len(rows), dtype=bool)
            left[present] = left_p
            absent = np.flatnonzero(~present)
            left[absent] = route(b.XT, rows[absent], surrogates, default) == 0
            children, _ = b._split_rows(node, left)
        return Partition(test, missing, children, improvement, unseen=unseen)

    def surrogates(self, node: NodeWork, primary: int, prows, left_p, default) -> list[Surrogate]:
        """The kept surrogates of a primary split, best first (see the module docstring)."""
        b = self.base
        p = b.XT.shape[0]
        toward = self._toward  # weight each present row sends to child 0 / child 1
        toward[0][prows] = np.where(left_p, b.w[prows], 0.0)
        toward[1][prows] = np.where(left_p, 0.0, b.w[prows])
        try:
            found = []
            numeric = np.array([g for g in range(p) if g != primary and g not in self.categorical],
                               dtype=np.intp)
            if numeric.size:
                order = node.state[0]
                if order is None:
                    order = node.rows[np.argsort(b.XT[:, node.rows], axis=1, kind="stable")]
                step = max(1, _BLOCK // len(node.rows))
                for s in range(0, numeric.size, step):
                    found += self._numeric_block(numeric[s:s + step], order, default)
            for g in sorted(self.categorical):
                if g != primary:
                    cand = self._categorical(g, prows, default)
                    if cand is not None:
                        found.append(cand)
        finally:
            toward[0][prows] = 0.0
            toward[1][prows] = 0.0
        found.sort(key=lambda c: (-c[0], c[1]))  # most weight agreeing first, then feature
        return [sur for _, _, sur in found[:self.max_surrogates]]

    def _numeric_block(self, G, order, default) -> list:
        b = self.base
        S = order[G]
        V = b.XT[G[:, None], S]
        nn = (~np.isnan(V)).sum(axis=1)  # present values come first
        A = np.cumsum(self._toward[0][S], axis=1)
        B = np.cumsum(self._toward[1][S], axis=1)
        r = np.arange(len(G))
        last = np.maximum(nn - 1, 0)
        a_tot, b_tot = A[r, last], B[r, last]
        # split after position i (1-based): x <= t for the first i rows
        agree_0 = A[:, :-1] + (b_tot[:, None] - B[:, :-1])  # "x <= t" goes to child 0
        agree_1 = B[:, :-1] + (a_tot[:, None] - A[:, :-1])  # "x <= t" goes to child 1
        i = np.arange(1, S.shape[1])
        valid = (i[None, :] < nn[:, None]) & (V[:, 1:] > V[:, :-1])
        agree = np.where(valid, np.maximum(agree_0, agree_1), -np.inf)
        pos = agree.argmax(axis=1)
        best = agree[r, pos]
        base_rule = a_tot if default == 0 else b_tot
        out = []
        for k in np.flatnonzero(best > base_rule):
            j = int(pos[k])
            lo, hi = float(V[k, j]), float(V[k, j + 1])
            child = 0 if agree_0[k, j] >= agree_1[k, j] else 1
            test = float32_test(int(G[k]), lo / 2.0 + hi / 2.0)
            out.append((float(best[k]), int(G[k]),
                        Surrogate(test, child, float(best[k] / (a_tot[k] + b_tot[k])))))
        return out

    def _categorical(self, g, prows, default):
        b = self.base
        x = b.XT[g, prows]
        ok = ~np.isnan(x)
        rows = prows[ok]
        if rows.size == 0:
            return None
        codes = x[ok].astype(np.intp)
        m = self.categorical[g]
        to_default = np.bincount(codes, self._toward[default][rows], minlength=m)
        to_other = np.bincount(codes, self._toward[1 - default][rows], minlength=m)
        in_set = to_other > to_default  # those categories go to the other child
        agree = float(np.where(in_set, to_other, to_default).sum())
        if not in_set.any() or not agree > float(to_default.sum()):
            return None
        total = float(to_default.sum() + to_other.sum())
        test = CategoricalTest(g, tuple(int(c) for c in np.flatnonzero(in_set)))
        return agree, g, Surrogate(test, 1 - default, agree / total)


def route(XT, rows, surrogates, default) -> np.ndarray:
    """Child index of rows missing the primary feature, exactly as the IR's ``Surrogates``
    rule sends them (XT: features x rows, categorical values as codes; a numeric test is
    compared in its own dtype, so CART's float32 and QUEST's float64 tests both route here)."""
    child = np.full(len(rows), default, dtype=np.intp)
    pending = np.ones(len(rows), dtype=bool)
    for sur in surrogates:
        idx = np.flatnonzero(pending)
        if idx.size == 0:
            break
        t = sur.test
        x = XT[t.feature, rows[idx]]
        here = ~np.isnan(x)
        if isinstance(t, NumericTest):
            if t.dtype == "float32":
                x, thr = x.astype(np.float32), np.float32(t.threshold)
            else:
                x, thr = x.astype(np.float64), t.threshold
            holds = x <= thr if t.op == "<=" else x < thr
        else:
            holds = np.isin(np.where(here, x, -1).astype(np.intp), np.asarray(t.categories))
        decided = idx[here]
        child[decided] = np.where(holds[here], sur.child_if_true, 1 - sur.child_if_true)
        pending[decided] = False
    return child
