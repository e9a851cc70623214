"""Every literal and identifier a target writes is formatted here, and only here.

Numbers are lossless: each reads back to the identical float. User text
(feature names, category labels, class labels) is escaped per target so that
it can never end a string, a comment or an identifier early.
"""

from __future__ import annotations

import json
import keyword
import math
import re
import unicodedata
from decimal import Decimal

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


def shortest_f32(v: float) -> str:
    """A finite float32 value as the shortest decimal that a correctly rounding reader (a C
    compiler reading ``2.45f``, the rules parser) turns back into it: numpy's Dragon4 digits in
    float32 precision, positional for exponents -4..15 as Python's repr is."""
    text = np.format_float_scientific(np.float32(v), unique=True, trim="-")
    mant, exp = text.split("e")
    sign = "-" if mant.startswith("-") else ""
    digits = mant.lstrip("-").replace(".", "")
    e = int(exp)
    if -4 <= e < 16:
        if e >= len(digits) - 1:
            return sign + digits + "0" * (e - len(digits) + 1)
        if e >= 0:
            return f"{sign}{digits[:e + 1]}.{digits[e + 1:]}"
        return f"{sign}0.{'0' * (-e - 1)}{digits}"
    rest = f".{digits[1:]}" if len(digits) > 1 else ""
    return f"{sign}{digits[0]}{rest}e{'-' if e < 0 else '+'}{abs(e):02d}"


def c_float(v: float) -> str:
    """C99 float literal for a float32 value: the fewest digits that read back to it, plus f."""
    if math.isinf(v):
        return "HUGE_VALF" if v > 0 else "(-HUGE_VALF)"
    if float(np.float32(v)) != float(v):
        raise ValueError(f"{v!r} is not a float32 value")
    text = shortest_f32(v)
    if "." not in text and "e" not in text:  # "f" needs a floating constant: 3 -> 3.0f
        text += ".0"
    text += "f"
    return f"({text})" if text.startswith("-") else text


def sqlite_float(v: float) -> str:
    """A finite double as SQLite text that SQLite's own parser reads back exactly: the
    shortest decimal when :func:`_sqlite_reads_exactly` says so, else an exact product."""
    text = repr(float(v))
    if _sqlite_reads_exactly(text, v):
        return f"({text})" if text.startswith("-") else text
    return _sqlite_exact(v)


def _sqlite_reads_exactly(text: str, v: float) -> bool:
    """Whether SQLite's sqlite3AtoF reads ``text`` back as exactly ``v``.

    SQLite (3.40 here) keeps up to 19 digits in an int64 ``s`` and computes ``s / 10**e`` or
    ``s * 10**e`` in ``long double`` (80-bit on x86, plain double with MSVC), so it can round
    twice and miss by one unit. We emulate both builds and accept the short text only when
    both give ``v``; exponents beyond 22 (where the scale itself is inexact) are refused.
    """
    sign, digits, exp = Decimal(text).as_tuple()
    if len(digits) > 18:
        return False
    m = int("".join(map(str, digits)))
    while exp > 0 and m < 10**17:
        m, exp = m * 10, exp - 1
    while exp < 0 and m and m % 10 == 0:
        m, exp = m // 10, exp + 1
    if exp == 0:
        return m < 2**53 and float(m) == abs(v)
    if abs(exp) > 22:
        return False
    for kind in (np.float64, np.longdouble):
        with np.errstate(all="ignore"):
            scale = kind(10) ** abs(exp)
            r = kind(m) / scale if exp < 0 else kind(m) * scale
        if float(np.float64(r)) != abs(v):
            return False
    return True


def _sqlite_exact(v: float) -> str:
    """``v`` as an integer significand scaled by powers of two: every piece is an integer SQLite
    reads exactly, and scaling by a power of two is exact in any IEEE double arithmetic."""
    m, e = math.frexp(abs(v))  # v = m * 2**e, 0.5 <= m < 1
    sig = int(m * 2**53)
    e -= 53
    while sig and sig % 2 == 0:
        sig, e = sig // 2, e + 1
    parts = [f"{sig}.0"]
    op = " * " if e > 0 else " / "
    left = abs(e)
    while left:
        step = min(left, 62)
        parts.append(f"{2**step}.0")
        left -= step
    expr = op.join(parts)
    return f"(-({expr}))" if math.copysign(1, v) < 0 else f"({expr})"


# --- Python ---------------------------------------------------------------------------


def py_str(s) -> str:
    """Python literal for a label: repr escapes quotes, backslashes and control characters."""
    return repr(s)


def py_comment(s: str) -> str:
    """Text safe inside a ``#`` comment: one line, printable, encodable as UTF-8."""
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in _one_line(s))


def py_docstring(text: str) -> str:
    """A triple-quoted literal for multi-line text (a module docstring). Backslashes are escaped,
    and so is every double quote followed by another or ending the text, so no ``\"\"\"`` can close
    it early; line breaks other than ``\\n``, NUL, lone surrogates and other unprintable characters
    become escapes, so the source stays valid UTF-8."""
    text = str(text)
    out = []
    for i, ch in enumerate(text):
        if ch == "\\" or (ch == '"' and text[i + 1:i + 2] in ('"', "")):
            out.append("\\" + ch)
        elif ch == "\n" or ch.isprintable():
            out.append(ch)
        else:
            out.append(repr(ch)[1:-1])
    return '"""' + "".join(out) + '"""'


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


C99_STRING_LIMIT = 4095  # characters a string literal may hold in every C99 compiler


def c_string(s) -> str:
    """C string literal holding the UTF-8 bytes of ``s``; every non-ASCII or special byte
    is an octal escape, so no character can close the string or form a trigraph. Past
    C99's 4,095 characters (``cc -pedantic`` refuses longer literals) it is a compound
    literal ``(const char[]){'\\101', ..., 0}`` instead: the same bytes, as an array that
    is an address constant at file scope."""
    data = str(s).encode("utf-8")
    if len(data) >= C99_STRING_LIMIT:
        chars = [f"'\\{b:03o}'" for b in data] + ["0"]
        rows = [", ".join(chars[i:i + 16]) for i in range(0, len(chars), 16)]
        return "(const char[]){\n        " + ",\n        ".join(rows) + "}"
    out = []
    for b in data:
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


def sql_label(v) -> str:
    """A class or category label as SQL: integers stay numbers, strings are quoted."""
    if isinstance(v, int) and not isinstance(v, bool):
        return str(v)
    return sql_string(v)


def sql_comment(s: str) -> str:
    """Text safe inside ``/* ... */`` in SQL (the same rules as C)."""
    return c_comment(s)


# --- Java ----------------------------------------------------------------------------------

JAVA_RESERVED = frozenset("""
abstract assert boolean break byte case catch char class const continue default do double else
enum extends final finally float for goto if implements import instanceof int interface long
native new package private protected public return short static strictfp super switch
synchronized this throw throws transient try void volatile while true false null var record
yield sealed permits exports module open opens provides requires to transitive uses with
Object String Math StrictMath Double Float Integer Long System IllegalArgumentException Reader java
""".split())


def java_identifier(name: str) -> str:
    """A valid Java class name derived from ``name`` (ASCII letters, digits, underscores), never a
    keyword, a literal, a ``java.lang`` class the generated code names, its nested ``Reader``
    or ``java`` (which would hide the package in ``java.util.Arrays``)."""
    text = c_identifier(str(name), reserved=frozenset())
    if text in JAVA_RESERVED or text == "_":
        text += "_"
    return text


def java_comment(s: str) -> str:
    """Text safe inside a Java ``/* ... */`` or ``//`` comment: one line, ASCII only, no comment
    terminator, and no ``\\u`` escape: javac decodes those before it sees comments (``\\u002a/``
    would end one), so every backslash is doubled, which leaves none eligible to start one."""
    text = _one_line(str(s)).replace("\\", "\\\\")
    text = "".join(ch if 32 <= ord(ch) < 127 else f"U+{ord(ch):04X}" for ch in text)
    return text.replace("*/", "* /").replace("/*", "/ *")




# --- Go ------------------------------------------------------------------------------------

GO_RESERVED = frozenset("""
break case chan const continue default defer else fallthrough for func go goto if import
interface map package range return select struct switch type var main math
""".split())


def go_float(v: float) -> str:
    """A Go constant expression for a float64 value. Go constants are exact (arbitrary
    precision) and round once, correctly, to the type they meet, so repr's shortest decimal
    reads back identically; but a constant -0.0 is zero (positive), and there is no
    infinity constant: those are the package variables ``negZero``, ``posInf`` and ``negInf``
    every generated file declares."""
    v = float(v)
    if math.isnan(v):
        raise ValueError("NaN has no Go literal")
    if math.isinf(v):
        return "posInf" if v > 0 else "negInf"
    if v == 0.0 and math.copysign(1.0, v) < 0:
        return "negZero"
    return repr(v)


def go_string(s) -> str:
    """A Go interpreted string literal holding the UTF-8 bytes of ``s``: printable ASCII stays,
    every other byte (quotes, backslashes, controls, non-ASCII) is a ``\\xNN`` escape, so the
    source stays ASCII and nothing can close the string early."""
    data = str(s).encode("utf-8", "surrogatepass")
    out = []
    for b in data:
        ch = chr(b)
        if 32 <= b < 127 and ch not in '"\\':
            out.append(ch)
        else:
            out.append(f"\\x{b:02x}")
    return '"' + "".join(out) + '"'


def go_comment(s: str) -> str:
    """Text safe inside a ``//`` line comment: one line, printable ASCII (Go's scanner refuses
    NUL and a byte order mark anywhere); everything else becomes a ``\\u`` escape."""
    out = []
    for ch in _one_line(str(s)):
        if 32 <= ord(ch) < 127:
            out.append(ch)
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return "".join(out)


def go_identifier(name: str) -> str:
    """A Go package name from ``name``: lower-case ASCII letters, digits and underscores, not a
    keyword, not ``main`` (a command) and not ``math`` (the package the code imports)."""
    text = unicodedata.normalize("NFKD", str(name))
    text = re.sub(r"[^a-z0-9_]+", "_", text.encode("ascii", "ignore").decode().lower()).strip("_")
    if not text or text[0].isdigit():
        text = "m_" + text
    if text in GO_RESERVED:
        text += "_model"
    return text


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


# --- JavaScript ---------------------------------------------------------------------------


def js_number(v: float) -> str:
    """A JavaScript number literal that reads back to the identical double: repr is the
    shortest round-trip decimal and JS parses decimals correctly rounded; -0 keeps its sign."""
    v = float(v)
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0.0:
        return "-0" if math.copysign(1.0, v) < 0 else "0"
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


def js_string(s) -> str:
    """A double-quoted JS string literal of ``s``, pure ASCII: quotes, backslashes, control
    characters, U+2028/U+2029 (line terminators in older engines) and every non-ASCII code
    unit become escapes (json.dumps does this, lone surrogates included); ``<`` too, so the
    text cannot close a ``<script>`` element it is pasted into."""
    return json.dumps(str(s), ensure_ascii=True).replace("<", "\\u003c")


def js_label(v) -> str:
    """A class label: integers stay numbers (BigInt literals beyond 2**53), text is a string."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v) if abs(v) <= 2**53 else f"{v}n"
    return js_string(v)


def js_comment(s) -> str:
    """Text safe inside ``/* ... */`` or after ``//``: one line (no JS line terminator), no
    comment delimiters, ASCII only."""
    text = _one_line(str(s)).replace("*/", "* /").replace("/*", "/ *")
    return text.encode("ascii", "backslashreplace").decode()


# --- Rust ------------------------------------------------------------------------------------

RUST_RESERVED = frozenset("""
as break const continue crate else enum extern false fn for if impl in let loop match mod move
mut pub ref return self Self static struct super trait true type unsafe use where while async
await dyn abstract become box do final macro override priv typeof unsized virtual yield try gen
union std core alloc main
""".split())


def rust_f64(v: float) -> str:
    """Rust f64 literal: the shortest repr, which Rust's (correctly rounding) parser reads back
    exactly; infinities by name. Negative values are plain ``-1.5`` (valid in arrays and
    after a comparison operator)."""
    v = float(v)
    if math.isnan(v):
        return "f64::NAN"
    if math.isinf(v):
        return "f64::INFINITY" if v > 0 else "f64::NEG_INFINITY"
    text = repr(v)
    return text if ("." in text or "e" in text) else text + ".0"


def rust_f32(v: float) -> str:
    """Rust f32 literal for a float32 value: the fewest digits that read back to it."""
    v = float(v)
    if math.isnan(v):
        return "f32::NAN"
    if math.isinf(v):
        return "f32::INFINITY" if v > 0 else "f32::NEG_INFINITY"
    if float(np.float32(v)) != v:
        raise ValueError(f"{v!r} is not a float32 value")
    text = shortest_f32(v)
    return text if ("." in text or "e" in text) else text + ".0"


def rust_string(s) -> str:
    """Rust string literal; everything outside printable ASCII (and quote, backslash) is an
    escape, so the source is ASCII and no character can end the string. Rust strings are
    UTF-8: a lone surrogate has no spelling and is refused."""
    out = []
    for ch in str(s):
        o = ord(ch)
        if 0xD800 <= o <= 0xDFFF:
            raise ValueError(f"{s!r}: a lone surrogate cannot be written in a Rust string")
        if ch in '"\\':
            out.append("\\" + ch)
        elif 32 <= o < 127:
            out.append(ch)
        else:
            out.append(f"\\u{{{o:x}}}")
    return '"' + "".join(out) + '"'


def rust_comment(s: str) -> str:
    """Text safe after ``//``: one line, ASCII only (rustc denies bidirectional-control
    characters in comments by default), no ``/*`` (block comments nest in Rust)."""
    text = _one_line(str(s)).replace("/*", "/ *").replace("*/", "* /")
    return text.encode("ascii", "backslashreplace").decode()


def rust_identifier(name: str) -> str:
    """A valid Rust module/identifier name (ASCII letters, digits, underscores) from ``name``."""
    return c_identifier(name, RUST_RESERVED | C_RESERVED)
