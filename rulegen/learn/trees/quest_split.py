"""QUEST's statistics (Loh & Shih 1997): the tests that pick a variable, the class
grouping, the quadratic-discriminant split point and the discriminant coordinate of
a categorical variable. Plain functions on numpy arrays; no tree, no IR.

Conventions: ``V`` is (q, n) float64, one row per variable, NaN for missing; ``y`` holds
class codes 0..k-1 for the n rows. A p-value of NaN means "this variable cannot be
tested here" (constant, fewer than two classes among its present rows, no degrees of
freedom); selection never picks such a variable.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def anova_pvalues(V: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """One-way ANOVA F test of each row of V across the classes, on its present values."""
    V = np.asarray(V, dtype=np.float64)
    present = ~np.isnan(V)
    Y = np.zeros((V.shape[1], k))
    Y[np.arange(V.shape[1]), y] = 1.0
    cnt = present @ Y  # (q, k) rows per class with the variable present
    n = cnt.sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        # centre first: sums of squares of centred values lose no digits to a large mean
        centre = np.where(n > 0, np.nansum(V, axis=1) / np.maximum(n, 1), 0.0)
        D = np.where(present, V - centre[:, None], 0.0)
        means = (D @ Y) / cnt  # NaN for an absent class, never used below
        grand = D.sum(axis=1) / n
        within = np.where(present, D - np.nan_to_num(means)[:, y], 0.0)
        ssw = np.einsum("ij,ij->i", within, within)
        ssb = np.nansum(cnt * (np.nan_to_num(means) - grand[:, None]) ** 2, axis=1)
        groups = (cnt > 0).sum(axis=1)
        df1, df2 = groups - 1, n - groups
        f = (ssb / df1) / (ssw / df2)
        p = stats.f.sf(f, df1, df2)
    lo = np.where(present, V, np.inf).min(axis=1)
    hi = np.where(present, V, -np.inf).max(axis=1)
    testable = (groups >= 2) & (df2 >= 1) & (hi > lo)
    # no spread within classes but different class means: a perfect separator
    p = np.where(ssw == 0, 0.0, p)
    return np.where(testable, p, np.nan)


def levene_pvalues(V: np.ndarray, y: np.ndarray, k: int) -> np.ndarray:
    """Levene's test of equal class variances: the ANOVA F test of |x - class mean|."""
    V = np.asarray(V, dtype=np.float64)
    present = ~np.isnan(V)
    Y = np.zeros((V.shape[1], k))
    Y[np.arange(V.shape[1]), y] = 1.0
    with np.errstate(invalid="ignore", divide="ignore"):
        means = (np.where(present, V, 0.0) @ Y) / (present @ Y)
    Z = np.where(present, np.abs(V - np.nan_to_num(means)[:, y]), np.nan)
    return anova_pvalues(Z, y, k)


def contingency(codes: np.ndarray, y: np.ndarray, n_codes: int, k: int) -> np.ndarray:
    """Counts (n_codes, k) of category code by class (codes are whole numbers)."""
    flat = codes.astype(np.intp) * k + y
    return np.bincount(flat, minlength=n_codes * k).reshape(n_codes, k).astype(np.float64)


def chi2_pvalue(table: np.ndarray) -> float:
    """Pearson's chi-square test of independence (no continuity correction) on the
    rows and columns of ``table`` that are not all zero."""
    t = table[table.sum(axis=1) > 0][:, table.sum(axis=0) > 0]
    r, c = t.shape
    if r < 2 or c < 2:
        return math.nan
    expected = np.outer(t.sum(axis=1), t.sum(axis=0)) / t.sum()
    chi2 = float(((t - expected) ** 2 / expected).sum())
    return float(stats.chi2.sf(chi2, (r - 1) * (c - 1)))


def select_variable(p_first: np.ndarray, levene, n_numeric: int,
                    alpha: float) -> tuple[int, str] | None:
    """QUEST's choice: the smallest first-stage p-value if it is below alpha/K (K
    variables); else the smallest Levene p-value if below alpha/(K + K1) (K1 numeric
    variables); else the smallest first-stage p-value anyway. Ties: lowest index.
    ``levene()`` gives the Levene p-values (NaN for categorical variables); it is only
    called when the first stage fails. Returns (index, "first" | "levene" | "fallback")."""
    if np.isnan(p_first).all():
        return None
    K = len(p_first)
    best = int(np.nanargmin(p_first))
    if p_first[best] < alpha / K:
        return best, "first"
    p_levene = levene()
    if not np.isnan(p_levene).all():
        second = int(np.nanargmin(p_levene))
        if p_levene[second] < alpha / (K + n_numeric):
            return second, "levene"
    return best, "fallback"


def superclasses(means: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Two superclasses of classes (True = superclass A) from their means on the chosen
    variable: 2-means clustering of the class means started at the two extreme means;
    A is the cluster with the lower centre. If every mean is equal, A is the largest
    class alone (ties: the lowest class)."""
    m = np.asarray(means, dtype=np.float64)
    if m.max() == m.min():
        a = np.zeros(len(m), dtype=bool)
        a[int(np.argmax(counts))] = True
        return a
    lo, hi = m.min(), m.max()
    in_a = None
    for _ in range(len(m) + 2):  # 1-D Lloyd iterations settle in at most J steps
        new = np.abs(m - lo) <= np.abs(m - hi)
        if in_a is not None and np.array_equal(new, in_a):
            break
        in_a = new
        lo, hi = m[in_a].mean(), m[~in_a].mean()
    return in_a


def qda_split(mean_a: float, var_a: float, p_a: float,
              mean_b: float, var_b: float, p_b: float) -> float:
    """The QDA split point between two normals N(mean, var) with priors p: the root of
    p_a N_a(x) = p_b N_b(x) closer to mean_a. Equal variances give the single root
    (the midpoint of the means when p_a == p_b); no real root gives the midpoint of the
    means. Both variances must be > 0 (see ``split_point`` for the degenerate cases)."""
    shift = mean_a  # solve around mean_a: the coefficients then lose no digits
    mb = mean_b - shift
    if var_a == var_b:
        if mb == 0:
            return math.nan
        return shift + mb / 2 + var_a * math.log(p_a / p_b) / mb
    # log p_a - log s_a - x^2/(2 v_a) = log p_b - log s_b - (x - mb)^2/(2 v_b), times 2 v_a v_b
    a = var_a - var_b
    b = -2.0 * mb * var_a
    c = mb * mb * var_a + var_a * var_b * math.log((p_a * p_a * var_b) / (p_b * p_b * var_a))
    disc = b * b - 4.0 * a * c
    if disc < 0:
        return shift + mb / 2
    q = -0.5 * (b + math.copysign(math.sqrt(disc), b))  # roots q/a and c/q, no cancellation
    roots = sorted([q / a, c / q] if q != 0 else [0.0])
    return shift + min(roots, key=abs)  # closest to mean_a (now 0); ties: the lower


def split_point(xa: np.ndarray, xb: np.ndarray) -> float:
    """The QUEST split point on one variable for the rows of superclass A and B (both
    non-empty): rows with ``x <= d`` go left. A superclass with no spread is the limit of
    the QDA root as its variance goes to 0, a cut right beside its value v on the side
    of the other mean; it is placed midway between v and the next data value there (the
    training rows route the same, and new values in that gap split evenly)."""
    na, nb = len(xa), len(xb)
    ma, mb = float(xa.mean()), float(xb.mean())
    flat_a, flat_b = xa.min() == xa.max(), xb.min() == xb.max()
    if flat_a and flat_b:
        return (float(xa[0]) + float(xb[0])) / 2 if xa[0] != xb[0] else math.nan
    if flat_a or flat_b:
        v, other = (float(xa[0]), xb) if flat_a else (float(xb[0]), xa)
        if v < other.mean():
            nxt = float(other[other > v].min())
            d = v / 2 + nxt / 2
            return d if v <= d < nxt else v
        prev = float(other[other < v].max())
        d = prev / 2 + v / 2
        return d if prev <= d < v else prev
    va, vb = float(xa.var(ddof=1)), float(xb.var(ddof=1))
    return qda_split(ma, va, na / (na + nb), mb, vb, nb / (na + nb))


def crimcoord(table: np.ndarray) -> np.ndarray:
    """The largest discriminant coordinate of a dummy-coded categorical variable, one
    value per row of ``table`` (category by class counts, every row non-empty): the
    direction a maximising a'Ba / a'Ta, B and T the between-class and total scatter of
    the dummy vectors. T is singular (dummies sum to 1), so the problem is solved in the
    span of T's positive eigenvectors. Sign: the largest |value| is positive."""
    n_c = table.sum(axis=1)
    n_j = table.sum(axis=0)
    total = n_c.sum()
    T = np.diag(n_c) - np.outer(n_c, n_c) / total
    keep = n_j > 0
    B = (table[:, keep] / n_j[keep]) @ table[:, keep].T - np.outer(n_c, n_c) / total
    d, Q = np.linalg.eigh(T)
    pos = d > d.max() * 1e-10
    W = Q[:, pos] / np.sqrt(d[pos])
    M = W.T @ B @ W
    ev, U = np.linalg.eigh((M + M.T) / 2)
    a = W @ U[:, -1]
    a -= (n_c @ a) / total  # centred: the coordinate's weighted mean is 0
    if ev[-1] <= 1e-12:  # a squared canonical correlation: no class differences to show
        return np.zeros(len(n_c))
    big = int(np.argmax(np.abs(a)))
    return -a if a[big] < 0 else a
