"""Golden files: the generated code for a few small models, committed under tests/golden/.

They are for review (a change to a generator shows up as a diff of real output) and double as
examples of what each target writes. Whether that code is *right* is decided elsewhere: the target
tests compile and run it against the evaluator. Refresh after an intended change with
``python -m pytest tests/test_golden.py --update-goldens`` and review the diff.
"""

from __future__ import annotations

from pathlib import Path

import irfixtures as F
import pytest

import rulegen
from rulegen import dsl
from rulegen.ir.serialize import dumps

GOLDEN = Path(__file__).parent / "golden"
CASES = {
    "classifier": F.classifier,
    "every_construct": F.every_construct,
    "sigmoid_ensemble": lambda: F.sigmoid_ensemble(n_trees=3),
    "adversarial_names": F.adversarial_names,
}
OUTPUTS = [
    ("python", {}, "python"),
    ("c", {}, "c"),
    ("sql", {"dialect": "sqlite"}, "sql_sqlite"),
    ("sql", {"dialect": "duckdb"}, "sql_duckdb"),
    ("sql", {"dialect": "postgres"}, "sql_postgres"),
]


def _generated(case: str, target: str, options: dict) -> dict[str, str]:
    model = CASES[case]()
    if target == "rules":
        return {f"{case}.rules": dsl.dumps(model)}
    if target == "json":
        return {f"{case}.json": dumps(model)}
    return rulegen.generate(model, target, name=case, **options)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("target,options,folder", OUTPUTS + [("rules", {}, "rules"),
                                                             ("json", {}, "json")])
def test_golden(request, case, target, options, folder):
    files = _generated(case, target, options)
    assert files == _generated(case, target, options), "generation must be deterministic"
    where = GOLDEN / folder
    if request.config.getoption("--update-goldens"):
        where.mkdir(parents=True, exist_ok=True)
        for name, text in files.items():
            (where / name).write_text(text, encoding="utf-8")
        return
    for name, text in files.items():
        path = where / name
        assert path.exists(), f"{path} is missing; run pytest --update-goldens and review it"
        assert path.read_text(encoding="utf-8") == text, (
            f"{path} differs from what the generator writes now; if the change is intended, "
            "run pytest tests/test_golden.py --update-goldens and review the diff")
