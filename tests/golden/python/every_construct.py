"""Classifier for 'outcome', compiled by rulegen into standard-library Python.

1 tree(s), aggregation sum, link identity, accumulated in float64.
Classes: 'bad', 'good'.

Usage::

    import every_construct

    every_construct.predict(row)           # the class label
    every_construct.predict_proba(row)     # probabilities, in CLASSES order
    every_construct.predict_batch(rows)    # one prediction per row
    every_construct.predict_raw(row)       # the scores before the link
    every_construct.unseen_features(row)   # categorical features whose value is not listed

A row is a sequence of values in FEATURES order, or a mapping with every feature name
as a key. None or NaN is missing. Categorical features take their labels; any other
value is an unseen category. Results equal rulegen's reference evaluator bit for bit.

Features:
    'num' (numeric)
    'colour' (categorical: 'red', 'green', 'blue', "it's")
    'size' (categorical: 'S', 'M', 'L', 'XL')
    'w1' (numeric)
    'w2' (numeric)
    'code' (categorical: 10, 20, 30)
"""


_INF = float("inf")
_NAN = float("nan")
_UNSEEN = object()  # stands for any categorical value the model does not list
_CATEGORICAL = (1, 2, 5,)

FEATURES = [
    'num',
    'colour',
    'size',
    'w1',
    'w2',
    'code',
]
TASK = 'classification'
CLASSES = ['bad', 'good']
N_OUTPUTS = 2

_NAMES = tuple(FEATURES)
_CLASSES = tuple(CLASSES)
_LEVELS_1 = frozenset({'red', 'green', 'blue', "it's"})
_LEVELS_2 = frozenset({'S', 'M', 'L', 'XL'})
_LEVELS_5 = frozenset({10, 20, 30})


def _argmax(values):
    """Index of the first largest value (the first NaN, if any, as numpy.argmax)."""
    best = 0
    for k in range(1, len(values)):
        v = values[k]
        if v > values[best] or (v != v and values[best] == values[best]):
            best = k
    return best


def _blend(hits, width):
    """A blended tree's output: the sum over the leaves reached, in node id order, of
    path weight * leaf value (float64, starting from 0.0)."""
    hits.sort()
    out = [0.0] * width
    for _node, p, value in hits:
        for k in range(width):
            out[k] = out[k] + p * value[k]
    return out


def _number(v):
    return _NAN if v is None else float(v)


def _category(v, levels):
    """A categorical value: the label itself, NaN when missing, _UNSEEN for anything else."""
    if v is None:
        return _NAN
    try:
        if v in levels:
            return v
    except TypeError:  # unhashable: not a category
        return _UNSEEN
    return _NAN if v != v else _UNSEEN


# tree 0: 16 nodes, weight 1.0
def _tree_0(x):
    hits = []
    todo = [(_tree_0_n0, 1.0)]
    while todo:  # parts still to walk, each with its path weight
        part, p = todo.pop()
        part(x, p, hits, todo)
    c = _blend(hits, 2)
    return c


def _tree_0_n0(x, p0, hits, todo):
    # node 0: 'num' <= each of 3 bounds (compared in float32); missing -> node 4
    if x[0] <= -0.9999999701976776:
        # node 1: 'colour' by category; missing -> 2 surrogate(s), then node 6
        if x[1] == x[1]:
            k2 = 0 if x[1] in {'red', "it's"} else 1
        elif x[3] == x[3]:  # surrogate 1
            k2 = 1 if x[3] < 0.25 else 0
        elif x[2] == x[2]:  # surrogate 2
            k2 = 0 if x[2] == 'M' else 1
        else:
            k2 = 1
        if k2 == 0:
            hits.append((5, p0, (0.9, 0.1)))  # node 5
        else:
            hits.append((6, p0, (0.2, 0.8)))  # node 6
    elif x[0] <= 0.5000000298023224:
        # node 2: 'size' by category; missing -> every branch, weighted 0.5, 0.3, 0.2; unseen -> node 9
        if x[2] != x[2]:
            k2 = -1
        elif x[2] == 'S':
            k2 = 0
        elif x[2] in {'M', 'L'}:
            k2 = 1
        else:
            k2 = 2
        p1 = p0 * 0.5 if k2 < 0 else p0 if k2 == 0 else 0.0
        if p1 != 0.0:
            hits.append((7, p1, (0.6, 0.4)))  # node 7
        p1 = p0 * 0.3 if k2 < 0 else p0 if k2 == 1 else 0.0
        if p1 != 0.0:
            # node 8: 'w2' < -0.5; missing -> every branch, weighted 0.75, 0.25
            if x[4] != x[4]:
                k3 = -1
            elif x[4] < -0.5:
                k3 = 0
            else:
                k3 = 1
            p2 = p1 * 0.75 if k3 < 0 else p1 if k3 == 0 else 0.0
            if p2 != 0.0:
                hits.append((14, p2, (1.0, 0.0)))  # node 14
            p2 = p1 * 0.25 if k3 < 0 else p1 if k3 == 1 else 0.0
            if p2 != 0.0:
                hits.append((15, p2, (0.0, 1.0)))  # node 15
        p1 = p0 * 0.2 if k2 < 0 else p0 if k2 == 2 else 0.0
        if p1 != 0.0:
            hits.append((9, p1, (0.3, 0.7)))  # node 9
    elif x[0] <= 2.2500001192092896:
        # node 3: weighted sum of 'w1', 'w2' < 0.1; missing -> node 10
        if 0.0 + 0.5 * x[3] + -1.25 * x[4] < 0.1 or x[3] != x[3] or x[4] != x[4]:
            hits.append((10, p0, (0.05, 0.95)))  # node 10
        else:
            hits.append((11, p0, (0.45, 0.55)))  # node 11
    else:
        # node 4: 'code' by category; missing -> node 12; unseen -> node 12
        if x[5] == 20 or x[5] is _UNSEEN or x[5] != x[5]:
            hits.append((12, p0, (0.7, 0.3)))  # node 12
        else:
            hits.append((13, p0, (0.15, 0.85)))  # node 13


# every tree in turn, each added to the accumulators
def _raw(x):
    a0 = 0.0
    a1 = 0.0
    t = _tree_0(x)
    a0 += t[0]
    a1 += t[1]
    return [a0, a1]


def _inputs(row):
    """The row in FEATURES order: floats for numeric features (NaN when missing), labels for
    categorical ones (NaN when missing, _UNSEEN for a value the model does not list)."""
    if hasattr(row, "keys"):
        row = [row[name] for name in _NAMES]
    elif len(row) != 6:
        raise ValueError("expected 6 values in FEATURES order, got %d" % len(row))
    return [
        _number(row[0]),  # 'num'
        _category(row[1], _LEVELS_1),  # 'colour'
        _category(row[2], _LEVELS_2),  # 'size'
        _number(row[3]),  # 'w1'
        _number(row[4]),  # 'w2'
        _category(row[5], _LEVELS_5),  # 'code'
    ]


def unseen_features(row):
    """The names of the categorical features whose value in ``row`` the model does not list
    (a typo, a new category); predictions take the model's route for unseen values there."""
    x = _inputs(row)
    return [_NAMES[j] for j in _CATEGORICAL if x[j] is _UNSEEN]


def predict_raw(row):
    """The accumulated tree scores before the link (float64), one per raw output."""
    x = _inputs(row)
    return _raw(x)


def _outputs(raw):
    """The link (identity) applied to the raw scores, in float64."""
    return raw


def predict_proba(row):
    """Class probabilities, in CLASSES order."""
    x = _inputs(row)
    out = _raw(x)
    return out


def predict(row):
    """The predicted class label: the first class with the largest probability."""
    x = _inputs(row)
    out = _raw(x)
    return _CLASSES[_argmax(out)]


def predict_proba_batch(rows):
    return [predict_proba(row) for row in rows]


def predict_batch(rows):
    return [predict(row) for row in rows]
