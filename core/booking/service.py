"""What the runtime exposes as ``rt.booking``: the tenant's schedule, availability, holds, bookings, blocks, the
connected calendar and the outbox, over one store and one clock (B1-B5).

Every write of a time goes through :mod:`core.booking.recheck` (one transaction: re-read, overlap, write). The
messages of :class:`~core.booking.model.CreateResult` are written for the model that reads them: what happened,
the facts (today's date in the business's zone, the free times), and what to do next.
"""
from __future__ import annotations

import os
from datetime import date, datetime, timedelta
from typing import Any, Callable, Mapping

from core.base.config import Settings
from core.base.store import Store
from core.booking import blocks, bookings, calendars, holds, offers, recheck, schedule as schedule_mod, slots
from core.booking.creating import Creator
from core.booking.model import (
    BookingError,
    CalendarUnavailable,
    CreateResult,
    HoldNotFound,
    Interval,
    NoSchedule,
    Slot,
    SlotTaken,
)
from core.booking.schedule import Schedule
from core.tenancy.context import TenantContext

NO_SCHEDULE = ("Booking is off for this business: it has no booking schedule. Set one on the Booking page or with "
               "`python -m core booking-schedule SLUG --set schedule.json`.")
CalendarFactory = Callable[[dict | None], calendars.Calendar]


class Booking:
    def __init__(self, store: Store, settings: Settings, calendar_factory: CalendarFactory | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.store, self.settings = store, settings
        self.environ = os.environ if environ is None else environ
        self.calendar_factory = calendar_factory or (lambda found: calendars.open_calendar(found, self.environ))
        self.hold_minutes = settings.hold_minutes
        self.creator = Creator(self)
        self._outbox = None

    # -- time and the schedule ------------------------------------------------------------------------------
    def now(self) -> datetime:
        return self.store.clock.now()

    def schedule(self, ctx: TenantContext) -> Schedule | None:
        return schedule_mod.get(ctx, self.store)

    def require_schedule(self, ctx: TenantContext) -> Schedule:
        found = self.schedule(ctx)
        if found is None:
            raise NoSchedule(NO_SCHEDULE)
        return found

    def save_schedule(self, ctx: TenantContext, data: dict | Schedule, actor: str = "") -> Schedule:
        schedule = data if isinstance(data, Schedule) else Schedule.from_dict(data)
        schedule_mod.save(ctx, self.store, schedule, actor or ctx.actor)
        return schedule

    def remove_schedule(self, ctx: TenantContext) -> None:
        schedule_mod.remove(ctx, self.store)

    # -- the calendar ---------------------------------------------------------------------------------------
    def calendar(self, ctx: TenantContext) -> calendars.Calendar:
        found = calendars.connection(ctx, self.store)
        schedule = self.schedule(ctx) if found else None
        if found and schedule is not None:  # an all-day event is busy for the whole day in the business's zone
            found = {**found, "timezone": schedule.timezone}
        return self.calendar_factory(found)

    def connection(self, ctx: TenantContext) -> dict | None:
        return calendars.connection(ctx, self.store)

    def connect_caldav(self, ctx: TenantContext, url: str, username: str, password_env: str) -> dict:
        return calendars.connect(ctx, self.store, url, username, password_env, ctx.actor)

    def disconnect_calendar(self, ctx: TenantContext) -> None:
        calendars.disconnect(ctx, self.store)

    def test_calendar(self, ctx: TenantContext) -> str:
        """What reading the connected calendar now gives, for people (the Booking page's Test connection)."""
        found = self.connection(ctx)
        if not found:
            return "The embedded calendar is in use: bookings live in Cobertura itself; nothing to test."
        from core.booking.caldav_calendar import check

        password = self.environ.get(found["password_env"], "") if found["password_env"] else ""
        schedule = self.schedule(ctx)
        return check(found["url"], found["username"], password, timezone=schedule.timezone if schedule else "UTC",
                     password_env=found["password_env"], clock=self.store.clock)

    # -- availability ---------------------------------------------------------------------------------------
    def read_day(self, ctx: TenantContext, day: date | str | None, lang: str = "es") -> date | None:
        """A day given as a date, "YYYY-MM-DD" or the customer's words, relative to the business's today."""
        if day is None or isinstance(day, date):
            return day
        text = str(day).strip()
        if not text:
            return None
        from core.booking.normalize import read_day

        schedule = self.require_schedule(ctx)
        found = read_day(text, schedule.today(self.now()), lang)
        if found is None:
            raise BookingError(f"date: {text!r} is not a date I can read; give it as YYYY-MM-DD (today in "
                               f"{schedule.timezone} is {schedule.today(self.now()).isoformat()}).")
        return found

    def availability(self, ctx: TenantContext, mode: str = "first", day: date | str | None = None, lang: str = "es",
                     limit: int | None = None) -> slots.Availability:
        schedule = self.require_schedule(ctx)
        if mode not in slots.MODES:
            raise BookingError(f"mode: {mode!r} is not a mode; use day, week or first.")
        calendar, now = self.calendar(ctx), self.now()
        wanted = self.read_day(ctx, day, lang)

        def busy_for(start: datetime, end: datetime) -> list[Interval]:
            return recheck.busy(ctx, self.store, calendar, Interval(start, end), now)

        return slots.find(schedule, mode, wanted, busy_for, now, limit)

    # -- holds (the web booking window) ---------------------------------------------------------------------
    def slot_at(self, ctx: TenantContext, start: str | datetime) -> tuple[Schedule, Slot]:
        """The schedule's slot starting at ``start`` (an ISO time with its offset, or local in the business's
        zone), or a BookingError that says which times exist."""
        schedule = self.require_schedule(ctx)
        moment = self.creator.moment(schedule, start)
        slot = slots.is_slot(schedule, moment)
        if slot is None:
            raise BookingError(f"start: {start!r} is not a bookable time of this schedule; pick one of the times "
                               "availability lists.")
        return schedule, slot

    def place_hold(self, ctx: TenantContext, start: str | datetime, conversation_id: str = "") -> dict:
        """Hold one slot for a visitor (``hold_minutes``); their earlier live hold in this conversation is released.
        Raises SlotTaken with the day's alternatives when the slot is not free."""
        schedule, slot = self.slot_at(ctx, start)
        calendar, now = self.calendar(ctx), self.now()
        self.creator.bookable(schedule, slot, now)
        with self.store.write():
            if conversation_id:
                for row in holds.live(ctx, self.store, Interval(now - timedelta(days=1), now + timedelta(days=800)),
                                      now):
                    if row["conversation_id"] == conversation_id:
                        holds.end(ctx, self.store, row["id"], "released", now)
            recheck.read_busy_then(ctx, self.store, calendar, schedule, slot, now)
            return holds.insert(ctx, self.store, slot, conversation_id, self.hold_minutes, now)

    def release_hold(self, ctx: TenantContext, hold_id: str) -> dict:
        now = self.now()
        with self.store.write():
            found = holds.get(ctx, self.store, hold_id, now)
            if found["status"] != "held":
                raise HoldNotFound(holds.NOT_FOUND)
            holds.end(ctx, self.store, found["id"], "released", now)
        return holds.get(ctx, self.store, hold_id, now)

    def hold(self, ctx: TenantContext, hold_id: str) -> dict:
        return holds.get(ctx, self.store, hold_id, self.now())

    def confirm_hold(self, ctx: TenantContext, hold_id: str, details: Any, channel: str = "web",
                     customer_id: str | None = None, lang: str = "es") -> CreateResult:
        return self.creator.confirm_hold(ctx, hold_id, details, channel, customer_id, lang)

    # -- bookings -------------------------------------------------------------------------------------------
    def create(self, ctx: TenantContext, raw: Any, *, channel: str = "cli", conversation_id: str = "",
               customer_id: str | None = None, idempotency_key: str | None = None, offered_only: bool = False,
               lang: str = "es") -> CreateResult:
        return self.creator.create(ctx, raw, channel=channel, conversation_id=conversation_id,
                                   customer_id=customer_id, idempotency_key=idempotency_key,
                                   offered_only=offered_only, lang=lang)

    def bookings(self, ctx: TenantContext, start: datetime | None = None, end: datetime | None = None,
                 status: str | None = None) -> list[dict]:
        span = Interval(start, end) if start and end else None
        return bookings.listed(ctx, self.store, span, status)

    def booking(self, ctx: TenantContext, id_or_code: str) -> dict:
        return bookings.get(ctx, self.store, id_or_code)

    def cancel(self, ctx: TenantContext, id_or_code: str, actor: str = "") -> dict:
        return self.creator.cancel(ctx, id_or_code, actor)

    def reschedule(self, ctx: TenantContext, id_or_code: str, new_start: str | datetime, actor: str = "",
                   lang: str = "es") -> CreateResult:
        return self.creator.reschedule(ctx, id_or_code, new_start, actor, lang)

    # -- blocks, holds and the timeline (the admin app) -----------------------------------------------------
    def add_block(self, ctx: TenantContext, start: datetime, end: datetime, reason: str = "",
                  actor: str = "") -> dict:
        try:
            span = Interval(start, end)
        except ValueError as exc:
            raise BookingError(f"A block needs a start before its end ({exc}).") from None
        return blocks.add(ctx, self.store, span, reason, actor or ctx.actor)

    def remove_block(self, ctx: TenantContext, block_id: str) -> None:
        blocks.remove(ctx, self.store, block_id)

    def blocks(self, ctx: TenantContext, start: datetime, end: datetime) -> list[dict]:
        return blocks.overlapping(ctx, self.store, Interval(start, end))

    def holds(self, ctx: TenantContext, start: datetime, end: datetime) -> list[dict]:
        return holds.overlapping(ctx, self.store, Interval(start, end), self.now())

    def timeline(self, ctx: TenantContext, start: datetime, end: datetime) -> list[dict]:
        """Bookings, holds and blocks of a span, one row each: {kind, id, start_utc, end_utc, label, status}."""
        span = Interval(start, end)
        rows = [{"kind": "booking", "id": b["id"], "start_utc": b["start_utc"], "end_utc": b["end_utc"],
                 "label": f"{b['code']} {b['name']}".strip(), "status": b["status"]}
                for b in bookings.listed(ctx, self.store, span)]
        rows += [{"kind": "hold", "id": h["id"], "start_utc": h["start_utc"], "end_utc": h["end_utc"],
                  "label": h["status"], "status": h["status"]} for h in holds.overlapping(ctx, self.store, span,
                                                                                          self.now())]
        rows += [{"kind": "block", "id": k["id"], "start_utc": k["start_utc"], "end_utc": k["end_utc"],
                  "label": k["reason"] or "block", "status": "block"} for k in blocks.overlapping(ctx, self.store,
                                                                                                 span)]
        return sorted(rows, key=lambda row: (row["start_utc"], row["kind"]))

    # -- the phone channel's offers ------------------------------------------------------------------------
    def record_offer(self, ctx: TenantContext, conversation_id: str, offered: list[Slot] | tuple[Slot, ...]) -> None:
        offers.record(ctx, self.store, conversation_id, offered)

    def offered(self, ctx: TenantContext, conversation_id: str) -> list[Slot]:
        return offers.offered(ctx, self.store, conversation_id)

    # -- the agent's tools ----------------------------------------------------------------------------------
    def tools(self, ctx: TenantContext) -> list:
        """check_availability and create_booking for a tenant with a schedule (each says where it is offered)."""
        if self.schedule(ctx) is None:
            return []
        from core.booking.tools import booking_tools

        return booking_tools(self)

    # -- cancel and reschedule as cards ---------------------------------------------------------------------
    def register_operations(self, actions) -> None:
        """Cancel and reschedule, offered to a tenant that has a schedule, as write operations of ``actions``."""
        from core.actions.model import OpSource
        from core.booking.operations import BookingExecutor, booking_operations

        def provider(ctx: TenantContext, lang: str) -> list:
            return booking_operations(lang) if self.schedule(ctx) is not None else []

        actions.registry.register(OpSource.BOOKING, provider, BookingExecutor(self))

    # -- confirmations --------------------------------------------------------------------------------------
    @property
    def outbox(self):
        if self._outbox is None:
            from core.booking.outbox import Outbox

            self._outbox = Outbox(self.store, self.settings)
        return self._outbox


__all__ = ["Booking", "BookingError", "CalendarUnavailable", "CreateResult", "HoldNotFound", "NoSchedule",
           "SlotTaken"]
