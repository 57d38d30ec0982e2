"""The re-check inside the write (B3, B4): every write of a time (a hold, a booking, a move) reads the day's
bookings, live holds, staff blocks and the connected calendar inside one ``BEGIN IMMEDIATE`` transaction, checks
interval overlap against the one schedule, and only then writes; a time that is no longer free is answered with up
to five free slots of that day, computed from the same reading.

Processes serialise on the database's write lock (``BEGIN IMMEDIATE`` waits for it, up to the store's busy
timeout), so two creates of one slot can never both see it free. A connected CalDAV calendar is read inside that
same transaction and written with preconditions (``If-None-Match: *`` / ``If-Match``), so an edit made in the
calendar app behind our back is detected, never overwritten.
"""
from __future__ import annotations

from datetime import datetime

from core.base.store import Store
from core.booking import blocks, bookings, holds, slots
from core.booking.calendars import Calendar
from core.booking.model import Interval, Slot, SlotTaken
from core.booking.schedule import Schedule
from core.tenancy.context import TenantContext


def busy(ctx: TenantContext, store: Store, calendar: Calendar, span: Interval, now: datetime, *, but_hold: str = "",
         but_booking: dict | None = None) -> list[Interval]:
    """Everything that takes time in ``span`` now: confirmed bookings, live holds, blocks, the calendar's events.
    ``but_hold`` (a hold being confirmed) and ``but_booking`` (a booking being moved) do not count."""
    rows = [*bookings.overlapping(ctx, store, span, but_booking["id"] if but_booking else ""),
            *holds.live(ctx, store, span, now, but_hold), *blocks.overlapping(ctx, store, span)]
    out = [Interval.stored(row["start_utc"], row["end_utc"]) for row in rows]
    external = list(calendar.busy(span.start, span.end))  # CalendarUnavailable: nothing is offered or written
    if but_booking and but_booking.get("calendar_uid"):  # the moved booking's own event in the calendar
        own = Interval.stored(but_booking["start_utc"], but_booking["end_utc"])
        if own in external:
            external.remove(own)
    return out + external


def day_span(schedule: Schedule, slot: Interval) -> Interval:
    return slots.day_bounds(schedule, slot.start.astimezone(schedule.zone).date())


def taken(schedule: Schedule, slot: Slot, found: list[Interval], now: datetime) -> SlotTaken | None:
    """None when ``slot`` is free in ``found``; else the refusal with the day's alternatives."""
    day = slot.start.astimezone(schedule.zone).date()
    if slot in slots.free(schedule, day, found, now):
        return None
    said = f"{slot.to_dict(schedule.zone, 'en')['label']} ({schedule.timezone}) is no longer free."
    return SlotTaken(slot, slots.alternatives(schedule, day, found, now, around=slot.start), said)


def read_busy_then(ctx: TenantContext, store: Store, calendar: Calendar, schedule: Schedule, slot: Slot,
                   now: datetime, **but) -> list[Interval]:
    """The busy time of the slot's local day (call inside ``store.write()``); raises SlotTaken when not free."""
    found = busy(ctx, store, calendar, day_span(schedule, slot), now, **but)
    refusal = taken(schedule, slot, found, now)
    if refusal is not None:
        raise refusal
    return found


def with_alternatives(exc: SlotTaken, ctx: TenantContext, store: Store, calendar: Calendar, schedule: Schedule,
                      now: datetime, **but) -> SlotTaken:
    """A calendar's precondition failure (412) carries no alternatives: read the day again and add them."""
    if exc.alternatives:
        return exc
    day = exc.slot.start.astimezone(schedule.zone).date()
    found = busy(ctx, store, calendar, day_span(schedule, exc.slot), now, **but) + [exc.slot]
    return SlotTaken(exc.slot, slots.alternatives(schedule, day, found, now, around=exc.slot.start))
