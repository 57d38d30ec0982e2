"""The slots offered in a conversation (this module's table ``booking_offers``): on the phone channel the agent
may book only a slot from this list (B4); it is written when availability is read for that conversation."""
from __future__ import annotations

from core.base.clock import iso
from core.base.store import Store
from core.booking.model import Slot
from core.tenancy.context import TenantContext


def record(ctx: TenantContext, store: Store, conversation_id: str, slots: list[Slot] | tuple[Slot, ...]) -> None:
    if not conversation_id or not slots:
        return
    stamp = store.clock.stamp()
    with store.write() as db:
        db.conn.executemany("INSERT INTO booking_offers (tenant_id, conversation_id, start_utc, end_utc, offered_at) "
                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, conversation_id, start_utc) DO UPDATE SET "
                       "end_utc = excluded.end_utc, offered_at = excluded.offered_at",
                       [(ctx.tenant_id, conversation_id, iso(s.start), iso(s.end), stamp) for s in slots])


def offered(ctx: TenantContext, store: Store, conversation_id: str) -> list[Slot]:
    if not conversation_id:
        return []
    rows = store.query("SELECT start_utc, end_utc FROM booking_offers WHERE tenant_id = ? AND conversation_id = ? "
                       "ORDER BY start_utc", [ctx.tenant_id, conversation_id])
    return [Slot.stored(row["start_utc"], row["end_utc"]) for row in rows]
