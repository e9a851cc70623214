"""Reading the rules language's literals: numbers (float32 rounding from the decimal),
strings and quoted names (escapes). Writing them is the printer's job.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np

_ESCAPES = {"\\": "\\", '"': '"', "`": "`", "n": "\n", "r": "\r", "t": "\t", "0": "\0"}


def unescape(body: str) -> tuple[str, int | None]:
    """The text of a string or quoted name without its quotes; returns (text, None), or
    (partial, offset of the bad escape) when an escape is not one the language knows."""
    if "\\" not in body:
        return body, None
    out: list[str] = []
    i, n = 0, len(body)
    while i < n:
        c = body[i]
        if c != "\\":
            out.append(c)
            i += 1
            continue
        e = body[i + 1] if i + 1 < n else ""
        if e in _ESCAPES:
            out.append(_ESCAPES[e])
            i += 2
            continue
        width = 4 if e == "u" else 8 if e == "U" else 0
        digits = body[i + 2:i + 2 + width]
        if width and len(digits) == width and all(d in "0123456789abcdefABCDEF" for d in digits):
            code = int(digits, 16)
            if code <= 0x10FFFF:
                out.append(chr(code))
                i += 2 + width
                continue
        return "".join(out), i
    return "".join(out), None


_TWO24 = 1 << 25  # a float32 rounding midpoint has at most 25 significant bits


def f32_from_decimal(text: str, negative: bool) -> float:
    """The float32 value nearest to the decimal ``text`` (ties to even, overflow to inf),
    as a C compiler reads ``2.45f``; not float32(float64(text)), which can round twice."""
    x = float(text)
    with np.errstate(over="ignore"):
        f = float(np.float32(x))
    if f != x and math.isfinite(x) and x != 0.0:
        m, _ = math.frexp(x)
        if (m * _TWO24).is_integer():  # float64 landed on a float32 midpoint: decide exactly
            f = _nearest_f32(Fraction(text))
    return -f if negative else f


def _nearest_f32(q: Fraction) -> float:
    with np.errstate(over="ignore"):
        c = np.float32(float(q))
        cands = {float(c), float(np.nextafter(c, np.float32(np.inf))),
                 float(np.nextafter(c, np.float32(-np.inf)))}
    best, best_d = None, None
    for v in sorted(cands):
        # infinity stands for 2**128 (where float32 rounding overflows)
        fv = Fraction(2) ** 128 if v == math.inf else (-Fraction(2) ** 128 if v == -math.inf
                                                        else Fraction(v))
        d = abs(fv - q)
        if best_d is None or d < best_d or (d == best_d and _even(v)):
            best, best_d = v, d
    return best


def _even(v: float) -> bool:
    if math.isinf(v):
        return True
    return not int(np.array([v], dtype=np.float32).view(np.uint32)[0]) & 1


def is_int_text(text: str) -> bool:
    return text.isdigit()
