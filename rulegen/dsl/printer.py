"""The canonical form of the rules language: every formatting decision lives here.

``dumps(parse(text)) == text`` for text this module wrote, and ``parse(dumps(m)) == m``
for every valid model, floats bit for bit. Numbers print as the shortest decimal that
reads back to the same value (Python's repr, without a trailing ``.0``); a float32
threshold prints as the shortest decimal that rounds to the same float32. Names that are
not plain identifiers, or that the parser would read as a keyword where a name stands,
go in backticks; strings in double quotes; both escape what would break a line.

Trees are printed with an explicit stack (no recursion), and indentation stops growing
at ``MAX_INDENT`` levels: structure comes from the braces, so a tree 2,500 splits deep
costs 64 spaces a line at most, not a quadratic heap of whitespace.
"""

from __future__ import annotations

import math
import re


from rulegen.codegen.literals import shortest_f32
from rulegen.dsl.parser import RESERVED
from rulegen.ir.nodes import (
    Blend,
    CategoricalTest,
    DefaultChild,
    IntervalTest,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Split,
    Surrogates,
    Tree,
)

FORMAT_LINE = "rulegen rules 1"
INDENT = "  "
MAX_INDENT = 32  # levels; deeper blocks print at this indentation (braces carry the structure)

_NAME = re.compile(r"[^\W\d]\w*(?:\.\w+)*")
# characters a string or name escapes: the quote and backslash, controls, line separators
# (str.splitlines breaks on some of them), and lone surrogates (not valid UTF-8)
_ESCAPE = re.compile(r'[\\"`\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]')
_SHORT = {"\\": "\\\\", '"': '\\"', "`": "\\`", "\n": "\\n", "\r": "\\r", "\t": "\\t"}


# --- literals ---------------------------------------------------------------------------


def num(v) -> str:
    """A float64 as the shortest decimal that reads back to it: 3, 0.1, -0, 1e-300, inf."""
    s = repr(float(v))
    return s[:-2] if s.endswith(".0") else s


def f32(v) -> str:
    """A float32 value as the shortest decimal that rounds (to nearest float32) back to it."""
    v = float(v)
    return num(v) if math.isinf(v) else shortest_f32(v)


def _esc(m: re.Match) -> str:
    ch = m.group(0)
    return _SHORT.get(ch) or f"\\u{ord(ch):04x}"


def string(s: str) -> str:
    return '"' + _ESCAPE.sub(_esc, s) + '"'


def name(s: str) -> str:
    if _NAME.fullmatch(s) and s not in RESERVED:
        return s
    return "`" + _ESCAPE.sub(_esc, s) + "`"


def label(v) -> str:
    return string(v) if isinstance(v, str) else str(int(v))


def _scalar(v) -> str:
    """A provenance parameter: keeps int apart from float."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, str):
        return string(v)
    if isinstance(v, int):
        return str(v)
    v = float(v)
    if math.isnan(v):
        return "nan"
    return repr(v)


def _nums(vs) -> str:
    return "[" + ", ".join(num(v) for v in vs) + "]"


# --- tests and clauses ------------------------------------------------------------------


def _operand(model: Model, f: int, dtype: str) -> str:
    n = name(model.features[f].name)
    return f"float32({n})" if dtype == "float32" else n


def _bound(v: float, dtype: str) -> str:
    return f32(v) if dtype == "float32" else num(v)


def condition(model: Model, test) -> str:
    """A binary test as written after ``if`` (also used for surrogates)."""
    if isinstance(test, NumericTest):
        return (f"{_operand(model, test.feature, test.dtype)} {test.op} "
                f"{_bound(test.threshold, test.dtype)}")
    if isinstance(test, CategoricalTest):
        feat = model.features[test.feature]
        labels = ", ".join(label(feat.categories[c]) for c in test.categories)
        return f"{name(feat.name)} in {{{labels}}}"
    if isinstance(test, ObliqueTest):
        parts = []
        for i, (f, w) in enumerate(zip(test.features, test.weights)):
            term = f"*{name(model.features[f].name)}"
            if i == 0:
                parts.append(num(w) + term)
            elif math.copysign(1.0, w) > 0:
                parts.append(f"+ {num(w)}{term}")
            else:
                parts.append(f"- {num(-w)}{term}")
        return f"{' '.join(parts)} {test.op} {num(test.threshold)}"
    raise TypeError(f"not a binary test: {test!r}")


def support(node) -> str:
    items = []
    if node.samples is not None:
        items.append(f"n = {num(node.samples)}")
    if node.distribution is not None:
        items.append(f"dist = {_nums(node.distribution)}")
    if node.impurity is not None:
        items.append(f"impurity = {num(node.impurity)}")
    return f" ({', '.join(items)})" if items else ""


def _if_clauses(model: Model, split: Split) -> str:
    out = condition(model, split.test)
    if split.unseen == 0:
        out += " or unseen"
    elif split.unseen == 1:
        out += " and not unseen"
    m = split.missing
    if isinstance(m, Surrogates):
        surr = []
        for s in m.surrogates:
            agree = f" (agree = {num(s.agreement)})" if s.agreement is not None else ""
            surr.append(("not " if s.child_if_true == 1 else "") + condition(model, s.test) + agree)
        out += f" surrogates [{', '.join(surr)}]"
        if m.default == 0:
            out += " or missing"
    elif isinstance(m, Blend):
        out += f" missing blend {_nums(m.weights)}"
    elif m.child == 0:
        out += " or missing"
    return out + support(split)


def _arms(model: Model, split: Split) -> list[str]:
    t, m = split.test, split.missing
    default = m.child if isinstance(m, DefaultChild) else None
    if isinstance(t, MultiwayTest):
        cats = model.features[t.feature].categories
        arms = []
        for i, group in enumerate(t.groups):
            items = [label(cats[c]) for c in group]
            items += ["unseen"] * (split.unseen == i) + ["missing"] * (default == i)
            arms.append("case " + ", ".join(items) + " {" if items else "case {")
        return arms
    arms = [f"case {t.op} {_bound(b, t.dtype)}" + (" or missing" if default == i else "") + " {"
            for i, b in enumerate(t.bounds)]
    return arms + ["else {"]


def _switch_head(model: Model, split: Split) -> str:
    t = split.test
    dtype = t.dtype if isinstance(t, IntervalTest) else "float64"
    head = f"switch {_operand(model, t.feature, dtype)}"
    if isinstance(split.missing, Blend):
        head += f" missing blend {_nums(split.missing.weights)}"
    return head + support(split) + " {"


# --- values -------------------------------------------------------------------------------


def _one_hot(value) -> int | None:
    """Index of the 1.0 in a vector of +0.0s and one 1.0, else None."""
    hot = None
    for i, v in enumerate(value):
        if v == 1.0:
            if hot is not None:
                return None
            hot = i
        elif v != 0.0 or math.copysign(1.0, v) < 0:
            return None
    return hot


def leaf_value(model: Model, tree: Tree, leaf: Leaf) -> str:
    classes = model.target.classes
    if (model.target.task == "classification" and tree.output is None
            and len(leaf.value) == len(classes) == model.n_raw >= 2):
        k = _one_hot(leaf.value)
        if k is not None and isinstance(classes[k], str):
            return string(classes[k])
    if len(leaf.value) == 1:
        return num(leaf.value[0])
    return _nums(leaf.value)


# --- trees --------------------------------------------------------------------------------


def numbering(tree: Tree) -> str:
    """'preorder', 'bfs' or 'explicit': how the tree's node ids can be written."""
    n = len(tree.nodes)
    order, stack = [], [0]
    while stack:
        i = stack.pop()
        order.append(i)
        node = tree.nodes[i]
        if isinstance(node, Split):
            stack.extend(reversed(node.children))
    if order == list(range(n)):
        return "preorder"
    order, head = [0], 0
    while head < len(order):
        node = tree.nodes[order[head]]
        head += 1
        if isinstance(node, Split):
            order.extend(node.children)
    return "bfs" if order == list(range(n)) else "explicit"


def _comment(out: list[str], text: str | None, ind: str) -> None:
    if text is not None:
        for line in text.split("\n"):
            out.append(f"{ind}# {line}" if line else f"{ind}#")


def _ind(level: int) -> str:
    return INDENT * min(level, MAX_INDENT)


def tree_lines(model: Model, tree: Tree, out: list[str]) -> None:
    """Append the lines of one tree; an explicit stack, never recursion."""
    how = numbering(tree)
    head = "tree"
    if tree.output is not None:
        head += f" output {tree.output}"
    if tree.weight != 1.0:
        head += f" weight {num(tree.weight)}"
    if how == "bfs":
        head += " numbering bfs"
    _comment(out, tree.comment, "")
    out.append(head + " {")
    nodes = tree.nodes
    ids = how == "explicit"
    # items: (node id, level, lead) for a node, or a str for a line as is
    stack: list = ["}", (0, 1, "")]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            out.append(item)
            continue
        nid, level, lead = item
        node = nodes[nid]
        ind = _ind(level)
        _comment(out, node.comment, ind)
        tag = f"@{nid} " if ids else ""
        if isinstance(node, Leaf):
            out.append(f"{ind}{tag}-> {leaf_value(model, tree, node)}{support(node)}")
        elif isinstance(node.test, (MultiwayTest, IntervalTest)):
            out.append(f"{ind}{lead}{tag}{_switch_head(model, node)}")
            inner = _ind(level + 1)
            stack.append(ind + "}")
            for arm, child in reversed(list(zip(_arms(model, node), node.children))):
                stack += [inner + "}", (child, level + 2, ""), inner + arm]
        else:
            out.append(f"{ind}{lead}{tag}if {_if_clauses(model, node)} {{")
            then, other = node.children
            nxt = nodes[other]
            if isinstance(nxt, Split) and not isinstance(nxt.test, (MultiwayTest, IntervalTest)):
                stack.append((other, level, "} else "))  # else if: the chain shares one '}'
            else:
                stack += [ind + "}", (other, level + 1, ""), ind + "} else {"]
            stack.append((then, level + 1, ""))


def header_lines(model: Model) -> list[str]:
    t, p = model.target, model.provenance
    out = [FORMAT_LINE]
    _comment(out, model.comment, "")
    out += ["", f"task {t.task}", f"target {name(t.name)}"]
    if t.task == "classification" or t.classes:
        out.append(f"classes [{', '.join(label(c) for c in t.classes)}]")
    if t.n_outputs != 1:
        out.append(f"outputs {t.n_outputs}")
    out += [f"aggregation {model.aggregation}", f"link {model.link}", f"dtype {model.dtype}",
            f"base_score {_nums(model.base_score)}"]
    prov = []
    if p.algorithm:
        prov.append(f"algorithm {string(p.algorithm)}")
    if p.library:
        prov.append(f"library {string(p.library)}")
    if p.n_samples is not None:
        prov.append(f"n_samples {p.n_samples}")
    if p.n_features is not None:
        prov.append(f"n_features {p.n_features}")
    prov += [f"param {name(k)} = {_scalar(v)}" for k, v in p.params]
    if prov:
        out += [""] + prov
    out.append("")
    for f in model.features:
        line = f"feature {name(f.name)} {f.kind}"
        if f.kind == "categorical" or f.categories:
            line += f" [{', '.join(label(c) for c in f.categories)}]"
        if f.description:
            line += f" {string(f.description)}"
        out.append(line)
    return out


def dumps(model: Model) -> str:
    """The canonical rules text of ``model``."""
    out = header_lines(model)
    for tree in model.trees:
        out.append("")
        tree_lines(model, tree, out)
    return "\n".join(out) + "\n"


# --- path conditions: the flat view and check's messages ---------------------------------


def _shown_bound(why, operand: str) -> tuple[str, str, str]:
    op, t, dtype = why
    return op, operand, _bound(t, dtype)


def state_condition(model: Model, f: int, s) -> str:
    """What a path state (rulegen.dsl.paths.FState) says about feature ``f``, e.g.
    ``2.45 <= petal_length < 4.95``, ``colour IN {"red", unseen}``, ``x IS MISSING``;
    '' when it says nothing."""
    feat = model.features[f]
    n = name(feat.name)
    if s.missing == "yes":
        return f"{n} IS MISSING"
    cond = ""
    if feat.kind == "numeric":
        lo, hi = s.lo_why, s.hi_why
        if lo and hi and lo[2] == hi[2]:
            operand = _operand(model, f, lo[2])
            flip = {">=": "<=", ">": "<"}[lo[0]]
            cond = f"{_bound(lo[1], lo[2])} {flip} {operand} {hi[0]} {_bound(hi[1], hi[2])}"
        else:
            parts = [f"{_operand(model, f, w[2])} {w[0]} {_bound(w[1], w[2])}"
                     for w in (lo, hi) if w]
            cond = " AND ".join(parts)
    else:
        every = frozenset(range(len(feat.categories)))
        cats = every if s.cats is None else s.cats
        if cats != every or not s.unseen:
            items = [label(feat.categories[c]) for c in sorted(cats)] + ["unseen"] * s.unseen
            cond = f"{n} IN {{{', '.join(items)}}}"
    if s.missing == "maybe":
        return f"({cond} OR {n} IS MISSING)" if cond else ""
    return cond or f"{n} IS NOT MISSING"


def _then(model: Model, tree: Tree, leaf: Leaf) -> str:
    target = name(model.target.name)
    value = leaf_value(model, tree, leaf)
    if len(model.trees) > 1 or tree.weight != 1.0:
        where = f"raw[{tree.output}]" if tree.output is not None else "raw"
        return f"{where} += {value}"
    classes = model.target.classes
    if (model.target.task == "classification" and tree.output is None and model.link == "identity"
            and len(leaf.value) == len(classes) >= 2 and not value.startswith('"')):
        k = max(range(len(leaf.value)), key=lambda i: (leaf.value[i], -i))
        return f"{target} = {label(classes[k])} (p = {value})"
    return f"{target} = {value}"


def flat_lines(model: Model, tree: Tree, out: list[str]) -> None:
    """One ``IF ... THEN ...`` line per reachable leaf of ``tree``."""
    from rulegen.dsl.paths import missing_children, outcomes

    stack: list = [(0, {}, ())]
    while stack:
        nid, state, notes = stack.pop()
        node = tree.nodes[nid]
        if isinstance(node, Leaf):
            conds = [c for c in (state_condition(model, f, state[f]) for f in sorted(state)) if c]
            conds += list(notes)
            sup = support(node)
            out.append(f"IF {' AND '.join(conds) or 'TRUE'} THEN {_then(model, tree, node)}"
                       + (f"  [{sup[2:-1]}]" if sup else ""))
            continue
        kids, f = outcomes(model, node, state)
        extra: list[tuple] = [() for _ in kids]
        t = node.test
        if f is None:  # oblique: the test itself is the condition
            cond = condition(model, t)
            extra = [(cond,), (f"NOT ({cond})",)]
            if isinstance(node.missing, DefaultChild):
                extra[node.missing.child] = (f"({extra[node.missing.child][0]} OR ANY MISSING)",)
            else:
                extra = [(f"({e[0]} OR ANY MISSING: see the rules file)",) for e in extra]
        elif not isinstance(node.missing, DefaultChild) and (
                state.get(f) is None or state[f].missing != "no"):
            n = name(model.features[f].name)
            how = "surrogates decide" if isinstance(node.missing, Surrogates) else "blended"
            for i in missing_children(node):
                extra[i] = (f"[{n} missing: {how}]",)
        for i in reversed(range(len(kids))):
            if kids[i] is not None:
                stack.append((node.children[i], kids[i], notes + extra[i]))


def flat_dumps(model: Model) -> str:
    """The flat view: for each tree, one rule per leaf, mutually exclusive and complete
    (rows with a missing value at a surrogate or blend split follow the notes in
    brackets). For reading only: ``parse`` does not read it back."""
    t = model.target
    out = ["# rulegen rules, flat view: one rule per leaf. For reading only; rulegen parses",
           "# the nested form (rulegen.dsl.dumps(model)), not this one."]
    what = (f"classification of {name(t.name)} into {', '.join(label(c) for c in t.classes)}"
            if t.task == "classification" else f"regression of {name(t.name)}")
    out.append(f"# {what}; {len(model.trees)} tree(s), aggregation {model.aggregation}, "
               f"link {model.link}, base_score {_nums(model.base_score)}")
    for i, tree in enumerate(model.trees):
        opts = [f"output {tree.output}"] * (tree.output is not None)
        opts += [f"weight {num(tree.weight)}"] * (tree.weight != 1.0)
        out += ["", f"TREE {i + 1}" + (f" ({', '.join(opts)})" if opts else "")]
        flat_lines(model, tree, out)
    return "\n".join(out) + "\n"
