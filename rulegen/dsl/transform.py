"""From the rules language to proto-nodes, during the parse.

lark's LALR parser calls these methods as it reduces each grammar rule (an "inline"
transformer), bottom-up and left to right, from its own explicit stack: no parse tree is
built and nothing here recurses, so a tree 2,500 splits deep costs no Python stack. The
header is complete before the first tree is reduced, so names resolve to feature indices
and category codes on the spot. Nodes become small proto objects that keep their position;
:mod:`rulegen.dsl.build` numbers them, attaches comments and makes the IR.

A problem found here (an unknown name, a misplaced keyword) is recorded, not raised, so
that ``check`` can report all of them; the parse carries on with a placeholder.
"""

from __future__ import annotations

import difflib
import math

from lark import Token, Transformer

from rulegen.dsl.literals import f32_from_decimal, unescape
from rulegen.dsl.protos import MISSING, UNSEEN, PLabel, PLeaf, PSplit, PTree
from rulegen.ir.nodes import (
    AGGREGATIONS,
    DTYPES,
    FEATURE_KINDS,
    LINKS,
    TASKS,
    Blend,
    CategoricalTest,
    DefaultChild,
    Feature,
    IntervalTest,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Surrogate,
    Surrogates,
)

NUMBERINGS = ("preorder", "bfs")

__all__ = ["NUMBERINGS", "PLabel", "PLeaf", "PSplit", "PTree", "RulesTransformer", "suggest"]


def _pos(tok) -> tuple[int, int]:
    return (tok.line, tok.column)


def _show(label) -> str:
    return '"' + label + '"' if isinstance(label, str) else str(label)


def suggest(word: str, choices, quote: bool = True) -> str:
    """'; did you mean 'x'?' for the closest choice, or ''."""
    close = difflib.get_close_matches(word, [str(c) for c in choices], n=1, cutoff=0.6)
    if not close:
        return ""
    return f"; did you mean '{close[0]}'?" if quote else f"; did you mean {close[0]}?"


class RulesTransformer(Transformer):
    """The callbacks, named after the grammar's rules; helpers start with '_' so that no
    rule can reach them. One instance serves one parse at a time (it holds the header and
    the problems found); ``__init__`` resets it."""

    def __init__(self):
        super().__init__(visit_tokens=False)
        self.header: dict[str, tuple] = {}  # key -> (value, pos)
        self.features: list[tuple[Feature, tuple]] = []
        self.params: list[tuple[str, object, tuple]] = []
        self.trees: list[PTree] = []
        self.starts: list = []  # every tree and node, for attaching comments
        self.errors: list[tuple[str, int, int]] = []
        self._index: dict[str, int] | None = None

    # --- helpers -------------------------------------------------------------------

    def _error(self, msg: str, pos) -> None:
        self.errors.append((msg, pos[0], pos[1]))

    def _text(self, tok: Token) -> str:
        """A NAME, QNAME or STRING token's text, escapes resolved."""
        if tok.type == "NAME":
            return str(tok)
        body, bad = unescape(tok[1:-1])
        if bad is not None:
            self._error(f"unknown escape '\\{tok[1 + bad + 1:1 + bad + 2]}' (use \\\\, \\\", \\`, "
                       "\\n, \\r, \\t, \\uXXXX or \\UXXXXXXXX)", (tok.line, tok.column + 1 + bad))
        return body

    def _whole(self, tok: Token, what: str) -> int:
        if not tok.isdigit():
            self._error(f"{what} must be a whole number, got {tok}", _pos(tok))
            return 0
        return int(tok)

    def _set_header(self, key: str, value, tok: Token) -> None:
        if key in self.header:
            line = self.header[key][1][0]
            self._error(f"'{key}' is given twice (first on line {line})", _pos(tok))
        self.header[key] = (value, _pos(tok))

    def _word(self, tok: Token, allowed, what: str) -> str:
        w = str(tok)
        if w not in allowed:
            self._error(f"unknown {what} '{w}' (expected {', '.join(allowed)})"
                        f"{suggest(w, allowed)}", _pos(tok))
        return w

    def _feat_index(self, tok: Token, kind: str | None = None) -> int:
        """Index of the feature a name token names, checked to be of ``kind``; -1 if not."""
        if self._index is None:
            self._index = {}
            for i, (f, _) in enumerate(self.features):
                self._index.setdefault(f.name, i)
        name = self._text(tok)
        i = self._index.get(name, -1)
        if i < 0:
            self._error(f"unknown feature '{name}'{suggest(name, self._index)}", _pos(tok))
            return -1
        actual = self.features[i][0].kind
        if kind is not None and actual != kind:
            hint = ("compare it with 'in {...}' or 'switch'" if actual == "categorical"
                    else "compare it with '<' or '<='")
            self._error(f"feature '{name}' is {actual}; {hint}", _pos(tok))
            return -1
        return i

    def _code(self, f: int, label, pos) -> int:
        """The category code of ``label`` for feature ``f``; -1 if it has none."""
        if f < 0:
            return -1
        feat = self.features[f][0]
        for c, lab in enumerate(feat.categories):
            if lab == label and type(lab) is type(label):
                return c
        shown = _show(label)
        choices = [_show(c) for c in feat.categories]
        self._error(f"{shown} is not a category of '{feat.name}'{suggest(shown, choices, False)}",
                   pos)
        return -1

    def _codes(self, f: int, labels) -> tuple[int, ...]:
        out = set()
        for label, pos in labels:
            c = self._code(f, label, pos)
            if c >= 0 and c in out:
                self._error(f"category {_show(label)} is listed twice", pos)
            out.add(c)
        return tuple(sorted(c for c in out if c >= 0))

    # --- literals --------------------------------------------------------------------

    def number(self, c):
        minus, tok = c
        v = math.inf if tok.type == "INF" else float(tok)
        return -v if minus is not None else v

    def literal(self, c):
        """(float64 value, token, negative): a float32 threshold is rounded from the text."""
        minus, tok = c
        v = math.inf if tok.type == "INF" else float(tok)
        return (-v if minus is not None else v, tok, minus is not None)

    def num_list(self, c):
        return tuple(v for v in c if v is not None)

    def str_label(self, c):
        return (self._text(c[0]), _pos(c[0]))

    def int_label(self, c):
        minus, tok = c
        pos = _pos(minus if minus is not None else tok)
        if not tok.isdigit():
            self._error(f"a category label is a string or a whole number, got {tok}", pos)
            return (0, pos)
        return (-int(tok) if minus is not None else int(tok), pos)

    def label_list(self, c):
        return [x for x in c if x is not None]

    def str_scalar(self, c):
        return self._text(c[0])

    def true_scalar(self, c):
        return True

    def false_scalar(self, c):
        return False

    def null_scalar(self, c):
        return None

    def nan_scalar(self, c):
        return math.nan

    # --- header --------------------------------------------------------------------------

    def version(self, c):
        v = self._whole(c[2], "the format version")
        if v != 1:
            self._error(f"this file is rules format version {v}; this rulegen reads version 1",
                       _pos(c[2]))
        self.header["version"] = (v, _pos(c[0]))

    def task(self, c):
        self._set_header("task", self._word(c[1], TASKS, "task"), c[0])

    def target(self, c):
        self._set_header("target", self._text(c[1]), c[0])

    def classes(self, c):
        self._set_header("classes", tuple(lab for lab, _ in c[1]), c[0])

    def outputs(self, c):
        self._set_header("outputs", self._whole(c[1], "outputs"), c[0])

    def aggregation(self, c):
        self._set_header("aggregation", self._word(c[1], AGGREGATIONS, "aggregation"), c[0])

    def link(self, c):
        self._set_header("link", self._word(c[1], LINKS, "link"), c[0])

    def dtype(self, c):
        self._set_header("dtype", self._word(c[1], DTYPES, "dtype"), c[0])

    def base_score(self, c):
        self._set_header("base_score", c[1], c[0])

    def algorithm(self, c):
        self._set_header("algorithm", self._text(c[1]), c[0])

    def library(self, c):
        self._set_header("library", self._text(c[1]), c[0])

    def n_samples(self, c):
        self._set_header("n_samples", self._whole(c[1], "n_samples"), c[0])

    def n_features(self, c):
        self._set_header("n_features", self._whole(c[1], "n_features"), c[0])

    def param(self, c):
        value = c[2]
        if isinstance(value, tuple):  # a literal number: keep whole numbers as int
            v, tok, neg = value
            value = (-int(tok) if neg else int(tok)) if tok.isdigit() else v
        self.params.append((self._text(c[1]), value, _pos(c[0])))

    def feature(self, c):
        kw, name_tok, kind_tok, cats, desc = c
        name = self._text(name_tok)
        kind = self._word(kind_tok, FEATURE_KINDS, "feature kind")
        if kind == "numeric" and cats is not None:
            self._error(f"numeric feature '{name}' cannot list categories; did you mean "
                       "'categorical'?", _pos(kind_tok))
        if kind == "categorical" and cats is None:
            self._error(f"categorical feature '{name}' needs its categories, "
                       "e.g. [\"red\", \"green\"]", _pos(kind_tok))
        for f, pos in self.features:
            if f.name == name:
                self._error(f"feature '{name}' is declared twice (first on line {pos[0]})",
                           _pos(name_tok))
        feat = Feature(name, kind, tuple(lab for lab, _ in cats or ()),
                       self._text(desc) if desc is not None else "")
        self.features.append((feat, _pos(kw)))
        self._index = None

    # --- trees -------------------------------------------------------------------------

    def start(self, c):
        return None

    def tree_output(self, c):
        return ("output", self._whole(c[1], "a tree's output index"), _pos(c[0]))

    def tree_weight(self, c):
        return ("weight", c[1], _pos(c[0]))

    def tree_numbering(self, c):
        return ("numbering", self._word(c[1], NUMBERINGS, "numbering"), _pos(c[0]))

    def tree(self, c):
        kw, *opts, root = c
        values, opt_pos = {}, {}
        for key, value, pos in opts:
            if key in values:
                self._error(f"'{key}' is given twice for this tree", pos)
            values[key], opt_pos[key] = value, pos
        t = PTree(_pos(kw), values.get("output"), values.get("weight", 1.0),
                  values.get("numbering", "preorder"), root, opt_pos)
        self.trees.append(t)
        self.starts.append(t)

    def node(self, c):
        nid, body = c
        if nid is not None:
            body.id, body.pos = int(nid[1:]), _pos(nid)
        return body

    def scalar_value(self, c):
        return (c[0],)

    def vector_value(self, c):
        return c[0]

    def label_value(self, c):
        return PLabel(self._text(c[0]), _pos(c[0]))

    def leaf(self, c):
        arrow, value, support = c
        sup = self._support_fields(support, ("n", "dist", "impurity"))
        if isinstance(value, PLabel):
            leaf = PLeaf(_pos(arrow), None, value, sup)
        else:
            leaf = PLeaf(_pos(arrow), value, None, sup)
        self.starts.append(leaf)
        return leaf

    def support(self, c):
        return c

    def support_item(self, c):
        return (str(c[0]), c[1], _pos(c[0]))

    def _support_fields(self, items, allowed) -> dict:
        out: dict = {}
        for key, value, pos in items or ():
            if key not in allowed:
                self._error(f"unknown field '{key}' here (expected {', '.join(allowed)})"
                           f"{suggest(key, allowed)}", pos)
            elif key in out:
                self._error(f"'{key}' is given twice", pos)
            elif (key == "dist") != isinstance(value, tuple):
                self._error(f"'{key}' takes {'a list' if key == 'dist' else 'a number'}", pos)
            else:
                out[key] = value
        return out

    # --- binary splits ----------------------------------------------------------------------

    def if_split(self, c):
        kw, (test, tpos), unseen, surr, missing, support, then_node, else_node = c
        unseen_child = None
        if unseen is not None:
            if test is not None and not isinstance(test, CategoricalTest):
                self._error("'or unseen' and 'and not unseen' only follow a category test "
                           "(x in {...})", unseen[1])
            unseen_child = unseen[0]
        default = 0 if missing is not None and missing[0] == "or" else 1
        if missing is not None and missing[0] == "blend":
            if surr is not None:
                self._error("a split handles missing values one way: surrogates or a blend, "
                           "not both", missing[2])
            miss, mpos = Blend(missing[1]), missing[2]
        elif surr is not None:
            miss, mpos = Surrogates(tuple(surr[0]), default), surr[1]
        else:
            miss, mpos = DefaultChild(default), (missing[-1] if missing else tpos)
        s = PSplit(_pos(kw), test, [then_node, else_node], miss, unseen_child,
                   self._support_fields(support, ("n", "dist", "impurity")), tpos, mpos, None)
        self.starts.append(s)
        return s

    def else_block(self, c):
        return c[1]

    def else_if(self, c):
        _, nid, split = c
        if nid is not None:
            split.id, split.pos = int(nid[1:]), _pos(nid)
        return split

    def plain_operand(self, c):
        return (c[0], "float64", _pos(c[0]))

    def cast_operand(self, c):
        call, tok = c
        fn = str(call)[:-1]  # the CALL token includes its "("
        if fn not in DTYPES:
            self._error(f"'{fn}(...)' is not a comparison type; write float32({tok}) to compare "
                       f"in float32{suggest(fn, DTYPES)}", _pos(call))
            return (tok, "float64", _pos(call))
        return (tok, fn, _pos(call))

    def numeric_test(self, c):
        (tok, dtype, pos), op, (v, num, neg) = c
        f = self._feat_index(tok, "numeric")
        if dtype == "float32" and num.type != "INF":
            v = f32_from_decimal(str(num), neg)
        return (NumericTest(f, str(op), v, dtype) if f >= 0 else None, pos)

    def set_test(self, c):
        tok, _, *labels = c
        f = self._feat_index(tok, "categorical")
        codes = self._codes(f, [x for x in labels if x is not None])
        return (CategoricalTest(f, codes) if f >= 0 else None, _pos(tok))

    def wterm(self, c):
        return (c[0], c[1])

    def oblique_test(self, c):
        *terms, op, (v, _, _) = c
        feats, weights, negate = [], [], False
        for item in terms:
            if isinstance(item, Token):
                negate = item.type == "MINUS"
                continue
            w, tok = item
            feats.append(self._feat_index(tok, "numeric"))
            weights.append(-w if negate else w)
        ok = all(f >= 0 for f in feats)
        test = ObliqueTest(tuple(feats), tuple(weights), str(op), v) if ok else None
        return (test, _pos(terms[0][1]))

    def unseen_true(self, c):
        return (0, _pos(c[0]))

    def unseen_false(self, c):
        return (1, _pos(c[0]))

    def missing_true(self, c):
        return ("or", _pos(c[0]))

    def missing_blend(self, c):
        return ("blend", c[2], _pos(c[0]))

    def surrogates(self, c):
        return ([s for s in c[1:] if s is not None], _pos(c[0]))

    def surrogate(self, c):
        neg, (test, _), support = c
        agree = self._support_fields(support, ("agree",)).get("agree")
        return Surrogate(test, 1 if neg is not None else 0, agree)

    # --- switch ----------------------------------------------------------------------------------

    def unseen_item(self, c):
        return (UNSEEN, _pos(c[0]))

    def missing_item(self, c):
        return (MISSING, _pos(c[0]))

    def case_arm(self, c):
        return ("case", [x for x in c[1:-1] if x is not None], c[-1], _pos(c[0]))

    def bound_arm(self, c):
        kw, op, lit, or_, _, node = c
        return ("bound", op, lit, or_ is not None, node, _pos(kw))

    def else_arm(self, c):
        kw, or_, _, node = c
        return ("else", or_ is not None, node, _pos(kw))

    def switch_split(self, c):
        kw, (tok, dtype, opos), blend, support, *arms = c
        kinds = [a[0] for a in arms]
        if "case" in kinds and any(k != "case" for k in kinds):
            self._error("a switch lists categories (case \"a\", \"b\") or bounds (case < 3, "
                       "then else), not both", arms[kinds.index("case")][-1])
        if kinds[0] == "case":
            test, miss, unseen = self._category_switch(tok, dtype, opos, blend, arms)
        else:
            test, miss, unseen = self._bound_switch(tok, dtype, blend, arms)
        s = PSplit(_pos(kw), test, [a[-2] for a in arms], miss, unseen,
                   self._support_fields(support, ("n", "dist", "impurity")), opos,
                   blend[2] if blend else opos, [a[-1] for a in arms])
        self.starts.append(s)
        return s

    def _category_switch(self, tok, dtype, opos, blend, arms):
        f = self._feat_index(tok, "categorical")
        if dtype != "float64":
            self._error("a switch on categories takes the plain feature name", opos)
        groups, unseen, missing, seen = [], [], [], {}
        for i, arm in enumerate(arms):
            labels = []
            for label, pos in arm[1] if arm[0] == "case" else ():
                if label is UNSEEN:
                    unseen.append((i, pos))
                elif label is MISSING:
                    missing.append((i, pos))
                else:
                    labels.append((label, pos))
            group = set()
            for label, pos in labels:
                code = self._code(f, label, pos)
                if code < 0:
                    continue
                if code in seen:
                    self._error(f"category {_show(label)} is already in the arm on line "
                               f"{seen[code]}", pos)
                seen.setdefault(code, pos[0])
                group.add(code)
            groups.append(tuple(sorted(group)))
        if len(unseen) != 1:
            where = unseen[1][1] if unseen else arms[-1][-1]
            self._error("a switch on categories needs exactly one arm with 'unseen' (where "
                       "categories not listed go)", where)
        if len(missing) > 1:
            self._error("'missing' is in two arms", missing[1][1])
        if blend is not None:
            if missing:
                self._error("missing values are blended; no arm can also take 'missing'",
                           missing[0][1])
            miss = Blend(blend[1])
        else:
            miss = DefaultChild(missing[0][0] if missing else unseen[0][0] if unseen else 0)
        test = MultiwayTest(f, tuple(groups)) if f >= 0 else None
        return test, miss, unseen[0][0] if unseen else 0

    def _bound_switch(self, tok, dtype, blend, arms):
        f = self._feat_index(tok, "numeric")
        bounds, ops, missing = [], set(), []
        for i, arm in enumerate(arms):
            last = i == len(arms) - 1
            if arm[0] == "else" and not last:
                self._error("'else' must be the last arm of a switch", arm[-1])
            if arm[0] == "bound":
                if last:
                    self._error("a switch on bounds ends with an 'else' arm (rows above every "
                               "bound)", arm[-1])
                _, op, (v, num, neg), _, _, _ = arm
                if dtype == "float32" and num.type != "INF":
                    v = f32_from_decimal(str(num), neg)
                bounds.append(v)
                if ops and str(op) not in ops:
                    self._error(f"every arm of a switch compares with the same operator; this one "
                               f"uses '{op}'", _pos(op))
                ops.add(str(op))
            if arm[-3] is True:
                missing.append((i, arm[-1]))
        if len(missing) > 1:
            self._error("'or missing' is on two arms", missing[1][1])
        if blend is not None:
            if missing:
                self._error("missing values are blended; no arm can also take 'or missing'",
                           missing[0][1])
            miss = Blend(blend[1])
        else:
            miss = DefaultChild(missing[0][0] if missing else len(arms) - 1)
        op = min(ops) if ops else "<"
        test = IntervalTest(f, op, tuple(bounds), dtype) if f >= 0 else None
        return test, miss, None
