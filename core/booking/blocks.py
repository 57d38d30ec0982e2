"""Staff blocks (this module's table ``booking_blocks``): time taken out of the schedule by hand. A block counts
the moment it is written: availability and every create read it inside their transaction."""
from __future__ import annotations

import secrets

from core.base.clock import iso
from core.base.store import Store
from core.booking.model import BookingNotFound, Interval
from core.tenancy.context import TenantContext


def overlapping(ctx: TenantContext, store: Store, span: Interval) -> list[dict]:
    return store.query("SELECT id, start_utc, end_utc, reason, created_by, created_at FROM booking_blocks "
                       "WHERE tenant_id = ? AND start_utc < ? AND end_utc > ? ORDER BY start_utc",
                       [ctx.tenant_id, iso(span.end), iso(span.start)])


def add(ctx: TenantContext, store: Store, span: Interval, reason: str = "", actor: str = "") -> dict:
    row = {"id": "blk_" + secrets.token_hex(8), "start_utc": iso(span.start), "end_utc": iso(span.end),
           "reason": reason.strip()[:200], "created_by": actor, "created_at": store.clock.stamp()}
    with store.write() as db:
        db.execute("INSERT INTO booking_blocks (id, tenant_id, start_utc, end_utc, reason, created_by, created_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?)", [row["id"], ctx.tenant_id, row["start_utc"], row["end_utc"],
                                                    row["reason"], row["created_by"], row["created_at"]])
    return row


def remove(ctx: TenantContext, store: Store, block_id: str) -> None:
    with store.write() as db:
        gone = db.execute("DELETE FROM booking_blocks WHERE tenant_id = ? AND id = ?", [ctx.tenant_id, block_id])
        if gone.rowcount == 0:
            raise BookingNotFound(f"No block {block_id!r}. List the blocks on the Booking page or with "
                                  "`python -m core booking-blocks SLUG`.")
