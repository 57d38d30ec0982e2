"""The gap backlog's entry point (G1, G4): every uncovered question arrives through ``record``.

This stores the raw event; the backlog issue replaces the storage with merged, PII-masked gaps and
migrates these rows. Faults (a transport error, a failing tool) are never recorded: callers only call
this for a true absence, and ``record`` refuses the fault reasons to make that explicit.
"""
from __future__ import annotations

from core.store import Store, utcnow
from core.tenancy import TenantContext

UNCOVERED_REASONS = ("not_covered", "withheld_unsupported")
FAULT_REASONS = ("transport_error", "tool_error", "truncated")


def record(ctx: TenantContext, store: Store, question: str, language: str, channel: str, conversation_id: str,
           reason: str = "not_covered") -> int:
    """Record an uncovered question; returns the event id."""
    if reason in FAULT_REASONS:
        raise ValueError(f"'{reason}' is a fault, not an absence of knowledge: faults never open gaps.")
    if reason not in UNCOVERED_REASONS:
        raise ValueError(f"Unknown gap reason {reason!r}; use one of {', '.join(UNCOVERED_REASONS)}.")
    with store.write() as db:
        return db.execute(
            "INSERT INTO gap_events (tenant_id, at, question, language, channel, conversation_id, reason) VALUES (?,?,?,?,?,?,?)",
            [ctx.tenant_id, utcnow(), question, language, channel, conversation_id, reason],
        ).lastrowid


def events(ctx: TenantContext, store: Store, limit: int = 100) -> list[dict]:
    """The latest uncovered-question events of this tenant."""
    return store.query(
        "SELECT id, at, question, language, channel, conversation_id, reason FROM gap_events WHERE tenant_id = ? "
        "ORDER BY id DESC LIMIT ?",
        [ctx.tenant_id, limit],
    )
