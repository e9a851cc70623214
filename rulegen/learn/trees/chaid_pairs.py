"""The pair search of CHAID's merge step in memory linear in the number of groups.

The merge step repeatedly takes the allowed pair of groups with the largest p-value,
the first one in row-major order of the (r, r) table of pairs on ties (p = 1 ties
are common when categories hold one or two rows). Keeping that table costs r^2
floats (800 MB at r = 10,000) and a copy of it per merge. :class:`PairSearch` keeps
instead, for every row k, its maximum over the allowed columns l > k and the first
column reaching it; the first row whose maximum is the largest then gives the same
pair as a row-major argmax of the table (NaN counts as the largest, as for
``np.argmax``).

A group is known by its *slot*, its smallest category. Groups are kept in order of
their smallest category and a merge keeps the smaller slot, so slot order is table
order and nothing needs renumbering.

Equal p-values bit for bit: a pair's p-value is a function of its two stats rows
(``pair_p`` works element by element; a batch's size does not change a value), and
of their order: the table entry of (k, l) was last written either when the whole
table was computed, as (k, l), or when k or l last changed, with the changed group
first. ``stamp`` records when each group last changed, so a recomputed row uses the
order the table would hold. Groups whose stats are equal bit for bit share a *type*
and each distinct pair of types is computed once per batch.
"""

from __future__ import annotations

import numpy as np

_BUDGET = 1 << 22  # floats in one (groups x categories) indicator block
_ROWS = 64  # blocks of whole multiples of this many rows: BLAS kernels treat rows in fours or
# eights, and a row's sum comes out the same only at the same place in such a block


def group_stats(tables, cat, groups, budget=None):
    """Stats of each group of categories: ``tables.combine`` on the (groups, categories)
    indicator matrix, in blocks of rows when that matrix is large (the same sums: each
    block is a whole number of kernel row blocks, tested in tests/test_chaid_speed.py)."""
    c = len(cat)
    step = max(_ROWS, ((budget or _BUDGET) // max(c, 1)) // _ROWS * _ROWS)
    out = []
    for s in range(0, max(len(groups), 1), step):
        part = groups[s:s + step]
        M = np.zeros((len(part), c))
        for i, g in enumerate(part):
            M[i, g] = 1.0
        out.append(tables.combine(cat, M))
    return np.concatenate(out) if len(out) > 1 else out[0]


def pair_p_distinct(tables, a, B):
    """``tables.pair_p`` of (a, each row of B), testing each distinct row (bytes) once."""
    B = np.ascontiguousarray(B, dtype=np.float64)
    keys = B.view(np.dtype((np.void, 8 * B.shape[1]))).ravel()
    _, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    A = np.repeat(np.asarray(a, dtype=np.float64)[None], len(first), axis=0)
    return tables.pair_p(A, B[first])[inv.ravel()]


def _beats(q, at, best, best_at):
    """Whether value q at column ``at`` wins an argmax against ``best`` at ``best_at``."""
    qn, bn = np.isnan(q), np.isnan(best)
    first = at < best_at
    return (qn & ~bn) | (qn & bn & first) | (~qn & ~bn & ((q > best) | ((q == best) & first)))


class PairSearch:
    """The row-wise best pairs of the groups in ``slots`` (sorted smallest categories),
    with stats ``G`` (one row per slot); ``ordered``: only neighbours may merge."""

    def __init__(self, tables, ordered, n_slots, slots, G):
        self.tables, self.ordered = tables, ordered
        self.best_p = np.full(n_slots, -1.0)  # -1: no group here, or no allowed partner
        self.best_col = np.full(n_slots, -1, dtype=np.intp)
        self.type = np.full(n_slots, -1, dtype=np.intp)
        self.stamp = np.zeros(n_slots, dtype=np.int64)
        self.ids: dict[bytes, int] = {}
        self.rows = np.empty((16, G.shape[1]))
        self.clock = 0
        self.tried = self.distinct = 0  # pairs sorted for repeats, and the distinct ones
        self.reset(slots, G)

    def _type(self, row) -> int:
        key = row.tobytes()
        t = self.ids.get(key)
        if t is None:
            t = self.ids[key] = len(self.ids)
            if t == len(self.rows):
                self.rows = np.concatenate([self.rows, np.empty_like(self.rows)])
            self.rows[t] = row
        return t

    def reset(self, slots, G):
        """A fresh table (the start, or after a re-split): every pair in (k, l) order."""
        self.slots = sl = np.asarray(slots, dtype=np.intp)
        self.best_p[:] = -1.0
        self.best_col[:] = -1
        self.type[:] = -1
        self.stamp[:] = 0
        self.type[sl] = [self._type(row) for row in G]
        types, r = self.type[sl], len(sl)
        if self.ordered:
            self.best_p[sl[:-1]] = self._pairs(types[:-1], types[1:])
            self.best_col[sl[:-1]] = sl[1:]
            return
        # rows in blocks of a (rows, r) table, -inf where no pair (l <= k)
        step = max(1, _BUDGET // 4 // max(r, 1))
        for a in range(0, r - 1, step):
            b = min(a + step, r - 1)
            pos = np.arange(r)
            allowed = pos[None, :] > np.arange(a, b)[:, None]
            first = np.broadcast_to(types[a:b, None], allowed.shape)[allowed]
            second = np.broadcast_to(types[None, :], allowed.shape)[allowed]
            P = np.full(allowed.shape, -np.inf)
            P[allowed] = self._pairs(first, second)
            at = np.argmax(P, axis=1)
            self.best_p[sl[a:b]] = P[np.arange(b - a), at]
            self.best_col[sl[a:b]] = sl[at]

    def _pairs(self, first, second):
        """p-values of the type pairs (first[n], second[n]), each distinct pair tested once."""
        n = len(self.ids)
        u, inv = np.unique(first * n + second, return_inverse=True)
        return self.tables.pair_p(self.rows[u // n], self.rows[u % n])[inv]

    def _against(self, t, others, t_first):
        """p-values of (type t, each of ``others``), or the reverse order; one test per
        distinct type."""
        # sorting out repeats pays when groups repeat (few rows a category); with a numeric
        # target most stats differ, so stop trying once they have mostly been distinct
        dedup = self.distinct < 0.5 * self.tried or self.tried < 4096
        u, inv = np.unique(others, return_inverse=True) if dedup else (others, None)
        if dedup:
            self.tried += len(others)
            self.distinct += len(u)
        A = np.repeat(self.rows[[t]], len(u), axis=0)
        B = self.rows[u]
        p = self.tables.pair_p(A, B) if t_first else self.tables.pair_p(B, A)
        return p if inv is None else p[inv]

    def _row(self, k, pos):
        """Recompute row k (at position ``pos`` of the slots) from scratch."""
        cand = self.slots[pos + 1:pos + 2] if self.ordered else self.slots[pos + 1:]
        if cand.size == 0:
            self.best_p[k], self.best_col[k] = -1.0, -1
            return
        t, ct = self.type[k], self.type[cand]
        rev = self.stamp[cand] > self.stamp[k]  # l changed after k: the table holds (l, k)
        p = np.empty(len(cand))
        if not rev.all():
            p[~rev] = self._against(t, ct[~rev], True)
        if rev.any():
            p[rev] = self._against(t, ct[rev], False)
        a = int(np.argmax(p))
        self.best_p[k], self.best_col[k] = p[a], cand[a]

    def best(self) -> tuple[int, int, float]:
        """(i, j, p) of the pair a row-major argmax of the table would pick."""
        i = int(np.argmax(self.best_p))
        return i, int(self.best_col[i]), float(self.best_p[i])

    def merge(self, i, j, row):
        """Group j (> i) joined group i, whose stats are now ``row``."""
        self.slots = np.delete(self.slots, np.searchsorted(self.slots, j))
        self.best_p[j], self.best_col[j], self.type[j] = -1.0, -1, -1
        self.clock += 1
        self.stamp[i] = self.clock
        self.type[i] = t = self._type(row)
        pos = int(np.searchsorted(self.slots, i))
        if self.ordered:  # only the neighbour before i and i itself had a pair with i or j
            self._row(i, pos)
            if pos > 0:
                self._row(int(self.slots[pos - 1]), pos - 1)
            return
        before = self.slots[:pos]
        col = self.best_col[before]
        stale = (col == i) | (col == j)  # their maximum may have gone: recompute
        keep = before[~stale]
        if keep.size:  # only entry (k, i) changed, written with i first
            q = self._against(t, self.type[keep], True)
            win = _beats(q, i, self.best_p[keep], self.best_col[keep])
            self.best_p[keep[win]], self.best_col[keep[win]] = q[win], i
        self._row(i, pos)
        for p_, k in zip(np.flatnonzero(stale).tolist(), before[stale].tolist()):
            self._row(k, p_)
        end = int(np.searchsorted(self.slots, j))
        between = self.slots[pos + 1:end]
        for off in np.flatnonzero(self.best_col[between] == j).tolist():
            self._row(int(between[off]), pos + 1 + off)
