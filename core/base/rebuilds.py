"""Migrations that rebuild a table: SQLite cannot alter a CHECK constraint, so the table is created anew under a
temporary name from its own stored definition (the constraint widened), its rows copied with their ids, the old
table dropped and the new one renamed (SQLite's documented procedure). Listed in ``core.base.migrations``."""
from __future__ import annotations

import sqlite_utils


def run_script(db: sqlite_utils.Database, script: str) -> None:
    """Run ``script`` statement by statement: executescript() would COMMIT the surrounding transaction."""
    for statement in script.split(";"):
        if statement.strip():
            db.execute(statement)


def rebuild(db: sqlite_utils.Database, table: str, old: str, new: str, indexes: list[str]) -> None:
    """Rebuild ``table`` with ``old`` replaced by ``new`` in its definition; rows and ids kept, ``indexes``
    (CREATE INDEX statements) made again."""
    sql = db.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", [table]).fetchone()[0]
    if old not in sql:
        raise RuntimeError(f"cannot migrate {table}: its definition does not contain {old!r}")
    staging = f"{table}_rebuilt"
    db.execute(sql.replace(table, staging, 1).replace(old, new))
    db.execute(f"INSERT INTO {staging} SELECT * FROM {table}")
    db.execute(f"DROP TABLE {table}")
    db.execute(f"ALTER TABLE {staging} RENAME TO {table}")
    for statement in indexes:
        db.execute(statement)


def m011_qa_partial(db: sqlite_utils.Database) -> None:
    """A QA case may expect ``partial`` (the agent answers in part and says what the material does not mention)."""
    rebuild(db, "qa_cases", "'abstains', 'handoff'", "'abstains', 'partial', 'handoff'",
            ["CREATE INDEX qa_cases_tenant_suite ON qa_cases (tenant_id, suite_id, position)"])
