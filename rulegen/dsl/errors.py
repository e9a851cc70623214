"""Syntax errors a person can act on.

One table, ``ERROR_EXAMPLES``, drives both the messages and their tests: each entry is a
message and bad snippets that must produce it. A snippet is completed into a file by
:func:`complete` (a small header, and ``tree {`` before a tree body), parsed once, and the
parser state it fails in (and the token it fails on) keys the message. lark's own
``UnexpectedInput.match_examples`` compares the parser's stack depth too, so an error twelve
blocks deep would never match a shallow example; here the LALR state alone decides, with
the offending token (or character) to tell apart errors that share a state.

``{prev}`` in a message is the text of the token before the error, ``{token}`` the
offending one.
"""

from __future__ import annotations

import functools
import re

from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

HEADER = 'rulegen rules 1\ntask regression\nfeature x numeric\nfeature c categorical ["a", "b"]\n'

ERROR_EXAMPLES: list[tuple[str, list[str]]] = [
    ("a rules file starts with the line 'rulegen rules 1'",
     ["task regression\n", "rules 1\n", "rulegen 1\n"]),
    ("expected the format version: 'rulegen rules 1'",
     ["rulegen rules\ntask regression\n", "rulegen rules x"]),
    ("write header lines without ':', e.g. 'task classification'",
     ["rulegen rules 1\ntask: regression\n", "rulegen rules 1\ntask regression\nlink: exp"]),
    ("expected a header line (task, target, classes, feature, ...) or 'tree {{'",
     ["rulegen rules 1\ntask regression\nfeature x numeric\nif x < 1 { -> 1 } else { -> 2 }",
      "rulegen rules 1\nfoo bar\n", "rulegen rules 1\ntask regression\n-> 1",
      "rulegen rules 1\nparam a = 1\nfoo", "rulegen rules 1\nparam a = \"b\"\nfoo",
      "rulegen rules 1\nparam a = true\nfoo", "rulegen rules 1\nn_samples 1\nfoo",
      "rulegen rules 1\nalgorithm \"a\"\nfoo", "rulegen rules 1\nclasses [\"a\"]\nfoo",
      "rulegen rules 1\nfeature x numeric \"d\"\nfoo",
      "rulegen rules 1\nfeature c categorical [\"a\"]\nfoo"]),
    ("expected the feature's kind after '{prev}': numeric or categorical",
     ["rulegen rules 1\ntask regression\nfeature x\nfeature y numeric\n",
      "rulegen rules 1\ntask regression\nfeature x [\"a\"]\n"]),
    ("expected a list in brackets, e.g. [\"a\", \"b\"] or [0.5, 1.5]",
     ["rulegen rules 1\nclasses \"a\", \"b\"\n", "rulegen rules 1\nbase_score 0.5\n",
      "rulegen rules 1\ntask regression\nfeature c categorical {\"a\"}\n"]),
    ("expected '{{' after 'tree' (and its options: output, weight, numbering)",
     ["tree -> 1", "tree if x < 1 { -> 1 } else { -> 2 }"]),
    ("expected a number after '{prev}'",
     ["tree weight { -> 1 }", "tree output x { -> 1 }", "if x < { -> 1 } else { -> 2 }"]),
    ("expected a node: 'if', 'switch' or a leaf such as '-> 0.5'",
     ["0.5 }", "x < 1 { -> 1 } else { -> 2 }", "if x < 1 { 0.5 } else { -> 2 }",
      "if x < 1 { } else { -> 2 }", "if x < 1 { -> 1 } else { 0.5 }",
      "switch c { case \"a\" { 0.5 } }", "switch x { case < 1 { 0.5 } else { -> 1 } }",
      "switch x { case < 1 { -> 1 } else { * } }"]),
    ("expected another tree ('tree {{ ... }}') or the end of the file",
     ["-> 1 }\n{ -> 2 }", "-> 1 }\n-> 2", "-> 1 }\nfeature y numeric",
      "-> 1 }\ntree { -> 2 }\n{ -> 3 }", "-> 1 }\ntree { -> 2 }\nx"]),
    ("expected the feature to switch on, e.g. 'switch colour {{'",
     ["switch { case \"a\" { -> 1 } }", "switch \"a\" { case \"a\" { -> 1 } }"]),
    ("expected '{{' after the switch's feature (after 'missing blend [...]' or support, if any)",
     ["switch c case \"a\" { -> 1 } }", "switch c \"a\" { -> 1 } }"]),
    ("expected a test after 'if', e.g. 'if x < 2.5' or 'if colour in {{\"red\"}}'",
     ["if { -> 1 } else { -> 2 }", "if < 1 { -> 1 } else { -> 2 }", "if \"a\" < 1 {"]),
    ("expected a comparison after '{prev}': '<', '<=' or 'in {{...}}'",
     ["if x 2.45 { -> 1 } else { -> 2 }", "if x = 2 { -> 1 } else { -> 2 }",
      "if x { -> 1 } else { -> 2 }", "if x y < 1 { -> 1 } else { -> 2 }",
      "if float32(x) 1 { -> 1 } else { -> 2 }"]),
    ("'>' is not a comparison here: use '<' or '<=' and swap the two blocks",
     ["if x > 2.45 { -> 1 } else { -> 2 }", "if x >= 2.45 { -> 1 } else { -> 2 }",
      "switch x { case > 1 { -> 1 } else { -> 2 } }"]),
    ("'{prev}' is followed by '-': a name with dashes or spaces goes in backticks, "
     + "e.g. `petal-length`",
     ["if petal-length < 1 { -> 1 } else { -> 2 }"]),
    ("expected '*' between a weight and its feature, e.g. '0.5*x'",
     ["if 0.5 x < 1 { -> 1 } else { -> 2 }", "if 0.5*x + 2 x < 1 {"]),
    ("a set of categories is written in braces: c in {{\"a\", \"b\"}}",
     ["if c in [\"a\"] { -> 1 } else { -> 2 }", "if c in \"a\" { -> 1 } else { -> 2 }"]),
    ("expected '{{' to open the block after the test (after 'or missing', a blend, "
     + "surrogates or support, if any)",
     ["if x < 1 -> 1", "if x < 1 then { -> 1 } else { -> 2 }",
      "if x < 1 or missing -> 1", "if x < 1 (n = 3) -> 1"]),
    ("'or missing' goes after the test, e.g. 'if x < 3 or missing {{'",
     ["if x < 1 { -> 1 } else or missing { -> 2 }"]),
    ("write 'or unseen' before 'or missing'",
     ["if c in {\"a\"} or missing or unseen { -> 1 } else { -> 2 }"]),
    ("expected 'blend [weights]' after 'missing', or write 'or missing' after the test",
     ["if x < 1 missing { -> 1 } else { -> 2 }", "if x < 1 missing left { -> 1 }",
      "switch x missing { case < 1 { -> 1 } else { -> 2 } }"]),
    ("expected 'else' after the block, found '{token}': every 'if' needs an 'else' block",
     ["if x < 1 { -> 1 } esle { -> 2 }", "if x < 1 { -> 1 } Else { -> 2 }",
      "if x < 1 { -> 1 } elif { -> 2 }"]),
    ("every 'if' needs an 'else' block: a split has both branches",
     ["if x < 1 { -> 1 } }", "if x < 1 { -> 1 } -> 2", "if x < 1 { -> 1 }\ntree {"]),
    ("expected '}}' to close the block: a block holds one node",
     ["if x < 1 { -> 1 -> 2 } else { -> 3 }", "-> 1 -> 2 }",
      "if x < 1 { -> 1 } else { -> 2 } -> 3", "-> 1, 2 }", "-> [1, 2], 3 }",
      "-> \"a\", 2 }", "-> 1 (n = 1), 2 }"]),
    ("expected a value after '->': a number, a list such as [0.2, 0.8] or a class label",
     ["-> }", "-> x }", "-> { 1 }"]),
    ("expected ',' or ']' in the list",
     ["-> [1 2] }", "-> [1, 2 }", "rulegen rules 1\nclasses [\"a\" \"b\"]\n"]),
    ("expected a number", ["-> [1, ] }", "-> [,] }", "-> - }"]),
    ("write support as (n = 50, dist = [45, 5], impurity = 0.18)",
     ["-> 1 (n: 50) }", "-> 1 (50) }", "-> 1 (n 50) }", "-> 1 (n = 1, 2) }",
      "-> 1 (n = 1, dist = 1, 2]) }", "-> 1 (n = ) }"]),
    ("each arm of a switch starts with 'case' (or 'else' after bounds)",
     ["switch c { \"a\" { -> 1 } }", "switch c { -> 1 }", "switch c { }",
      "switch c { case \"a\" { -> 1 } \"b\" { -> 2 } }", "switch c { case \"a\" { -> 1 } x }"]),
    ("expected ',' or '}}' in the set of categories",
     ["if c in {\"a\" \"b\"} { -> 1 } else { -> 2 }", "if c in {\"a\" { -> 1 } else { -> 2 }"]),
    ("expected '{{' to open the arm's block",
     ["switch c { case \"a\" -> 1 }", "switch x { case < 1 -> 1 }",
      "switch x { case < 1 { -> 1 } else -> 2 }"]),
    ("expected ',' or '{{' after a case label", ["switch c { case \"a\" \"b\" { -> 1 } }"]),
    ("a string does not end on its line: close it with '\"'",
     ["if c in {\"a} { -> 1 } else { -> 2 }", "rulegen rules 1\ntarget \"y\ntask regression"]),
    ("'{token}' cannot stand here", ["if x < 1 { -> 1 } else { -> 2 } $"]),
]


def complete(snippet: str) -> str:
    """The file a table snippet stands for."""
    if snippet.startswith(("rulegen", "task", "rules")):
        return snippet
    if snippet.startswith("tree"):
        return HEADER + snippet
    return HEADER + "tree {\n" + snippet


def _key(e: UnexpectedInput) -> tuple[tuple, str, frozenset]:
    """(the top two LALR states, what was found, what the parser would have taken): a
    token type, or the character the lexer stopped at. Two states, because LALR merges the
    states after a number or a label across contexts (a threshold after 'if x <' and a
    bound after 'case <'); the accepted set, because an if with support and one without
    open their blocks in different states that accept the same tokens."""
    stack = getattr(e.state, "state_stack", None) or [e.state]
    accepts = frozenset(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
    if isinstance(e, UnexpectedCharacters):
        return tuple(stack[-2:]), "char:" + e.char, accepts
    if isinstance(e, UnexpectedEOF):
        return tuple(stack[-2:]), "$END", accepts
    return tuple(stack[-2:]), e.token.type, accepts


@functools.lru_cache(maxsize=4)
def _table(parse_fn) -> list[dict]:
    """Parse every snippet once and index its message by ever coarser keys (the first
    snippet to claim a key keeps it): the two states and the token; the character (if only
    one message uses it); the two states; the top state and the token; the top state; the
    accepted set and the token; the accepted set."""
    levels: list[dict] = [{} for _ in range(7)]
    chars: dict = {}
    for message, snippets in ERROR_EXAMPLES:
        for s in snippets:
            try:
                parse_fn(complete(s))
            except UnexpectedInput as e:
                states, found, accepts = _key(e)
                levels[0].setdefault((states, found), message)
                if found.startswith("char:"):
                    chars.setdefault(found, set()).add(message)
                levels[2].setdefault(states, message)
                levels[3].setdefault((states[-1], found), message)
                levels[4].setdefault(states[-1], message)
                if accepts:
                    levels[5].setdefault((accepts, found), message)
                    levels[6].setdefault(accepts, message)
            else:  # pragma: no cover - a table entry that parses is a bug in the table
                raise AssertionError(f"error example parses: {s!r}")
    levels[1] = {c: m.pop() for c, m in chars.items() if len(m) == 1}
    return levels


def match(e: UnexpectedInput, parse_fn) -> str | None:
    """The table's message for a lark error, or None."""
    exact, by_char, by_states, by_token, by_state, by_accepts_token, by_accepts = _table(parse_fn)
    states, found, accepts = _key(e)
    return (exact.get((states, found)) or by_char.get(found) or by_states.get(states)
            or by_token.get((states[-1], found)) or by_state.get(states[-1])
            or by_accepts_token.get((accepts, found)) or by_accepts.get(accepts))


_LAST_TOKEN = re.compile(r'(`(?:[^`\\]|\\.)*`|"(?:[^"\\]|\\.)*"|[\w.]+|->|<=|\S)\s*$')


def previous_token(text: str, pos: int) -> str:
    """The text of the last token before offset ``pos`` (comments skipped)."""
    lines = text[:pos].split("\n")
    for line in reversed(lines):
        line = _strip_comment(line).rstrip()
        if line:
            m = _LAST_TOKEN.search(line)
            return m.group(1) if m else line.split()[-1]
    return ""


def _code_chars(line: str):
    """(index, char) of each character outside strings and backtick names, up to a '#' comment
    (yielded as (index, '#') and then stopping)."""
    quote = None
    i = 0
    while i < len(line):
        ch = line[i]
        if quote:
            if ch == "\\":
                i += 1
            elif ch == quote:
                quote = None
        elif ch in "\"`":
            quote = ch
        else:
            yield i, ch
            if ch == "#":
                return
        i += 1


def _strip_comment(line: str) -> str:
    for i, ch in _code_chars(line):
        if ch == "#":
            return line[:i]
    return line


def unclosed_brace(text: str) -> tuple[int, int] | None:
    """(line, column) of the last '{' that is never closed, skipping strings and comments."""
    stack = []
    for lineno, line in enumerate(text.split("\n"), 1):
        for i, ch in _code_chars(line):
            if ch == "{":
                stack.append((lineno, i + 1))
            elif ch == "}" and stack:
                stack.pop()
    return stack[-1] if stack else None


_FRIENDLY = {
    "NAME": "a name", "QNAME": "a name", "NUMBER": "a number", "STRING": "a string",
    "CMP": "'<' or '<='", "ARROW": "'->'", "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['",
    "RSQB": "']'", "LPAR": "'('", "RPAR": "')'", "COMMA": "','", "EQUAL": "'='",
    "STAR": "'*'", "MINUS": "'-'", "PLUS": "'+'", "NODE_ID": "a node id (@3)",
}


def describe(e: UnexpectedInput, text: str, parse_fn) -> tuple[str, int, int]:
    """(message, line, column) for a lark error on ``text``."""
    if isinstance(e, UnexpectedEOF) or (isinstance(e, UnexpectedToken)
                                        and e.token.type == "$END"):
        brace = unclosed_brace(text)
        if brace is not None:
            message = ("this '{' is never closed: the file ends before its '}' (a '}' is "
                       "missing here or further down)")
            return message, brace[0], brace[1]
        lines = text.rstrip().split("\n")
        return ("the file ends early: expected at least one 'tree { ... }'", len(lines),
                len(lines[-1]) + 1)
    pos = e.pos_in_stream if e.pos_in_stream is not None else 0
    message = match(e, parse_fn)
    if isinstance(e, UnexpectedCharacters):
        token = e.char
    else:
        token = str(e.token)
    if message is None:
        expected = sorted(getattr(e, "expected", None) or getattr(e, "allowed", None) or ())
        shown = sorted({_FRIENDLY.get(t, f"'{t.lower()}'") for t in expected})
        if not shown or len(shown) > 6:  # a merged LALR state: its list would mislead
            return f"unexpected '{token}' after '{previous_token(text, pos)}'", e.line, e.column
        return f"unexpected '{token}'; expected {', '.join(shown)}", e.line, e.column
    return (message.format(prev=previous_token(text, pos), token=token), e.line, e.column)


def context(text: str, line: int, column: int) -> str:
    """The source line and a caret under ``column`` (tabs kept, so the caret lines up)."""
    lines = text.split("\n")
    if not 1 <= line <= len(lines):
        return ""
    src = lines[line - 1].rstrip("\r")
    pad = "".join(ch if ch == "\t" else " " for ch in src[:max(column - 1, 0)])
    return f"    {src}\n    {pad}^"
