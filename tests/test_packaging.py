"""The wheel: it carries the templates and grammar, and works installed on its own."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: build with the installed hatchling instead of fetching one
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir",
                    str(out), str(ROOT)], check=True, capture_output=True)
    wheels = list(out.glob("rulegen-*.whl"))
    assert len(wheels) == 1
    return wheels[0]


def test_wheel_carries_templates_and_grammar(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    templates = {n for n in names if n.startswith("rulegen/templates/")}
    for target in ("c", "python", "sql", "go"):
        assert any(n.startswith(f"rulegen/templates/{target}/") and n.endswith(".j2")
                   for n in templates), target
    assert "rulegen/grammar/rules.lark" in names
    assert not any(n.startswith(("tests/", "benchmarks/")) for n in names)


@pytest.mark.slow
def test_installed_wheel_fits_and_compiles(wheel, tmp_path):
    venv = tmp_path / "venv"
    # numpy/jinja2/lark/click come from the environment running the tests (a virtual
    # environment or the system Python), without a download: its site directories are
    # listed in a .pth file, which appends them to sys.path as plain paths (their own .pth
    # files, such as an editable install's finder, are not run). The wheel's own rulegen is
    # installed into the venv's site-packages, which comes first, and must shadow the checkout.
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    inner = subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                           check=True, capture_output=True, text=True).stdout.strip()
    outer = [p for p in sys.path if p.endswith(("site-packages", "dist-packages")) and os.path.isdir(p)]
    (Path(inner) / "_rulegen_test_outer.pth").write_text("\n".join(outer) + "\n")
    subprocess.run([str(py), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall",
                    str(wheel)], check=True, capture_output=True)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([str(py), "-c", "import rulegen; print(rulegen.__file__)"], cwd=work,
                           check=True, capture_output=True, text=True, env=env).stdout
    assert str(venv) in where, where
    lark_at = subprocess.run([str(py), "-c", "import lark; print(lark.__file__)"], cwd=work,
                             check=True, capture_output=True, text=True, env=env).stdout
    import lark
    assert lark_at.strip() == lark.__file__  # this environment's, not the base Python's
    rulegen = venv / "bin" / "rulegen"
    iris = ROOT / "examples" / "iris.csv"
    subprocess.run([str(rulegen), "fit", str(iris), "--target", "class", "-o", "iris.json"],
                   cwd=work, check=True, env=env)
    for target, out in (("c", "cout"), ("python", "iris_model.py"), ("sql", "iris.sql")):
        subprocess.run([str(rulegen), "compile", "iris.json", "--target", target, "-o", out],
                       cwd=work, check=True, env=env)
    # the grammar loads from the installed package: a hand-written rules file compiles
    subprocess.run([str(rulegen), "compile", str(ROOT / "examples" / "iris.rules"), "--target",
                    "sql", "-o", "rules.sql"], cwd=work, check=True, env=env)
    subprocess.run([str(rulegen), "convert", "iris.json", "-o", "iris.rules"], cwd=work,
                   check=True, env=env)
    subprocess.run([str(rulegen), "check", "iris.rules"], cwd=work, check=True, env=env)
    assert (work / "rules.sql").is_file()
    assert (work / "cout" / "iris.c").is_file()
    assert (work / "iris_model.py").is_file()
    assert (work / "iris.sql").is_file()
