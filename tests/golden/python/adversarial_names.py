"""Classifier for "who's", compiled by rulegen into standard-library Python.

1 tree(s), aggregation sum, link identity, accumulated in float64.
Classes: 'it\\'s "ok"', '*/ end', '选择'.

Usage::

    import adversarial_names

    adversarial_names.predict(row)           # the class label
    adversarial_names.predict_proba(row)     # probabilities, in CLASSES order
    adversarial_names.predict_batch(rows)    # one prediction per row
    adversarial_names.predict_raw(row)       # the scores before the link
    adversarial_names.unseen_features(row)   # categorical features whose value is not listed

A row is a sequence of values in FEATURES order, or a mapping with every feature name
as a key. None or NaN is missing. Categorical features take their labels; any other
value is an unseen category. Results equal rulegen's reference evaluator bit for bit.

Features:
    'select' (numeric)
    'x y' (numeric)
    'a"b' (numeric)
    "O'Brien" (numeric)
    '*/ x /*' (numeric)
    '年龄' (numeric)
    '1st' (categorical: "it's", 'say "hi"', '*/', '\\\\n', '年')
"""


_INF = float("inf")
_NAN = float("nan")
_UNSEEN = object()  # stands for any categorical value the model does not list
_CATEGORICAL = (6,)

FEATURES = [
    'select',
    'x y',
    'a"b',
    "O'Brien",
    '*/ x /*',
    '年龄',
    '1st',
]
TASK = 'classification'
CLASSES = ['it\'s "ok"', '*/ end', '选择']
N_OUTPUTS = 3

_NAMES = tuple(FEATURES)
_CLASSES = tuple(CLASSES)
_LEVELS_6 = frozenset({"it's", 'say "hi"', '*/', '\\n', '年'})


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


def _inputs(row):
    """The row in FEATURES order: floats for numeric features (NaN when missing), labels for
    categorical ones (NaN when missing, _UNSEEN for a value the model does not list)."""
    if hasattr(row, "keys"):
        row = [row[name] for name in _NAMES]
    elif len(row) != 7:
        raise ValueError("expected 7 values in FEATURES order, got %d" % len(row))
    return [
        _number(row[0]),  # 'select'
        _number(row[1]),  # 'x y'
        _number(row[2]),  # 'a"b'
        _number(row[3]),  # "O'Brien"
        _number(row[4]),  # '*/ x /*'
        _number(row[5]),  # '年龄'
        _category(row[6], _LEVELS_6),  # '1st'
    ]


def unseen_features(row):
    """The names of the categorical features whose value in ``row`` the model does not list
    (a typo, a new category); predictions take the model's route for unseen values there."""
    x = _inputs(row)
    return [_NAMES[j] for j in _CATEGORICAL if x[j] is _UNSEEN]


def predict_raw(row):
    """The accumulated tree scores before the link (float64), one per raw output."""
    x = _inputs(row)
    # tree 0: 31 nodes, weight 1.0
    # node 0: 'select' <= -0.5; missing -> node 1
    if not (x[0] > -0.5):
        # node 1: "O'Brien" <= 0.0; missing -> node 4
        if x[3] <= 0.0:
            # node 3: "O'Brien" <= 0.5; missing -> node 7
            if not (x[3] > 0.5):
                # node 7: '1st' by category; missing -> node 16
                if x[6] in {"it's", '*/', '年'}:
                    return [0.0, 1.0, 0.0]  # node 15
                else:
                    return [0.5, 0.5, 0.0]  # node 16
            else:
                # node 8: '1st' by category; missing -> node 18
                if x[6] in {"it's", '*/', '年'}:
                    return [1.0, 0.0, 0.0]  # node 17
                else:
                    return [0.0, 1.0, 0.0]  # node 18
        else:
            # node 4: 'select' <= 0.5; missing -> node 9
            if not (x[0] > 0.5):
                # node 9: '1st' by category; missing -> node 20
                if x[6] in {"it's", '*/', '年'}:
                    return [0.5, 0.5, 0.0]  # node 19
                else:
                    return [1.0, 0.0, 0.0]  # node 20
            else:
                # node 10: '1st' by category; missing -> node 22
                if x[6] in {"it's", '*/', '年'}:
                    return [0.0, 1.0, 0.0]  # node 21
                else:
                    return [0.5, 0.5, 0.0]  # node 22
    else:
        # node 2: 'select' <= 0.0; missing -> node 6
        if x[0] <= 0.0:
            # node 5: "O'Brien" <= 0.5; missing -> node 11
            if not (x[3] > 0.5):
                # node 11: '1st' by category; missing -> node 24
                if x[6] in {"it's", '*/', '年'}:
                    return [1.0, 0.0, 0.0]  # node 23
                else:
                    return [0.0, 1.0, 0.0]  # node 24
            else:
                # node 12: '1st' by category; missing -> node 26
                if x[6] in {"it's", '*/', '年'}:
                    return [0.5, 0.5, 0.0]  # node 25
                else:
                    return [1.0, 0.0, 0.0]  # node 26
        else:
            # node 6: 'select' <= 0.5; missing -> node 13
            if not (x[0] > 0.5):
                # node 13: '1st' by category; missing -> node 28
                if x[6] in {"it's", '*/', '年'}:
                    return [0.0, 1.0, 0.0]  # node 27
                else:
                    return [0.5, 0.5, 0.0]  # node 28
            else:
                # node 14: '1st' by category; missing -> node 30
                if x[6] in {"it's", '*/', '年'}:
                    return [1.0, 0.0, 0.0]  # node 29
                else:
                    return [0.0, 1.0, 0.0]  # node 30


def predict_proba(row):
    """Class probabilities, in CLASSES order."""
    x = _inputs(row)
    # tree 0: 31 nodes, weight 1.0
    # node 0: 'select' <= -0.5; missing -> node 1
    if not (x[0] > -0.5):
        # node 1: "O'Brien" <= 0.0; missing -> node 4
        if x[3] <= 0.0:
            # node 3: "O'Brien" <= 0.5; missing -> node 7
            if not (x[3] > 0.5):
                # node 7: '1st' by category; missing -> node 16
                if x[6] in {"it's", '*/', '年'}:
                    return [0.0, 1.0, 0.0]  # node 15
                else:
                    return [0.5, 0.5, 0.0]  # node 16
            else:
                # node 8: '1st' by category; missing -> node 18
                if x[6] in {"it's", '*/', '年'}:
                    return [1.0, 0.0, 0.0]  # node 17
                else:
                    return [0.0, 1.0, 0.0]  # node 18
        else:
            # node 4: 'select' <= 0.5; missing -> node 9
            if not (x[0] > 0.5):
                # node 9: '1st' by category; missing -> node 20
                if x[6] in {"it's", '*/', '年'}:
                    return [0.5, 0.5, 0.0]  # node 19
                else:
                    return [1.0, 0.0, 0.0]  # node 20
            else:
                # node 10: '1st' by category; missing -> node 22
                if x[6] in {"it's", '*/', '年'}:
                    return [0.0, 1.0, 0.0]  # node 21
                else:
                    return [0.5, 0.5, 0.0]  # node 22
    else:
        # node 2: 'select' <= 0.0; missing -> node 6
        if x[0] <= 0.0:
            # node 5: "O'Brien" <= 0.5; missing -> node 11
            if not (x[3] > 0.5):
                # node 11: '1st' by category; missing -> node 24
                if x[6] in {"it's", '*/', '年'}:
                    return [1.0, 0.0, 0.0]  # node 23
                else:
                    return [0.0, 1.0, 0.0]  # node 24
            else:
                # node 12: '1st' by category; missing -> node 26
                if x[6] in {"it's", '*/', '年'}:
                    return [0.5, 0.5, 0.0]  # node 25
                else:
                    return [1.0, 0.0, 0.0]  # node 26
        else:
            # node 6: 'select' <= 0.5; missing -> node 13
            if not (x[0] > 0.5):
                # node 13: '1st' by category; missing -> node 28
                if x[6] in {"it's", '*/', '年'}:
                    return [0.0, 1.0, 0.0]  # node 27
                else:
                    return [0.5, 0.5, 0.0]  # node 28
            else:
                # node 14: '1st' by category; missing -> node 30
                if x[6] in {"it's", '*/', '年'}:
                    return [1.0, 0.0, 0.0]  # node 29
                else:
                    return [0.0, 1.0, 0.0]  # node 30


def predict(row):
    """The predicted class label: the first class with the largest probability."""
    x = _inputs(row)
    # tree 0: 31 nodes, weight 1.0
    # node 0: 'select' <= -0.5; missing -> node 1
    if not (x[0] > -0.5):
        # node 1: "O'Brien" <= 0.0; missing -> node 4
        if x[3] <= 0.0:
            # node 3: "O'Brien" <= 0.5; missing -> node 7
            if not (x[3] > 0.5):
                # node 7: '1st' by category; missing -> node 16
                if x[6] in {"it's", '*/', '年'}:
                    return '*/ end'  # node 15
                else:
                    return 'it\'s "ok"'  # node 16
            else:
                # node 8: '1st' by category; missing -> node 18
                if x[6] in {"it's", '*/', '年'}:
                    return 'it\'s "ok"'  # node 17
                else:
                    return '*/ end'  # node 18
        else:
            # node 4: 'select' <= 0.5; missing -> node 9
            if not (x[0] > 0.5):
                # node 9: '1st' by category; missing -> node 20
                if x[6] in {"it's", '*/', '年'}:
                    return 'it\'s "ok"'  # node 19
                else:
                    return 'it\'s "ok"'  # node 20
            else:
                # node 10: '1st' by category; missing -> node 22
                if x[6] in {"it's", '*/', '年'}:
                    return '*/ end'  # node 21
                else:
                    return 'it\'s "ok"'  # node 22
    else:
        # node 2: 'select' <= 0.0; missing -> node 6
        if x[0] <= 0.0:
            # node 5: "O'Brien" <= 0.5; missing -> node 11
            if not (x[3] > 0.5):
                # node 11: '1st' by category; missing -> node 24
                if x[6] in {"it's", '*/', '年'}:
                    return 'it\'s "ok"'  # node 23
                else:
                    return '*/ end'  # node 24
            else:
                # node 12: '1st' by category; missing -> node 26
                if x[6] in {"it's", '*/', '年'}:
                    return 'it\'s "ok"'  # node 25
                else:
                    return 'it\'s "ok"'  # node 26
        else:
            # node 6: 'select' <= 0.5; missing -> node 13
            if not (x[0] > 0.5):
                # node 13: '1st' by category; missing -> node 28
                if x[6] in {"it's", '*/', '年'}:
                    return '*/ end'  # node 27
                else:
                    return 'it\'s "ok"'  # node 28
            else:
                # node 14: '1st' by category; missing -> node 30
                if x[6] in {"it's", '*/', '年'}:
                    return 'it\'s "ok"'  # node 29
                else:
                    return '*/ end'  # node 30


def predict_proba_batch(rows):
    return [predict_proba(row) for row in rows]


def predict_batch(rows):
    return [predict(row) for row in rows]
