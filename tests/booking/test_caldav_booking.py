"""Booking through ``rt.booking`` with a connected CalDAV calendar (a real Radicale on loopback): the staff's edits
made behind the agent's back between availability and booking are seen by the re-check or by the preconditions,
answered with the day's free times, and never overwritten; a calendar that cannot be read offers nothing."""
from __future__ import annotations

import pytest

from core.booking.model import CalendarUnavailable
from tests.booking.radicale_server import USER, radicale
from tests.servers import free_port

DAY = "2026-12-02"  # the Wednesday after the conftest's now (Tuesday 1 December, 22:00 in Madrid)
CUSTOMER = {"name": "Ana López", "email": "ana@example.com", "phone": "+34 612 345 678"}


def ics(uid: str, start: str, end: str, summary: str = "Staff") -> str:
    return ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Staff//Calendar app//EN\r\nBEGIN:VEVENT\r\n"
            f"UID:{uid}\r\nDTSTAMP:20261201T080000Z\r\nSUMMARY:{summary}\r\nDTSTART;TZID=Europe/Madrid:{start}\r\n"
            f"DTEND;TZID=Europe/Madrid:{end}\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with radicale(tmp_path_factory.mktemp("radicale")) as running:
        yield running


@pytest.fixture
def staff(server, brt, shop, monkeypatch):
    """The shop connected to a fresh calendar (password in an environment variable); the staff's app on it."""
    other = server.new_calendar("Taller")
    monkeypatch.setenv("COBERTURA_TEST_CALDAV_PASSWORD", "any password")
    brt.booking.connect_caldav(shop, other.url, USER, "COBERTURA_TEST_CALDAV_PASSWORD")
    return other


def local_times(brt, shop) -> list[str]:
    zone = brt.booking.schedule(shop).zone
    return [slot.start.astimezone(zone).strftime("%H:%M")
            for slot in brt.booking.availability(shop, mode="day", day=DAY).slots]


def test_an_event_added_behind_our_back_after_availability_makes_the_create_taken(brt, shop, staff):
    offered = local_times(brt, shop)
    assert offered[:3] == ["09:00", "10:00", "11:00"]  # 45-minute slots, 15-minute buffer
    assert staff.put("dentist.ics", ics("dentist", "20261202T091000", "20261202T092000")).status_code == 201
    result = brt.booking.create(shop, {**CUSTOMER, "start": f"{DAY}T09:00"})
    assert result.status == "taken"
    zone = brt.booking.schedule(shop).zone
    alternatives = [slot.start.astimezone(zone).strftime("%H:%M") for slot in result.alternatives]
    assert alternatives and "09:00" not in alternatives and "10:00" in alternatives
    assert brt.booking.bookings(shop) == []
    assert "09:00" not in local_times(brt, shop)


def test_a_booking_is_written_to_the_calendar_with_its_etag_and_a_staff_move_is_never_overwritten(brt, shop, staff):
    booked = brt.booking.create(shop, {**CUSTOMER, "start": f"{DAY}T10:00"})
    assert booked.status == "booked", booked.message
    row = brt.booking.booking(shop, booked.booking["id"])
    event = staff.get(f"{row['id']}.ics")
    assert event.status_code == 200 and row["calendar_etag"] == event.headers["ETag"]
    assert "DTSTART:20261202T090000Z" in event.text                  # 10:00 in Madrid
    assert "10:00" not in local_times(brt, shop)
    # staff move the event in their app (no precondition: the app just saves)
    moved = ics(row["id"], "20261202T120000", "20261202T124500", "Moved by staff")
    assert staff.put(f"{row['id']}.ics", moved).status_code in (201, 204)
    result = brt.booking.reschedule(shop, row["id"], f"{DAY}T11:00")
    assert result.status == "taken", result.message
    kept = staff.get(f"{row['id']}.ics").text
    assert "SUMMARY:Moved by staff" in kept and "DTSTART;TZID=Europe/Madrid:20261202T120000" in kept
    assert brt.booking.booking(shop, row["id"])["start_utc"].startswith("2026-12-02T09:00")


def test_a_reschedule_and_a_cancel_with_the_etag_we_kept_move_and_remove_the_event(brt, shop, staff):
    booked = brt.booking.create(shop, {**CUSTOMER, "start": f"{DAY}T11:00"})
    assert booked.status == "booked", booked.message
    uid = booked.booking["id"]
    moved = brt.booking.reschedule(shop, uid, f"{DAY}T16:00")
    assert moved.status == "booked", moved.message
    event = staff.get(f"{uid}.ics")
    assert "DTSTART:20261202T150000Z" in event.text
    assert brt.booking.booking(shop, uid)["calendar_etag"] == event.headers["ETag"]
    brt.booking.cancel(shop, uid)
    assert staff.get(f"{uid}.ics").status_code == 404
    assert "11:00" in local_times(brt, shop) and "16:00" in local_times(brt, shop)


def test_an_all_day_event_closes_the_whole_day_in_the_business_zone_far_from_utc(brt, shop, staff):
    weekday = [["09:00", "18:00"]]
    brt.booking.save_schedule(shop, {"timezone": "America/Los_Angeles", "slot_minutes": 60, "buffer_minutes": 0,
                                     "min_notice_minutes": 0, "horizon_days": 60, "country": "US",
                                     "weekly": {day: weekday for day in ("mon", "tue", "wed", "thu", "fri")}})
    all_day = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Staff//Calendar app//EN\r\nBEGIN:VEVENT\r\n"
               "UID:inventory\r\nDTSTAMP:20261201T080000Z\r\nSUMMARY:Inventory: closed\r\n"
               "DTSTART;VALUE=DATE:20261203\r\nDTEND;VALUE=DATE:20261204\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    assert staff.put("inventory.ics", all_day).status_code == 201
    zone = brt.booking.schedule(shop).zone

    def hours(day: str) -> list[str]:
        found = brt.booking.availability(shop, mode="day", day=day).slots
        return [slot.start.astimezone(zone).strftime("%H:%M") for slot in found]

    assert hours("2026-12-03") == []                            # not 16:00 and 17:00 (UTC's 4 December)
    assert hours("2026-12-02") == [f"{h:02d}:00" for h in range(9, 18)]   # nor the evening before


def test_an_unreachable_calendar_offers_nothing_and_books_nothing(brt, shop, monkeypatch):
    monkeypatch.setenv("COBERTURA_TEST_CALDAV_PASSWORD", "x")
    brt.booking.connect_caldav(shop, f"http://127.0.0.1:{free_port()}/{USER}/citas/", USER,
                               "COBERTURA_TEST_CALDAV_PASSWORD")
    with pytest.raises(CalendarUnavailable, match="could not be reached"):
        brt.booking.availability(shop, mode="day", day=DAY)
    result = brt.booking.create(shop, {**CUSTOMER, "start": f"{DAY}T10:20"})
    assert result.status == "unavailable" and "could not be reached" in result.message
    assert brt.booking.bookings(shop) == []
    with pytest.raises(CalendarUnavailable, match="could not be reached"):
        brt.booking.test_calendar(shop)


def test_test_connection_reads_the_connected_calendar(brt, shop, staff):
    assert brt.booking.test_calendar(shop).startswith("Connected to the calendar “Taller” at http://127.0.0.1:")
