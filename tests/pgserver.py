"""A throwaway PostgreSQL server for the SQL tests: its own data directory in a temporary
folder, listening on a Unix socket only (no TCP port), stopped when the tests end.

PostgreSQL refuses to run as root, so as root the server runs as the ``postgres`` user.
When no PostgreSQL binaries are found the tests that need it are skipped, except under CI
(``CI`` set), where a missing server is a failure: CI must test PostgreSQL for real.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from pathlib import Path


def _bindir() -> Path | None:
    for cand in [os.environ.get("PG_BIN", "")] + sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                                                        reverse=True):
        if cand and (Path(cand) / "initdb").exists() and (Path(cand) / "pg_ctl").exists():
            return Path(cand)
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


class PgServer:
    def __init__(self) -> None:
        self.bindir = _bindir()
        self.tmp: Path | None = None
        self.user: str | None = None

    def why_unavailable(self) -> str | None:
        if self.bindir is None:
            return "no PostgreSQL server binaries (initdb, pg_ctl) found; set PG_BIN"
        try:
            import psycopg  # noqa: F401
        except ImportError:
            return "psycopg is not installed"
        if os.geteuid() == 0:
            try:
                pwd.getpwnam("postgres")
            except KeyError:
                return "running as root and there is no 'postgres' user to run the server as"
        return None

    def _run(self, args: list[str]) -> None:
        cmd = [str(self.bindir / args[0])] + args[1:]
        if os.geteuid() == 0:
            cmd = ["runuser", "-u", "postgres", "--"] + cmd
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(args[:1])} failed: {proc.stdout[-800:]} {proc.stderr[-800:]}")

    def start(self) -> str:
        """Start the server; return a libpq connection string."""
        self.tmp = Path(tempfile.mkdtemp(prefix="rulegen_pg_"))
        os.chmod(self.tmp, 0o755)
        if os.geteuid() == 0:
            pw = pwd.getpwnam("postgres")
            os.chown(self.tmp, pw.pw_uid, pw.pw_gid)
            self.user = "postgres"
        else:
            self.user = pwd.getpwuid(os.geteuid()).pw_name
        data, sock = self.tmp / "data", self.tmp
        self._run(["initdb", "-D", str(data), "-A", "trust", "-U", self.user, "-E", "UTF8",
                   "--locale=C", "--no-sync"])
        # listen_addresses='' : no TCP at all, the Unix socket in our own folder only; the JIT
        # keeps its default (on): the SQL must finish with the settings users have
        opts = f"-c listen_addresses='' -k {sock} -c fsync=off"
        self._run(["pg_ctl", "-D", str(data), "-o", opts, "-l", str(self.tmp / "log"), "-w",
                   "-t", "60", "start"])
        return f"host={sock} dbname=postgres user={self.user}"

    def stop(self) -> None:
        if self.tmp is None:
            return
        try:
            self._run(["pg_ctl", "-D", str(self.tmp / "data"), "-m", "immediate", "-w", "stop"])
        finally:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None
