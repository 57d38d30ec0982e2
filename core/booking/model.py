"""The records of booking (B1-B4): intervals and slots in UTC, the result of a create, the errors.

Every moment is an aware UTC ``datetime``; local wall times exist only at the edges (slot generation reads the
schedule's zone, labels show it), always through ``zoneinfo`` so every UTC offset comes from the time-zone
database, DST included. Two intervals overlap when one starts before the other ends and ends after the other
starts (half-open): 10:00-10:20 and 10:10-10:30 do, 10:00-10:30 and 10:30-11:00 do not.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from core.base.clock import iso
from core.base.errors import UserError

_DAYS = {"es": ("lunes", "martes", "miércoles", "jueves", "viernes", "sábado", "domingo"),
         "pt": ("segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo"),
         "en": ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")}
_MONTHS = {"es": ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre",
                  "noviembre", "diciembre"),
           "pt": ("janeiro", "fevereiro", "março", "abril", "maio", "junho", "julho", "agosto", "setembro", "outubro",
                  "novembro", "dezembro"),
           "en": ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
                  "November", "December")}
_ZONE = {"es": "hora de {city} ({tz})", "pt": "hora de {city} ({tz})", "en": "{city} time ({tz})"}


def _lang(lang: str) -> str:
    return lang if lang in _DAYS else "en"


def day_label(day: date, lang: str = "es") -> str:
    """"miércoles 2 de diciembre", "quarta-feira, 2 de dezembro", "Wednesday 2 December"."""
    lang = _lang(lang)
    weekday, month = _DAYS[lang][day.weekday()], _MONTHS[lang][day.month - 1]
    if lang == "en":
        return f"{weekday} {day.day} {month}"
    return f"{weekday}{',' if lang == 'pt' else ''} {day.day} de {month}"


def zone_label(tz_name: str, lang: str = "es") -> str:
    """The zone as a person reads it: "hora de Madrid (Europe/Madrid)", "New York time (America/New_York)"."""
    city = tz_name.rsplit("/", 1)[-1].replace("_", " ")
    return _ZONE[_lang(lang)].format(city=city, tz=tz_name)


def utc(moment: datetime) -> datetime:
    if moment.tzinfo is None:
        raise ValueError("a booking time must carry its zone (an aware datetime)")
    return moment.astimezone(timezone.utc)


def parse_utc(text: str) -> datetime:
    """A stored ISO time (UTC, as ``core.base.clock.iso`` writes it) back to an aware datetime."""
    return utc(datetime.fromisoformat(text))


@dataclass(frozen=True, order=True)
class Interval:
    """A half-open span of time [start, end) in UTC."""

    start: datetime
    end: datetime

    def __post_init__(self) -> None:
        object.__setattr__(self, "start", utc(self.start))
        object.__setattr__(self, "end", utc(self.end))
        if self.end <= self.start:
            raise ValueError(f"an interval must end after it starts ({iso(self.start)} - {iso(self.end)})")

    def overlaps(self, other: Interval) -> bool:
        return self.start < other.end and self.end > other.start

    def widened(self, minutes: int) -> Interval:
        """The interval with ``minutes`` kept free before and after it (the schedule's buffer)."""
        pad = timedelta(minutes=minutes)
        return Interval(self.start - pad, self.end + pad)

    @classmethod
    def stored(cls, start_utc: str, end_utc: str) -> Interval:
        return cls(parse_utc(start_utc), parse_utc(end_utc))


@dataclass(frozen=True, order=True)
class Slot(Interval):
    """One bookable time of the schedule."""

    def local(self, tz: ZoneInfo) -> datetime:
        return self.start.astimezone(tz)

    def to_dict(self, tz: ZoneInfo, lang: str = "es") -> dict:
        start, end = self.start.astimezone(tz), self.end.astimezone(tz)
        return {"start": start.isoformat(timespec="minutes"), "end": end.isoformat(timespec="minutes"),
                "start_utc": iso(self.start), "end_utc": iso(self.end), "date": start.date().isoformat(),
                "time": start.strftime("%H:%M"), "end_time": end.strftime("%H:%M"),
                "label": f"{day_label(start.date(), lang)}, {start.strftime('%H:%M')}", "timezone": tz.key}


class BookingError(UserError):
    """Bad booking input or a refused booking operation; the message says what was wrong and what to do."""


class ScheduleError(BookingError):
    """A schedule field that cannot be stored; the message names the field."""


class NoSchedule(BookingError):
    """The tenant has no booking schedule: booking is off until an editor sets one."""


class HoldNotFound(BookingError):
    """An unknown, foreign, released or already used hold: the same answer for all of them."""


class BookingNotFound(BookingError):
    """An unknown or foreign booking: the same answer for both."""


class CalendarUnavailable(BookingError):
    """The connected calendar could not be read or written: no times are offered, nothing is booked."""


class SlotTaken(BookingError):
    """The time asked for is not free (any more); ``alternatives`` are free slots of that day."""

    def __init__(self, slot: Interval, alternatives: list[Slot] | tuple[Slot, ...] = (), message: str = "") -> None:
        self.slot, self.alternatives = slot, tuple(alternatives)
        super().__init__(message or f"The time {iso(slot.start)} is no longer free.")


#: the statuses of a create: only ``booked`` wrote anything
CREATE_STATUSES = ("booked", "missing", "invalid", "past", "taken", "not_offered", "not_a_slot", "unavailable",
                   "no_schedule")


@dataclass(frozen=True)
class CreateResult:
    """What a create (or a hold's confirmation, or a reschedule) answered; ``message`` is written for the model:
    what happened, the facts, what to do next."""

    status: str
    message: str
    booking: dict | None = None
    missing: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()
    alternatives: tuple[Slot, ...] = ()
    repeated: bool = False  # an idempotent retry: the first result, nothing written again
    extra: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.status == "booked"

    def to_dict(self, tz: ZoneInfo, lang: str = "es") -> dict:
        out: dict = {"status": self.status, "message": self.message}
        if self.booking is not None:
            out["booking"] = booking_view(self.booking, tz, lang)
        if self.missing:
            out["missing"] = list(self.missing)
        if self.problems:
            out["problems"] = list(self.problems)
        if self.alternatives or self.status == "taken":
            out["alternatives"] = [slot.to_dict(tz, lang) for slot in self.alternatives]
        if self.repeated:
            out["repeated"] = True
        return {**out, **self.extra}


def booking_view(row: dict, tz: ZoneInfo, lang: str = "es") -> dict:
    """A booking row as the model, the widget and the CLI read it: its times in the business's zone, named."""
    slot = Slot.stored(row["start_utc"], row["end_utc"]).to_dict(tz, lang)
    keep = ("id", "code", "status", "name", "email", "phone", "notes", "channel", "created_at")
    return {**{k: row.get(k, "") for k in keep}, "start": slot["start"], "end": slot["end"],
            "start_utc": row["start_utc"], "end_utc": row["end_utc"], "date": slot["date"], "time": slot["time"],
            "label": slot["label"], "timezone": tz.key, "zone_label": zone_label(tz.key, lang)}
