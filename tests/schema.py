"""Databases as an older release left them, for the tests of one migration (core/base/migrations.py): every step
before it applied, that one not yet (``schema_before``); then the step under test (``migrate``)."""
from __future__ import annotations

from pathlib import Path

import sqlite_utils

from core.base.migrations import MIGRATIONS


def schema_before(migration: str, path: Path | None = None) -> sqlite_utils.Database:
    """A database at ``path`` (in memory without one) migrated up to, not including, ``migration``."""
    db = sqlite_utils.Database(str(path)) if path is not None else sqlite_utils.Database(memory=True)
    names = [name for name, _ in MIGRATIONS]
    for _name, step in MIGRATIONS[: names.index(migration)]:
        step(db)
    return db


def migrate(db: sqlite_utils.Database, migration: str) -> None:
    """Run the one step ``migration`` on ``db``."""
    dict(MIGRATIONS)[migration](db)
