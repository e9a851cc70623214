"""A throwaway MariaDB server for the SQL tests: its own data directory in a temporary folder,
a Unix socket only (``--skip-networking``: no TCP port), stopped when the tests end.

The server runs with ``--no-defaults`` (no system option file is read) plus the character set
and collation Debian's packaged configuration sets (utf8mb4, case- and accent-insensitive
``utf8mb4_general_ci``), so text compares the way most users' servers compare it; every other
setting, the thread stack that bounds CASE nesting included, is the compiled-in default.
When no MariaDB binaries are found the tests that need them are skipped, except under CI
(``CI`` set), where a missing server is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

DATABASE = "rulegen"


def _binary(name: str) -> str | None:
    for cand in (shutil.which(name), f"/usr/sbin/{name}", f"/usr/bin/{name}"):
        if cand and Path(cand).exists():
            return cand
    return None


class MariaDBServer:
    def __init__(self) -> None:
        self.server = _binary("mariadbd")
        self.install = _binary("mariadb-install-db")
        self.tmp: Path | None = None
        self.proc: subprocess.Popen | None = None

    def why_unavailable(self) -> str | None:
        if self.server is None or self.install is None:
            return "no MariaDB server binaries (mariadbd, mariadb-install-db) found"
        try:
            import pymysql  # noqa: F401
        except ImportError:
            return "pymysql is not installed"
        return None

    def _options(self) -> list[str]:
        t = self.tmp
        user = ["--user=root"] if os.geteuid() == 0 else []
        return ["--no-defaults", f"--datadir={t / 'data'}", f"--tmpdir={t}"] + user

    def start(self) -> dict:
        """Start the server; return pymysql.connect keyword arguments."""
        self.tmp = Path(tempfile.mkdtemp(prefix="rulegen_mariadb_"))
        proc = subprocess.run([self.install] + self._options() + [
            "--auth-root-authentication-method=normal", "--skip-test-db"],
            capture_output=True, text=True, timeout=300)
        if proc.returncode != 0:
            raise RuntimeError(f"mariadb-install-db failed: {proc.stdout[-800:]} {proc.stderr[-800:]}")
        sock = self.tmp / "sock"
        self.proc = subprocess.Popen(
            [self.server] + self._options() + [
                f"--socket={sock}", "--skip-networking", f"--pid-file={self.tmp / 'pid'}",
                f"--log-error={self.tmp / 'log'}", "--skip-log-bin",
                "--character-set-server=utf8mb4", "--collation-server=utf8mb4_general_ci",
                "--innodb-flush-log-at-trx-commit=0", "--innodb-doublewrite=0"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        import pymysql

        args = {"unix_socket": str(sock), "user": "root", "charset": "utf8mb4", "autocommit": True}
        deadline = time.monotonic() + 120
        while True:
            try:
                conn = pymysql.connect(**args)
                break
            except pymysql.err.OperationalError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    log = (self.tmp / "log").read_text(errors="replace")[-1500:] \
                        if (self.tmp / "log").exists() else ""
                    self.stop()
                    raise RuntimeError(f"mariadbd did not start: {log}") from None
                time.sleep(0.1)
        with conn.cursor() as cur:
            cur.execute(f"CREATE DATABASE {DATABASE}")
        conn.close()
        return {**args, "database": DATABASE}

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
