"""Holds (B4; this module's table ``booking_holds``): a slot picked in the web booking window, kept for its
visitor for a few minutes.

States: ``held`` → ``confirmed`` (it became a booking) | ``released`` (the visitor let it go) | ``expired``. Expired
is never written by a sweeper: a held row whose ``expires_at`` has passed *reads* as expired everywhere (busy time,
lists, confirmation), so an expired hold frees its slot at the very second it expires.
"""
from __future__ import annotations

import secrets
from datetime import datetime, timedelta

from core.base.clock import iso
from core.base.store import Store
from core.booking.model import HoldNotFound, Interval, Slot
from core.tenancy.context import TenantContext

_COLUMNS = "id, start_utc, end_utc, status, conversation_id, created_at, expires_at, booking_id, ended_at"
NOT_FOUND = ("That hold does not exist any more (it expired, was released or was used): pick a time again in the "
             "booking window.")


def state(row: dict, now: datetime) -> dict:
    """The row with its status as of ``now`` (held past its expiry reads ``expired``)."""
    if row["status"] == "held" and row["expires_at"] <= iso(now):
        return {**row, "status": "expired"}
    return dict(row)


def live(ctx: TenantContext, store: Store, span: Interval, now: datetime, but: str = "") -> list[dict]:
    """Holds that block their slot now: held and not expired (``but``: the hold being confirmed)."""
    return store.query(f"SELECT {_COLUMNS} FROM booking_holds WHERE tenant_id = ? AND status = 'held' AND "
                       "expires_at > ? AND start_utc < ? AND end_utc > ? AND id != ? ORDER BY start_utc",
                       [ctx.tenant_id, iso(now), iso(span.end), iso(span.start), but])


def overlapping(ctx: TenantContext, store: Store, span: Interval, now: datetime) -> list[dict]:
    """Every hold of the span, whatever its state (the admin timeline)."""
    rows = store.query(f"SELECT {_COLUMNS} FROM booking_holds WHERE tenant_id = ? AND start_utc < ? AND end_utc > ? "
                       "ORDER BY start_utc", [ctx.tenant_id, iso(span.end), iso(span.start)])
    return [state(row, now) for row in rows]


def insert(ctx: TenantContext, store: Store, slot: Slot, conversation_id: str, minutes: float,
           now: datetime) -> dict:
    """Write a hold (the caller has checked the slot is free inside the same transaction)."""
    row = {"id": "hold_" + secrets.token_urlsafe(18), "start_utc": iso(slot.start), "end_utc": iso(slot.end),
           "status": "held", "conversation_id": conversation_id or "", "created_at": iso(now),
           "expires_at": iso(now + timedelta(minutes=minutes)), "booking_id": None, "ended_at": None}
    store.db.execute(f"INSERT INTO booking_holds (tenant_id, {_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     [ctx.tenant_id, *row.values()])
    return row


def get(ctx: TenantContext, store: Store, hold_id: str, now: datetime) -> dict:
    """A hold of this tenant as of now; unknown and foreign holds raise the same HoldNotFound."""
    rows = store.query(f"SELECT {_COLUMNS} FROM booking_holds WHERE tenant_id = ? AND id = ?",
                       [ctx.tenant_id, str(hold_id or "")[:100]])
    if not rows:
        raise HoldNotFound(NOT_FOUND)
    return state(rows[0], now)


def end(ctx: TenantContext, store: Store, hold_id: str, status: str, now: datetime,
        booking_id: str | None = None) -> None:
    """``held`` → ``confirmed`` (with its booking) or ``released``; only a held row changes."""
    store.db.execute("UPDATE booking_holds SET status = ?, booking_id = ?, ended_at = ? WHERE tenant_id = ? AND id = ? "
                     "AND status = 'held'", [status, booking_id, iso(now), ctx.tenant_id, hold_id])
