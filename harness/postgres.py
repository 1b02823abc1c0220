"""A real PostgreSQL for the classroom's tests and benchmarks: Debian's server, started in a temporary directory.

`initdb` makes a fresh cluster there and `pg_ctl` starts it on a free local port (TCP on 127.0.0.1 only,
its socket in the same directory), trusting local connections. PostgreSQL refuses to run as root: when
the tests run as root (CI), the directory is given to the `postgres` user Debian's package creates and
the server runs as that user (runuser). The server is stopped when the test session ends.

There is no skip: without Debian's `postgresql` installed (scripts/test.sh installs it), starting one raises
RuntimeError saying how to install it, which fails the test that asked for it.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

from harness.servers import free_port


def _bin_dir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    if not found:
        raise RuntimeError("PostgreSQL is not installed: `apt-get install postgresql` (scripts/test.sh does it)")
    return Path(found[-1]).parent


class Postgres:
    """One running server; `new_database()` gives each test its own empty database."""

    def __init__(self) -> None:
        self.bin = _bin_dir()
        self.dir = Path(tempfile.mkdtemp(prefix="attention-pg-"))
        self.data = self.dir / "data"
        self.port = free_port()
        self.user = None
        if os.geteuid() == 0:
            self.user = "postgres"
            try:
                entry = pwd.getpwnam(self.user)
            except KeyError:
                needs = "running as root needs Debian's `postgres` user (apt-get install postgresql)"
                raise RuntimeError(needs) from None
            os.chown(self.dir, entry.pw_uid, entry.pw_gid)
        self._run([self.bin / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"])
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        self._run([self.bin / "pg_ctl", "-D", self.data, "-o", options, "-l", self.dir / "log", "-w", "start"])

    def _run(self, cmd: list) -> None:
        cmd = [str(c) for c in cmd]
        if self.user:
            cmd = ["runuser", "-u", self.user, "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            log = self.dir / "log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"{' '.join(cmd)} failed: {done.stdout}{done.stderr}{tail}")

    def pg_ctl(self, action: str) -> None:
        """Stop, start or reload the server ("stop", "start", "reload"): a database that goes away mid-class and
        comes back, or a new pg_hba.conf."""
        options = f"-p {self.port} -k {self.dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200"
        extra = {"stop": ["-m", "fast"], "reload": []}.get(action, ["-o", options, "-l", self.dir / "log"])
        self._run([self.bin / "pg_ctl", "-D", self.data, *extra, "-w", action])

    def psql(self, sql: str) -> None:
        """Run `sql` as the superuser (a statement of the test's own, never user text)."""
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as c:
            c.execute(sql)

    def as_owner(self, path: Path, text: str) -> None:
        """Write one of the server's files (pg_hba.conf), owned as the server needs it."""
        path.write_text(text)
        if self.user:
            entry = pwd.getpwnam(self.user)
            os.chown(path, entry.pw_uid, entry.pw_gid)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh empty database on this server; its URL."""
        import psycopg

        name = "t_" + uuid.uuid4().hex[:12]
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user=postgres dbname=postgres", autocommit=True) as c:
            c.execute(f"CREATE DATABASE {name}")  # a name made above, never user text
        return self.url(name)

    def stop(self) -> None:
        try:
            self._run([self.bin / "pg_ctl", "-D", self.data, "-m", "fast", "-w", "stop"])
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)
