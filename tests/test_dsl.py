"""The rules language (rulegen.dsl): lossless round trips, errors, check, flat view, and
hand edits that recompile to C, Python and SQL exactly as the evaluator says."""

from __future__ import annotations

import json
import math
import random
import re
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from irfixtures import (
    adversarial_names,
    all_models,
    big_ensemble,
    chain,
    labels_for,
    probe_rows,
    random_model,
)
from run_c import have_cc, run_c
from run_python import run_python
from run_sql import check_sql

import rulegen
from rulegen.dsl import Diagnostic, check, dumps, looks_like_rules, parse
from rulegen.dsl.errors import ERROR_EXAMPLES, complete
from rulegen.dsl.literals import f32_from_decimal
from rulegen.dsl.parser import RESERVED, grammar_text, tree_parser
from rulegen.dsl.printer import MAX_INDENT, f32
from rulegen.errors import DSLSyntaxError, IRValidationError
from rulegen.ir import evaluate, serialize
from rulegen.ir.nodes import (
    CategoricalTest,
    DefaultChild,
    Feature,
    Leaf,
    Model,
    MultiwayTest,
    NumericTest,
    ObliqueTest,
    Provenance,
    Split,
    Surrogate,
    Surrogates,
    Target,
    Tree,
)
from rulegen.ir.validate import validate

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "dsl"
IRIS = ROOT / "examples" / "iris.rules"
CANONICAL = sorted(FIXTURES.glob("*.rules"))


def assert_round_trip(model: Model) -> str:
    """parse(dumps(m)) == m, floats bit for bit (the JSON form spells -0.0), and the text
    is canonical: printing what was parsed gives the same text."""
    text = dumps(model)
    back = parse(text)
    assert back == model
    assert serialize.dumps(back) == serialize.dumps(model)
    assert dumps(back) == text
    return text


# --- round trips ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(all_models()))
def test_fixture_models_round_trip(name):
    assert_round_trip(all_models()[name])


def test_random_models_round_trip():
    for seed in range(150):
        assert_round_trip(random_model(seed))


def _learned_models() -> dict[str, Model]:
    """What every learner and importer emits, on small data."""
    from rulegen.importers import lightgbm as lgbi
    from rulegen.importers import xgboost as xgbi
    from rulegen.importers.sklearn import from_sklearn
    from rulegen.learn import CARTClassifier, CARTRegressor

    data = np.genfromtxt(ROOT / "examples" / "iris.csv", delimiter=",", skip_header=1,
                         usecols=(0, 1, 2, 3))
    y = np.repeat([0, 1, 2], 50)
    out = {
        "cart-classifier": CARTClassifier(max_depth=4, random_state=0).fit(data, y),
        # best first: node ids in no tree order, so the text writes them (@id)
        "cart-best-first": CARTClassifier(max_leaf_nodes=10, random_state=0).fit(data, y),
        "cart-regressor": CARTRegressor(max_depth=4, random_state=0).fit(data[:, 1:],
                                                                              data[:, 0]),
    }
    out = {k: v.model_ for k, v in out.items()}
    import sklearn.ensemble as sk
    from sklearn import tree
    X = np.column_stack([data, y % 2])
    for name, est in {
        "sklearn-tree": tree.DecisionTreeClassifier(max_depth=4, random_state=0),
        "sklearn-forest": sk.RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0),
        "sklearn-gb": sk.GradientBoostingClassifier(n_estimators=5, max_depth=2, random_state=0),
        "sklearn-hgb-categorical": sk.HistGradientBoostingClassifier(
            max_iter=5, categorical_features=[4], random_state=0),
    }.items():
        out[name] = from_sklearn(est.fit(X, y))
    xgb = json.loads((ROOT / "tests" / "fixtures" / "xgboost" / "pandas_categorical.json")
                     .read_text(encoding="utf-8"))
    out["xgboost"] = xgbi.from_dict(xgb["model"])
    out["lightgbm"] = lgbi.load(ROOT / "tests" / "fixtures" / "lightgbm" / "multiclass_cat.txt")
    return out


def test_learner_and_importer_models_round_trip():
    for name, model in _learned_models().items():
        try:
            text = assert_round_trip(model)
        except AssertionError as e:  # pragma: no cover - name the model that failed
            raise AssertionError(name) from e
        if name.startswith("cart"):  # best first numbers nodes in no tree order: @ids
            assert ("@0 if" in text) == (name == "cart-best-first"), name


def test_deep_chain_and_big_ensemble_need_no_recursion():
    """A depth-2,500 tree and a 1,000-tree ensemble, with a recursion limit far below the
    depth: nothing in the parser, transformer or printer recurses per level."""
    deep, big = chain(2500), big_ensemble(1000)
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(200)
    try:
        deep_text = assert_round_trip(deep)
        big_text = assert_round_trip(big)
        dumps(deep, flat=True)
        assert check(deep_text)  # the chain's thresholds contradict each other: warnings
    finally:
        sys.setrecursionlimit(old)
    # indentation stops growing at MAX_INDENT levels: the text stays linear in the tree
    widest = max(len(line) - len(line.lstrip(" ")) for line in big_text.splitlines())
    assert widest <= 2 * MAX_INDENT
    assert len(deep_text) < 80 * len(deep.trees[0].nodes)


def test_indentation_is_capped_for_deep_true_branches():
    """Each split's first child is the next split: nested blocks 300 deep, printed at
    most MAX_INDENT levels in."""
    depth, out = 300, []
    for i in range(depth):  # preorder: split i is node i; its else leaf comes at the end
        out.append(Split(NumericTest(0, "<", float(i)), (i + 1, 2 * depth - i), DefaultChild(1)))
    out.append(Leaf((-1.0,)))
    out += [Leaf((float(i),)) for i in reversed(range(depth))]
    model = validate(Model((Feature("x"),), Target("regression"), (Tree(tuple(out)),), (0.0,)))
    text = assert_round_trip(model)
    assert max(len(line) - len(line.lstrip(" ")) for line in text.splitlines()) == 2 * MAX_INDENT


@pytest.mark.parametrize("path", CANONICAL + [IRIS], ids=lambda p: p.name)
def test_canonical_files_print_back_byte_for_byte(path):
    text = path.read_text(encoding="utf-8")
    model = parse(text, str(path))
    if path != IRIS:  # the example is hand-written: it leaves defaults out
        assert dumps(model) == text
    assert_round_trip(model)


def test_looks_like_rules():
    assert looks_like_rules(IRIS.read_text(encoding="utf-8"))
    assert looks_like_rules("\ufeff# a note\n\n  rulegen rules 1\n")
    assert not looks_like_rules(serialize.dumps(all_models()["classifier"]))
    assert not looks_like_rules("# only a comment\n")


def test_hand_written_defaults_and_spacing():
    """Structure comes from braces: layout, blank lines and defaults are free."""
    text = ('rulegen rules 1 task regression feature x numeric\n'
            'tree{if x<1{->1}else{if x<=2 or missing{->[2]}else{->3}}}')
    model = parse(text)
    assert model.aggregation == "sum" and model.link == "identity" and model.base_score == (0.0,)
    assert dumps(model).count("else if") == 1
    assert parse(dumps(model)) == model


def test_adversarial_names_and_labels():
    model = adversarial_names()
    text = assert_round_trip(model)
    assert "`*/ x /*`" in text and "年龄 " in text and "`1st`" in text and 'feature select ' in text


def _keyword_model(word: str) -> Model:
    feats = (Feature(word), Feature(word + "2", "categorical", ("a", "b")), Feature("z"))
    nodes = (
        Split(ObliqueTest((0, 2), (1.0, 2.0), "<", 1.0), (1, 2),
              Surrogates((Surrogate(NumericTest(0, "<", 1.0), 0),
                          Surrogate(CategoricalTest(1, (0,)), 1)), 0)),
        Split(NumericTest(0, "<=", 2.0), (3, 4), DefaultChild(0)),
        Split(MultiwayTest(1, ((0,), (1,))), (5, 6), DefaultChild(0), unseen=1),
        Split(NumericTest(0, "<=", 2.0, "float32"), (7, 8), DefaultChild(0)),
        Leaf((2.0,)), Leaf((3.0,)), Leaf((4.0,)), Leaf((5.0,)), Leaf((6.0,)))
    return validate(Model(feats, Target("regression", word), (Tree(nodes),), (0.0,),
                          provenance=Provenance(params=((word, 1),))))


def _keywords() -> list[str]:
    return sorted({t.pattern.value.replace("\\b", "") for t in tree_parser().terminals
                   if t.priority == 2})


def test_keywords_are_names_where_no_keyword_fits():
    """Every keyword works as a feature, target and param name; only the RESERVED ones
    (where the parser could take a keyword or a name) are quoted, and quoting is needed."""
    for word in _keywords() + ["float32", "numeric", "n", "dist", "bfs", "classification"]:
        text = assert_round_trip(_keyword_model(word))
        assert (f"`{word}`" in text) == (word in RESERVED)
    for word in RESERVED:
        text = dumps(_keyword_model(word)).replace(f"`{word}`", word)
        with pytest.raises(DSLSyntaxError):
            parse(text)


def test_comments_survive_rules_to_json_to_rules():
    text = (FIXTURES / "identity.rules").read_text(encoding="utf-8")
    model = parse(text)
    assert model.comment.startswith("Every construct")
    assert model.trees[0].comment.startswith("A full-vector tree")
    again = serialize.loads(serialize.dumps(model))
    assert dumps(again) == text


def test_comment_placement():
    text = """rulegen rules 1
# model 1
task regression  # model 2
feature x numeric
# model 3

# tree 1
tree {  # tree 2
  # split 1
  if x < 1 {  # split 2
    -> 1  # leaf 1
    # the else-if split
  } else if x < 2 {
    -> 2
  } else {  # the else leaf
    # the else leaf, 2
    -> 3
  }
}
# model 4
"""
    m = parse(text)
    assert m.comment == "model 1\nmodel 2\nmodel 3\nmodel 4"
    t = m.trees[0]
    assert t.comment == "tree 1\ntree 2"
    assert [n.comment for n in t.nodes] == ["split 1\nsplit 2", "leaf 1", "the else-if split",
                                            None, "the else leaf\nthe else leaf, 2"]
    assert parse(dumps(m)) == m
    crlf = parse(text.replace("\n", "\r\n"))
    assert crlf == m


# --- hypothesis: random names, labels, comments, floats and node numberings ---------------

# any character the IR allows in names and labels (the printer escapes what would break a
# line; NUL and lone surrogates are refused by validation); comments are lines of text, so
# a carriage return in one is not kept
_text = st.text(st.characters(codec=None, exclude_categories=("Cs",), exclude_characters="\x00"), max_size=12) | st.sampled_from(
    ["", "\r", "\n", "\u2028", "`", '"', "\\", "*/", "if", "inf", "not", "#"])
_comment_text = st.text(st.characters(blacklist_characters="\r"), max_size=12)
_label = st.one_of(_text, st.integers(-10**20, 10**20))
_float = st.floats(allow_nan=False, allow_infinity=False)


def _renumber(tree: Tree, draw) -> Tree:
    """Random node ids that still put every child after its parent."""
    order, frontier = [], [0]
    while frontier:
        i = frontier.pop(draw(st.integers(0, len(frontier) - 1)))
        order.append(i)
        node = tree.nodes[i]
        if isinstance(node, Split):
            frontier += list(node.children)
    new = {old: k for k, old in enumerate(order)}
    nodes = [None] * len(order)
    for old, node in enumerate(tree.nodes):
        if isinstance(node, Split):
            node = Split(node.test, tuple(new[c] for c in node.children), node.missing, node.unseen,
                         node.samples, node.distribution, node.impurity, node.comment)
        nodes[new[old]] = node
    return Tree(tuple(nodes), tree.output, tree.weight, tree.comment)


@st.composite
def models(draw) -> Model:
    base = random_model(draw(st.integers(0, 10**6)))
    names = draw(st.lists(_text.filter(bool), min_size=5, max_size=5, unique=True))
    feats = []
    for f, n in zip(base.features, names):
        cats = f.categories
        if cats:
            cats = tuple(draw(st.lists(_label, min_size=len(cats), max_size=len(cats),
                                       unique_by=lambda v: (type(v), v))))
        feats.append(Feature(n, f.kind, cats, draw(_text)))
    classes = base.target.classes
    if classes:
        classes = tuple(draw(st.lists(_label, min_size=len(classes), max_size=len(classes),
                                      unique_by=lambda v: (type(v), v))))
    comment = st.one_of(st.none(), _comment_text)
    trees = []
    for tree in base.trees:
        nodes = []
        for node in tree.nodes:
            if isinstance(node, Leaf):
                node = Leaf(tuple(draw(_float) if draw(st.booleans()) else v for v in node.value),
                            node.samples, node.distribution, node.impurity, draw(comment))
            else:
                test = node.test
                if isinstance(test, NumericTest) and draw(st.booleans()):
                    t = (draw(st.floats(width=32, allow_nan=False)) if test.dtype == "float32"
                         else draw(st.floats(allow_nan=False)))
                    test = NumericTest(test.feature, test.op, t, test.dtype)
                node = Split(test, node.children, node.missing, node.unseen, node.samples,
                             node.distribution, node.impurity, draw(comment))
            nodes.append(node)
        tree = Tree(tuple(nodes), tree.output, tree.weight, draw(comment))
        trees.append(_renumber(tree, draw) if draw(st.booleans()) else tree)
    params = tuple(sorted(draw(st.dictionaries(_text, st.one_of(
        st.none(), st.booleans(), st.integers(), _float, _text), max_size=3)).items()))
    return validate(Model(tuple(feats), Target(base.target.task, draw(_text), classes,
                                               base.target.n_outputs),
                          tuple(trees), base.base_score, base.aggregation, base.link, base.dtype,
                          Provenance(draw(_text), params, draw(_text)), draw(comment)))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(models())
def test_hypothesis_models_round_trip(model):
    assert_round_trip(model)


def test_float32_literals_round_trip_and_round_once():
    rng = np.random.default_rng(7)
    vals = rng.integers(0, 2**32, size=20000, dtype=np.uint64).astype(np.uint32).view(np.float32)
    extremes = [float(np.float32(v)) for v in (0.0, -0.0, 1e-45, -1e-45, 3.4028235e38, 1.2e-38)]
    for v in [float(x) for x in vals if np.isfinite(x)] + extremes:
        text = f32(v)
        back = f32_from_decimal(text.lstrip("-"), text.startswith("-"))
        assert back == v and math.copysign(1, back) == math.copysign(1, v), (v, text)
    # a decimal just above a float32 midpoint whose float64 lands on the midpoint itself:
    # rounding through float64 would give 1.0, a C compiler (and this parser) the next float
    text = "1.000000059604644775390625000001"
    assert float(np.float32(float(text))) == 1.0
    assert f32_from_decimal(text, False) == float(np.nextafter(np.float32(1), np.float32(2)))
    assert f32(float(np.float32(2.45))) == "2.45"


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize("message,snippet",
                         [(m, s) for m, snippets in ERROR_EXAMPLES for s in snippets])
def test_error_examples(message, snippet):
    with pytest.raises(DSLSyntaxError) as info:
        parse(complete(snippet), "bad.rules")
    err = info.value
    head = message.split("{prev}")[0].split("{token}")[0].replace("{{", "{").replace("}}", "}")
    assert err.plain.startswith(head)
    first, *rest = str(err).split("\n")
    assert first == f"bad.rules:{err.line}:{err.column}: {err.plain}"
    assert rest and rest[-1].strip() == "^"


def test_error_messages_a_person_can_act_on():
    text = """rulegen rules 1
task classification
classes ["a", "b"]
feature petal_length numeric
feature colour categorical ["red", "blue"]
tree {
  if petal_length < 1 {
    -> "a"
  } else {
    if petal_length 2.45 {
      -> "a"
    } else {
      -> "b"
    }
  }
}
"""
    with pytest.raises(DSLSyntaxError) as info:
        parse(text, "model.rules")
    lines = str(info.value).split("\n")
    assert lines[0] == "model.rules:10:21: expected a comparison after 'petal_length': " \
                       "'<', '<=' or 'in {...}'"
    assert lines[1] == "        if petal_length 2.45 {"
    assert lines[2] == "    " + " " * 20 + "^"
    for bad, want in [
        ("petal_lenght < 1", "unknown feature 'petal_lenght'; did you mean 'petal_length'?"),
        ('colour in {"bleu"}', "\"bleu\" is not a category of 'colour'; did you mean \"blue\"?"),
        ("colour < 1", "feature 'colour' is categorical; compare it with 'in {...}' or 'switch'"),
    ]:
        with pytest.raises(DSLSyntaxError, match=None) as info:
            parse(text.replace("petal_length 2.45", bad), "model.rules")
        assert info.value.plain == want
    good = text.replace("petal_length 2.45", "petal_length < 2.45")
    parse(good)
    with pytest.raises(IRValidationError) as info:
        parse(good.replace('-> "b"', "-> [0.5, 0.25, 0.25]"), "model.rules")
    assert str(info.value).startswith("model.rules:13:7: expected 2 value(s), got 3")
    with pytest.raises(DSLSyntaxError) as info:
        parse(good[:-3], "model.rules")
    assert info.value.plain.startswith("this '{' is never closed")
    assert (info.value.line, info.value.column) == (6, 6)  # the tree's brace


def test_every_grammar_rule_and_terminal_is_used():
    """blark's test_uncovered_grammar: the fixtures exercise every rule of the grammar."""
    parser = tree_parser()
    rules = {r.alias or r.origin.name for r in parser.rules
             if not r.origin.name.startswith("_") and not (r.options.expand1 and not r.alias)}
    # the named terminals (punctuation is anonymous and filtered out of the tree)
    named = re.findall(r"^([A-Z][A-Z0-9_]*)(?:\.\d+)?:", grammar_text(), re.MULTILINE)
    terminals = set(named) - {"COMMENT"}
    assert {"IF", "ELSE", "SWITCH", "NUMBER", "QNAME", "NODE_ID"} <= terminals
    used_rules, used_terms = set(), set()
    for path in CANONICAL + [IRIS]:
        tree = parser.parse(path.read_text(encoding="utf-8"))
        for sub in tree.iter_subtrees():
            used_rules.add(str(sub.data))
            used_terms.update(t.type for t in sub.children if hasattr(t, "type"))
    assert rules - used_rules == set()
    # every rule that makes a node has its callback (else lark would hand the parse a Tree)
    from rulegen.dsl.transform import RulesTransformer
    assert {r for r in rules if not callable(getattr(RulesTransformer, r, None))} == set()
    assert terminals - used_terms == set()


def test_malformed_files_raise_only_rulegen_errors():
    """Random deletions, insertions and line shuffles of a valid file: each either parses
    or raises DSLSyntaxError / IRValidationError, and check() reports instead of raising."""
    text = (FIXTURES / "identity.rules").read_text(encoding="utf-8")
    pieces = list("{}[]()<>=,*-+@#\"`\\\n ") + ["if", "else", "case", "or", "missing", "->",
                                                  "switch", "tree", "unseen", "float32(", "1e400",
                                                  "-0", "nan", "@0", "in", "not", "x"]
    rng = random.Random(1)
    outcomes = set()
    for _ in range(300):
        t = text
        for _ in range(rng.randint(1, 3)):
            i = rng.randrange(len(t))
            r = rng.random()
            if r < 0.4:
                t = t[:i] + t[i + rng.randint(1, 8):]
            elif r < 0.8:
                t = t[:i] + rng.choice(pieces) + t[i:]
            else:
                lines = t.split("\n")
                a, b = rng.randrange(len(lines)), rng.randrange(len(lines))
                lines[a], lines[b] = lines[b], lines[a]
                t = "\n".join(lines)
        try:
            parse(t, "fuzz.rules")
            outcomes.add("ok")
        except (DSLSyntaxError, IRValidationError) as e:
            outcomes.add(type(e).__name__)
            assert "\n" not in str(e).split("\n")[0] and str(e).startswith("fuzz.rules:")
        assert all(isinstance(d, Diagnostic) for d in check(t))
    assert {"DSLSyntaxError", "IRValidationError"} <= outcomes


def test_threads_parse_independently():
    texts = [dumps(random_model(s)) for s in range(8)]
    results: dict = {}

    def work(i):
        results[i] = [parse(texts[i]) for _ in range(5)]

    threads = [threading.Thread(target=work, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert all(r == [random_model(i)] * 5 for i, r in results.items())


# --- check -------------------------------------------------------------------------------------

CHECKED = """rulegen rules 1
task classification
target species
classes ["setosa", "versicolor", "virginica"]
feature petal_length numeric
feature colour categorical ["red", "green", "blue"]

tree {
  if petal_length < 2.45 {
    -> "setosa"
  } else if petal_length <= 2 {
    -> "virginica"
  } else if petal_length <= 10 or missing {
    if colour in {"red"} {
      if colour in {"red", "green"} {
        -> [0, 0.9, 0.2]
      } else {
        -> [0, 0.5, 0.5]
      }
    } else {
      switch colour {
        case "red" {
          -> "setosa"
        }
        case "green", unseen {
          -> "setosa"
        }
        case "blue" {
          -> "virginica"
        }
      }
    }
  } else {
    -> "virginica"
  }
}
"""


def test_check_finds_what_a_hand_edit_broke():
    got = [(d.severity, d.line, d.column, d.message.split(":")[0])
           for d in check(CHECKED, "m.rules")]
    assert got == [
        ("warning", 11, 13, "unreachable"),
        ("warning", 15, 10, "redundant test"),
        ("warning", 16, 9, "leaf output does not fit the task"),
        ("warning", 22, 9, "unreachable arm"),
    ]
    d = check(CHECKED, "m.rules")[0]
    assert str(d) == ("m.rules:11:13: warning: unreachable: 'petal_length <= 2' is never true "
                      "here, where the path has (petal_length >= 2.45 OR petal_length IS MISSING), "
                      "so its block can never run")


def test_check_reports_every_unknown_name():
    bad = CHECKED.replace("petal_length <= 10", "petal_lenght <= 10").replace(
        '{"red", "green"}', '{"red", "gren"}')
    got = check(bad)
    assert [(d.severity, d.line) for d in got] == [("error", 13), ("error", 15)]
    assert "did you mean 'petal_length'?" in got[0].message
    assert 'did you mean "green"?' in got[1].message


def test_check_is_quiet_on_sound_files():
    assert check(IRIS.read_text(encoding="utf-8")) == []
    assert check(dumps(all_models()["classifier"])) == []
    no_features = "rulegen rules 1\ntask regression\ntree { -> 1 }"
    assert [d.severity for d in check(no_features)] == ["error"]


def test_check_respects_missing_values():
    """A contradiction is no contradiction when missing values can take the branch."""
    text = ("rulegen rules 1\ntask regression\nfeature x numeric\ntree {\n"
            "  if x < 1 { -> 1 } else { if x < 0 or missing { -> 2 } else { -> 3 } }\n}\n")
    assert check(text) == []  # missing x reaches the inner 'then' block
    assert len(check(text.replace("x < 0 or missing", "x < 0"))) == 1


# --- flat view ---------------------------------------------------------------------------------


def test_flat_view():
    model = parse(IRIS.read_text(encoding="utf-8"))
    flat = dumps(model, flat=True)
    rules = [line for line in flat.splitlines() if line.startswith("IF ")]
    assert len(rules) == 5
    assert rules[0] == 'IF petallength < 2.45 THEN class = "Iris-setosa"  [n = 50]'
    assert rules[1].startswith("IF (2.45 <= petallength <= 4.95 OR petallength IS MISSING) AND "
                               "(petalwidth <= 1.75 OR petalwidth IS MISSING) THEN class = ")
    every = dumps(all_models()["every_construct"], flat=True)
    assert 'size IN {"XL", unseen}' in every and "[colour missing: surrogates decide]" in every
    with pytest.raises(DSLSyntaxError):
        parse(flat)


def _reached(model: Model, tree: Tree, X: np.ndarray):
    """(node id, rows) for every node rows reach, routed exactly as the evaluator routes."""
    from rulegen.ir.evaluate import child_index, resolve_surrogates
    from rulegen.ir.nodes import Blend

    stack = [(0, np.arange(len(X)))]
    while stack:
        nid, rows = stack.pop()
        yield nid, rows
        node = tree.nodes[nid]
        if isinstance(node, Leaf) or not len(rows):
            continue
        with np.errstate(all="ignore"):  # oblique sums of huge probe values overflow
            child, missing = child_index(node, X, rows, model.features)
        rule = node.missing
        if isinstance(rule, DefaultChild):
            child[missing] = rule.child
        elif isinstance(rule, Surrogates):
            resolve_surrogates(rule, X, rows, child, model.features)
        for i, kid in enumerate(node.children):
            sel = child == i
            if isinstance(rule, Blend) and rule.weights[i] != 0:
                sel = sel | missing
            if sel.any():
                stack.append((kid, rows[sel]))


def _fits(model: Model, state: dict, x: np.ndarray) -> np.ndarray:
    """Which rows hold what a path state says."""
    ok = np.ones(len(x), dtype=bool)
    for f, s in state.items():
        v = x[:, f]
        miss = np.isnan(v)
        if model.features[f].kind == "numeric":
            present = (v >= s.lo) & (v <= s.hi)
        else:
            n = len(model.features[f].categories)
            known = (v == np.floor(v)) & (v >= 0) & (v < n)
            cats = set(range(n)) if s.cats is None else s.cats
            present = np.where(known, np.isin(np.where(known, v, -1), list(cats)), s.unseen)
        ok &= np.where(miss, s.missing != "no", present & (s.missing != "yes"))
    return ok


def test_path_states_are_sound():
    """What check and the flat view say about a path holds for every row that takes it:
    no node a row reaches is called unreachable, and each row fits its leaf's conditions
    (the flat view's rules are mutually exclusive and complete)."""
    from rulegen.dsl.paths import explore

    for seed in range(60):
        model = random_model(seed)
        X = probe_rows(model, seed=seed, n_random=60)
        for tree in model.trees:
            states = {e[1]: e[2] for e in explore(model, tree)}
            for nid, rows in _reached(model, tree, X):
                assert nid in states, (seed, nid)
                assert _fits(model, states[nid], X[rows]).all(), (seed, nid)


# --- editing a rules file and recompiling ---------------------------------------------------------


def _edit(text: str) -> str:
    edited = text.replace("petallength <= 4.95 or missing", "petallength <= 5.1 or missing")
    edited = edited.replace('-> [0, 0.33, 0.67] (n = 3', '-> [0.1, 0.6, 0.3] (n = 3')
    assert edited.count("5.1 or missing") == 1 and edited.count("[0.1, 0.6, 0.3]") == 1
    return edited


def _rows(model: Model) -> np.ndarray:
    data = np.genfromtxt(ROOT / "examples" / "iris.csv", delimiter=",", skip_header=1,
                         usecols=(0, 1, 2, 3))
    return np.vstack([data, probe_rows(model, seed=3, n_random=100)])


def test_hand_edit_recompiles_to_python_c_and_sql_as_the_evaluator_says():
    original = parse(IRIS.read_text(encoding="utf-8"), "iris.rules")
    edited = parse(_edit(IRIS.read_text(encoding="utf-8")), "iris.rules")
    X = _rows(original)
    before, after = evaluate.predict_proba(original, X), evaluate.predict_proba(edited, X)
    changed = np.any(before != after, axis=1)
    assert 5 < changed.sum() < len(X)  # the edits move some rows, not all
    rows = labels_for(edited, X)
    py_before = run_python(original, labels_for(original, X)).outputs
    py_after = run_python(edited, rows).outputs
    assert np.array_equal(py_after, after) and np.array_equal(py_before, before)
    assert np.array_equal(np.any(py_before != py_after, axis=1), changed)
    check_sql(edited, X, "sqlite")  # compares every output with the evaluator, exactly
    if not have_cc():
        pytest.skip("no C compiler")
    c_before = run_c(rulegen.generate(original, "c", name="iris"), "iris", X)["out"]
    c_after = run_c(rulegen.generate(edited, "c", name="iris"), "iris", X)["out"]
    assert np.array_equal(c_after, after) and np.array_equal(c_before, before)
    assert np.array_equal(np.any(c_before != c_after, axis=1), changed)


def test_example_compiles_to_every_target():
    model = parse(IRIS.read_text(encoding="utf-8"), "iris.rules")
    X = _rows(model)
    want = evaluate.predict_proba(model, X)
    assert np.array_equal(run_python(model, labels_for(model, X)).outputs, want)
    for dialect in ("sqlite", "duckdb"):
        check_sql(model, X, dialect)
    assert np.array_equal(run_c(rulegen.generate(model, "c", name="iris"), "iris", X)["out"],
                          want)


def test_switch_with_support_round_trips():
    # `switch x (n = 4) {` once read as a cast `x(...)`; the printer always writes support there
    from rulegen.ir.nodes import (
        Feature,
        IntervalTest,
        Leaf,
        Model,
        MultiwayTest,
        Split,
        Target,
        Tree,
    )

    def leaf(v, n):
        return Leaf((v, 1.0 - v), n, (n * v, n * (1.0 - v)))

    nodes = (Split(MultiwayTest(0, ((0,), (1, 2))), (1, 2), DefaultChild(1), unseen=0,
                   samples=7.0, distribution=(3.0, 4.0)),
             leaf(0.25, 4.0),
             Split(IntervalTest(1, "<=", (1.5,), "float32"), (3, 4), DefaultChild(0),
                   samples=3.0, distribution=(2.0, 1.0)),
             leaf(1.0, 2.0), leaf(0.0, 1.0))
    model = Model((Feature("colour", "categorical", ("red", "green", "blue")), Feature("size")),
                  Target("classification", "y", ("a", "b")), (Tree(nodes),), (0.0, 0.0))
    text = dumps(model)
    assert "switch colour (n = 7" in text and "switch float32(size) (n = 3" in text
    assert parse(text) == model
    with pytest.raises(DSLSyntaxError, match="not a comparison type"):
        parse(text.replace("float32(size)", "flaot32(size)"))


def test_a_param_given_twice_with_values_of_two_types_is_one_error():
    text = ('rulegen rules 1\ntask regression\nparam depth = 3\nparam depth = "deep"\n'
            'feature x numeric\ntree {\n  -> 1\n}\n')
    with pytest.raises(DSLSyntaxError) as info:
        parse(text, "m.rules")
    assert str(info.value).startswith("m.rules:4:1: param 'depth' is given twice")


def test_check_warns_about_counts_a_hand_edit_left_stale():
    text = """rulegen rules 1
task classification
classes ["a", "b"]
feature x numeric
tree {
  if x < 1 (n = 10, dist = [5, 5]) {
    -> "b" (n = 4, dist = [4, 0])
  } else {
    -> "b" (n = 7, dist = [1, 5])
  }
}
"""
    got = [str(d) for d in check(text, "m.rules")]
    assert got == [
        'm.rules:7:5: warning: this leaf predicts "b" but its counts dist = [4, 0] favour "a": '
        "a hand edit changed one and not the other; correct the label or the counts",
        "m.rules:9:5: warning: the counts dist = [1, 5] add up to 6, not n = 7: correct n or dist"]
    fixed = text.replace('-> "b" (n = 4', '-> "a" (n = 4').replace("n = 7", "n = 6")
    assert check(fixed) == []
