"""Replace one section's table in docs/BENCHMARKS.md with a benchmark's fresh one (``--write``).

A section is its ``## title`` heading, the generated text, then a marker line; whatever a
person wrote below the marker (how to read the numbers) is kept.
"""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[1] / "docs" / "BENCHMARKS.md"
TAIL = "## Not measured yet"
MARK = "<!-- written by the command above; notes below this line are kept -->"


def write_section(title: str, body: str, doc: Path = DOC) -> None:
    text = doc.read_text() if doc.exists() else "# Benchmarks\n"
    head = f"## {title}\n\n"
    fresh = head + body.rstrip("\n") + "\n\n" + MARK + "\n"
    m = re.search(re.escape(head) + r".*?(?=\n## |\Z)", text, flags=re.DOTALL)
    if m:
        old = m.group(0)
        kept = old[old.index(MARK) + len(MARK) + 1:] if MARK in old else ""
        text = text[:m.start()] + fresh + kept + text[m.end():]
    elif TAIL in text:
        text = text.replace(TAIL, fresh + "\n" + TAIL)
    else:
        text = text.rstrip("\n") + "\n\n" + fresh
    doc.write_text(text)


def publish(title: str, text: str, write: bool) -> None:
    """Print a benchmark's section; with ``write`` (its --write flag) also put it in the doc."""
    print(text)
    if write:
        write_section(title, text)
