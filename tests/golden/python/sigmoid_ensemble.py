"""Classifier for 'label', compiled by rulegen into standard-library Python.

3 tree(s), aggregation sum, link sigmoid, accumulated in float64.
Classes: 0, 1.

Usage::

    import sigmoid_ensemble

    sigmoid_ensemble.predict(row)           # the class label
    sigmoid_ensemble.predict_proba(row)     # probabilities, in CLASSES order
    sigmoid_ensemble.predict_batch(rows)    # one prediction per row
    sigmoid_ensemble.predict_raw(row)       # the scores before the link
    sigmoid_ensemble.unseen_features(row)   # categorical features whose value is not listed

A row is a sequence of values in FEATURES order, or a mapping with every feature name
as a key. None or NaN is missing. Categorical features take their labels; any other
value is an unseen category. Results equal rulegen's reference evaluator bit for bit.

Features:
    'f0' (numeric)
    'f1' (numeric)
    'f2' (numeric)
    'f3' (numeric)
"""

import math

_INF = float("inf")
_NAN = float("nan")

FEATURES = [
    'f0',
    'f1',
    'f2',
    'f3',
]
TASK = 'classification'
CLASSES = [0, 1]
N_OUTPUTS = 2

_NAMES = tuple(FEATURES)
_CLASSES = tuple(CLASSES)


def _exp(v):
    """math.exp, but inf where it overflows (as C's exp returns)."""
    try:
        return math.exp(v)
    except OverflowError:
        return _INF


def _argmax(values):
    """Index of the first largest value (the first NaN, if any, as numpy.argmax)."""
    best = 0
    for k in range(1, len(values)):
        v = values[k]
        if v > values[best] or (v != v and values[best] == values[best]):
            best = k
    return best


# every tree in turn, each added to the accumulators
def _raw(x):
    x0, x1, x2, x3 = x
    a0 = -0.3
    # tree 0: 27 nodes, weight 0.1
    # node 0: 'f1' <= 0.8199999928474426 (compared in float32); missing -> node 2
    if x1 < 0.820000022649765:
        # node 1: 'f0' < 0.45; missing -> node 3
        if not (x0 >= 0.45):
            # node 3: 'f1' < -0.48; missing -> node 8
            if x1 < -0.48:
                # node 7: 'f1' <= 0.6499999761581421 (compared in float32); missing -> node 16
                if x1 <= 0.6500000059604645:
                    a0 += 0.023550561173022524  # node 15
                else:
                    a0 += 0.07595195224783792  # node 16
            else:
                # node 8: 'f1' <= 0.11; missing -> node 17
                if not (x1 > 0.11):
                    a0 += -0.16487873663509486  # node 17
                else:
                    a0 += 0.02543881165176173  # node 18
        else:
            # node 4: 'f3' < -0.26; missing -> node 9
            if not (x3 >= -0.26):
                # node 9: 'f1' <= -0.1; missing -> node 20
                if x1 <= -0.1:
                    a0 += 0.12246469675357324  # node 19
                else:
                    a0 += -0.029752684437047323  # node 20
            else:
                a0 += 0.05937480717858228  # node 10
    else:
        # node 2: 'f2' <= 0.29; missing -> node 6
        if x2 <= 0.29:
            # node 5: 'f0' <= -2.71; missing -> node 12
            if x0 <= -2.71:
                # node 11: 'f3' < -0.82; missing -> node 22
                if x3 < -0.82:
                    a0 += -0.081081458323757  # node 21
                else:
                    a0 += 0.07522438271795928  # node 22
            else:
                a0 += -0.10717874168774442  # node 12
        else:
            # node 6: 'f2' <= 0.2199999988079071 (compared in float32); missing -> node 13
            if not (x2 > 0.2200000062584877):
                # node 13: 'f3' < -1.25 (compared in float32); missing -> node 24
                if x3 < -1.2500000596046448:
                    a0 += 0.025344651620814146  # node 23
                else:
                    a0 += 0.08958830707775604  # node 24
            else:
                # node 14: 'f1' < -1.1100000143051147 (compared in float32); missing -> node 26
                if x1 <= -1.1100000739097595:
                    a0 += -0.034521571005127975  # node 25
                else:
                    a0 += -0.14818182737222113  # node 26
    # tree 1: 17 nodes, weight 0.1
    # node 0: 'f1' <= -0.44999998807907104 (compared in float32); missing -> node 2
    if x1 <= -0.44999997317790985:
        # node 1: 'f3' <= -1.2000000476837158 (compared in float32); missing -> node 3
        if not (x3 > -1.199999988079071):
            a0 += 0.0256485627221562  # node 3
        else:
            a0 += -0.025884806478784557  # node 4
    else:
        # node 2: 'f1' <= -0.0; missing -> node 5
        if not (x1 > -0.0):
            # node 5: 'f2' <= -0.14; missing -> node 7
            if not (x2 > -0.14):
                # node 7: 'f3' < -0.88; missing -> node 12
                if x3 < -0.88:
                    a0 += -0.1524686038099152  # node 11
                else:
                    a0 += -0.2466229231351318  # node 12
            else:
                # node 8: 'f1' <= 0.14; missing -> node 13
                if not (x1 > 0.14):
                    a0 += 0.06168787551543195  # node 13
                else:
                    a0 += 0.2547897815483126  # node 14
        else:
            # node 6: 'f0' <= 0.86; missing -> node 9
            if not (x0 > 0.86):
                a0 += 0.0013749583618419498  # node 9
            else:
                # node 10: 'f1' <= -1.03; missing -> node 16
                if x1 <= -1.03:
                    a0 += -0.10009248488718936  # node 15
                else:
                    a0 += -0.12506957588019882  # node 16
    # tree 2: 23 nodes, weight 0.1
    # node 0: 'f1' <= -0.84; missing -> node 1
    if not (x1 > -0.84):
        # node 1: 'f0' <= -0.41; missing -> node 4
        if x0 <= -0.41:
            a0 += -0.10928943692952431  # node 3
        else:
            # node 4: 'f1' < -0.05; missing -> node 7
            if not (x1 >= -0.05):
                # node 7: 'f2' <= -2.14; missing -> node 13
                if not (x2 > -2.14):
                    a0 += 0.28715673378134987  # node 13
                else:
                    a0 += 0.08802586206615082  # node 14
            else:
                # node 8: 'f2' < 0.23; missing -> node 15
                if not (x2 >= 0.23):
                    a0 += -0.11392946703429759  # node 15
                else:
                    a0 += -0.07796379162397446  # node 16
    else:
        # node 2: 'f2' <= -0.32; missing -> node 6
        if x2 <= -0.32:
            # node 5: 'f3' < 0.28; missing -> node 10
            if x3 < 0.28:
                # node 9: 'f2' < -0.59; missing -> node 18
                if x2 < -0.59:
                    a0 += 0.008697924857190436  # node 17
                else:
                    a0 += -0.15547311319959864  # node 18
            else:
                # node 10: 'f2' <= 0.17; missing -> node 20
                if x2 <= 0.17:
                    a0 += 0.016863040701051428  # node 19
                else:
                    a0 += -0.045907155571275914  # node 20
        else:
            # node 6: 'f2' < -0.9; missing -> node 12
            if x2 < -0.9:
                # node 11: 'f2' <= 0.6399999856948853 (compared in float32); missing -> node 22
                if x2 <= 0.6400000154972076:
                    a0 += 0.12262706003162174  # node 21
                else:
                    a0 += 0.09621546636282469  # node 22
            else:
                a0 += -0.09322203053719522  # node 12
    return [a0]


def _inputs(row):
    """The row in FEATURES order: floats for numeric features (NaN when missing), labels for
    categorical ones (NaN when missing, _UNSEEN for a value the model does not list)."""
    if hasattr(row, "keys"):
        row = [row[name] for name in _NAMES]
    elif len(row) != 4:
        raise ValueError("expected 4 values in FEATURES order, got %d" % len(row))
    try:
        return list(map(float, row))
    except TypeError:  # None (missing) somewhere
        return [_NAN if v is None else float(v) for v in row]


def unseen_features(row):
    """The names of the categorical features whose value in ``row`` the model does not list
    (a typo, a new category); predictions take the model's route for unseen values there."""
    _inputs(row)
    return []


def predict_raw(row):
    """The accumulated tree scores before the link (float64), one per raw output."""
    x = _inputs(row)
    return _raw(x)


def _outputs(raw):
    """The link (sigmoid) applied to the raw scores, in float64."""
    return [1.0 / (1.0 + _exp(-v)) for v in raw]


def predict_proba(row):
    """Class probabilities, in CLASSES order."""
    x = _inputs(row)
    out = _outputs(_raw(x))
    return [1.0 - out[0], out[0]]


def predict(row):
    """The predicted class label: the first class with the largest probability."""
    x = _inputs(row)
    out = _outputs(_raw(x))
    return _CLASSES[_argmax([1.0 - out[0], out[0]])]


def predict_proba_batch(rows):
    return [predict_proba(row) for row in rows]


def predict_batch(rows):
    return [predict(row) for row in rows]
