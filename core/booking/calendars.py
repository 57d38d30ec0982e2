"""Where busy time and bookings live besides our own tables (this module's table ``booking_calendars``).

The embedded calendar (the default) is our SQLite tables themselves: it adds no busy time and writes nothing else.
A tenant can instead connect a CalDAV calendar (Nextcloud, iCloud, Fastmail, Radicale), so staff keep editing in
their own calendar app: availability and every re-check read it, bookings are written to it with preconditions
(``core.booking.caldav_calendar``). Its password is never stored: only the *name* of the environment variable
that holds it.
"""
from __future__ import annotations

import os
import re
from datetime import datetime
from typing import Mapping, Protocol
from urllib.parse import urlsplit

from core.base.store import Store
from core.booking.model import BookingError, Interval
from core.tenancy.context import TenantContext

_ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,99}$")


class Calendar(Protocol):
    name: str

    def busy(self, start: datetime, end: datetime) -> list[Interval]: ...

    def create(self, uid: str, slot: Interval, summary: str, description: str) -> str: ...

    def update(self, uid: str, slot: Interval, summary: str, description: str, etag: str) -> str: ...

    def delete(self, uid: str, etag: str) -> None: ...


class EmbeddedCalendar:
    """The default: the bookings, holds and blocks tables are the calendar."""

    name = "embedded"

    def busy(self, start: datetime, end: datetime) -> list[Interval]:
        return []

    def create(self, uid: str, slot: Interval, summary: str, description: str) -> str:
        return ""

    def update(self, uid: str, slot: Interval, summary: str, description: str, etag: str) -> str:
        return ""

    def delete(self, uid: str, etag: str) -> None:
        return None


def connection(ctx: TenantContext, store: Store) -> dict | None:
    rows = store.query("SELECT kind, url, username, password_env, updated_at, updated_by FROM booking_calendars "
                       "WHERE tenant_id = ?", [ctx.tenant_id])
    return rows[0] if rows else None


def check_connection(url: str, username: str, password_env: str) -> tuple[str, str, str]:
    """The fields as stored, or a BookingError naming the one to fix."""
    url, username, password_env = (url or "").strip(), (username or "").strip(), (password_env or "").strip()
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise BookingError(f"url: {url!r} is not the http(s) address of a CalDAV calendar collection, e.g. "
                           "https://cloud.example.com/remote.php/dav/calendars/ana/citas/.")
    if password_env and not _ENV_NAME.match(password_env):
        raise BookingError(f"password_env: {password_env!r} is not an environment variable name (A-Z, 0-9, _); "
                           "write the variable's NAME, never the password itself.")
    return url, username, password_env


def connect(ctx: TenantContext, store: Store, url: str, username: str, password_env: str, actor: str = "") -> dict:
    url, username, password_env = check_connection(url, username, password_env)
    with store.write() as db:
        db.execute("INSERT INTO booking_calendars (tenant_id, kind, url, username, password_env, updated_at, "
                   "updated_by) VALUES (?, 'caldav', ?, ?, ?, ?, ?) ON CONFLICT (tenant_id) DO UPDATE SET "
                   "kind = excluded.kind, url = excluded.url, username = excluded.username, password_env = "
                   "excluded.password_env, updated_at = excluded.updated_at, updated_by = excluded.updated_by",
                   [ctx.tenant_id, url, username, password_env, store.clock.stamp(), actor])
    return connection(ctx, store) or {}


def disconnect(ctx: TenantContext, store: Store) -> None:
    """Back to the embedded calendar (bookings already written to the CalDAV calendar stay there)."""
    with store.write() as db:
        db.execute("DELETE FROM booking_calendars WHERE tenant_id = ?", [ctx.tenant_id])


def open_calendar(found: dict | None, environ: Mapping[str, str] | None = None) -> Calendar:
    """The calendar a connection row names (None: the embedded one); ``found["timezone"]`` (the schedule's zone,
    which the service adds) makes an all-day event a whole day of the business."""
    if not found:
        return EmbeddedCalendar()
    from core.booking.caldav_calendar import CalDavCalendar

    env = os.environ if environ is None else environ
    password = env.get(found["password_env"], "") if found["password_env"] else ""
    return CalDavCalendar(found["url"], found["username"], password, timezone=found.get("timezone") or "UTC",
                          password_env=found["password_env"])
