"""The C target: a header and one or more C99 translation units, exact bit for bit.

Each tree is a ``static`` function that adds its leaf to the accumulator array. Its body
is nested ``if``/``else`` while the nesting stays within ``MAX_NESTING`` blocks, and a flat
goto/label form beyond (MSVC stops at 128 nested blocks, C1061; the goto form has none, so
any depth compiles). Trees with C4.5 blends get a forward pass over node ids instead (see
:mod:`rulegen.targets.brace_trees`). The table form (:mod:`rulegen.targets.c.table`) writes
trees as ``static const`` arrays that one loop descends, for big trees and big ensembles;
``form`` picks one for every tree (``auto``: see ``MAX_BRANCHY_NODES``), and a tree the
requested form cannot express falls back to nested or goto. Large ensembles are split over
several translation units.

Exactness notes (docs/IR.md is the specification):

- Comparisons are in double; float32 tests use the exact float64 bound from
  :func:`rulegen.codegen.lower.float64_bound`. "Go left when ``x <= t``, missing left" is
  written ``!(x > t)``, which is NaN-safe with no isnan call.
- float32 models accumulate in ``float`` (every C ``float`` operation rounds to float with
  FLT_EVAL_METHOD 0), and their link runs in float with ``expf`` as XGBoost's does (docs/IR.md).
- FMA contraction: gcc 12 ignores ``#pragma STDC FP_CONTRACT OFF`` (a -Wunknown-pragmas error
  under -Wall -Werror) and, with ``-std=gnu99 -ffp-contract=fast -march=native``, does fuse
  ``s + w*x`` even across statements. So every product that feeds an addition (oblique sums,
  blend weights, a blended tree's weight) is stored in a ``volatile`` local first: a compiler
  cannot fuse through a volatile, whatever its flags. Ordinary leaves fold the tree weight in
  at generation time, so they have no products at all.
- gcc 12.2 at -O2 miscompiles ``(double)(float)x`` in a vectorised loop (the SLP vectoriser
  drops the round trip, even through a float array), so float32 outputs are rounded through a
  ``volatile float`` in the template.
"""

from __future__ import annotations

import numpy as np

import rulegen
from rulegen.codegen import lower
from rulegen.codegen.jinja import render
from rulegen.codegen.literals import (
    c_comment,
    c_double,
    c_float,
    c_identifier,
    c_string,
)
from rulegen.errors import RulegenError
from rulegen.ir.nodes import Leaf, Model, Tree
from rulegen.targets import brace_trees
from rulegen.targets.c import packed as c_packed
from rulegen.targets.c import profile as c_profile
from rulegen.targets.c import rows as c_rows
from rulegen.targets.c import table as c_table
from rulegen.targets.c import trees as c_trees
from rulegen.targets.base import Target
from rulegen.targets.brace_trees import show

FORMS = ("auto", "nested", "goto", "table")
PRECISIONS = ("float64", "float32")


class CTarget(Target):
    name = "c"
    description = "C99 header and source files, no dependencies beyond <math.h>"

    MAX_NESTING = 32  # nested if/else up to this many blocks deep, goto/label form beyond
    # "auto" writes a tree as a table (rulegen/targets/c/table.py) when the table can express
    # it and either the tree has more than MAX_BRANCHY_NODES nodes or the model has several
    # trees and more than TABLE_ENSEMBLE_NODES nodes in all; otherwise nested, or goto beyond
    # MAX_NESTING. Measured with gcc 12.2 -O2 on this 2-core EPYC, ns per row on rows drawn
    # like the training data:
    # - One CART tree (fitted on 100k x 20 rows, cut down to n nodes): branchy code runs
    #   2-2.5x faster than the table (one descent cannot hide its load latency: 2k nodes 29 vs
    #   66 ns, 20k 47 vs 105 ns), but gcc's time grows quadratically: nested 0.3 / 1.0 / 3.8 /
    #   8-12 s at 2k / 5k / 10k / 20k nodes, goto 0.4 / 1.4 / 4.7 / 17 s, and the full 200k-node
    #   tree over 17 minutes (3.9 GB); its table takes 1.3 s (20k: 0.15 s). So a tree goes to
    #   the table once its branchy code would cost more than about a second.
    MAX_BRANCHY_NODES = 5000
    # - Boosted depth-6 CART trees: nested vs table at 16 trees (2010 nodes) 101 vs 119 ns,
    #   20 (2506) 133 vs 151, 24 (2990) 183 vs 164, 32 (3974) 280 vs 181, 100 (10k) 1282 vs 555,
    #   500 random depth-6 trees ~26000 vs 3000. On random trees and rows (big_ensemble, branches
    #   unpredictable) the table wins from 10 trees (410 nodes: 74 vs 56 ns; 2042: 443 vs 230).
    TABLE_ENSEMBLE_NODES = 2500
    MAX_TREES_PER_FILE = 100  # trees per translation unit
    MAX_NODES_PER_FILE = 20000  # nodes per translation unit (a tree is never split)
    # Rows per block of NAME_predict_batch: each tree (or table) runs over a block before the
    # next, so it is read from memory once per block instead of once per row. Its stack is
    # BATCH_BLOCK accumulator rows (and float rows widened to double for _batch_f).
    BATCH_BLOCK = 64

    def generate(self, model: Model, *, name: str = "model", **options) -> dict[str, str]:
        comments = bool(options.pop("comments", True))
        form = options.pop("form", "auto")
        precision = options.pop("precision", "float64")
        positive = bool(options.pop("positive_only", False))
        block = options.pop("batch_block", self.BATCH_BLOCK)
        leaves = bool(options.pop("leaves", False))
        if options:
            raise RulegenError(f"unknown option(s) for the C target: {', '.join(sorted(options))}")
        if form not in FORMS:
            raise RulegenError(f"form must be one of {', '.join(FORMS)}, got {form!r}")
        if precision not in PRECISIONS:
            raise RulegenError(f"precision must be one of {', '.join(PRECISIONS)}, got {precision!r}")
        if not isinstance(block, int) or isinstance(block, bool) or not 1 <= block <= 4096:
            raise RulegenError(f"batch_block must be a whole number from 1 to 4096, got {block!r}")
        if precision == "float32":
            c_profile.check_float_profile(model)
        if positive:
            model = c_profile.positive_only(model)
        if leaves:
            c_profile.check_leaves(model)
        return _Builder(self, model, c_identifier(name), comments, form, precision == "float32",
                        positive, block, leaves).files()


class _Builder:
    def __init__(self, target: CTarget, model: Model, prefix: str, comments: bool, form: str,
                 f32p: bool = False, positive: bool = False, block: int = 64, leaves: bool = False):
        self.t, self.model, self.prefix, self.comments, self.form = target, model, prefix, comments, form
        self.f32 = model.dtype == "float32"
        self.f32p, self.positive, self.block = f32p, positive, block
        self.real = "float" if f32p else "double"  # features and outputs
        self.acc_type = "float" if self.f32 or f32p else "double"
        self.total_nodes = sum(len(t.nodes) for t in model.trees)
        self.leaves = leaves  # also write NAME_predict_leaves

    def lit(self, v: float) -> str:
        """A literal in the accumulation type (rounded to float there)."""
        return c_float(float(np.float32(v))) if self.acc_type == "float" else c_double(v)

    # --- trees -----------------------------------------------------------------------

    def form_of(self, tree: Tree) -> str:
        """The form one tree's body takes: the requested one where it applies (a tree the
        table cannot express falls back to nested or goto, a blended tree always uses the
        blend pass), or, with "auto", the choice described at ``MAX_BRANCHY_NODES``."""
        if lower.has_blend(tree):
            return "blend"
        branchy = "nested" if brace_trees.nesting(tree) <= self.t.MAX_NESTING else "goto"
        if self.form in ("nested", "goto"):
            return self.form
        if not c_table.supports(tree):
            return branchy
        if self.form == "table" or self.f32p:  # the float profile is for flash: tables are smallest
            return "table"
        if len(tree.nodes) > self.t.MAX_BRANCHY_NODES:
            return "table"
        if len(self.model.trees) > 1 and self.total_nodes > self.t.TABLE_ENSEMBLE_NODES:
            return "table"
        return branchy

    def tree_function(self, index: int, tree: Tree, form: str) -> dict:
        m, p = self.model, self.prefix
        em = c_trees.Emitter(m, tree, p, self.comments, self.f32p)
        width = 1 if tree.output is not None else m.n_raw
        slots = [tree.output] if tree.output is not None else list(range(m.n_raw))
        vote = m.aggregation == "vote"
        if form == "blend":
            body = brace_trees.emit_blend(em, width, lambda leaf: [c_double(v) for v in leaf.value])
            body += self.blend_tail(em, tree, width, slots)
        else:
            def leaf_lines(_nid: int, leaf: Leaf) -> list[str]:
                if vote:
                    j = lower.vote_index(leaf, tree.weight)
                    return [f"acc[{j}] = acc[{j}] + {self.lit(tree.weight)};"]
                values = lower.leaf_contribution(m, tree, leaf)
                return [" ".join(f"acc[{j}] = acc[{j}] + {self.lit(v)};" for j, v in zip(slots, values))]

            emit = brace_trees.emit_nested if form == "nested" else brace_trees.emit_goto
            body = emit(em, leaf_lines)
        note = f"tree {index}: {len(tree.nodes)} nodes, depth {lower.depth(tree)}, {form} form"
        if tree.weight != 1.0:
            note += f", weight {tree.weight!r}"
        if tree.output is not None:  # never with "vote": validation refuses it
            note += f", adds to raw[{tree.output}]"
        return {"name": f"{p}_tree_{index}", "index": index, "first": index, "last": index,
                "comments": [note], "decls": list(em.decls), "void_x": True, "body": body,
                "uses_dot": em.uses_dot}

    def leaf_function(self, index: int, tree: Tree, form: str) -> dict:
        """Tree ``index`` as a function that stores the node id of the leaf a row reaches in
        ``acc[index]`` (an int array): NAME_predict_leaves."""
        em = c_trees.Emitter(self.model, tree, self.prefix, False, self.f32p)
        emit = brace_trees.emit_nested if form == "nested" else brace_trees.emit_goto
        body = emit(em, lambda nid, _leaf: [f"acc[{index}] = {nid};"])
        return {"name": f"{self.prefix}_leaf_{index}", "index": index, "first": index, "last": index,
                "comments": [f"tree {index}: the leaf's node id, {form} form"], "decls": list(em.decls),
                "void_x": True, "body": body, "uses_dot": em.uses_dot, "acc": "int"}

    def blend_tail(self, em: c_trees.Emitter, tree: Tree, width: int, slots: list[int]) -> list[str]:
        """Weight the blended output o[], then add it (or its vote) to the accumulator."""
        ind, out = c_trees.INDENT, []
        cast = "(float)" if self.f32 else ""
        weighted = tree.weight != 1.0
        if self.model.aggregation == "vote":
            em.decls["int k;"] = em.decls["int b = 0;"] = None
            if weighted:
                out += [f"{ind}o[{k}] = {c_double(tree.weight)} * o[{k}];" for k in range(width)]
            out += [f"{ind}for (k = 1; k < {width}; k++) {{",
                    f"{ind * 2}if (o[b] != o[b]) break;  /* the first NaN wins, as numpy's argmax */",
                    f"{ind * 2}if (o[k] > o[b] || o[k] != o[k]) b = k;",
                    f"{ind}}}",
                    f"{ind}acc[b] = acc[b] + {self.lit(tree.weight)};"]
            return out
        for k, j in enumerate(slots):
            if weighted:
                out.append(f"{ind}q = {c_double(tree.weight)} * o[{k}]; acc[{j}] = acc[{j}] + {cast}q;")
            else:
                out.append(f"{ind}acc[{j}] = acc[{j}] + {cast}o[{k}];")
        return out

    def chunks(self) -> list[list[dict]]:
        """Tree functions per translation unit; in each, a run of consecutive table-form
        trees with the same kind of leaves becomes one function (see c_table)."""
        chunks: list[list[tuple[int, Tree]]] = [[]]
        nodes = 0
        for i, tree in enumerate(self.model.trees):
            cur = chunks[-1]
            full = len(cur) >= self.t.MAX_TREES_PER_FILE
            if cur and (full or nodes + len(tree.nodes) > self.t.MAX_NODES_PER_FILE):
                chunks.append([])
                nodes = 0
            chunks[-1].append((i, tree))
            nodes += len(tree.nodes)
        out, self.leaf_units = [], []
        for chunk in chunks:
            if self.leaves:
                self.leaf_units.append(self._units(chunk, self.leaf_function, lambda _t: "id", "int",
                                                   False, "leaves"))
            out.append(self._units(chunk, self.tree_function,
                                   lambda t: c_table.leaf_kind(self.model, t), self.acc_type,
                                   self.comments, "table"))
        return out

    def _units(self, chunk, branchy, kind_of, acc_type: str, comments: bool, table_name: str) -> list[dict]:
        """One translation unit's functions: ``branchy(index, tree, form)`` for a tree not in
        the table form, and one table function for each run of table-form trees of one kind
        (row tables for a one-tree model, see c_rows)."""
        units: list = []
        for i, tree in chunk:
            form = self.form_of(tree)
            if form != "table":
                units.append(branchy(i, tree, form))
                continue
            kind = kind_of(tree)
            rows32 = not self.f32p and c_table.float_rows_apply(self.model, tree, kind, acc_type)
            last = units[-1] if units and isinstance(units[-1], c_table.Group) else None
            if not (last and last.kind == kind and last.rows32 == rows32):
                units.append(c_table.Group(self.model, kind, acc_type, self.lit, comments, self.f32p, rows32))
            units[-1].add(i, tree)
        # a one-tree model: row tables for the batch (c_rows), and for one row too in the table form
        rows = None
        if table_name == "table" and self.form_of(chunk[0][1]) != "blend" and c_rows.supports(self.model):
            table, kind = isinstance(units[0], c_table.Group), kind_of(chunk[0][1])
            rows32 = not self.f32p and c_table.float_rows_apply(self.model, chunk[0][1], kind, acc_type)
            args = (self.model, kind, acc_type, self.lit, comments, self.f32p)
            if c_packed.PackedGroup.applies(self.model, kind, self.f32p):  # flash first
                rows = c_packed.PackedGroup(*args)
            if rows is None or not rows.fits:
                rows = c_rows.RowsGroup(*args, one_row=table, float_rows=not self.f32p, rows32=rows32)
            if table:
                units = [rows]
        out = [u.unit(f"{self.prefix}_{table_name}_{u.indices[0]}") if isinstance(u, c_table.Group)
               else u for u in units]
        if rows and not isinstance(units[0], c_rows.RowsGroup):
            batch = rows.unit(f"{self.prefix}_rows_0")
            out[0].update(batch=batch["name"], globals=batch["globals"], functions=batch["functions"],
                          float_block=batch["float_block"], batch_comments=batch["comments"],
                          stdint=batch.get("stdint"))
        for u in out:  # the templates read these from every unit
            for key in ("block", "batch", "float_block", "functions", "body", "uses_dot"):
                u.setdefault(key, None)
        return out

    # --- files -------------------------------------------------------------------------

    def features(self) -> list[dict]:
        out = []
        for i, f in enumerate(self.model.features):
            cats = [{"code": k, "label": c_comment(show(lab))} for k, lab in enumerate(f.categories)]
            out.append({"index": i, "name": c_comment(show(f.name)), "kind": f.kind,
                        "categories": cats, "string": c_string(f.name)})
        return out

    def files(self) -> dict[str, str]:
        m, p = self.model, self.prefix
        classifier = m.target.task == "classification"
        binary = classifier and m.n_raw == 1 and len(m.target.classes) == 2
        n_out = 1 if self.positive else len(m.target.classes) if classifier else m.n_raw
        chunks = self.chunks()
        # float rows straight into row tables: every tree function of the one unit has a
        # float variant (c_rows), or None
        trees_f = [t["float_block"] for t in chunks[0]] if all(t.get("float_block") for t in chunks[0]) else None
        divisor = None
        if m.aggregation == "mean":
            divisor = self.lit(float(len(m.trees)))
        elif m.aggregation == "vote":
            divisor = self.lit(lower.total_weight(m))
        prov = m.provenance
        source = ", ".join(c_comment(s) for s in (prov.algorithm, prov.library) if s)
        ctx = {
            "prefix": p, "guard": f"RULEGEN_{p.upper()}_H", "version": rulegen.__version__,
            "source": source, "n_trees": len(m.trees), "n_files": len(chunks),
            "aggregation": m.aggregation, "link": m.link, "dtype": m.dtype, "acc_type": self.acc_type,
            "f32": self.f32, "needs_lm": m.link != "identity", "task": m.target.task,
            "target_name": c_comment(show(m.target.name)),
            "classifier": classifier, "binary": binary, "n_features": len(m.features),
            "n_raw": m.n_raw, "n_outputs": n_out, "features": self.features(),
            "classes": [{"string": c_string(c), "comment": c_comment(show(c))}
                        for c in m.target.classes],
            "base": [self.lit(b) for b in m.base_score], "divisor": divisor,
            "parts": [f"{p}_part_{i}" for i in range(1, len(chunks))],
            "real": self.real, "f32p": self.f32p, "leaves": self.leaves,
            # one tree in branchy code alone runs a row at a time (blocks measured 11% slower
            # on a depth-8 tree); with row tables it runs in blocks
            "block_rows": len(m.trees) > 1 or any(t.get("block") or t.get("batch") for t in chunks[0]),
            "positive": self.positive, "block": self.block,
            "zero": "0.0f" if self.f32p else "0.0",
            "trees_f": trees_f,
            "batch_stack": self.block * (m.n_raw * (4 if self.acc_type == "float" else 8)
                                         + (0 if self.f32p or trees_f else 8 * len(m.features))),
        }
        if self.f32p:
            ctx.update(c_profile.float_bounds(m))
        files = {f"{p}.h": render("c/header.h.j2", ctx)}
        for i, trees in enumerate(chunks):
            leaf_units = self.leaf_units[i] if self.leaves else []
            everything = trees + leaf_units
            huge = any("HUGE_VAL" in line for t in everything for line in _lines(t))
            part = {**ctx, "trees": trees, "leaf_units": leaf_units,
                    "uses_dot": any(t["uses_dot"] for t in everything),
                    "include_math": huge or (i == 0 and ctx["needs_lm"]),
                    "include_stdint": any(t.get("stdint") for t in trees),
                    "part": None if i == 0 else f"{p}_part_{i}", "part_index": i}
            files[f"{p}.c" if i == 0 else f"{p}_{i}.c"] = render(
                "c/source.c.j2" if i == 0 else "c/part.c.j2", part)
        return files


def _lines(unit: dict) -> list[str]:
    """Every line of C a tree-function record holds."""
    lines = list(unit["body"] or []) + list(unit.get("decls") or []) + list(unit.get("globals") or [])
    for f in unit["functions"] or []:
        lines += f
    return lines
