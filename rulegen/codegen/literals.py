"""Every literal and identifier a target writes is formatted here, and only here.

Numbers are lossless: each reads back to the identical float. User text
(feature names, category labels, class labels) is escaped per target so that
it can never end a string, a comment or an identifier early.
"""

from __future__ import annotations

import keyword
import math
import re
import unicodedata

import numpy as np

# --- numbers ------------------------------------------------------------------------


def py_float(v: float) -> str:
    """Python source for a float; repr is the shortest string that round-trips."""
    v = float(v)
    if math.isnan(v):
        return "_NAN"
    if math.isinf(v):
        return "_INF" if v > 0 else "(-_INF)"
    return repr(v)


def c_double(v: float) -> str:
    """C99 double literal; %.17g always round-trips, repr is shorter where it suffices."""
    v = float(v)
    if math.isinf(v):
        return "HUGE_VAL" if v > 0 else "(-HUGE_VAL)"
    if math.isnan(v):
        raise ValueError("NaN has no C literal")
    text = repr(v)
    if "inf" in text or "nan" in text:  # pragma: no cover - handled above
        raise ValueError(text)
    if "." not in text and "e" not in text:
        text += ".0"
    return text if not text.startswith("-") else f"({text})"


def c_float(v: float) -> str:
    """C99 float literal for a float32-representable value (the shortest float32 repr + f)."""
    f = np.float32(v)
    if float(f) != float(v) and not math.isinf(v):
        raise ValueError(f"{v!r} is not a float32 value")
    if math.isinf(v):
        return "HUGE_VALF" if v > 0 else "(-HUGE_VALF)"
    text = np.format_float_scientific(f, unique=True, trim="0") if f != 0 else "0.0"
    text = text.replace("e+", "e")
    if "." not in text and "e" not in text:
        text += ".0"
    if text.endswith(".e") or ".e" in text:
        text = text.replace(".e", ".0e")
    text += "f"
    return f"({text})" if text.startswith("-") else text


def sql_float(v: float, dialect: str) -> str:
    """A DOUBLE-typed SQL literal; infinities per dialect (SQLite has none but overflow)."""
    v = float(v)
    if math.isnan(v):
        raise ValueError("NaN has no SQL literal here")
    if math.isinf(v):
        if dialect == "sqlite":
            return "9e999" if v > 0 else "(-9e999)"
        if dialect == "postgres":
            return "'Infinity'::float8" if v > 0 else "'-Infinity'::float8"
        return "'inf'::DOUBLE" if v > 0 else "'-inf'::DOUBLE"
    text = repr(v)
    if dialect == "sqlite":
        # SQLite reads any literal with a '.' or an exponent as an IEEE double.
        return f"({text})" if text.startswith("-") else text
    # DuckDB and PostgreSQL read 0.1 as an exact DECIMAL/NUMERIC; a string cast parses the
    # digits straight to the nearest double, as Python's repr guarantees round-trips.
    kind = "float8" if dialect == "postgres" else "DOUBLE"
    return f"'{text}'::{kind}"


# --- Python ---------------------------------------------------------------------------


def py_str(s) -> str:
    """Python literal for a label: repr escapes quotes, backslashes and control characters."""
    return repr(s)


def py_comment(s: str) -> str:
    """Text safe inside a ``#`` comment: no line breaks."""
    return _one_line(s)


# --- C -----------------------------------------------------------------------------------

C_RESERVED = frozenset("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Bool _Complex _Imaginary NULL main
""".split())


def c_identifier(name: str, reserved=C_RESERVED) -> str:
    """A valid C identifier derived from ``name`` (ASCII letters, digits, underscores)."""
    text = unicodedata.normalize("NFKD", name)
    text = re.sub(r"[^A-Za-z0-9_]+", "_", text.encode("ascii", "ignore").decode()).strip("_")
    if not text or text[0].isdigit():
        text = "m_" + text
    if text in reserved or text.startswith("__"):
        text = text + "_"
    return text


def c_string(s) -> str:
    """C string literal holding the UTF-8 bytes of ``s``; every non-ASCII or special byte
    is an octal escape, so no character can close the string or form a trigraph."""
    out = []
    for b in str(s).encode("utf-8"):
        ch = chr(b)
        if 32 <= b < 127 and ch not in '"\\?':
            out.append(ch)
        else:
            out.append(f"\\{b:03o}")
    return '"' + "".join(out) + '"'


def c_comment(s: str) -> str:
    """Text safe inside ``/* ... */``: no comment terminator, no line breaks, ASCII only."""
    text = _one_line(str(s)).replace("*/", "* /").replace("/*", "/ *")
    return text.encode("ascii", "backslashreplace").decode().replace("??", "? ?")


# --- SQL -----------------------------------------------------------------------------------


def sql_identifier(name: str) -> str:
    """Double-quoted identifier (standard SQL; SQLite, DuckDB and PostgreSQL all accept it)."""
    if "\x00" in name:
        raise ValueError("identifiers cannot contain NUL")
    return '"' + name.replace('"', '""') + '"'


def sql_string(s) -> str:
    """Single-quoted string literal; the only special character is the quote itself."""
    text = str(s)
    if "\x00" in text:
        raise ValueError("strings cannot contain NUL")
    return "'" + text.replace("'", "''") + "'"


def sql_label(v, dialect: str) -> str:
    """A class or category label as SQL: integers stay numbers, strings are quoted."""
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return sql_string(v)


def sql_comment(s: str) -> str:
    """Text safe inside ``/* ... */`` in SQL (the same rules as C)."""
    return c_comment(s)


# --- shared -------------------------------------------------------------------------------------


def _one_line(s: str) -> str:
    return re.sub(r"[\r\n\x0b\x0c\x85\u2028\u2029]+", " ", str(s))


def py_identifier(name: str) -> str:
    """A valid Python identifier derived from ``name`` (for generated helper names)."""
    text = re.sub(r"\W+", "_", name, flags=re.ASCII).strip("_")
    if not text or text[0].isdigit():
        text = "m_" + text
    if keyword.iskeyword(text) or keyword.issoftkeyword(text):
        text += "_"
    return text
