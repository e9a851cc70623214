"""CatBoost's native ``.cbm`` model, read without the catboost library.

A ``.cbm`` file is ``b"CBM1"``, the byte size of a FlatBuffers buffer (uint32, little-endian),
that buffer (schema ``catboost/libs/model/flatbuffers/model.fbs``: a ``TModelCore`` whose
``ModelTrees`` holds features, splits and leaves), then optional model parts (CTR tables, text
processing). This module turns the buffer into the same document the JSON format gives, so
``catboost.from_dict`` does all the checking and the conversion:

* ``TreeSplits`` holds binary-feature indices (the JSON's ``split_index``): every float
  feature's borders in feature order, then every one-hot feature's values, then every CTR
  feature's borders. Which feature a split reads is found that way.
* one-hot texts come from ``TOneHotFeature.StringValues`` when the file has them (the JSON
  needs ``pool=`` for that).
* non-symmetric trees: each node's step (left, right) distances, 0 meaning "the leaf is this
  node's ``NonSymmetricNodeIdToLeafId`` entry".
* refused: CTR, text, embedding and estimated features, one-hot splits (the file holds no
  category texts), fields newer than CatBoost 1.2.

Every read is bounds-checked; a damaged file is a ``ModelFormatError``.
"""

from __future__ import annotations

import json
import struct

from rulegen.errors import ModelFormatError, UnsupportedFeatureError

MAGIC = b"CBM1"
_WHO = "rulegen IR"
_NAN_TREATMENTS = ("AsIs", "AsFalse", "AsTrue")

# field numbers, in model.fbs / features.fbs declaration order
CORE_FORMAT, CORE_TREES, CORE_INFO = 0, 1, 2
(T_DIM, T_SPLITS, T_SIZES, T_OFFSETS, T_CAT, T_FLOAT, T_ONEHOT, T_CTR, T_LEAVES, T_WEIGHTS,
 T_STEPS, T_NODE_LEAF, T_TEXT, T_ESTIMATED, T_SCALE, T_BIAS, T_MULTIBIAS, T_REPACKED,
 T_EMBEDDING) = range(19)
F_HAS_NANS, F_INDEX, F_FLAT, F_BORDERS, F_ID, F_NAN = range(6)
C_INDEX, C_FLAT, C_ID, C_USED = range(4)
O_INDEX, O_VALUES, O_STRINGS = range(3)


class _Bad(Exception):
    pass


class _Buffer:
    """Bounds-checked FlatBuffers reading (tables, vectors, strings, scalars)."""

    def __init__(self, data: bytes):
        self.b = data

    def _unpack(self, fmt: str, pos: int):
        if pos < 0 or pos + struct.calcsize(fmt) > len(self.b):
            raise _Bad(f"offset {pos} is outside the buffer")
        return struct.unpack_from(fmt, self.b, pos)[0]

    def root(self) -> int:
        return self._ref(0)

    def _ref(self, pos: int) -> int:
        return pos + self._unpack("<I", pos)

    def _field(self, table: int, n: int) -> int | None:
        vtable = table - self._unpack("<i", table)
        size = self._unpack("<H", vtable)
        if size < 4 or 4 + 2 * n + 2 > size:
            return None
        off = self._unpack("<H", vtable + 4 + 2 * n)
        return table + off if off else None

    def last_field(self, table: int) -> int:
        """The highest field number the table stores (-1 for none)."""
        vtable = table - self._unpack("<i", table)
        size = self._unpack("<H", vtable)
        for n in range((size - 4) // 2 - 1, -1, -1):
            if self._unpack("<H", vtable + 4 + 2 * n):
                return n
        return -1

    def scalar(self, table: int, n: int, fmt: str, default):
        pos = self._field(table, n)
        return default if pos is None else self._unpack(fmt, pos)

    def table(self, table: int, n: int) -> int | None:
        pos = self._field(table, n)
        return None if pos is None else self._ref(pos)

    def vector(self, table: int, n: int, fmt: str | None) -> list:
        """A vector of scalars (``fmt``) or, with ``fmt=None``, of tables (their positions)."""
        pos = self._field(table, n)
        if pos is None:
            return []
        start = self._ref(pos)
        count = self._unpack("<I", start)
        size = struct.calcsize(fmt) if fmt else 4
        if start + 4 + count * size > len(self.b):
            raise _Bad(f"a vector of {count} items runs past the buffer")
        if fmt:
            return list(struct.unpack_from(f"<{count}{fmt[-1]}", self.b, start + 4))
        return [self._ref(start + 4 + 4 * i) for i in range(count)]

    def string(self, table: int, n: int) -> str | None:
        pos = self._field(table, n)
        return None if pos is None else self._text(self._ref(pos))

    def strings(self, table: int, n: int) -> list[str]:
        return [self._text(p) for p in self.vector(table, n, None)]

    def _text(self, start: int) -> str:
        count = self._unpack("<I", start)
        if start + 4 + count > len(self.b):
            raise _Bad("a string runs past the buffer")
        try:
            return self.b[start + 4:start + 4 + count].decode("utf-8")
        except UnicodeDecodeError:
            raise _Bad("a string is not UTF-8") from None


def to_document(raw: bytes, source: str) -> dict:
    """The JSON-format document (``catboost.from_dict``'s input) for a ``.cbm`` file."""
    where = source or "CatBoost .cbm model"
    if raw[:4] != MAGIC or len(raw) < 8:
        raise ModelFormatError(f"{where}: not a CatBoost .cbm model (no 'CBM1' header)")
    size = struct.unpack_from("<I", raw, 4)[0]
    if 8 + size > len(raw):
        raise ModelFormatError(f"{where}: the model core ({size} bytes) runs past the file's end")
    try:
        return _document(_Buffer(raw[8:8 + size]), where)
    except (_Bad, struct.error, RecursionError) as e:
        raise ModelFormatError(f"{where}: damaged .cbm model ({e})") from None


def _document(fb: _Buffer, where: str) -> dict:
    core = fb.root()
    trees = fb.table(core, CORE_TREES)
    if trees is None:
        raise ModelFormatError(f"{where}: the .cbm model has no trees")
    if fb.last_field(trees) > T_EMBEDDING:
        # a field this reader does not know could change predictions
        raise UnsupportedFeatureError(
            _WHO, f"this .cbm model ({where}): it stores field {fb.last_field(trees)} of "
                  "TModelTrees, newer than CatBoost 1.2; re-save it with format='json'")
    for n, what in ((T_TEXT, "text features"), (T_ESTIMATED, "estimated features"),
                    (T_EMBEDDING, "embedding features")):
        if fb.vector(trees, n, None):
            raise UnsupportedFeatureError(_WHO, f"CatBoost {what} ({where})")
    floats = []
    bins: list[dict] = []  # binary features in split_index order
    for i, t in enumerate(fb.vector(trees, T_FLOAT, None)):
        if fb.last_field(t) > F_NAN:
            raise UnsupportedFeatureError(_WHO, f"this .cbm model ({where}): float feature {i} "
                                                "has fields newer than CatBoost 1.2")
        treatment = fb.scalar(t, F_NAN, "<b", 0)
        if not 0 <= treatment < 3:
            raise _Bad(f"float feature {i}: NanValueTreatment {treatment}")
        f = {"borders": fb.vector(t, F_BORDERS, "f"), "feature_id": fb.string(t, F_ID) or "",
             "feature_index": fb.scalar(t, F_INDEX, "<i", -1),
             "flat_feature_index": fb.scalar(t, F_FLAT, "<i", -1),
             "has_nans": bool(fb.scalar(t, F_HAS_NANS, "<B", 0)),
             "nan_value_treatment": _NAN_TREATMENTS[treatment]}
        floats.append(f)
        bins += [{"border": b, "float_feature_index": f["feature_index"], "split_type": "FloatFeature"}
                 for b in f["borders"]]
    cats = [{"feature_id": fb.string(t, C_ID) or "", "feature_index": fb.scalar(t, C_INDEX, "<i", -1),
             "flat_feature_index": fb.scalar(t, C_FLAT, "<i", -1)}
            for t in fb.vector(trees, T_CAT, None)]
    by_index = {c["feature_index"]: c for c in cats}
    hashes = {}
    for t in fb.vector(trees, T_ONEHOT, None):
        index = fb.scalar(t, O_INDEX, "<i", -1)
        values = fb.vector(t, O_VALUES, "i")
        texts = fb.strings(t, O_STRINGS)
        if index not in by_index:
            raise _Bad(f"a one-hot feature names categorical feature {index}, which is not listed")
        by_index[index]["values"] = values
        if len(texts) == len(values):
            hashes.update({v & 0xFFFFFFFF: s for v, s in zip(values, texts)})
        bins += [{"cat_feature_index": index, "value": v, "split_type": "OneHotFeature"} for v in values]
    ctrs = fb.vector(trees, T_CTR, None)
    if ctrs:
        one_hot = {i for i, c in by_index.items() if "values" in c}
        names = [c["feature_id"] or f"f{c['flat_feature_index']}" for i, c in sorted(by_index.items())
                 if i not in one_hot]
        raise UnsupportedFeatureError(
            _WHO, f"CatBoost CTR (target statistics) splits ({where}; categorical feature(s) "
                  f"without one-hot encoding: {', '.join(repr(n) for n in names) or '?'}); retrain "
                  "with one_hot_max_size above their number of categories")
    steps = fb.vector(trees, T_STEPS, "I")
    doc = {"features_info": {"float_features": floats, "categorical_features": cats},
           **({"trees": _unbalanced(fb, trees, bins, steps)} if steps else
              {"oblivious_trees": _trees(fb, trees, bins)}),
           "scale_and_bias": [fb.scalar(trees, T_SCALE, "<d", 1.0),
                              fb.vector(trees, T_MULTIBIAS, "d") or [fb.scalar(trees, T_BIAS, "<d", 0.0)]],
           "model_info": _info(fb, core)}
    if hashes:
        doc["features_info"]["cat_features_hash"] = [{"hash": h, "value": s} for h, s in hashes.items()]
    return doc


def _trees(fb: _Buffer, trees: int, bins: list[dict]) -> list[dict]:
    dim = fb.scalar(trees, T_DIM, "<i", 1)
    splits = fb.vector(trees, T_SPLITS, "i")
    sizes = fb.vector(trees, T_SIZES, "i")
    leaves = fb.vector(trees, T_LEAVES, "d")
    weights = fb.vector(trees, T_WEIGHTS, "d")
    if dim < 1 or any(not 0 <= s <= 20 for s in sizes) or sum(sizes) != len(splits):
        raise _Bad(f"tree sizes {sizes[:5]}... do not fit {len(splits)} splits")
    if sum(dim << s for s in sizes) != len(leaves):
        raise _Bad(f"{len(leaves)} leaf values do not fit the trees' depths and {dim} outputs")
    out, at, leaf_at = [], 0, 0
    for depth in sizes:
        tree_splits = []
        for s in splits[at:at + depth]:
            if not 0 <= s < len(bins):
                raise _Bad(f"split {s} is not a binary feature (there are {len(bins)})")
            tree_splits.append({**bins[s], "split_index": s})
        n = 1 << depth
        tree = {"splits": tree_splits, "leaf_values": leaves[leaf_at * dim:(leaf_at + n) * dim]}
        if len(weights) == len(leaves) // dim:
            tree["leaf_weights"] = weights[leaf_at:leaf_at + n]
        out.append(tree)
        at += depth
        leaf_at += n
    return out


def _unbalanced(fb: _Buffer, trees: int, bins: list[dict], steps: list[int]) -> list[dict]:
    """Non-symmetric trees as the JSON's nested objects, built with a stack. Node ``i`` of the
    model tests ``TreeSplits[i]``; its step node holds (left, right) forward distances, 0 for
    "stop here", where the leaf is ``LeafValues[NonSymmetricNodeIdToLeafId[i]:][:dim]``
    (``CalcNonSymmetricTrees`` in ``evaluator_impl.cpp``)."""
    dim = fb.scalar(trees, T_DIM, "<i", 1)
    splits = fb.vector(trees, T_SPLITS, "i")
    sizes = fb.vector(trees, T_SIZES, "i")
    starts = fb.vector(trees, T_OFFSETS, "i")
    leaves = fb.vector(trees, T_LEAVES, "d")
    to_leaf = fb.vector(trees, T_NODE_LEAF, "I")
    weights = fb.vector(trees, T_WEIGHTS, "d")
    n = len(splits)
    if dim < 1 or len(steps) != n or len(to_leaf) != n or len(starts) != len(sizes):
        raise _Bad("the non-symmetric tree arrays differ in length")

    def leaf(i: int) -> dict:
        at = to_leaf[i]
        if at + dim > len(leaves):
            raise _Bad(f"node {i}: leaf offset {at} is outside the leaf values")
        values = leaves[at:at + dim]
        out = {"value": values if dim > 1 else values[0]}
        if len(weights) * dim == len(leaves) and at % dim == 0:
            out["weight"] = weights[at // dim]
        return out

    out = []
    for t, (start, size) in enumerate(zip(starts, sizes)):
        if not (0 <= start and size >= 1 and start + size <= n):
            raise _Bad(f"tree {t}: nodes {start}..{start + size} are outside the {n} nodes")
        root: dict = {}
        stack = [(start, root)]
        while stack:
            i, node = stack.pop()
            left, right = steps[i] & 0xFFFF, steps[i] >> 16
            if left == 0 and right == 0:
                node.update(leaf(i))
                continue
            if not 0 <= splits[i] < len(bins):
                raise _Bad(f"node {i}: split {splits[i]} is not a binary feature")
            node["split"] = {**bins[splits[i]], "split_index": splits[i]}
            for side, diff in (("left", left), ("right", right)):
                if diff == 0:
                    node[side] = leaf(i)
                elif i + diff >= start + size:
                    raise _Bad(f"node {i}: a child past the end of tree {t}")
                else:
                    node[side] = {}
                    stack.append((i + diff, node[side]))
        out.append(root)
    return out


def _info(fb: _Buffer, core: int) -> dict:
    """``params`` and ``class_params`` from the InfoMap (JSON strings), as the JSON format has."""
    info = {}
    for t in fb.vector(core, CORE_INFO, None):
        key, value = fb.string(t, 0), fb.string(t, 1)
        if key in ("params", "class_params") and value:
            try:
                info[key] = json.loads(value)
            except ValueError:
                raise _Bad(f"InfoMap {key!r} is not JSON") from None
    return info
