"""Test-suite wide rules.

Under CI (the environment variable ``CI`` is set) a skipped test is a failure: every
check must really run there (C compiler, SQLite, DuckDB, PostgreSQL, the libraries we
import from). Locally, tests that need a missing tool may skip, and say why.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped and not hasattr(report, "wasxfail"):
        report.outcome = "failed"
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
        report.longrepr = f"skipped under CI, which must run every check: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    """The same rule for a whole module skipped while it is collected (a module-level
    ``pytest.importorskip``), which never reaches pytest_runtest_makereport."""
    outcome = yield
    report = outcome.get_result()
    if os.environ.get("CI") and report.skipped:
        report.outcome = "failed"
        report.longrepr = f"module skipped under CI, which must run every check: {report.longrepr}"


def pytest_addoption(parser):
    parser.addoption("--update-goldens", action="store_true",
                     help="rewrite tests/golden/ from the current generators instead of comparing")


# --- the kernel tests (test_kernels.py, test_newton_hist.py): numba kernels against numpy ----


@pytest.fixture
def kernels_compiled():
    """For modules that compare the compiled kernels themselves (``pytestmark =
    pytest.mark.usefixtures("kernels_compiled")``): numba is loaded."""
    from rulegen.learn.compiled import kernels

    assert kernels.enabled()


@pytest.fixture
def numpy_only(monkeypatch):
    """``numpy_only()`` turns the kernels off for the rest of the test."""
    from rulegen.learn.compiled import kernels

    def off():
        monkeypatch.setattr(kernels, "ENABLED", False)
    return off
