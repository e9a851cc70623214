"""CSV input: a header row, one column per feature, an empty cell is missing.

A column whose non-empty cells all parse as numbers is numeric; any other
column is categorical. Errors name the file, line and column.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from rulegen.errors import DataError
from rulegen.ir.nodes import Feature, Model


@dataclass
class Table:
    """Raw CSV cells by column; ``None`` is an empty (missing) cell."""

    source: str
    columns: list[str]
    cells: list[list[str | None]]  # cells[j][i]: column j, data row i
    lines: list[int] | None = None  # file line where each row starts (None: row + 2)

    @property
    def n_rows(self) -> int:
        return len(self.cells[0]) if self.cells else 0

    def without_rows(self, rows) -> Table:
        """The table less the given data rows; errors still name each row's file line."""
        drop = set(rows)
        keep = [i for i in range(self.n_rows) if i not in drop]
        return Table(self.source, self.columns, [[col[i] for i in keep] for col in self.cells],
                     [self.line_of(i) for i in keep])

    def index(self, name: str) -> int:
        try:
            return self.columns.index(name)
        except ValueError:
            raise DataError(f"{self.source}: no column {name!r}; the columns are: "
                            f"{', '.join(self.columns)}") from None

    def line_of(self, row: int) -> int:
        if self.lines is not None:
            return self.lines[row]
        return row + 2  # 1-based, after the header


def read_csv(path: str | Path) -> Table:
    path = Path(path)
    try:
        # newline="": the csv module reads line ends itself, so a CR LF inside a quoted field
        # (a name or a value) stays as written
        with open(path, encoding="utf-8-sig", newline="") as fh:
            text = fh.read()
    except FileNotFoundError:
        raise DataError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise DataError(f"{path}: cannot read: {e}") from None
    return parse_csv(text, str(path))


def parse_csv(text: str, source: str = "<data>") -> Table:
    nul = text.find("\x00")
    if nul >= 0:  # no target can spell it in a name or label (SQL, C strings)
        line = text.count("\n", 0, nul) + 1
        column = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise DataError(f"{source}:{line}:{column}: a NUL character; remove it (no name or "
                        "label may contain one)")
    reader = csv.reader(io.StringIO(text, newline=""))
    try:
        header = next(reader)
    except StopIteration:
        raise DataError(f"{source}: empty file; expected a header row") from None
    except csv.Error as e:
        raise DataError(f"{source}:1: bad CSV: {e}") from None
    header = [h.strip() for h in header]
    if not header or any(not h for h in header):
        raise DataError(f"{source}:1: every column needs a name in the header row")
    seen = set()
    for h in header:
        if h in seen:
            raise DataError(f"{source}:1: duplicate column name {h!r}")
        seen.add(h)
    cells: list[list[str | None]] = [[] for _ in header]
    lines, last = [], reader.line_num  # a quoted field may span lines: each row's first line
    try:
        for row in reader:
            start, last = last + 1, reader.line_num
            if not row or (len(row) == 1 and not row[0].strip() and len(header) > 1):
                continue  # blank line
            if len(row) != len(header):
                raise DataError(f"{source}:{start}: expected {len(header)} fields, "
                                f"got {len(row)}")
            for j, v in enumerate(row):
                v = v.strip()
                cells[j].append(v if v else None)
            lines.append(start)
    except csv.Error as e:
        raise DataError(f"{source}:{reader.line_num}: bad CSV: {e}") from None
    if not cells[0]:
        raise DataError(f"{source}: no data rows after the header")
    return Table(source, header, cells, lines)


def _to_float(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def is_numeric(table: Table, j: int) -> bool:
    return all(v is None or _to_float(v) is not None for v in table.cells[j])


def numeric_column(table: Table, j: int, why: str = "") -> np.ndarray:
    """Column ``j`` as float64 (NaN for empty cells); text is an error naming its place."""
    out = np.empty(table.n_rows)
    for i, v in enumerate(table.cells[j]):
        if v is None:
            out[i] = math.nan
            continue
        f = _to_float(v)
        if f is None:
            raise DataError(f"{table.source}:{table.line_of(i)}: column {table.columns[j]!r}: "
                            f"{v!r} is not a number{why}")
        out[i] = f
    return out


def mostly_numeric(table: Table, j: int) -> bool:
    """At least half of the non-empty cells are numbers: a text cell there is more likely a
    typo than a category, so fitting treats the column as numeric unless told otherwise."""
    present = [v for v in table.cells[j] if v is not None]
    numbers = sum(_to_float(v) is not None for v in present)
    return bool(present) and 2 * numbers >= len(present)


def categorical_column(table: Table, j: int) -> tuple[tuple, np.ndarray]:
    """Column ``j`` as a categorical feature: (labels, codes). The labels are the distinct
    non-empty cells, sorted (integers numerically, before text); code i means labels[i],
    NaN is missing. If every cell is an integer written plainly ("3", "-1") the labels are
    ints, otherwise they are all text."""
    distinct = sorted({v for v in table.cells[j] if v is not None}, key=_label_key)
    values = [_label_value(v) for v in distinct]
    labels = tuple(values) if all(isinstance(v, int) for v in values) else tuple(distinct)
    index = {v: i for i, v in enumerate(distinct)}
    codes = np.array([math.nan if v is None else index[v] for v in table.cells[j]],
                     dtype=np.float64)
    return labels, codes


def design_matrix(table: Table, cols, declared=()) -> tuple[np.ndarray, list[str], dict]:
    """The columns ``cols`` (indices) as a learner's X, as `rulegen fit` reads them: numeric
    if every cell is a number, categorical (codes of the sorted distinct cells) if the column
    is text or named in ``declared``. A mostly numeric column with a stray text cell is an
    error naming the cell (a typo is likelier than a category). Returns X, the column names
    and {position in X: category labels}."""
    columns, categories = [], {}
    for k, j in enumerate(cols):
        name = table.columns[j]
        categorical = name in declared or not is_numeric(table, j)
        if categorical and name not in declared and mostly_numeric(table, j):
            numeric_column(table, j, f"; most of the column is numbers, so this looks like a "
                                     f"typo (declare the column categorical with "
                                     f"--categorical {name!r} if it is not)")
        if categorical:
            categories[k], codes = categorical_column(table, j)
            columns.append(codes)
        else:
            columns.append(numeric_column(table, j))
    return np.column_stack(columns), [table.columns[j] for j in cols], categories

@dataclass(frozen=True)
class Unseen:
    """Cells of one categorical column whose value the model does not list."""

    column: str
    count: int
    example: str
    line: int  # of the first such cell

    def message(self, source: str) -> str:
        return (f"{source}:{self.line}: column {self.column!r}: {self.count} value"
                f"{'s' if self.count > 1 else ''} not seen in training, e.g. {self.example!r}")


def feature_matrix(model: Model, table: Table, unseen: list | None = None) -> np.ndarray:
    """The model's features from ``table`` as the evaluator's input (codes for categories).
    A category value the model does not list gets code -1 and takes the model's route for
    unseen values; ``unseen``, when given, receives one :class:`Unseen` per such column."""
    X = np.empty((table.n_rows, len(model.features)))
    for k, feat in enumerate(model.features):
        j = table.index(feat.name)
        if feat.kind == "numeric":
            X[:, k] = numeric_column(table, j, f" (feature {feat.name!r} is numeric)")
        else:
            X[:, k] = _encode(feat, table.cells[j])
            bad = np.flatnonzero(X[:, k] == -1)
            if unseen is not None and bad.size:
                i = int(bad[0])
                unseen.append(Unseen(feat.name, int(bad.size), table.cells[j][i], table.line_of(i)))
    return X


def _encode(feat: Feature, cells) -> np.ndarray:
    codes = {str(c): i for i, c in enumerate(feat.categories)}
    if all(isinstance(c, int) for c in feat.categories):
        # integer labels: "3.0" and "+3" are the label 3 (a CSV writer's float formatting)
        for v in {v for v in cells if v is not None and v not in codes}:
            f = _to_float(v)
            if f is not None and f.is_integer() and str(int(f)) in codes:
                codes[v] = codes[str(int(f))]
    # -1 is not a code: unseen labels route as the model says
    return np.array([math.nan if v is None else codes.get(v, -1) for v in cells], dtype=np.float64)


def target_column(table: Table, name: str, task: str | None) -> tuple[str, np.ndarray, tuple]:
    """(task, y, classes): y holds class indices for classification, values for regression.

    Without an explicit task, a column of text, or of at most 10 distinct integers,
    is a classification target; otherwise regression."""
    j = table.index(name)
    cells = table.cells[j]
    missing = [i for i, v in enumerate(cells) if v is None]
    if missing:
        raise DataError(f"{table.source}:{table.line_of(missing[0])}: target column {name!r} "
                        "is empty here; every row needs a target value (rulegen fit "
                        "--drop-missing-target leaves such rows out)")
    numeric = is_numeric(table, j)
    if task is None:
        values = [_to_float(v) for v in cells] if numeric else None
        few_ints = numeric and len(set(values)) <= 10 and all(v == int(v) for v in values
                                                              if math.isfinite(v))
        task = "classification" if not numeric or few_ints else "regression"
    if task == "regression":
        y = numeric_column(table, j, " (the target of a regression)")
        if not np.isfinite(y).all():
            bad = int(np.flatnonzero(~np.isfinite(y))[0])
            raise DataError(f"{table.source}:{table.line_of(bad)}: target column {name!r}: "
                            "regression targets must be finite numbers")
        return task, y, ()
    labels = sorted(set(cells), key=_label_key)
    classes = tuple(_label_value(v) for v in labels)
    index = {v: i for i, v in enumerate(labels)}
    return task, np.array([index[v] for v in cells], dtype=np.int64), classes


def _label_key(v: str):
    try:
        return (0, int(v), v)
    except ValueError:
        return (1, 0, v)


def _label_value(v: str):
    """Class labels stay text, except integers written plainly ("0", "12"), which become ints."""
    try:
        i = int(v)
    except ValueError:
        return v
    return i if str(i) == v else v
