"""The outbox of booking e-mails (this module's table ``booking_outbox``): confirmations, cancellations and
reschedules, each with its calendar invitation, queued after the booking's commit and sent by SMTP.

A message is ``pending`` until the SMTP server accepts it (``sent``). A failed attempt counts in ``attempts``, keeps
the reason in ``last_error`` and waits 1, 5, 30, then 120 minutes (``next_attempt_at``, by the store's clock); the
fifth failure makes it ``failed``, listed by :meth:`Outbox.failures` until someone retries it. Without SMTP
settings a message stays ``pending`` (its attempts untouched, ``last_error`` saying what to set) and goes out on
the first delivery after they are set: nothing is ever dropped. A delivery claims the messages it sends inside a
write transaction (their ``next_attempt_at`` moves ahead by a lease), so two processes never send one twice; the
SMTP conversation itself runs outside any transaction and never holds up a booking.
"""
from __future__ import annotations

import logging
import re
import secrets
from datetime import datetime, timedelta
from email.headerregistry import Address
from email.utils import parseaddr

from core.base.clock import iso
from core.base.config import Settings
from core.base.errors import PermissionDenied
from core.base.store import Store
from core.booking import ics, mailer, messages
from core.booking.model import BookingError, Interval
from core.booking.schedule import Schedule
from core.tenancy.context import TenantContext, local_operator
from core.tenancy.tenants import list_tenants, tenant_name

log = logging.getLogger(__name__)

STATUSES = ("pending", "sent", "failed")
KINDS = messages.KINDS
BACKOFF_MINUTES = (1, 5, 30, 120)  # the waits after the 1st..4th failed attempt
MAX_ATTEMPTS = 5  # the 5th failure is final: status failed
LEASE_MINUTES = 10  # a claimed message is due again after this if its sender died mid-way
_ADDRESS = re.compile(r"[^@\s<>,;\"]+@[^@\s<>,;\"]+")
_COLUMNS = ("id, booking_id, kind, recipient, subject, body, ics, status, attempts, last_error, next_attempt_at, "
            "created_at, sent_at")


class MessageNotFound(BookingError):
    """An unknown or foreign outbox message: the same answer for both."""


def _recipient(value: str) -> str:
    """One e-mail address (``Name <a@b.c>`` or ``a@b.c``), as the To header carries it."""
    value = (value or "").strip()
    name, address = parseaddr(value)
    if (not _ADDRESS.fullmatch(address) or len(address) > 254 or "\n" in value or "\r" in value
            or not (value == address or value.endswith(f"<{address}>"))):  # one address, nothing dropped
        raise BookingError(f"The recipient {value!r} is not an e-mail address; give one like ana@example.com.")
    return str(Address(display_name=" ".join(name.split()), addr_spec=address)) if name.strip() else address


class Outbox:
    def __init__(self, store: Store, settings: Settings) -> None:
        self.store, self.settings = store, settings

    # -- queueing ----------------------------------------------------------------------------------------------
    def enqueue(self, ctx: TenantContext, kind: str, recipient: str, subject: str, body: str, ics: str = "",
                booking_id: str = "") -> dict:
        """One message, due now; returns its row."""
        if kind not in KINDS:
            raise BookingError(f"An outbox message is a {', '.join(KINDS)}, not {kind!r}.")
        subject = " ".join(subject.split())[:250]
        if not subject or not body.strip():
            raise BookingError("An outbox message needs a subject and a body.")
        now = self.store.clock.stamp()
        row = {"id": "msg_" + secrets.token_hex(8), "booking_id": booking_id or "", "kind": kind,
               "recipient": _recipient(recipient), "subject": subject, "body": body, "ics": ics or "",
               "status": "pending", "attempts": 0,
               "last_error": "" if mailer.configured(self.settings) else mailer.NOT_CONFIGURED,
               "next_attempt_at": now, "created_at": now, "sent_at": None}
        with self.store.write() as db:
            db.execute(f"INSERT INTO booking_outbox (tenant_id, {_COLUMNS}) VALUES (?{', ?' * 13})",
                       [ctx.tenant_id, *row.values()])
        return row

    def booking_message(self, ctx: TenantContext, kind: str, booking: dict, schedule: Schedule, lang: str = "es",
                        previous: dict | None = None) -> dict | None:
        """The e-mail of a booking event (confirmation, cancellation, reschedule) in the customer's language with
        its invitation (REQUEST, or CANCEL for a cancellation; one UID per booking, SEQUENCE growing), queued and
        then delivered best-effort. Called after the booking's commit; never raises for a delivery problem (it is
        recorded on the message). None when the booking has no e-mail address."""
        if not booking.get("email"):
            return None
        business = tenant_name(ctx, self.store) or ""
        if kind == "reschedule":
            subject, body = messages.reschedule(booking, schedule, lang, business, previous)
        elif kind == "cancellation":
            subject, body = messages.cancellation(booking, schedule, lang, business)
        elif kind == "confirmation":
            subject, body = messages.confirmation(booking, schedule, lang, business)
        else:
            raise BookingError(f"A booking e-mail is a {', '.join(KINDS)}, not {kind!r}.")
        invitation = ics.event(
            f"booking-{booking['id']}@cobertura", Interval.stored(booking["start_utc"], booking["end_utc"]),
            messages.summary(lang, business), body, schedule.timezone, self.settings.smtp_from,
            "CANCEL" if kind == "cancellation" else "REQUEST", now=self.store.clock.now(),
            attendee=(str(booking.get("name") or ""), booking["email"]),
            sequence=self._sequence(ctx, booking["id"]))
        row = self.enqueue(ctx, kind, booking["email"], subject, body, invitation, booking["id"])
        try:
            self.deliver_due(ctx, limit=5)
        except Exception:  # the booking is committed: a delivery fault must not undo its answer
            log.exception("booking outbox delivery failed; the messages stay pending")
        return self.message(ctx, row["id"])

    def _sequence(self, ctx: TenantContext, booking_id: str) -> int:
        rows = self.store.query("SELECT COUNT(*) AS n FROM booking_outbox WHERE tenant_id = ? AND booking_id = ? "
                                "AND ics != ''", [ctx.tenant_id, booking_id])
        return rows[0]["n"]

    # -- delivery ----------------------------------------------------------------------------------------------
    def deliver_due(self, ctx: TenantContext, limit: int = 20) -> dict:
        """Send the pending messages whose time has come (oldest first, at most ``limit``). Returns the counts
        ``{"sent", "retrying", "failed", "pending", "configured", "error"}`` (``error``: the last failure's reason).
        A failure of the server or the network (not of one message) ends the round: the rest wait, uncounted."""
        now = self.store.clock.now()
        result = {"sent": 0, "retrying": 0, "failed": 0, "configured": mailer.configured(self.settings), "error": ""}
        if not result["configured"]:
            self._not_configured(ctx)
            return {**result, "pending": self._count(ctx, "pending"), "error": mailer.NOT_CONFIGURED}
        claimed = self._claim(ctx, now, limit)
        for n, row in enumerate(claimed):
            try:
                mailer.send(self.settings, mailer.compose(self.settings, row, now))
            except mailer.MailError as exc:
                result["error"] = str(exc)
                result["failed" if self._failed(ctx, row, str(exc)) else "retrying"] += 1
                if exc.server:
                    self._release(ctx, claimed[n + 1:])
                    break
            else:
                self._sent(ctx, row)
                result["sent"] += 1
        return {**result, "pending": self._count(ctx, "pending")}

    def deliver_all(self, limit: int = 20) -> dict[str, dict]:
        """One delivery round for every tenant (what a scheduler runs every minute so retries go out on time):
        {slug: the counts of :meth:`deliver_due`} for the tenants that had something due or waiting."""
        out = {}
        for tenant in sorted(list_tenants(self.store), key=lambda t: t["id"]):
            result = self.deliver_due(local_operator(self.store, tenant["slug"], "outbox"), limit)
            if result["sent"] or result["retrying"] or result["failed"] or result["pending"]:
                out[tenant["slug"]] = result
        return out

    def _claim(self, ctx: TenantContext, now: datetime, limit: int) -> list[dict]:
        with self.store.write() as db:
            rows = [dict(zip([c.strip() for c in _COLUMNS.split(",")], values)) for values in db.execute(
                f"SELECT {_COLUMNS} FROM booking_outbox WHERE tenant_id = ? AND status = 'pending' AND "
                "next_attempt_at <= ? ORDER BY next_attempt_at, created_at, rowid LIMIT ?",
                [ctx.tenant_id, iso(now), max(1, int(limit))]).fetchall()]
            lease = iso(now + timedelta(minutes=LEASE_MINUTES))
            for row in rows:
                db.execute("UPDATE booking_outbox SET next_attempt_at = ? WHERE tenant_id = ? AND id = ?",
                           [lease, ctx.tenant_id, row["id"]])
        return rows

    def _release(self, ctx: TenantContext, rows: list[dict]) -> None:
        """Claimed messages not attempted: due again at their own time."""
        with self.store.write() as db:
            for row in rows:
                db.execute("UPDATE booking_outbox SET next_attempt_at = ? WHERE tenant_id = ? AND id = ? AND "
                           "status = 'pending'", [row["next_attempt_at"], ctx.tenant_id, row["id"]])

    def _sent(self, ctx: TenantContext, row: dict) -> None:
        with self.store.write() as db:
            db.execute("UPDATE booking_outbox SET status = 'sent', attempts = attempts + 1, last_error = '', "
                       "sent_at = ? WHERE tenant_id = ? AND id = ?", [self.store.clock.stamp(), ctx.tenant_id,
                                                                     row["id"]])

    def _failed(self, ctx: TenantContext, row: dict, reason: str) -> bool:
        """Count one failed attempt; True when it was the last one (the message is failed now)."""
        attempts = row["attempts"] + 1
        final = attempts >= MAX_ATTEMPTS
        wait = BACKOFF_MINUTES[min(attempts, len(BACKOFF_MINUTES)) - 1]
        now = self.store.clock.now()
        with self.store.write() as db:
            db.execute("UPDATE booking_outbox SET attempts = ?, last_error = ?, status = ?, next_attempt_at = ? "
                       "WHERE tenant_id = ? AND id = ?",
                       [attempts, reason[:1000], "failed" if final else "pending",
                        iso(now if final else now + timedelta(minutes=wait)), ctx.tenant_id, row["id"]])
        return final

    def _not_configured(self, ctx: TenantContext) -> None:
        with self.store.write() as db:
            db.execute("UPDATE booking_outbox SET last_error = ? WHERE tenant_id = ? AND status = 'pending' AND "
                       "last_error != ?", [mailer.NOT_CONFIGURED, ctx.tenant_id, mailer.NOT_CONFIGURED])

    def _count(self, ctx: TenantContext, status: str) -> int:
        return self.store.query("SELECT COUNT(*) AS n FROM booking_outbox WHERE tenant_id = ? AND status = ?",
                                [ctx.tenant_id, status])[0]["n"]

    # -- what staff see and do ---------------------------------------------------------------------------------
    @staticmethod
    def _staff(ctx: TenantContext) -> None:
        if not ctx.can("editor"):
            raise PermissionDenied("The outbox is for the admin and editor roles.")

    def message(self, ctx: TenantContext, message_id: str) -> dict:
        rows = self.store.query(f"SELECT {_COLUMNS} FROM booking_outbox WHERE tenant_id = ? AND id = ?",
                                [ctx.tenant_id, str(message_id)])
        if not rows:
            raise MessageNotFound(f"No outbox message {message_id!r}. The Booking page and `python -m core outbox "
                                  "SLUG` list them.")
        return rows[0]

    def list(self, ctx: TenantContext, status: str | None = None, limit: int = 200) -> list[dict]:
        """The tenant's messages, newest first (``status``: pending, sent or failed)."""
        self._staff(ctx)
        if status is not None and status not in STATUSES:
            raise BookingError(f"An outbox status is {', '.join(STATUSES)}, not {status!r}.")
        where, args = ("tenant_id = ?", [ctx.tenant_id]) if status is None else \
            ("tenant_id = ? AND status = ?", [ctx.tenant_id, status])
        return self.store.query(f"SELECT {_COLUMNS} FROM booking_outbox WHERE {where} "
                                "ORDER BY created_at DESC, rowid DESC LIMIT ?", [*args, max(1, int(limit))])

    def failures(self, ctx: TenantContext) -> list[dict]:
        """The messages that gave up after the last attempt (each keeps its last_error), newest first."""
        return self.list(ctx, "failed")

    def retry(self, ctx: TenantContext, message_id: str) -> dict:
        """A failed (or waiting) message due now with its attempts back to 0, then one delivery round; the row
        after it. A sent message is not sent again."""
        self._staff(ctx)
        found = self.message(ctx, message_id)
        if found["status"] == "sent":
            raise BookingError(f"Message {message_id} was already sent at {found['sent_at']}; nothing to retry.")
        with self.store.write() as db:
            db.execute("UPDATE booking_outbox SET status = 'pending', attempts = 0, next_attempt_at = ? "
                       "WHERE tenant_id = ? AND id = ? AND status != 'sent'",
                       [self.store.clock.stamp(), ctx.tenant_id, found["id"]])
        self.deliver_due(ctx)
        return self.message(ctx, found["id"])
