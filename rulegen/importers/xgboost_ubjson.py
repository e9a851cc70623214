"""A small UBJSON reader for XGBoost's binary model format (``save_model("m.ubj")``).

Big-endian, as UBJSON and XGBoost's writer use. Objects become dicts, untyped arrays lists, and
strongly typed arrays (``[$d#L<count>...``: XGBoost writes its float32 and integer arrays this way)
numpy arrays, so a 1,000-tree model decodes in milliseconds. Any problem raises
``ModelFormatError`` with the byte offset.
"""

from __future__ import annotations

import struct

import numpy as np

from rulegen.errors import ModelFormatError

_SCALARS = {  # marker: (struct format, size)
    b"i": (">b", 1), b"U": (">B", 1), b"I": (">h", 2), b"l": (">i", 4), b"L": (">q", 8),
    b"d": (">f", 4), b"D": (">d", 8),
}
_NUMPY = {b"i": ">i1", b"U": ">u1", b"I": ">i2", b"l": ">i4", b"L": ">i8", b"d": ">f4", b"D": ">f8"}
_MAX_DEPTH = 200


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def fail(self, msg: str):
        raise ModelFormatError(f"UBJSON byte {self.pos}: {msg}")

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            self.fail(f"truncated (needed {n} more bytes, {len(self.data) - self.pos} left)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def marker(self) -> bytes:
        return self.take(1)

    def number(self, marker: bytes):
        fmt, size = _SCALARS[marker]
        return struct.unpack(fmt, self.take(size))[0]

    def count(self, marker: bytes | None = None) -> int:
        marker = marker or self.marker()
        if marker not in _SCALARS or marker in (b"d", b"D"):
            self.fail(f"expected an integer length, got marker {marker!r}")
        n = self.number(marker)
        if n < 0:
            self.fail(f"negative length {n}")
        return n

    def string(self) -> str:
        raw = self.take(self.count())
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            self.fail("a string is not valid UTF-8")

    def value(self, marker: bytes, depth: int):
        if marker in _SCALARS:
            return self.number(marker)
        if marker == b"S":
            return self.string()
        if marker == b"C":
            return self.take(1).decode("latin-1")
        if marker == b"H":
            text = self.string()
            try:
                return int(text) if text.lstrip("+-").isdigit() else float(text)
            except ValueError:
                self.fail(f"bad high-precision number {text!r}")
        if marker == b"T":
            return True
        if marker == b"F":
            return False
        if marker == b"Z":
            return None
        if depth > _MAX_DEPTH:
            self.fail("containers nested too deeply")
        if marker == b"[":
            return self.array(depth + 1)
        if marker == b"{":
            return self.object(depth + 1)
        self.fail(f"unknown value marker {marker!r}")

    def _container_header(self) -> tuple[bytes | None, int | None]:
        typ = count = None
        if self.data[self.pos:self.pos + 1] == b"$":
            self.pos += 1
            typ = self.marker()
            if self.data[self.pos:self.pos + 1] != b"#":
                self.fail("a typed container needs a count ('#')")
        if self.data[self.pos:self.pos + 1] == b"#":
            self.pos += 1
            count = self.count()
        return typ, count

    def array(self, depth: int):
        typ, count = self._container_header()
        if typ is not None and typ in _NUMPY:
            dt = np.dtype(_NUMPY[typ])
            raw = self.take(count * dt.itemsize)
            return np.frombuffer(raw, dtype=dt).astype(dt.newbyteorder("="))
        out = []
        if count is not None:
            for _ in range(count):
                out.append(self.value(typ or self.marker(), depth))
            return out
        while True:
            m = self.marker()
            if m == b"]":
                return out
            if m != b"N":
                out.append(self.value(m, depth))

    def object(self, depth: int):
        typ, count = self._container_header()
        out = {}
        if count is not None:
            for _ in range(count):
                key = self.string()
                out[key] = self.value(typ or self.marker(), depth)
            return out
        while True:
            if self.data[self.pos:self.pos + 1] == b"}":
                self.pos += 1
                return out
            if self.data[self.pos:self.pos + 1] == b"N":
                self.pos += 1
                continue
            key = self.string()
            out[key] = self.value(self.marker(), depth)


def loads(data: bytes):
    """Decode one UBJSON value (an XGBoost model is one object); trailing bytes are an error."""
    r = _Reader(bytes(data))
    result = r.value(r.marker(), 0)
    if r.pos != len(r.data):
        r.fail(f"{len(r.data) - r.pos} unexpected bytes after the end of the document")
    return result
