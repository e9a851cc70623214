"""Literals read back to the identical value in the real consumer (cc, sqlite3, duckdb, Python),
and user text cannot escape its string or comment."""

from __future__ import annotations

import math
import shutil
import sqlite3
import subprocess

import duckdb
import numpy as np
import pytest

from rulegen.codegen.literals import (
    c_comment,
    c_double,
    c_float,
    c_identifier,
    c_string,
    py_comment,
    py_float,
    sql_identifier,
    sql_string,
)


def _doubles(n=400, seed=0) -> list[float]:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**63, size=n, dtype=np.int64).view(np.float64)
    vals = [float(v) for v in bits if math.isfinite(v)]
    return vals + [0.0, -0.0, 0.1 + 0.2, 1e-300, 5e-324, -5e-324, 1.7976931348623157e308,
                   2.2250738585072014e-308, 0.5, 1 / 3, -7.0, 123456789.0]


def _floats(n=400, seed=1) -> list[float]:
    rng = np.random.default_rng(seed)
    bits = rng.integers(0, 2**32, size=n, dtype=np.uint64).astype(np.uint32).view(np.float32)
    vals = [float(v) for v in bits if np.isfinite(v)]
    f32 = np.finfo(np.float32)
    return vals + [0.0, -0.0, float(f32.max), -float(f32.max), float(f32.tiny),
                   float(np.float32(1e-45)), float(np.float32(0.1)), 16777216.0, 16777218.0]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler on PATH")
def test_c_literals_round_trip_through_the_compiler(tmp_path):
    ds, fs = _doubles(), _floats()
    src = ["#include <stdio.h>", "#include <string.h>", "#include <math.h>",
           "static const double D[] = {" + ",".join(c_double(v) for v in ds) + "};",
           "static const float F[] = {" + ",".join(c_float(v) for v in fs) + "};",
           "int main(void) { size_t i; unsigned long long u; unsigned int w;",
           " for (i = 0; i < sizeof D / sizeof D[0]; i++) { memcpy(&u, &D[i], 8); printf(\"%llu\\n\", u); }",
           " for (i = 0; i < sizeof F / sizeof F[0]; i++) { memcpy(&w, &F[i], 4); printf(\"%u\\n\", w); }",
           " return 0; }"]
    (tmp_path / "t.c").write_text("\n".join(src) + "\n")
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o",
                    str(tmp_path / "t"), str(tmp_path / "t.c")], check=True)
    out = [int(x) for x in subprocess.run([str(tmp_path / "t")], capture_output=True, text=True,
                                          check=True).stdout.split()]
    want = [int(np.float64(v).view(np.uint64)) for v in ds]
    want += [int(np.float32(v).view(np.uint32)) for v in fs]
    assert out == want


def test_python_literals_round_trip():
    for v in _doubles():
        assert float(eval(py_float(v))) == v  # noqa: S307 - our own literal
        assert math.copysign(1, float(eval(py_float(v)))) == math.copysign(1, v)


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_sql_literals_round_trip(dialect):
    vals = _doubles(200) + [math.inf, -math.inf]
    from rulegen.targets.sql.dialects import DIALECTS
    query = "SELECT " + ", ".join(DIALECTS[dialect].num(v) for v in vals)
    if dialect == "sqlite":
        row = sqlite3.connect(":memory:").execute(query).fetchone()
    else:
        row = duckdb.connect().execute(query).fetchone()
    assert [float(x) for x in row] == vals


NASTY = ["select", "x y", 'a"b', "O'Brien", "*/ x /*", "年龄", "1st", "it's \"ok\"", "a\\nb",
         "line\nbreak", "tab\tx", "??=", "\\", "'", '"', "--", "/*"]


@pytest.mark.skipif(shutil.which("cc") is None, reason="no C compiler on PATH")
def test_c_strings_and_comments_hold_any_text(tmp_path):
    lines = ["#include <stdio.h>", "int main(void) {"]
    texts = NASTY + ["é" * 2600, "x" * 4094, "y" * 4095]  # past C99's 4,095-character literal
    for s in texts:
        lines.append(f"  /* {c_comment(s)} */ puts({c_string(s)});")
    lines.append("  return 0; }")
    (tmp_path / "s.c").write_text("\n".join(lines) + "\n")
    subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-o",
                    str(tmp_path / "s"), str(tmp_path / "s.c")], check=True)
    out = subprocess.run([str(tmp_path / "s")], capture_output=True, check=True).stdout
    assert out.decode("utf-8") == "".join(s + "\n" for s in texts)  # puts adds each newline


def test_c_identifiers_are_valid_and_not_reserved():
    import re

    for s in NASTY + ["int", "model", "__x", "9lives", ""]:
        ident = c_identifier(s)
        assert re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", ident), ident
        assert ident not in ("int", "main") and not ident.startswith("__")


@pytest.mark.parametrize("dialect", ["sqlite", "duckdb"])
def test_sql_identifiers_and_strings_hold_any_text(dialect):
    for s in NASTY:
        q = f"SELECT {sql_string(s)} AS {sql_identifier(s)}"
        if dialect == "sqlite":
            cur = sqlite3.connect(":memory:").execute(q)
            names, row = [d[0] for d in cur.description], cur.fetchone()
        else:
            cur = duckdb.connect().execute(q)
            names, row = [d[0] for d in cur.description], cur.fetchone()
        assert names == [s] and row == (s,)


def test_python_comment_is_one_printable_line():
    for s in NASTY + ["\u2028x", "\ud800"]:
        text = py_comment(s)
        assert "\n" not in text and "\r" not in text and text.isprintable()
        compile(f"x = 1  # {text}\n", "<t>", "exec")


def test_shortest_f32_reads_back_exactly_under_correct_rounding():
    """The digits for a float32 (C's 2.45f, the rules language's float32(x) < 2.45) must round
    to that float32 under correct, ties-to-even decimal rounding, checked in exact rationals."""
    from fractions import Fraction

    from rulegen.codegen.literals import shortest_f32

    def even(v):
        return not int(np.array([v], np.float32).view(np.uint32)[0]) & 1

    for v in _floats(20000, seed=3):
        with np.errstate(over="ignore"):
            f = np.float32(v)
            lo = float(np.nextafter(f, np.float32(-np.inf)))
            hi = float(np.nextafter(f, np.float32(np.inf)))
        lo = Fraction(lo) if math.isfinite(lo) else -Fraction(2) ** 128
        hi = Fraction(hi) if math.isfinite(hi) else Fraction(2) ** 128
        here, q = Fraction(v), Fraction(shortest_f32(v))
        a, b = (lo + here) / 2, (here + hi) / 2
        assert a < q < b or (q in (a, b) and even(v)), (v, shortest_f32(v))
