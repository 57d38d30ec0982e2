"""Slot generation and availability (B1, B2): pure functions of the one schedule, the busy intervals and now.

- **The grid** of a local day: from the start of each opening range, a slot every ``slot_minutes +
  buffer_minutes``, each ending by the range's end. Wall times become UTC through ``zoneinfo``: a local time that
  does not exist (the spring-forward gap) is skipped, one that happens twice (the autumn fold) yields one slot, at
  its first occurrence; a slot that would run into the next one (across the gap) wins over it. No offset is ever
  written by hand.
- **Free**: a grid slot not before ``now + min_notice``, not after ``today + horizon_days`` (the business's
  today), and overlapping no busy interval widened by the buffer (interval overlap, never equal start times).
- **Modes**: ``day`` (one day, default today), ``week`` (seven days from the day), ``first`` (the first free
  slots from the day on, within the horizon). ``alternatives`` (what a conflict answers) reads the same grid.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta, timezone
from typing import Callable, Sequence
from zoneinfo import ZoneInfo

from core.booking.model import Interval, Slot, day_label, zone_label
from core.booking.schedule import Schedule

MODES = ("day", "week", "first")
FIRST_LIMIT = 5
#: a week's and a day's answers are capped so a model (and the widget) get a list a person can read
MAX_SLOTS = 60
BusyFor = Callable[[datetime, datetime], Sequence[Interval]]


def _instant(schedule: Schedule, day: date, at: time) -> datetime | None:
    """The UTC instant of a local wall time, or None when that wall time does not exist that day."""
    local = datetime.combine(day, at, tzinfo=schedule.zone)
    there = local.astimezone(timezone.utc)
    if there.astimezone(schedule.zone).replace(tzinfo=None) != local.replace(tzinfo=None):
        return None  # in the gap: the clocks jumped over it
    return there


def day_grid(schedule: Schedule, day: date) -> list[Slot]:
    """Every slot of one local day, in time order, without duplicates."""
    step = schedule.slot_minutes + schedule.buffer_minutes
    out: dict[datetime, Slot] = {}
    length = timedelta(minutes=schedule.slot_minutes)
    for opens, closes in schedule.ranges(day):
        at, last = datetime.combine(day, opens), datetime.combine(day, closes)
        while at + length <= last:
            start = _instant(schedule, day, at.time())
            if start is not None and start not in out:  # a slot lasts its minutes of real time, across a change too
                out[start] = Slot(start, start + length)
            at += timedelta(minutes=step)
    kept: list[Slot] = []
    for slot in sorted(out.values()):  # across the spring gap a slot can run into the next wall time: keep the first
        if not kept or slot.start >= kept[-1].end + timedelta(minutes=schedule.buffer_minutes):
            kept.append(slot)
    return kept


def day_bounds(schedule: Schedule, day: date) -> Interval:
    """The UTC span of one whole local day (23, 24 or 25 hours long)."""
    start = datetime.combine(day, time(), tzinfo=schedule.zone)
    end = datetime.combine(day + timedelta(days=1), time(), tzinfo=schedule.zone)
    return Interval(start, end)


def bookable_day(schedule: Schedule, day: date, now: datetime) -> bool:
    today = schedule.today(now)
    return today <= day <= today + timedelta(days=schedule.horizon_days)


def free(schedule: Schedule, day: date, busy: Sequence[Interval], now: datetime) -> list[Slot]:
    if not bookable_day(schedule, day, now):
        return []
    earliest = now + timedelta(minutes=schedule.min_notice_minutes)
    blocked = [b.widened(schedule.buffer_minutes) for b in busy]
    return [slot for slot in day_grid(schedule, day)
            if slot.start >= earliest and not any(slot.overlaps(b) for b in blocked)]


def is_slot(schedule: Schedule, start: datetime) -> Slot | None:
    """The grid slot starting at ``start``, or None when the schedule has no slot then."""
    day = start.astimezone(schedule.zone).date()
    return next((slot for slot in day_grid(schedule, day) if slot.start == start), None)


def alternatives(schedule: Schedule, day: date, busy: Sequence[Interval], now: datetime,
                 around: datetime | None = None, limit: int = 5) -> list[Slot]:
    """Up to ``limit`` free slots of that day, the nearest to ``around`` chosen first, listed in time order."""
    options = free(schedule, day, busy, now)
    if around is not None:
        options = sorted(options, key=lambda slot: (abs((slot.start - around).total_seconds()), slot.start))
    return sorted(options[:limit])


@dataclass(frozen=True)
class Availability:
    mode: str
    timezone: str
    today: date
    start_day: date
    slots: tuple[Slot, ...]
    asked: date | None = None  # the day asked for, when one was (a past one starts the list today)

    def note(self) -> str:
        """What a reader must be told about the day asked: it has passed (the list starts today), or ''."""
        if self.asked is not None and self.asked < self.today:
            return (f"{self.asked.isoformat()} has passed: today in {self.timezone} is {self.today.isoformat()}; these "
                    "are the free times from today on.")
        return ""

    def days(self) -> list[date]:
        seen: list[date] = []
        for slot in self.slots:
            day = slot.start.astimezone(_zone(self.timezone)).date()
            if day not in seen:
                seen.append(day)
        return seen

    def to_dict(self, lang: str = "es") -> dict:
        tz = _zone(self.timezone)
        rows = [slot.to_dict(tz, lang) for slot in self.slots]
        days = [{"date": day.isoformat(), "label": day_label(day, lang),
                 "slots": [row for row in rows if row["date"] == day.isoformat()]} for day in self.days()]
        out = {"mode": self.mode, "timezone": self.timezone, "zone_label": zone_label(self.timezone, lang),
               "today": self.today.isoformat(), "start_day": self.start_day.isoformat(), "days": days, "slots": rows}
        return {**out, "note": self.note()} if self.note() else out


def _zone(name: str) -> ZoneInfo:
    return ZoneInfo(name)


def find(schedule: Schedule, mode: str, day: date | None, busy_for: BusyFor, now: datetime,
         limit: int | None = None) -> Availability:
    """Free slots by ``mode``; ``busy_for(start, end)`` gives the busy intervals of a span (read once per span)."""
    if mode not in MODES:
        raise ValueError(f"mode is one of {', '.join(MODES)}, not {mode!r}")
    today = schedule.today(now)
    start_day = max(day or today, today)
    if mode == "first":
        days = [start_day + timedelta(days=n) for n in range((today + timedelta(days=schedule.horizon_days)
                                                                - start_day).days + 1)]
    else:
        days = [start_day + timedelta(days=n) for n in range(7 if mode == "week" else 1)]
    cap = limit or (FIRST_LIMIT if mode == "first" else MAX_SLOTS)
    found: list[Slot] = []
    for chunk in range(0, len(days), 7):  # busy time read a week at a time
        week = days[chunk:chunk + 7]
        span = Interval(day_bounds(schedule, week[0]).start, day_bounds(schedule, week[-1]).end)
        busy = list(busy_for(span.start, span.end))
        for one in week:
            found.extend(free(schedule, one, busy, now))
            if len(found) >= cap:
                return Availability(mode, schedule.timezone, today, start_day, tuple(found[:cap]), day)
    return Availability(mode, schedule.timezone, today, start_day, tuple(found[:cap]), day)
