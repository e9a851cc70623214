"""Classifier for 'kind', compiled by rulegen into standard-library Python.

1 tree(s), aggregation sum, link identity, accumulated in float64.
Classes: 'setosa', 'versicolor', 'virginica'.

Usage::

    import classifier

    classifier.predict(row)           # the class label
    classifier.predict_proba(row)     # probabilities, in CLASSES order
    classifier.predict_batch(rows)    # one prediction per row
    classifier.predict_raw(row)       # the scores before the link
    classifier.unseen_features(row)   # categorical features whose value is not listed

A row is a sequence of values in FEATURES order, or a mapping with every feature name
as a key. None or NaN is missing. Categorical features take their labels; any other
value is an unseen category. Results equal rulegen's reference evaluator bit for bit.

Features:
    'a' (numeric)
    'b' (numeric)
    'c' (numeric)
"""


_INF = float("inf")
_NAN = float("nan")

FEATURES = [
    'a',
    'b',
    'c',
]
TASK = 'classification'
CLASSES = ['setosa', 'versicolor', 'virginica']
N_OUTPUTS = 3

_NAMES = tuple(FEATURES)
_CLASSES = tuple(CLASSES)


def _inputs(row):
    """The row in FEATURES order: floats for numeric features (NaN when missing), labels for
    categorical ones (NaN when missing, _UNSEEN for a value the model does not list)."""
    if hasattr(row, "keys"):
        row = [row[name] for name in _NAMES]
    elif len(row) != 3:
        raise ValueError("expected 3 values in FEATURES order, got %d" % len(row))
    try:
        return list(map(float, row))
    except TypeError:  # None (missing) somewhere
        return [_NAN if v is None else float(v) for v in row]


def _row(row):
    """The row as the trees read it, converting each value they test with float(): a mapping
    as a list in FEATURES order, a sequence as it is."""
    if hasattr(row, "keys"):
        return [row[name] for name in _NAMES]
    if len(row) != 3:
        raise ValueError("expected 3 values in FEATURES order, got %d" % len(row))
    return row


def unseen_features(row):
    """The names of the categorical features whose value in ``row`` the model does not list
    (a typo, a new category); predictions take the model's route for unseen values there."""
    _inputs(row)
    return []


def predict_raw(row):
    """The accumulated tree scores before the link (float64), one per raw output."""
    x = row if type(row) is list and len(row) == 3 else _row(row)
    while True:
        try:
            # tree 0: 11 nodes, weight 1.0
            # node 0: 'a' <= 0.30000000000000004; missing -> node 1
            if not (float(x[0]) > 0.30000000000000004):
                # node 1: 'b' < 1.100000023841858 (compared in float32); missing -> node 4
                if float(x[1]) <= 1.0999999642372131:
                    return [1.0, 0.0, 0.0]  # node 3, samples 10.0, distribution 10.0, 0.0, 0.0
                else:
                    # node 4: 'a' <= _INF; missing -> node 8
                    if float(x[0]) <= _INF:
                        return [0.25, 0.5, 0.25]  # node 7, samples 4.0, distribution 1.0, 2.0, 1.0
                    else:
                        return [0.0, 0.0, 1.0]  # node 8, samples 1.0, distribution 0.0, 0.0, 1.0
            else:
                # node 2: 'c' <= 1e-300; missing -> node 6
                if float(x[2]) <= 1e-300:
                    # node 5: 'b' <= -2.500000538263333e-39 (compared in float32); missing -> node 9
                    if not (float(x[1]) > -2.499999837614101e-39):
                        return [0.5, 0.5, 0.0]  # node 9, samples 2.0, distribution 1.0, 1.0, 0.0
                    else:
                        return [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]  # node 10, samples 3.0, distribution 1.0, 1.0, 1.0
                else:
                    return [0.1, 0.2, 0.7]  # node 6, samples 30.0, distribution 3.0, 6.0, 21.0
        except TypeError:  # None (missing), or a value float() does not take: convert the row
            x = _inputs(row)


def predict_proba(row):
    """Class probabilities, in CLASSES order."""
    x = row if type(row) is list and len(row) == 3 else _row(row)
    while True:
        try:
            # tree 0: 11 nodes, weight 1.0
            # node 0: 'a' <= 0.30000000000000004; missing -> node 1
            if not (float(x[0]) > 0.30000000000000004):
                # node 1: 'b' < 1.100000023841858 (compared in float32); missing -> node 4
                if float(x[1]) <= 1.0999999642372131:
                    return [1.0, 0.0, 0.0]  # node 3, samples 10.0, distribution 10.0, 0.0, 0.0
                else:
                    # node 4: 'a' <= _INF; missing -> node 8
                    if float(x[0]) <= _INF:
                        return [0.25, 0.5, 0.25]  # node 7, samples 4.0, distribution 1.0, 2.0, 1.0
                    else:
                        return [0.0, 0.0, 1.0]  # node 8, samples 1.0, distribution 0.0, 0.0, 1.0
            else:
                # node 2: 'c' <= 1e-300; missing -> node 6
                if float(x[2]) <= 1e-300:
                    # node 5: 'b' <= -2.500000538263333e-39 (compared in float32); missing -> node 9
                    if not (float(x[1]) > -2.499999837614101e-39):
                        return [0.5, 0.5, 0.0]  # node 9, samples 2.0, distribution 1.0, 1.0, 0.0
                    else:
                        return [0.3333333333333333, 0.3333333333333333, 0.3333333333333333]  # node 10, samples 3.0, distribution 1.0, 1.0, 1.0
                else:
                    return [0.1, 0.2, 0.7]  # node 6, samples 30.0, distribution 3.0, 6.0, 21.0
        except TypeError:  # None (missing), or a value float() does not take: convert the row
            x = _inputs(row)


def predict(row):
    """The predicted class label: the first class with the largest probability."""
    x = row if type(row) is list and len(row) == 3 else _row(row)
    while True:
        try:
            # tree 0: 11 nodes, weight 1.0
            # node 0: 'a' <= 0.30000000000000004; missing -> node 1
            if not (float(x[0]) > 0.30000000000000004):
                # node 1: 'b' < 1.100000023841858 (compared in float32); missing -> node 4
                if float(x[1]) <= 1.0999999642372131:
                    return 'setosa'  # node 3, samples 10.0, distribution 10.0, 0.0, 0.0
                else:
                    # node 4: 'a' <= _INF; missing -> node 8
                    if float(x[0]) <= _INF:
                        return 'versicolor'  # node 7, samples 4.0, distribution 1.0, 2.0, 1.0
                    else:
                        return 'virginica'  # node 8, samples 1.0, distribution 0.0, 0.0, 1.0
            else:
                # node 2: 'c' <= 1e-300; missing -> node 6
                if float(x[2]) <= 1e-300:
                    # node 5: 'b' <= -2.500000538263333e-39 (compared in float32); missing -> node 9
                    if not (float(x[1]) > -2.499999837614101e-39):
                        return 'setosa'  # node 9, samples 2.0, distribution 1.0, 1.0, 0.0
                    else:
                        return 'setosa'  # node 10, samples 3.0, distribution 1.0, 1.0, 1.0
                else:
                    return 'virginica'  # node 6, samples 30.0, distribution 3.0, 6.0, 21.0
        except TypeError:  # None (missing), or a value float() does not take: convert the row
            x = _inputs(row)


def predict_proba_batch(rows):
    return [predict_proba(row) for row in rows]


def predict_batch(rows):
    return [predict(row) for row in rows]
