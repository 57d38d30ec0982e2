"""The SQLite database (through sqlite-utils): connection, WAL, and the named append-only migrations of
``core/migrations.py`` applied on open.

Every table that holds tenant data carries ``tenant_id`` and every statement on it filters by it;
the functions that read and write those tables live with their domain modules (sources, knowledge...).
"""
from __future__ import annotations

import sqlite3
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import sqlite_utils

from core.base.clock import SYSTEM, Clock
from core.base.migrations import MIGRATIONS
from core.base.tenant_scope import GuardedConnection


class Store:
    """One SQLite database file: opened in WAL mode, migrated on open.

    Each thread gets its own connection (the admin app serves several browser sessions from threads,
    the API serves requests from a pool): a transaction belongs to one thread and never silently
    absorbs another's writes. WAL lets readers go on while one writer holds the lock."""

    def __init__(self, path: Path | str, clock: Clock = SYSTEM):
        self.path = Path(path)
        self.clock = clock
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: list[sqlite3.Connection] = []
        self._guard = threading.Lock()
        self.db.execute("PRAGMA journal_mode=WAL")
        self.migrate()

    @property
    def db(self) -> sqlite_utils.Database:
        """This thread's connection (opened on first use)."""
        database = getattr(self._local, "db", None)
        if database is None:
            # every statement's tenant id must come from an issued TenantContext (core.base.tenant_scope)
            conn = sqlite3.connect(str(self.path), timeout=30, check_same_thread=False, isolation_level=None,
                                   factory=GuardedConnection)
            conn.execute("PRAGMA foreign_keys=ON")
            conn.execute("PRAGMA busy_timeout=30000")
            conn.execute("PRAGMA secure_delete=ON")  # purged private data is zeroed, not left in free space
            # WAL + NORMAL: a commit no longer waits for the disk; the database cannot be corrupted, a power cut
            # may only lose the last transactions (the usual trade for a WAL database serving a chat endpoint)
            conn.execute("PRAGMA synchronous=NORMAL")
            database = self._local.db = sqlite_utils.Database(conn)
            with self._guard:
                self._connections.append(conn)
        return database

    def migrate(self) -> list[str]:
        """Apply the migrations not yet recorded; return their names."""
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
        )
        done = {row[0] for row in self.db.execute("SELECT name FROM _migrations").fetchall()}
        applied = []
        for name, step in MIGRATIONS:
            if name in done:
                continue
            with self.write():
                step(self.db)
                self.db.execute("INSERT INTO _migrations (name, applied_at) VALUES (?, ?)", [name, self.clock.stamp()])
            applied.append(name)
        return applied

    @contextmanager
    def write(self) -> Iterator[sqlite_utils.Database]:
        """A read-check-write transaction: BEGIN IMMEDIATE so it never fails upgrading to a write."""
        conn = self.db.conn
        if conn.in_transaction:  # nested: join the outer transaction
            yield self.db
            return
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield self.db
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    def query(self, sql: str, params: list | tuple | dict = ()) -> list[dict]:
        """Rows of a SELECT as dicts."""
        return list(self.db.query(sql, params))

    def close(self) -> None:
        with self._guard:
            for conn in self._connections:
                conn.close()
            self._connections.clear()
        self._local = threading.local()
