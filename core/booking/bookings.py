"""Bookings (this module's table ``bookings``): the appointments written, each with a short code the customer
quotes, an optional idempotency key (a retried create returns the first booking) and, when a CalDAV calendar is
connected, the uid and ETag of its event there."""
from __future__ import annotations

import secrets
from datetime import datetime

from core.base.clock import iso
from core.base.store import Store
from core.booking.model import BookingNotFound, Interval
from core.tenancy.context import TenantContext

_COLUMNS = ("id, code, start_utc, end_utc, status, name, email, phone, notes, lang, channel, conversation_id, "
            "customer_id, idempotency_key, calendar_uid, calendar_etag, created_at, updated_at, cancelled_at")
#: codes people read aloud on the phone: no 0/O, 1/I/L
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
NOT_FOUND = ("No booking with that code. Check the code in the confirmation e-mail, or list them with "
             "`python -m core bookings SLUG`.")


def new_code() -> str:
    """Six characters with at least one digit, so no code is an ordinary word ("CANCEL", "QUIERO")."""
    while True:
        code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(6))
        if any(c.isdigit() for c in code):
            return code


def overlapping(ctx: TenantContext, store: Store, span: Interval, but: str = "") -> list[dict]:
    """Confirmed bookings overlapping the span (``but``: one being moved)."""
    return store.query(f"SELECT {_COLUMNS} FROM bookings WHERE tenant_id = ? AND status = 'confirmed' AND "
                       "start_utc < ? AND end_utc > ? AND id != ? ORDER BY start_utc",
                       [ctx.tenant_id, iso(span.end), iso(span.start), but])


def listed(ctx: TenantContext, store: Store, span: Interval | None = None, status: str | None = None) -> list[dict]:
    where, params = ["tenant_id = ?"], [ctx.tenant_id]
    if span is not None:
        where += ["start_utc < ?", "end_utc > ?"]
        params += [iso(span.end), iso(span.start)]
    if status:
        where.append("status = ?")
        params.append(status)
    return store.query(f"SELECT {_COLUMNS} FROM bookings WHERE {' AND '.join(where)} ORDER BY start_utc", params)


def by_key(ctx: TenantContext, store: Store, key: str | None) -> dict | None:
    if not key:
        return None
    rows = store.query(f"SELECT {_COLUMNS} FROM bookings WHERE tenant_id = ? AND idempotency_key = ?",
                       [ctx.tenant_id, key])
    return rows[0] if rows else None


def get(ctx: TenantContext, store: Store, id_or_code: str) -> dict:
    """A booking of this tenant by id or code (any case); unknown and foreign ones raise the same error."""
    wanted = str(id_or_code or "").strip()[:100]
    rows = store.query(f"SELECT {_COLUMNS} FROM bookings WHERE tenant_id = ? AND (id = ? OR code = ?)",
                       [ctx.tenant_id, wanted, wanted.upper()])
    if not rows:
        raise BookingNotFound(NOT_FOUND)
    return rows[0]


def insert(ctx: TenantContext, store: Store, slot: Interval, values: dict, now: datetime) -> dict:
    """Write one confirmed booking (inside the caller's write transaction, after its re-check)."""
    row = {"id": "bk_" + secrets.token_hex(8), "code": new_code(), "start_utc": iso(slot.start),
           "end_utc": iso(slot.end), "status": "confirmed", "name": values.get("name", ""),
           "email": values.get("email", ""), "phone": values.get("phone", ""), "notes": values.get("notes", ""),
           "lang": values.get("lang") or "es", "channel": values.get("channel", ""),
           "conversation_id": values.get("conversation_id", ""),
           "customer_id": values.get("customer_id"), "idempotency_key": values.get("idempotency_key") or None,
           "calendar_uid": values.get("calendar_uid", ""), "calendar_etag": values.get("calendar_etag", ""),
           "created_at": iso(now), "updated_at": iso(now), "cancelled_at": None}
    while store.query("SELECT 1 FROM bookings WHERE tenant_id = ? AND code = ?", [ctx.tenant_id, row["code"]]):
        row["code"] = new_code()
    store.db.execute(f"INSERT INTO bookings (tenant_id, {_COLUMNS}) VALUES ({', '.join('?' * 20)})",
                     [ctx.tenant_id, *row.values()])
    return row


def cancel(ctx: TenantContext, store: Store, booking_id: str, now: datetime) -> None:
    store.db.execute("UPDATE bookings SET status = 'cancelled', cancelled_at = ?, updated_at = ? WHERE tenant_id = ? "
                     "AND id = ? AND status = 'confirmed'", [iso(now), iso(now), ctx.tenant_id, booking_id])


def move(ctx: TenantContext, store: Store, booking_id: str, slot: Interval, etag: str, now: datetime) -> None:
    store.db.execute("UPDATE bookings SET start_utc = ?, end_utc = ?, calendar_etag = ?, updated_at = ? "
                     "WHERE tenant_id = ? AND id = ?", [iso(slot.start), iso(slot.end), etag, iso(now),
                                                         ctx.tenant_id, booking_id])


def set_event(ctx: TenantContext, store: Store, row: dict, uid: str, etag: str) -> dict:
    """Remember the booking's event in the connected calendar (its uid and the ETag we wrote)."""
    store.db.execute("UPDATE bookings SET calendar_uid = ?, calendar_etag = ? WHERE tenant_id = ? AND id = ?",
                     [uid, etag, ctx.tenant_id, row["id"]])
    return {**row, "calendar_uid": uid, "calendar_etag": etag}
