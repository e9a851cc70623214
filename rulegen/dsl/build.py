"""From proto-nodes to the IR: numbering, comments, the header, and positions.

Comments (``# ...`` lines, gathered by the lexer) attach by position:

- a comment line attaches to the next tree, split or leaf that starts after it;
- a comment after code on the line where a node starts attaches to that node (the first
  node on the line); several comments of one node join with newlines, in file order;
- comments in the header belong to the model, except the block of comment lines right
  above the first ``tree`` line, which is that tree's; comments after the last node
  of the file also belong to the model.

Node ids follow the tree's numbering: preorder (the default), breadth-first
(``tree numbering bfs``), or the ``@id`` written on every node.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field

from rulegen.dsl.protos import PLabel, PLeaf, PSplit, PTree
from rulegen.dsl.transform import RulesTransformer, suggest
from rulegen.ir.nodes import Leaf, Model, Provenance, Split, Target, Tree


@dataclass
class ParseInfo:
    """Where things are in the text, for error messages and ``check``."""

    header: dict = field(default_factory=dict)  # key -> (line, column)
    features: list = field(default_factory=list)  # (line, column) per feature
    trees: list = field(default_factory=list)  # PTree per tree
    nodes: list = field(default_factory=list)  # per tree: the protos, indexed by node id
    version_pos: tuple = (1, 1)
    default_base_score: bool = False  # the header left base_score out

    def locate(self, path: str) -> tuple[int, int]:
        """The (line, column) an IR path such as ``trees[2].nodes[7].test.threshold`` points
        at: the most specific place recorded."""
        m = re.match(r"trees\[(\d+)\](?:\.nodes\[(\d+)\])?(\.\w+)?(?:\[(\d+)\])?", path)
        if m:
            t = int(m.group(1))
            if t >= len(self.trees):
                return self.version_pos
            tree = self.trees[t]
            if m.group(2) is None:
                key = (m.group(3) or "")[1:]
                return tree.opt_pos.get(key, tree.pos)
            n = int(m.group(2))
            if n >= len(self.nodes[t]):
                return tree.pos
            proto = self.nodes[t][n]
            part = m.group(3)
            arm = re.search(r"\.(?:bounds|groups)\[(\d+)\]", path)
            if isinstance(proto, PSplit) and arm and proto.arm_pos:
                return proto.arm_pos[min(int(arm.group(1)), len(proto.arm_pos) - 1)]
            if isinstance(proto, PSplit):
                if part in (".test", ".unseen"):
                    return proto.test_pos
                if part == ".missing":
                    return proto.missing_pos
                if part == ".children" and m.group(4) is not None:
                    k = int(m.group(4))
                    if proto.arm_pos and k < len(proto.arm_pos):
                        return proto.arm_pos[k]
                    if k < len(proto.children):
                        return proto.children[k].pos
            return proto.pos
        m = re.match(r"features\[(\d+)\]", path)
        if m and int(m.group(1)) < len(self.features):
            return self.features[int(m.group(1))]
        key = path.split(".")[-1].split("[")[0] if path.startswith("target") else path.split("[")[0]
        key = {"name": "target"}.get(key, key)
        if key in self.header:
            return self.header[key]
        if path.startswith(("features", "trees")) and self.trees:
            return self.trees[0].pos
        return self.header.get("task", self.version_pos)


def attach_comments(tf: RulesTransformer, comments, text: str) -> str | None:
    """Set ``comment`` on trees and nodes; return the model's comment."""
    starts = sorted(tf.starts, key=lambda s: s.pos)
    keys = [s.pos for s in starts]
    first_tree = tf.trees[0].pos if tf.trees else None
    found: dict[int, list[str]] = {}
    model: list[str] = []
    # the block of full-line comments right above the first tree belongs to it
    tree_block: set[int] = set()
    if first_tree is not None:
        line = first_tree[0] - 1
        by_line = {c.line: i for i, c in enumerate(comments)}
        while line in by_line and _full_line(text, comments[by_line[line]]):
            tree_block.add(by_line[line])
            line -= 1
    for i, c in enumerate(comments):
        body = str(c)[1:]
        if body.endswith("\r"):  # a file with Windows line endings
            body = body[:-1]
        if body.startswith(" "):
            body = body[1:]
        pos = (c.line, c.column)
        k = bisect.bisect_left(keys, pos)
        owner = None
        j = k - 1
        if j >= 0 and keys[j][0] == c.line:  # code before it on a node's line
            while j > 0 and keys[j - 1][0] == c.line:
                j -= 1
            owner = starts[j]
        elif first_tree is not None and pos < first_tree and i not in tree_block:
            owner = None
        elif k < len(starts):
            owner = starts[k]
        if owner is None:
            model.append(body)
        else:
            found.setdefault(id(owner), []).append(body)
    for s in starts:
        lines = found.get(id(s))
        if lines is not None:
            s.comment = "\n".join(lines)
    return "\n".join(model) if model else None


def _full_line(text: str, tok) -> bool:
    """Whether only blanks come before the comment on its line."""
    return not text[tok.start_pos - tok.column + 1:tok.start_pos].strip()


def _ordered(tf: RulesTransformer, tree: PTree) -> list | None:
    """The tree's protos in node-id order (and ids set), or None after recording a problem."""
    pre, stack = [], [tree.root]
    while stack:
        p = stack.pop()
        pre.append(p)
        if isinstance(p, PSplit):
            stack.extend(reversed(p.children))
    explicit = [p for p in pre if p.id is not None]
    if explicit:
        if tree.numbering != "preorder":
            tf._error("a tree with '@id' on its nodes cannot also say 'numbering'",
                     tree.opt_pos.get("numbering", tree.pos))
            return None
        missing = [p for p in pre if p.id is None]
        if missing:
            tf._error("this tree gives its nodes ids (@0, @1, ...); this node needs one too",
                     missing[0].pos)
            return None
        order: list = [None] * len(pre)
        for p in pre:
            if p.id >= len(pre):
                tf._error(f"node id @{p.id} is out of range: this tree has {len(pre)} nodes, "
                         f"so ids go from @0 to @{len(pre) - 1}", p.pos)
                return None
            if order[p.id] is not None:
                tf._error(f"node id @{p.id} is used twice (also on line {order[p.id].pos[0]})",
                         p.pos)
                return None
            order[p.id] = p
        return order
    if tree.numbering == "bfs":
        order, head = [tree.root], 0
        while head < len(order):
            p = order[head]
            head += 1
            if isinstance(p, PSplit):
                order.extend(p.children)
    else:
        order = pre
    for i, p in enumerate(order):
        p.id = i
    return order


def _leaf_value(tf: RulesTransformer, leaf: PLeaf, tree: PTree, classes, task):
    if leaf.label is None:
        return leaf.value
    lab: PLabel = leaf.label
    if task != "classification" or tree.output is not None:
        tf._error("a class label as a leaf needs a classifier whose trees give one value per "
                 "class; write the value(s) instead", lab.pos)
        return (0.0,)
    for k, c in enumerate(classes):
        if c == lab.label and isinstance(c, str):
            return tuple(1.0 if i == k else 0.0 for i in range(len(classes)))
    shown = [f'"{c}"' for c in classes if isinstance(c, str)]
    tf._error(f'"{lab.label}" is not a class{suggest(chr(34) + lab.label + chr(34), shown, False)}',
             lab.pos)
    return (0.0,)


def build(tf: RulesTransformer, comments, text: str) -> tuple[Model | None, ParseInfo]:
    """The model the parse describes (None if problems were recorded), and where things are."""
    info = ParseInfo(header={k: v[1] for k, v in tf.header.items()},
                     features=[pos for _, pos in tf.features], trees=tf.trees,
                     version_pos=tf.header.get("version", (None, (1, 1)))[1])
    model_comment = attach_comments(tf, comments, text)
    h = {k: v[0] for k, v in tf.header.items()}
    if "task" not in h:
        tf._error("the header needs 'task classification' or 'task regression'",
                 tf.trees[0].pos if tf.trees else info.version_pos)
    task = h.get("task", "regression")
    classes = h.get("classes", ())
    n_outputs = h.get("outputs", 1)
    if "base_score" in h:
        base = h["base_score"]
    else:
        base = (0.0,) * (len(classes) if task == "classification" else n_outputs)
        info.header["base_score"] = info.header.get("task", info.version_pos)
        info.default_base_score = True
    n_raw = len(base)
    trees = []
    for tree in tf.trees:
        if tree.output is not None and not 0 <= tree.output < n_raw:
            tf._error(f"output {tree.output} is out of range: this model has {n_raw} raw "
                     f"output(s), one per base_score value, numbered from 0",
                     tree.opt_pos["output"])
        order = _ordered(tf, tree)
        info.nodes.append(order or [])
        if order is None:
            continue
        nodes = []
        for p in order:
            sup = p.support
            if isinstance(p, PLeaf):
                nodes.append(Leaf(_leaf_value(tf, p, tree, classes, task), sup.get("n"),
                                  sup.get("dist"), sup.get("impurity"), p.comment))
            else:
                nodes.append(Split(p.test, tuple(c.id for c in p.children), p.missing, p.unseen,
                                   sup.get("n"), sup.get("dist"), sup.get("impurity"), p.comment))
        trees.append(Tree(tuple(nodes), tree.output, tree.weight, tree.comment))
    if tf.errors:
        return None, info
    seen = set()
    for k, _, pos in tf.params:
        if k in seen:
            tf._error(f"param '{k}' is given twice", pos)
            return None, info
        seen.add(k)
    # sorted by name only: names are unique now, and values of mixed types do not compare
    params = tuple(sorted(((k, v) for k, v, _ in tf.params), key=lambda kv: kv[0]))
    model = Model(
        features=tuple(f for f, _ in tf.features),
        target=Target(task, h.get("target", "target"), classes, n_outputs),
        trees=tuple(trees), base_score=base,
        aggregation=h.get("aggregation", "sum"), link=h.get("link", "identity"),
        dtype=h.get("dtype", "float64"),
        provenance=Provenance(h.get("algorithm", ""), params, h.get("library", ""),
                              h.get("n_samples"), h.get("n_features")),
        comment=model_comment)
    return model, info
