"""The calendar invitation (core/booking/ics.py): read back with icalendar, every start is the same UTC instant in
the business's zone (DST included), CANCEL cancels, bad input is refused with a clear message."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings, strategies as st
from icalendar import Calendar

from core.booking.ics import event, method_of
from core.booking.model import BookingError, Interval

NOW = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
ZONES = ("Europe/Madrid", "America/Sao_Paulo", "America/New_York")


def slot(start: datetime, minutes: int = 30) -> Interval:
    return Interval(start, start + timedelta(minutes=minutes))


def parsed(text: str):
    calendar = Calendar.from_ical(text)
    return calendar, calendar.walk("VEVENT")[0]


@pytest.mark.parametrize("start, zone, local", [
    (datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc), "Europe/Madrid", "20261202T100000"),  # CET, UTC+1
    (datetime(2027, 7, 1, 8, 0, tzinfo=timezone.utc), "Europe/Madrid", "20270701T100000"),  # CEST, UTC+2
    (datetime(2026, 12, 2, 15, 0, tzinfo=timezone.utc), "America/New_York", "20261202T100000"),  # EST
    (datetime(2027, 7, 1, 14, 0, tzinfo=timezone.utc), "America/New_York", "20270701T100000"),  # EDT
    (datetime(2026, 12, 2, 13, 0, tzinfo=timezone.utc), "America/Sao_Paulo", "20261202T100000"),  # UTC-3
])
def test_dtstart_carries_the_zone_and_reads_back_as_the_same_instant(start, zone, local):
    text = event("booking-1@cobertura", slot(start), "Cita en Taller Demo", "Código: K7M2QX", zone,
                 "Taller Demo <citas@taller.example>", now=NOW, attendee="Ana <ana@example.com>")
    assert f"DTSTART;TZID={zone}:{local}\r\n" in text
    calendar, item = parsed(text)
    assert calendar["METHOD"] == "REQUEST" and str(calendar["VERSION"]) == "2.0"
    assert item.decoded("DTSTART").astimezone(timezone.utc) == start
    assert item.decoded("DTEND").astimezone(timezone.utc) == start + timedelta(minutes=30)
    assert [str(tz["TZID"]) for tz in calendar.walk("VTIMEZONE")] == [zone]
    assert str(item["UID"]) == "booking-1@cobertura" and str(item["STATUS"]) == "CONFIRMED"
    assert item.decoded("DTSTAMP") == NOW
    assert str(item["ORGANIZER"]) == "mailto:citas@taller.example" and item["ORGANIZER"].params["CN"] == "Taller Demo"
    assert str(item["ATTENDEE"]) == "mailto:ana@example.com" and item["ATTENDEE"].params["CN"] == "Ana"
    assert str(item["DESCRIPTION"]) == "Código: K7M2QX"


@settings(max_examples=60, deadline=None)
@given(minutes=st.integers(min_value=0, max_value=4 * 365 * 24 * 60 // 15), zone=st.sampled_from(ZONES),
       length=st.sampled_from([15, 30, 60, 90]))
def test_any_start_in_any_zone_reads_back_as_the_same_utc_instant(minutes, zone, length):
    start = datetime(2026, 1, 1, tzinfo=timezone.utc) + timedelta(minutes=15 * minutes)
    _, item = parsed(event("u-1@cobertura", slot(start, length), "Cita", "", zone, now=NOW))
    assert item.decoded("DTSTART").astimezone(timezone.utc) == start
    assert item.decoded("DTEND").astimezone(timezone.utc) == start + timedelta(minutes=length)
    assert item.decoded("DTSTART").replace(tzinfo=None) == start.astimezone(ZoneInfo(zone)).replace(tzinfo=None)


def test_a_cancellation_cancels_the_same_event():
    text = event("booking-1@cobertura", slot(datetime(2026, 12, 2, 9, tzinfo=timezone.utc)), "Cita", "",
                 "Europe/Madrid", "citas@taller.example", "cancel", now=NOW, sequence=2)
    calendar, item = parsed(text)
    assert calendar["METHOD"] == "CANCEL" and method_of(text) == "CANCEL"
    assert str(item["STATUS"]) == "CANCELLED" and int(item["SEQUENCE"]) == 2
    assert "ATTENDEE" not in item and "DESCRIPTION" not in item


def test_no_organizer_leaves_it_out():
    text = event("u-1@cobertura", slot(datetime(2026, 12, 2, 9, tzinfo=timezone.utc)), "Cita", "", "Europe/Madrid",
                 now=NOW)
    assert "ORGANIZER" not in parsed(text)[1] and method_of(text) == "REQUEST"


@pytest.mark.parametrize("kwargs, message", [
    ({"method": "PUBLISH"}, "REQUEST or CANCEL, not 'PUBLISH'"),
    ({"uid": "has space"}, "UID without spaces"),
    ({"uid": ""}, "UID without spaces"),
    ({"organizer": "Taller Demo"}, "organizer of a calendar invitation must be an e-mail address"),
    ({"attendee": "ana"}, "attendee of a calendar invitation must be an e-mail address"),
])
def test_bad_input_is_refused(kwargs, message):
    args = {"uid": "u-1@cobertura", "slot": slot(datetime(2026, 12, 2, 9, tzinfo=timezone.utc)), "summary": "Cita",
            "description": "", "tz_name": "Europe/Madrid", "now": NOW, **kwargs}
    with pytest.raises(BookingError, match=message):
        event(**args)
