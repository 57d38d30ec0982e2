"""From whatever a model sends to the fields of one booking, checked (B3; pure, no I/O, never raises).

:func:`normalize` unwraps the shapes models send (JSON inside strings, wrappers, lists of one object, keys in
es/pt/en, "undefined" and "sin teléfono" for a missing value) to one flat dict of known fields (``core.booking.
fields``). :func:`validate` reads that dict against the schedule: the start as an aware UTC moment (an ISO time
with its offset, or a local time read in the business's zone, or the customer's words: ``core.booking.dates``),
the e-mail, the phone in E.164 (``phonenumbers``, the schedule's country for numbers without a prefix), the
required fields that are missing by name, and each problem as a sentence for the model that says what to do.
:func:`past_message` is the answer to a past date: today's date in the business's zone and the next step.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime, time, timezone
from typing import Any

import phonenumbers

from core.booking.dates import TIME_INSIDE, local_moment, read_day, read_time
from core.booking.fields import FIELDS, flatten
from core.booking.schedule import Schedule

__all__ = ["FIELDS", "REQUIRED", "Validated", "normalize", "past_message", "read_day", "read_time", "validate"]

REQUIRED = ("name", "email", "start")
_EMAIL = re.compile(r"(?P<local>[\w!#$%&'*+/=?^`{|}~-]+(?:\.[\w!#$%&'*+/=?^`{|}~-]+)*)"
                    r"@(?P<domain>(?:[^\W_](?:[\w-]{0,61}[^\W_])?\.)+(?:[^\W\d_]{2,63}|xn--[a-z0-9-]{2,59}))")
_ISO_DAY_ONLY = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_START = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{1,2}:\d{2}.*", re.IGNORECASE)


@dataclass(frozen=True)
class Validated:
    """A create's fields checked: the start (aware, UTC), the values to store, what is missing, what is wrong."""

    start: datetime | None
    values: dict[str, str] = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.start is not None and not self.missing and not self.problems


def normalize(raw: Any) -> dict[str, str]:
    """One flat dict of the known fields in ``raw`` (see ``core.booking.fields.FIELDS``); missing ones absent.

    Never raises, whatever ``raw`` is; ``normalize(normalize(x)) == normalize(x)``."""
    try:
        return flatten(raw)
    except Exception:  # the caps make this unreachable in practice; junk must still answer "nothing usable"
        return {}


def email_of(text: str) -> str | None:
    """The address in ``text`` ("Ana <ANA@Mail.es>", "mailto:ana@mail.es") with its domain lower-cased; or None."""
    bare = text.strip().removeprefix("mailto:").strip()
    if "<" in bare and bare.endswith(">"):
        bare = bare[bare.rindex("<") + 1:-1]
    bare = re.sub(r"\s*([@.])\s*", r"\1", bare).strip(" .,;:")
    found = _EMAIL.fullmatch(bare)
    if not found or len(bare) > 254 or len(found["local"]) > 64:
        return None
    return f"{found['local']}@{found['domain'].lower()}"


def phone_of(text: str, country: str) -> str | None:
    """The number in E.164 ("+34600111222"), reading a number without its prefix as one of ``country``; or None."""
    try:
        number = phonenumbers.parse(text[:40], (country or "").upper() or None)
    except Exception:  # NumberParseException, or a region phonenumbers does not know
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _contact(fields: dict[str, str], schedule: Schedule) -> tuple[dict[str, str], list[str], list[str]]:
    values = {"name": "", "email": "", "phone": "", "notes": fields.get("notes", "")}
    missing: list[str] = []
    problems: list[str] = []
    name = fields.get("name", "")
    if not name:
        missing.append("name")
    elif not any(ch.isalpha() for ch in name):
        problems.append(f"name {name!r} is not a person's name: ask the customer for their name.")
    else:
        values["name"] = name
    email = fields.get("email", "")
    if not email:
        missing.append("email")
    elif (address := email_of(email)) is None:
        problems.append(f"email {email!r} is not a valid e-mail address: ask the customer for it again.")
    else:
        values["email"] = address
    phone = fields.get("phone", "")
    if phone:
        number = phone_of(phone, schedule.country)
        if number is None:
            problems.append(f"phone {phone!r} is not a valid phone number for {schedule.country}: ask for it again "
                            "(with its international prefix, e.g. +351, if it is not from that country), or leave "
                            "it out: the phone is optional.")
        else:
            values["phone"] = number
    return values, missing, problems


def _unreadable(text: str, schedule: Schedule, today: date) -> str:
    return (f"start {text!r} is not a date and time I can read: send it as YYYY-MM-DDTHH:MM in the business's "
            f"local time ({schedule.timezone}; today there is {today.isoformat()}), e.g. "
            f"{today.isoformat()}T10:00.")


def _gap(day: date, at: time, schedule: Schedule) -> str:
    return (f"start {day.isoformat()}T{at:%H:%M} does not exist in {schedule.timezone}: the clocks skip that hour "
            "that night (daylight saving time). Ask the customer for another time.")


def _moment(day: date | None, at: time | None, schedule: Schedule) -> tuple[datetime | None, list[str], list[str]]:
    if day is None and at is None:
        return None, ["start"], []
    if day is None:
        return None, ["date"], []
    if at is None:
        return None, ["time"], []
    moment = local_moment(day, at, schedule.zone)
    return moment, [], [] if moment is not None else [_gap(day, at, schedule)]


def _iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.strip().replace(" ", "T", 1).replace("z", "Z"))
    except ValueError:
        return None


def _start(fields: dict[str, str], schedule: Schedule, today: date) -> tuple[datetime | None, list[str], list[str]]:
    """The start from ``start`` or from ``date`` + ``time``: (moment, missing, problems)."""
    text = fields.get("start") or ""
    day_text, time_text = fields.get("date", ""), fields.get("time", "")
    if not text:  # a whole moment sent as the date, or as the time, is a start
        for candidate in (day_text, time_text):
            if _ISO_START.fullmatch(candidate) or (read_day(candidate, today) and TIME_INSIDE.search(candidate)):
                text = candidate
    if text and _ISO_DAY_ONLY.fullmatch(text):
        day_text, text = text, ""
    if not text:
        day = read_day(day_text, today) if day_text else None
        at = read_time(time_text) if time_text else None
        problems = []
        if day_text and day is None:
            problems.append(f"date {day_text!r} is not a date I can read: send it as YYYY-MM-DD (today in "
                            f"{schedule.timezone} is {today.isoformat()}).")
        if time_text and at is None:
            problems.append(f"time {time_text!r} is not a time I can read: send it as HH:MM (24-hour).")
        if problems:
            return None, [], problems
        return _moment(day, at, schedule)
    moment = _iso(text) if _ISO_START.fullmatch(text) else None
    if moment is not None:
        if moment.tzinfo is not None:
            return moment.astimezone(timezone.utc), [], []
        return _moment(moment.date(), moment.time(), schedule)
    inside = TIME_INSIDE.search(text.lower())
    day = read_day(text, today)
    at = (read_time(text[inside.start():]) or read_time(inside.group(0))) if inside else None
    at = at or (read_time(time_text) if time_text else None)
    if day is None and at is None:
        return None, [], [_unreadable(text, schedule, today)]
    if day is None:
        day = read_day(day_text, today) if day_text else None
    return _moment(day, at, schedule)


def validate(fields: dict, schedule: Schedule, now: datetime) -> Validated:
    """``fields`` (from :func:`normalize`; normalised again here, it is idempotent) checked for a create.

    Missing required fields are named (name, email, start; "date" or "time" when only the other was given);
    each problem is a sentence for the model: what was wrong and what to ask. A past start is not a problem here:
    the caller answers it with :func:`past_message`. Never raises."""
    try:
        clean = normalize(fields)
        today = schedule.today(now)
        values, missing, problems = _contact(clean, schedule)
        start, start_missing, start_problems = _start(clean, schedule, today)
    except Exception as exc:  # a broken schedule object is ours, but the model still gets a sentence, not a crash
        return Validated(None, {}, (), (f"the booking could not be checked ({type(exc).__name__}): try again.",))
    return Validated(start, values, tuple(missing + start_missing), tuple(problems + start_problems))


_PAST = {
    "en": ("The booking date ({day}) is in the past. Today in {tz} is {today}. The model probably reused an old "
           "date: ask the customer for a new date.",
           "The booking time on {day} has already passed: it is {now} on {today} in {tz}. Ask the customer for a "
           "later time or another date."),
    "es": ("La fecha de la reserva ({day}) está en el pasado. Hoy en {tz} es {today}. El modelo probablemente "
           "reutilizó una fecha antigua: pide al cliente una nueva fecha.",
           "La hora de la reserva del {day} ya ha pasado: son las {now} del {today} en {tz}. Pide al cliente una "
           "hora más tarde u otra fecha."),
    "pt": ("A data da reserva ({day}) está no passado. Hoje em {tz} é {today}. O modelo provavelmente reutilizou "
           "uma data antiga: peça ao cliente uma nova data.",
           "A hora da reserva de {day} já passou: são {now} de {today} em {tz}. Peça ao cliente uma hora mais "
           "tarde ou outra data."),
}


def past_message(day: date | datetime, schedule: Schedule, now: datetime, lang: str = "en") -> str:
    """The answer to a past date, written for the model: the date sent, today's date in the business's zone, and
    what to do next (ask for a new date). A datetime or today's date means an hour of today that has passed."""
    local_now = now.astimezone(schedule.zone)
    if isinstance(day, datetime):
        day = day.astimezone(schedule.zone).date() if day.tzinfo else day.date()
    earlier, later_today = _PAST.get(lang, _PAST["en"])
    template = later_today if day == local_now.date() else earlier
    return template.format(day=day.isoformat(), tz=schedule.timezone, today=local_now.date().isoformat(),
                           now=f"{local_now:%H:%M}")
