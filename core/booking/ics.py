"""The calendar invitation a confirmation e-mail carries (RFC 5545 / iTIP RFC 5546), written with ``icalendar``.

``METHOD:REQUEST`` adds or updates the event in the customer's calendar app (Gmail, Outlook, Apple Calendar);
``METHOD:CANCEL`` with the same UID and a higher SEQUENCE removes it. DTSTART and DTEND carry the business's
IANA zone as TZID, with its VTIMEZONE (from ``zoneinfo``) so every client converts to the same UTC instant.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from email.utils import parseaddr
from zoneinfo import ZoneInfo

from icalendar import Calendar, Event, vCalAddress, vText

from core.booking.model import BookingError, Interval

METHODS = ("REQUEST", "CANCEL")
PRODID = "-//Cobertura//booking//EN"


def _address(value: str | tuple[str, str], role: str) -> vCalAddress | None:
    """``"Name <a@b.c>"``, ``"a@b.c"`` or ``(name, address)`` as a CAL-ADDRESS (mailto:) with its CN; None when
    empty."""
    name, address = value if isinstance(value, tuple) else parseaddr(value or "")
    name, address = " ".join(str(name or "").split()), str(address or "").strip()
    if not address:
        return None
    if address.count("@") != 1 or any(ch.isspace() for ch in address):
        raise BookingError(f"The {role} of a calendar invitation must be an e-mail address, not {value!r}.")
    cal = vCalAddress(f"mailto:{address}")
    if name:
        cal.params["cn"] = vText(name)
    return cal


def event(uid: str, slot: Interval, summary: str, description: str, tz_name: str, organizer: str = "",
          method: str = "REQUEST", *, now: datetime, attendee: str | tuple[str, str] = "", sequence: int = 0,
          location: str = "") -> str:
    """One VEVENT in a VCALENDAR, as text (CRLF lines). ``organizer`` and ``attendee`` are e-mail addresses
    (optionally ``Name <address>``, or a ``(name, address)`` pair); ``sequence`` grows with every change of the same
    ``uid`` (a reschedule, the cancellation); ``now`` is the DTSTAMP (the store's clock)."""
    method = method.upper()
    if method not in METHODS:
        raise BookingError(f"An invitation's method is REQUEST or CANCEL, not {method!r}.")
    if not uid or any(ch.isspace() for ch in uid):
        raise BookingError(f"An invitation needs a UID without spaces, not {uid!r}.")
    zone = ZoneInfo(tz_name)
    cal = Calendar()
    cal.add("prodid", PRODID)
    cal.add("version", "2.0")
    cal.add("method", method)
    item = Event()
    item.add("uid", uid)
    item.add("dtstamp", now.astimezone(timezone.utc).replace(microsecond=0))
    item.add("dtstart", slot.start.astimezone(zone))
    item.add("dtend", slot.end.astimezone(zone))
    item.add("sequence", int(sequence))
    item.add("summary", summary)
    if description:
        item.add("description", description)
    if location:
        item.add("location", location)
    item.add("status", "CANCELLED" if method == "CANCEL" else "CONFIRMED")
    item.add("transp", "OPAQUE")
    organizer_address = _address(organizer, "organizer")
    if organizer_address is not None:
        item.add("organizer", organizer_address)
    attendee_address = _address(attendee, "attendee")
    if attendee_address is not None:
        attendee_address.params["role"] = vText("REQ-PARTICIPANT")
        attendee_address.params["partstat"] = vText("ACCEPTED")
        item.add("attendee", attendee_address)
    cal.add_component(item)
    # the zone's rules around the event only: a small VTIMEZONE, valid for the dates it is read at
    day = slot.start.astimezone(zone).date()
    cal.add_missing_timezones(first_date=day - timedelta(days=400), last_date=day + timedelta(days=400))
    return cal.to_ical().decode("utf-8")


def method_of(text: str) -> str:
    """The METHOD of an invitation written by :func:`event` ("REQUEST" when it names none)."""
    value = Calendar.from_ical(text).get("method")
    return str(value).upper() if value else "REQUEST"
