"""Regenerate the recorded Weka J48 outputs that tests/test_c45.py compares with.

Needs Java and Weka 3.6 (``/usr/share/java/weka.jar`` and its example ARFF files, both from
Debian's ``weka`` package); CI does not, the tests only read what this script wrote. Run from the repository root:

    python3 tests/weka/record_j48.py [--data /work/shared/data] [--weka /usr/share/java/weka.jar]
        [--weka-examples /usr/share/doc/weka/examples]

For every dataset below it writes ``tests/data/c45/<name>.arff`` (the exact file J48
reads, and the test's input) and ``tests/data/c45/<name>.j48``: for each option set, J48's
printed tree, and for the default options J48's class distributions on the training rows
(``-p 0 -distribution``).

ARFF conventions (what the test's reader expects): a column is numeric when every
non-empty cell parses as a number, otherwise nominal with its values in order of first
appearance; the class (last column) lists its values sorted, which is the order
``np.unique`` gives the learner, so class ties break the same way in both programs.
A name or value is single-quoted when ARFF needs it; an empty cell is ``?``.
A dataset may declare levels instead (DECLARED): those columns list exactly the given
values in the given order, the class too, including values no row has, as Weka's own
ARFF files do; the test passes them to the learner as ``categories`` and ``classes``.
"""

from __future__ import annotations

import argparse
import csv
import io
import re
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parent.parent / "data" / "c45"

# name: (source, rows to keep (a slice of the data rows), J48 option sets); the source is a
# CSV in --data, "blank:<csv>:<row>:<column>" (that cell emptied) or "inline:<name>" (INLINE)
DATASETS = {
    "weather_nominal": ("weather.nominal.csv", slice(None), ["", "-U"]),
    "weather_numeric": ("weather.numeric.csv", slice(None), ["", "-U"]),
    # Quinlan's missing-value example (C4.5 book, ch. 3): outlook of row 12 unknown
    "weather_missing": ("blank:weather.nominal.csv:11:outlook", slice(None), ["", "-U"]),
    "iris": ("iris.csv", slice(None), ["", "-U", "-S", "-C 0.1 -M 5"]),
    "labor": ("labor.csv", slice(None), ["", "-U", "-S", "-M 1", "-C 0.5 -M 1"]),
    "vote": ("vote.csv", slice(None), ["", "-U", "-S", "-M 1 -U"]),
    "breast_cancer": ("breast-cancer.csv", slice(None), ["", "-U", "-S", "-C 0.4"]),
    "credit_g300": ("credit-g.csv", slice(300), ["", "-U", "-S"]),
    "soybean_third": ("soybean.csv", slice(None, None, 3), ["", "-U", "-S"]),
    # 36 random rows on which J48's and C4.5 R8's error estimates prune differently
    "estimates": ("inline:estimates", slice(None), ["", "-S"]),
    # 22 rows, all nominal: the root's two branches weigh 11 each and J48 raises the last
    "ties": ("inline:ties", slice(None), [""]),
    # the levels of Weka's own soybean.arff: fruit-spots declares 'distort', which no row has,
    # and the classes are not in sorted order (issue 20: 61 leaves, not 60)
    "soybean_declared": ("soybean.csv", slice(None), ["", "-U", "-S"]),
    # 20 rows; 'a' declares a sixth value no row has, so it has >= 0.3 n values and leaves
    # the average gain: the root splits on b, not on a
    "declared_values": ("inline:declared_values", slice(None), ["", "-U"]),
    # 60 rows, two classes shown of four declared: min_split = 0.1 * 60 / 4 admits the cut
    # x <= 0 that 0.1 * 60 / 2 = 3 rows would forbid
    "declared_classes": ("inline:declared_classes", slice(None), ["", "-U"]),
}

# declared levels per dataset: {column: values}, or "weka:<file>" for the nominal columns
# of that ARFF file in --weka-examples
DECLARED = {
    "soybean_declared": "weka:soybean.arff",
    "declared_values": {"a": ["v0", "v1", "v2", "v3", "v4", "v5"]},
    "declared_classes": {"class": ["c0", "c1", "c2", "c3"]},
}

# one token per row, one digit per column; "estimates": x1, x2 numeric, class c<digit>;
# "ties": a, b, c, class, every column nominal v<digit>
INLINE = {"estimates": "180 541 321 360 630 971 971 650 891 461 380 550 620 941 401 560 460 170 "
                       "090 220 630 971 010 460 851 931 140 010 100 350 310 511 080 911 641 541",
          "ties": "0111 0000 0021 0020 0100 0100 0121 0101 0000 0111 0101 1121 1101 1011 1020 "
                  "1011 1120 1000 1020 1111 1111 1020",
          "declared_values": "0000 0111 0111 0111 1011 1101 1111 1010 2000 2100 2101 2101 3101 "
                             "3111 3111 3111 4010 4010 4100 4100",
          "declared_classes": "01 01 80 60 50 30 30 10 10 10 20 80 60 90 50 60 90 70 60 51 60 "
                              "90 30 80 71 10 40 80 50 10 71 70 80 21 10 80 10 50 10 30 50 40 "
                              "40 10 10 20 10 70 50 60 30 60 70 40 50 90 80 90 40 70"}


def _source_text(data_dir: Path, csv_name: str) -> str:
    if csv_name.startswith("blank:"):  # blank:<file>:<data row>:<column>
        _, name, row, col = csv_name.split(":")
        rows = list(csv.reader(io.StringIO(_source_text(data_dir, name), newline="")))
        rows[int(row) + 1][rows[0].index(col)] = ""
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        return out.getvalue()
    if csv_name == "inline:estimates":
        rows = [f"{t[0]},{t[1]},c{t[2]}" for t in INLINE["estimates"].split()]
        return "x1,x2,class\n" + "\n".join(rows) + "\n"
    if csv_name in ("inline:ties", "inline:declared_values"):
        rows = [",".join(f"v{d}" for d in t) for t in INLINE[csv_name[7:]].split()]
        return "a,b,c,class\n" + "\n".join(rows) + "\n"
    if csv_name == "inline:declared_classes":
        rows = [f"{t[0]},c{t[1]}" for t in INLINE["declared_classes"].split()]
        return "x,class\n" + "\n".join(rows) + "\n"
    return (data_dir / csv_name).read_text(encoding="utf-8-sig")


def _is_number(s: str) -> bool:
    try:
        float(s)
    except ValueError:
        return False
    return True


def _quote(s: str) -> str:
    if re.fullmatch(r"[^\s,{}'\"%\\?]+", s):
        return s
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def declared_levels(spec, examples: Path) -> dict:
    """{column: values} from DECLARED: as written, or the nominal lists of a Weka ARFF header
    (plain, unquoted names and values, as in Weka's example files)."""
    if not isinstance(spec, str):
        return spec
    out = {}
    for line in (examples / spec[len("weka:"):]).read_text().splitlines():
        m = re.match(r"@attribute\s+(\S+)\s+\{(.*)\}\s*$", line, re.IGNORECASE)
        if m:
            out[m[1]] = [v.strip() for v in m[2].split(",")]
    return out


def to_arff(text: str, name: str, keep: slice, levels: dict | None = None) -> str:
    rows = list(csv.reader(io.StringIO(text, newline="")))
    header, body = [h.strip() for h in rows[0]], [[c.strip() for c in r] for r in rows[1:] if r]
    body = body[keep]
    lines = [f"@relation {_quote(name)}", ""]
    last = len(header) - 1
    numeric = []
    for j, col in enumerate(header):
        cells = [r[j] for r in body if r[j] != ""]
        is_num = j != last and all(_is_number(c) for c in cells)
        numeric.append(is_num)
        if is_num:
            lines.append(f"@attribute {_quote(col)} numeric")
            continue
        values = sorted(set(cells)) if j == last else list(dict.fromkeys(cells))
        if levels and col in levels:
            assert set(values) <= set(levels[col]), (col, set(values) - set(levels[col]))
            values = levels[col]
        lines.append(f"@attribute {_quote(col)} {{{','.join(_quote(v) for v in values)}}}")
    lines += ["", "@data"]
    for r in body:
        lines.append(",".join("?" if c == "" else (c if numeric[j] else _quote(c))
                              for j, c in enumerate(r)))
    return "\n".join(lines) + "\n"


def _j48(weka: str, args: list[str]) -> str:
    cmd = ["java", "-cp", weka, "weka.classifiers.trees.J48", *args]
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def tree_text(out: str) -> str:
    """J48's printed tree: from the 'J48 ... tree' title to the 'Size of the tree' line."""
    lines = out.splitlines()
    start = next(i for i, s in enumerate(lines) if s.startswith("J48 "))
    end = next(i for i, s in enumerate(lines) if s.startswith("Size of the tree"))
    return "\n".join(lines[start:end + 1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="/work/shared/data")
    ap.add_argument("--weka", default="/usr/share/java/weka.jar")
    ap.add_argument("--weka-examples", default="/usr/share/doc/weka/examples")
    args = ap.parse_args(argv)
    OUT.mkdir(parents=True, exist_ok=True)
    version = subprocess.run(["java", "-cp", args.weka, "weka.core.Version"], check=True,
                             capture_output=True, text=True).stdout.split()[0]
    for name, (csv_name, keep, option_sets) in DATASETS.items():
        arff = OUT / f"{name}.arff"
        levels = DECLARED.get(name) and declared_levels(DECLARED[name], Path(args.weka_examples))
        arff.write_text(to_arff(_source_text(Path(args.data), csv_name), name, keep, levels))
        parts = [f"# Weka {version} J48 on {arff.name}, recorded by tests/weka/record_j48.py"]
        for opts in option_sets:
            out = _j48(args.weka, ["-t", str(arff), "-no-cv", *opts.split()])
            parts += [f"=== options: {opts}", tree_text(out)]
        pred = _j48(args.weka, ["-t", str(arff), "-T", str(arff), "-p", "0", "-distribution"])
        rows = [s for s in pred.splitlines() if s.strip()[:1].isdigit()]
        parts += ["=== predictions: -p 0 -distribution (default options, training rows)", *rows]
        (OUT / f"{name}.j48").write_text("\n".join(parts) + "\n")
        print(f"wrote {arff.name} and {name}.j48", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
