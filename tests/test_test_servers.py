"""The private database servers the SQL tests start (tests/engines.py) stop when the test
process is killed with SIGTERM (a CI timeout, ``kill``), not only when it exits: SIGTERM's
default action would skip the atexit hooks and leave PostgreSQL running with its folder."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

SCRIPT = """
import sys, time
sys.path.insert(0, {tests!r})
from engines import _serve
from pgserver import PgServer
server = PgServer()
_serve(server, "PostgreSQL")
print(server.tmp, flush=True)
time.sleep(120)
"""


def test_sigterm_stops_the_postgresql_server():
    from pgserver import PgServer

    why = PgServer().why_unavailable()
    if why:
        pytest.skip(why)  # (under CI a skip fails: conftest.py)
    folder = Path()
    proc = subprocess.Popen([sys.executable, "-c", SCRIPT.format(tests=str(TESTS))],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        folder = Path(proc.stdout.readline().strip())
        assert folder.name.startswith("rulegen_pg_"), proc.stderr.read()
        pid = int((folder / "data" / "postmaster.pid").read_text().split()[0])
        os.kill(pid, 0)  # the server runs
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == -signal.SIGTERM  # still ends as SIGTERM says
    finally:
        if proc.poll() is None:
            proc.kill()
        left = PgServer()
        if folder.name.startswith("rulegen_pg_") and (folder / "data").exists():
            left.tmp = folder  # a failed run leaves nothing running either
            left.stop()
            pytest.fail("SIGTERM left the PostgreSQL server running")
    for _ in range(100):  # pg_ctl -m immediate returns once the postmaster is told
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the PostgreSQL server {pid} still runs")
