"""How long a tenant keeps the private conversation logs, and their purge (what leaves the files for good).

The private logs hold what customers wrote, unmasked: ``turns`` (question, answer, trace), ``question_log``
and the ``conversations`` they belong to (:mod:`core.channels.conversations`), and the handoff transcripts
and replies (:mod:`core.channels.handoff`). They are kept ``log_retention_days`` (a tenant setting, default 90;
Settings → Privacy), apart from the masked gap samples' own retention (``tenants.retention_days``, default 30).

The gap backlog runs retention (on start, hourly while recording, ``python -m core purge``) but sits in a
layer that may not import ``channels``: so each owning module registers its purge here when it is imported
(the runtime imports both), and :func:`purge_private_logs` runs them with the tenant's cutoff.

Deleted rows must not stay readable in the files: the store opens every connection with
``PRAGMA secure_delete=ON`` (freed cells and pages are zeroed), and :func:`compact` checkpoints the WAL with
TRUNCATE, so the old page versions in ``-wal`` and the not-yet-rewritten pages of the database file go too.
"""
from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Callable

from core.base.clock import iso
from core.base.store import Store
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext

log = logging.getLogger(__name__)

#: (ctx, store, cutoff stamp) -> {what: rows purged}; everything recorded before the cutoff goes
Purge = Callable[[TenantContext, Store, str], dict[str, int]]
_PURGES: dict[str, Purge] = {}
COMPACT_BUSY_MS = 2000  # a checkpoint waits this long for readers, then leaves it to the next purge


def register(owner: str, purge: Purge) -> None:
    """An owning module's purge of its private-log tables (called once per module, at import)."""
    _PURGES[owner] = purge


def registered() -> list[str]:
    return sorted(_PURGES)


def log_retention_days(ctx: TenantContext, store: Store) -> int:
    return tenant_settings.get(ctx, store).log_retention_days


def cutoff(now: datetime, days: int) -> str:
    """The stamp before which records are older than ``days``."""
    return iso(now - timedelta(days=days))


def purge_private_logs(ctx: TenantContext, store: Store, now: datetime) -> dict[str, int]:
    """Delete this tenant's private-log records older than its log retention; returns rows per kind."""
    before = cutoff(now, log_retention_days(ctx, store))
    out: dict[str, int] = {}
    for owner in registered():
        out.update(_PURGES[owner](ctx, store, before))
    return out


def compact(store: Store) -> bool:
    """Push purged bytes out of the files: checkpoint the WAL into the database and truncate it. False when
    another connection kept a read open for COMPACT_BUSY_MS (the next purge tries again)."""
    db = store.db
    previous = db.execute("PRAGMA busy_timeout").fetchone()[0]
    db.execute(f"PRAGMA busy_timeout={COMPACT_BUSY_MS}")
    try:
        busy = db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    finally:
        db.execute(f"PRAGMA busy_timeout={int(previous)}")
    if busy:
        log.warning("Retention could not truncate the WAL (a reader held it); purged rows may stay in %s-wal "
                    "until the next purge.", store.path.name)
    return not busy
