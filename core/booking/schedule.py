"""The business's one schedule (B1; this module's table ``booking_schedules``).

One object says when the business takes appointments: its IANA time zone, weekly hours (several ranges per day;
the gaps between them are the breaks), slot length, the buffer kept free around every busy interval, closed
dates, the minimum notice and the booking horizon. Slot generation and the alternatives offered on a conflict
both read this object and nothing else (the seed's "two places that know your hours" cannot happen).

Stored as JSON exactly as :meth:`Schedule.to_dict` writes it; :meth:`Schedule.from_dict` refuses anything else
naming the field.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import date, datetime, time
from functools import cached_property
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from core.base.store import Store
from core.booking.model import ScheduleError
from core.tenancy.context import TenantContext

WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
LIMITS = {"slot_minutes": (5, 480), "buffer_minutes": (0, 240), "min_notice_minutes": (0, 43200),
          "horizon_days": (1, 730)}
_FIELDS = {"timezone", "weekly", "slot_minutes", "buffer_minutes", "closed_dates", "min_notice_minutes",
           "horizon_days", "country"}


def _clock(text: object, where: str) -> time:
    if not isinstance(text, str):
        raise ScheduleError(f"{where}: write times as \"HH:MM\" (24-hour), got {text!r}.")
    try:
        hours, minutes = text.strip().split(":")
        if len(minutes) != 2:
            raise ValueError
        value = time(int(hours), int(minutes))
    except ValueError:
        raise ScheduleError(f"{where}: {text!r} is not a time; write \"HH:MM\" (24-hour), e.g. \"09:30\".") from None
    return value


def _ranges(day: str, raw: object) -> tuple[tuple[time, time], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ScheduleError(f"weekly.{day}: give a list of [\"HH:MM\", \"HH:MM\"] ranges ([] = closed).")
    out: list[tuple[time, time]] = []
    for n, pair in enumerate(raw):
        where = f"weekly.{day}[{n}]"
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise ScheduleError(f"{where}: a range is [\"HH:MM\", \"HH:MM\"], got {pair!r}.")
        start, end = _clock(pair[0], where), _clock(pair[1], where)
        if end <= start:
            raise ScheduleError(f"{where}: {pair[0]}-{pair[1]} ends before it starts; ranges cannot cross midnight.")
        out.append((start, end))
    out.sort()
    for (_, end), (start, _) in zip(out, out[1:]):
        if start < end:
            raise ScheduleError(f"weekly.{day}: the ranges overlap at {start:%H:%M}; merge them or fix the times.")
    return tuple(out)


def _number(data: dict, name: str, default: int) -> int:
    value = data.get(name, default)
    low, high = LIMITS[name]
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise ScheduleError(f"{name}: a whole number from {low} to {high}, got {value!r}.")
    return value


def _closed(raw: object) -> frozenset[date]:
    if raw is None:
        return frozenset()
    if not isinstance(raw, list):
        raise ScheduleError("closed_dates: a list of dates written YYYY-MM-DD.")
    out = set()
    for value in raw:
        try:
            out.add(date.fromisoformat(str(value).strip()))
        except ValueError:
            raise ScheduleError(f"closed_dates: {value!r} is not a date; write YYYY-MM-DD, e.g. 2026-12-25.") from None
    return frozenset(out)


def _zone_name(value: object) -> str:
    name = value.strip() if isinstance(value, str) else ""
    try:
        if not name or name.startswith("/") or ".." in name:
            raise ZoneInfoNotFoundError
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ScheduleError(f"timezone: {value!r} is not an IANA time zone; write one like Europe/Madrid, "
                            "America/Sao_Paulo or America/New_York.") from None
    return name


@dataclass(frozen=True)
class Schedule:
    timezone: str
    weekly: dict[int, tuple[tuple[time, time], ...]]
    slot_minutes: int = 30
    buffer_minutes: int = 0
    closed_dates: frozenset[date] = field(default_factory=frozenset)
    min_notice_minutes: int = 120
    horizon_days: int = 60
    country: str = "ES"

    @cached_property
    def zone(self) -> ZoneInfo:
        return ZoneInfo(self.timezone)

    def today(self, now: datetime) -> date:
        """Today's date in the business's zone."""
        return now.astimezone(self.zone).date()

    def ranges(self, day: date) -> tuple[tuple[time, time], ...]:
        """The opening ranges of one local day ((), closed)."""
        return () if day in self.closed_dates else self.weekly.get(day.weekday(), ())

    def to_dict(self) -> dict:
        return {"timezone": self.timezone, "slot_minutes": self.slot_minutes, "buffer_minutes": self.buffer_minutes,
                "min_notice_minutes": self.min_notice_minutes, "horizon_days": self.horizon_days,
                "country": self.country, "closed_dates": sorted(d.isoformat() for d in self.closed_dates),
                "weekly": {name: [[f"{a:%H:%M}", f"{b:%H:%M}"] for a, b in self.weekly.get(n, ())]
                           for n, name in enumerate(WEEKDAYS)}}

    @classmethod
    def from_dict(cls, data: object) -> Schedule:
        if not isinstance(data, dict):
            raise ScheduleError("A schedule is a JSON object with timezone, weekly, slot_minutes, buffer_minutes, "
                                "closed_dates, min_notice_minutes, horizon_days and country.")
        unknown = sorted(set(data) - _FIELDS)
        if unknown:
            raise ScheduleError(f"{unknown[0]}: not a schedule field; the fields are {', '.join(sorted(_FIELDS))}.")
        weekly_raw = data.get("weekly")
        if not isinstance(weekly_raw, dict):
            raise ScheduleError(f"weekly: an object keyed by {', '.join(WEEKDAYS)}, each a list of "
                                "[\"HH:MM\", \"HH:MM\"] ranges.")
        strange = sorted(str(k) for k in set(weekly_raw) - set(WEEKDAYS))
        if strange:
            raise ScheduleError(f"weekly.{strange[0]}: not a day; the days are {', '.join(WEEKDAYS)} (each a list of "
                                "[\"HH:MM\", \"HH:MM\"] ranges).")
        weekly = {n: _ranges(name, weekly_raw.get(name)) for n, name in enumerate(WEEKDAYS)}
        weekly = {n: ranges for n, ranges in weekly.items() if ranges}
        if not weekly:
            raise ScheduleError("weekly: every day is closed; give the opening hours of at least one day.")
        country = data.get("country", "ES")
        if not isinstance(country, str) or len(country.strip()) != 2 or not country.strip().isalpha():
            raise ScheduleError(f"country: the two-letter ISO code phone numbers default to (ES, PT, US), got "
                                f"{country!r}.")
        return cls(_zone_name(data.get("timezone")), weekly, _number(data, "slot_minutes", 30),
                   _number(data, "buffer_minutes", 0), _closed(data.get("closed_dates")),
                   _number(data, "min_notice_minutes", 120), _number(data, "horizon_days", 60),
                   country.strip().upper())


def _demo() -> Schedule:
    hours = [["09:00", "14:00"], ["16:00", "19:00"]]
    holidays = ["2026-12-08", "2026-12-25", "2027-01-01", "2027-01-06", "2027-03-19", "2027-04-01", "2027-04-02",
                "2027-05-01"]
    return Schedule.from_dict({
        "timezone": "Europe/Madrid", "slot_minutes": 45, "buffer_minutes": 15, "min_notice_minutes": 120,
        "horizon_days": 60, "country": "ES", "closed_dates": holidays,
        "weekly": {"mon": hours, "tue": hours, "wed": hours, "thu": hours, "fri": hours,
                   "sat": [["10:00", "14:00"]], "sun": []}})


#: the demo tenant's workshop (Europe/Madrid): weekdays 09:00-14:00 and 16:00-19:00, Saturday mornings
DEMO_SCHEDULE = _demo()


def get(ctx: TenantContext, store: Store) -> Schedule | None:
    rows = store.query("SELECT schedule FROM booking_schedules WHERE tenant_id = ?", [ctx.tenant_id])
    return Schedule.from_dict(json.loads(rows[0]["schedule"])) if rows else None


def save(ctx: TenantContext, store: Store, schedule: Schedule, actor: str = "") -> None:
    with store.write() as db:
        db.execute("INSERT INTO booking_schedules (tenant_id, schedule, updated_at, updated_by) VALUES (?, ?, ?, ?) "
                   "ON CONFLICT (tenant_id) DO UPDATE SET schedule = excluded.schedule, updated_at = "
                   "excluded.updated_at, updated_by = excluded.updated_by",
                   [ctx.tenant_id, json.dumps(schedule.to_dict()), store.clock.stamp(), actor])


def remove(ctx: TenantContext, store: Store) -> None:
    """Booking off for this tenant (its bookings stay)."""
    with store.write() as db:
        db.execute("DELETE FROM booking_schedules WHERE tenant_id = ?", [ctx.tenant_id])
