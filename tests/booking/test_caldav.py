"""The CalDAV calendar against a real Radicale server on loopback (tests/booking/radicale_server.py): events another
client writes behind our back are busy (recurring and all-day too), our writes carry their preconditions so a
concurrent edit is answered with SlotTaken and never overwritten, and a calendar we cannot use says why."""
from __future__ import annotations

import socket
import time
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from core.base.clock import Clock
from core.booking.caldav_calendar import CalDavCalendar, check
from core.booking.model import CalendarUnavailable, Interval, SlotTaken
from tests.booking.radicale_server import USER, radicale, radicale_without_put_etags
from tests.servers import free_port

MADRID = ZoneInfo("Europe/Madrid")
UTC = timezone.utc


class FixedClock(Clock):
    def __init__(self, moment: datetime) -> None:
        self.moment = moment

    def now(self) -> datetime:
        return self.moment


NOW = FixedClock(datetime(2026, 12, 1, 9, 0, tzinfo=UTC))


def local(y, mo, d, h=0, mi=0) -> datetime:
    return datetime(y, mo, d, h, mi, tzinfo=MADRID)


def ics(uid: str, *lines: str) -> str:
    """An event as a calendar app writes it (TZID wall times; the VTIMEZONE is the server's business)."""
    body = "\r\n".join([f"UID:{uid}", "DTSTAMP:20261130T080000Z", *lines])
    return (f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//Staff//Calendar app//EN\r\nBEGIN:VEVENT\r\n{body}\r\n"
            "END:VEVENT\r\nEND:VCALENDAR\r\n")


def day(y, mo, d) -> tuple[datetime, datetime]:
    return local(y, mo, d), local(y, mo, d) + timedelta(days=1)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with radicale(tmp_path_factory.mktemp("radicale")) as running:
        yield running


@pytest.fixture
def other(server):
    """A fresh calendar collection, and the staff's calendar app on it."""
    return server.new_calendar("Citas del taller")


@pytest.fixture
def calendar(other):
    return CalDavCalendar(other.url, USER, "any password", timezone="Europe/Madrid", clock=NOW)


def test_busy_sees_an_event_another_client_put_behind_our_back(calendar, other):
    start, end = day(2026, 12, 2)
    assert calendar.busy(start, end) == []
    put = other.put("dentist.ics", ics("dentist", "SUMMARY:Dentist", "DTSTART;TZID=Europe/Madrid:20261202T101000",
                                       "DTEND;TZID=Europe/Madrid:20261202T103000"))
    assert put.status_code == 201
    assert calendar.busy(start, end) == [Interval(local(2026, 12, 2, 10, 10), local(2026, 12, 2, 10, 30))]
    # a fresh calendar object (as every request opens one) reads the same; the next day knows nothing of it
    again = CalDavCalendar(other.url, USER, "x", timezone="Europe/Madrid")
    assert again.busy(start, end) == calendar.busy(start, end)
    assert calendar.busy(*day(2026, 12, 3)) == []


def test_free_and_cancelled_events_are_not_busy_and_utc_and_duration_events_are(calendar, other):
    other.put("free.ics", ics("free", "TRANSP:TRANSPARENT", "DTSTART:20261202T090000Z", "DTEND:20261202T100000Z"))
    other.put("off.ics", ics("off", "STATUS:CANCELLED", "DTSTART:20261202T110000Z", "DTEND:20261202T120000Z"))
    other.put("call.ics", ics("call", "DTSTART:20261202T150000Z", "DURATION:PT45M"))
    other.put("tick.ics", ics("tick", "DTSTART:20261202T170000Z"))  # no end: the moment it starts
    busy = calendar.busy(*day(2026, 12, 2))
    call = Interval(datetime(2026, 12, 2, 15, tzinfo=UTC), datetime(2026, 12, 2, 15, 45, tzinfo=UTC))
    tick = Interval(datetime(2026, 12, 2, 17, tzinfo=UTC), datetime(2026, 12, 2, 17, 0, 1, tzinfo=UTC))
    assert busy == [call, tick]
    slot = Interval(datetime(2026, 12, 2, 17, tzinfo=UTC), datetime(2026, 12, 2, 17, 30, tzinfo=UTC))
    assert any(span.overlaps(slot) for span in busy)
    before = Interval(datetime(2026, 12, 2, 16, 30, tzinfo=UTC), datetime(2026, 12, 2, 17, tzinfo=UTC))
    assert not any(span.overlaps(before) for span in busy)


def test_a_recurring_event_is_busy_on_every_occurrence_across_dst(calendar, other):
    # every Wednesday 10:00-11:00 Madrid from 21 October 2026 (CEST, UTC+2) on; Madrid leaves DST on 25 October
    other.put("weekly.ics", ics("weekly", "SUMMARY:Team meeting", "DTSTART;TZID=Europe/Madrid:20261021T100000",
                                "DTEND;TZID=Europe/Madrid:20261021T110000", "RRULE:FREQ=WEEKLY;BYDAY=WE",
                                "EXDATE;TZID=Europe/Madrid:20261209T100000"))
    october = calendar.busy(*day(2026, 10, 21))
    assert october == [Interval(datetime(2026, 10, 21, 8, tzinfo=UTC), datetime(2026, 10, 21, 9, tzinfo=UTC))]
    december = calendar.busy(*day(2026, 12, 2))
    assert december == [Interval(datetime(2026, 12, 2, 9, tzinfo=UTC), datetime(2026, 12, 2, 10, tzinfo=UTC))]
    assert calendar.busy(*day(2026, 12, 9)) == []                 # the excluded date
    assert calendar.busy(*day(2026, 12, 3)) == []                 # a Thursday
    week = calendar.busy(local(2026, 12, 14), local(2026, 12, 28))
    assert [span.start.astimezone(MADRID).strftime("%m-%d %H:%M") for span in week] == ["12-16 10:00", "12-23 10:00"]


def test_a_moved_occurrence_is_busy_at_its_new_time(calendar, other):
    master = ics("standup", "DTSTART;TZID=Europe/Madrid:20261130T090000", "DTEND;TZID=Europe/Madrid:20261130T093000",
                 "RRULE:FREQ=DAILY;COUNT=5").replace("END:VCALENDAR\r\n", "")
    moved = ("BEGIN:VEVENT\r\nUID:standup\r\nDTSTAMP:20261130T080000Z\r\nRECURRENCE-ID;TZID=Europe/Madrid:"
             "20261202T090000\r\nDTSTART;TZID=Europe/Madrid:20261202T123000\r\nDTEND;TZID=Europe/Madrid:"
             "20261202T130000\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
    assert other.put("standup.ics", master + moved).status_code == 201
    assert calendar.busy(*day(2026, 12, 2)) == [Interval(local(2026, 12, 2, 12, 30), local(2026, 12, 2, 13))]
    assert calendar.busy(*day(2026, 12, 1)) == [Interval(local(2026, 12, 1, 9), local(2026, 12, 1, 9, 30))]


def test_an_all_day_event_is_busy_for_the_whole_local_day(calendar, other):
    other.put("holiday.ics", ics("holiday", "SUMMARY:Closed", "DTSTART;VALUE=DATE:20261208",
                                 "DTEND;VALUE=DATE:20261209"))
    whole = Interval(local(2026, 12, 8), local(2026, 12, 9))       # 7 Dec 23:00 UTC - 8 Dec 23:00 UTC
    assert calendar.busy(local(2026, 12, 8, 9), local(2026, 12, 8, 14)) == [whole]
    assert calendar.busy(local(2026, 12, 8, 23, 30), local(2026, 12, 9, 9)) == [whole]
    assert calendar.busy(local(2026, 12, 9), local(2026, 12, 9, 9)) == []       # touching: not busy
    assert calendar.busy(local(2026, 12, 7, 9), local(2026, 12, 8)) == []
    # the same event read for a business in New York is that city's 8 December
    york = CalDavCalendar(other.url, USER, "x", timezone="America/New_York")
    start = datetime(2026, 12, 8, tzinfo=ZoneInfo("America/New_York"))
    assert york.busy(start, start + timedelta(days=1)) == [Interval(start, start + timedelta(days=1))]


def test_a_recurring_all_day_event_is_busy_every_week(calendar, other):
    other.put("saturdays.ics", ics("saturdays", "SUMMARY:Closed on Saturdays", "DTSTART;VALUE=DATE:20261205",
                                   "DTEND;VALUE=DATE:20261206", "RRULE:FREQ=WEEKLY"))
    week = calendar.busy(local(2026, 12, 7), local(2026, 12, 21))
    assert week == [Interval(local(2026, 12, 12), local(2026, 12, 13)), Interval(local(2026, 12, 19),
                                                                                 local(2026, 12, 20))]


def test_a_floating_time_is_a_wall_time_in_the_business_zone(calendar, other):
    other.put("floating.ics", ics("floating", "DTSTART:20261202T160000", "DTEND:20261202T170000"))
    assert calendar.busy(*day(2026, 12, 2)) == [Interval(local(2026, 12, 2, 16), local(2026, 12, 2, 17))]


def test_our_create_is_busy_and_a_moved_booking_can_ignore_its_own_event(calendar, other):
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    etag = calendar.create("bk-1", slot, "Revisión — Ana", "Teléfono +34600000000")
    assert etag.startswith('"') and etag == other.get("bk-1.ics").headers["ETag"]
    text = other.get("bk-1.ics").text
    assert "UID:bk-1" in text and "DTSTART:20261202T090000Z" in text and "SUMMARY:Revisión — Ana" in text
    assert calendar.busy(*day(2026, 12, 2)) == [slot]
    assert calendar.busy(*day(2026, 12, 2), ignore={"bk-1"}) == []


def test_create_on_an_href_another_client_wrote_first_is_slot_taken(calendar, other):
    theirs = ics("bk-7", "SUMMARY:Written by the calendar app", "DTSTART:20261202T110000Z", "DTEND:20261202T113000Z")
    assert other.put("bk-7.ics", theirs).status_code == 201
    slot = Interval(local(2026, 12, 2, 12), local(2026, 12, 2, 12, 30))
    with pytest.raises(SlotTaken) as taken:
        calendar.create("bk-7", slot, "Ours", "")
    assert taken.value.slot == slot and taken.value.alternatives == ()
    assert "nothing was overwritten" in str(taken.value)
    assert "SUMMARY:Written by the calendar app" in other.get("bk-7.ics").text


def test_create_when_the_uid_is_already_used_at_another_address_is_slot_taken(calendar, other):
    theirs = ics("bk-8", "SUMMARY:Copied by an app", "DTSTART:20261202T110000Z", "DTEND:20261202T113000Z")
    assert other.put("copy-of-bk-8.ics", theirs).status_code == 201
    slot = Interval(local(2026, 12, 2, 12), local(2026, 12, 2, 12, 30))
    with pytest.raises(SlotTaken, match="UID at another address"):        # 409 with CALDAV:no-uid-conflict
        calendar.create("bk-8", slot, "Ours", "")
    assert other.get("bk-8.ics").status_code == 404


def test_update_with_a_stale_etag_after_another_client_changed_the_event_is_slot_taken(calendar, other):
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    etag = calendar.create("bk-2", slot, "Revisión — Ana", "")
    staff = ics("bk-2", "SUMMARY:Moved by staff", "DTSTART:20261202T140000Z", "DTEND:20261202T143000Z")
    assert other.put("bk-2.ics", staff).status_code in (201, 204)   # no precondition: the app just saves
    later = Interval(local(2026, 12, 2, 11), local(2026, 12, 2, 11, 30))
    with pytest.raises(SlotTaken) as taken:
        calendar.update("bk-2", later, "Revisión — Ana", "", etag)
    assert taken.value.slot == later
    kept = other.get("bk-2.ics").text
    assert "SUMMARY:Moved by staff" in kept and "DTSTART:20261202T140000Z" in kept
    assert calendar.busy(*day(2026, 12, 2)) == [Interval(datetime(2026, 12, 2, 14, tzinfo=UTC),
                                                         datetime(2026, 12, 2, 14, 30, tzinfo=UTC))]


def test_update_with_the_current_etag_moves_the_event_and_answers_the_new_etag(calendar, other):
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    first = calendar.create("bk-3", slot, "Revisión", "")
    later = Interval(local(2026, 12, 2, 16), local(2026, 12, 2, 16, 30))
    second = calendar.update("bk-3", later, "Revisión", "moved", first)
    assert second != first and second == other.get("bk-3.ics").headers["ETag"]
    assert calendar.busy(*day(2026, 12, 2)) == [later]
    with pytest.raises(SlotTaken):                                # the old ETag is stale now
        calendar.update("bk-3", slot, "Revisión", "", first)


def test_update_of_an_event_removed_behind_our_back_is_slot_taken_and_writes_nothing(calendar, other):
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    etag = calendar.create("bk-4", slot, "Revisión", "")
    assert other.delete("bk-4.ics").status_code in (200, 204)
    with pytest.raises(SlotTaken):
        calendar.update("bk-4", slot, "Revisión", "", etag)
    assert other.get("bk-4.ics").status_code == 404


def test_update_of_a_booking_made_before_the_calendar_was_connected_creates_its_event(calendar, other):
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    etag = calendar.update("bk-5", slot, "Revisión", "", "")
    assert etag == other.get("bk-5.ics").headers["ETag"]


def test_delete_needs_the_current_etag_and_keeps_a_changed_event(calendar, other):
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    etag = calendar.create("bk-6", slot, "Revisión", "")
    staff = ics("bk-6", "SUMMARY:Staff note", "DTSTART:20261202T150000Z", "DTEND:20261202T153000Z")
    other.put("bk-6.ics", staff)
    with pytest.raises(SlotTaken) as taken:
        calendar.delete("bk-6", etag)
    assert taken.value.slot == Interval(datetime(2026, 12, 2, 15, tzinfo=UTC), datetime(2026, 12, 2, 15, 30,
                                                                                         tzinfo=UTC))
    assert "was not deleted" in str(taken.value) and "Staff note" in other.get("bk-6.ics").text
    calendar.delete("bk-6", other.get("bk-6.ics").headers["ETag"])
    assert other.get("bk-6.ics").status_code == 404
    calendar.delete("bk-6", etag)                                   # already gone: nothing to do
    calendar.delete("never-written", "")


def test_a_server_that_sends_no_etag_with_the_put_is_asked_for_it(tmp_path):
    with radicale_without_put_etags(tmp_path / "radicale") as quiet:
        other = quiet.new_calendar()
        slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
        calendar = CalDavCalendar(other.url, USER, "x")
        assert other.put("probe.ics", ics("probe", "DTSTART:20261203T100000Z")).headers.get("ETag") is None
        etag = calendar.create("bk-1", slot, "Revisión", "")
        assert etag and etag == other.get("bk-1.ics").headers["ETag"]
        assert calendar.update("bk-1", slot, "Revisión", "moved", etag) == other.get("bk-1.ics").headers["ETag"]


def test_an_unreachable_server_is_calendar_unavailable():
    url = f"http://127.0.0.1:{free_port()}/{USER}/citas/"
    calendar = CalDavCalendar(url, USER, "x", timeout=2)
    with pytest.raises(CalendarUnavailable, match=r"could not be reached \(the connection was refused\)") as failed:
        calendar.busy(*day(2026, 12, 2))
    assert url in str(failed.value) and "no times are offered" in str(failed.value)
    with pytest.raises(CalendarUnavailable, match="the host name 'calendar.invalid' could not be found"):
        CalDavCalendar("http://calendar.invalid/dav/citas/", USER, "x", timeout=2).busy(*day(2026, 12, 2))
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    with pytest.raises(CalendarUnavailable, match="could not be reached"):
        calendar.create("bk-1", slot, "x", "")


def test_a_server_that_never_answers_is_calendar_unavailable_after_the_timeout():
    with socket.socket() as silent:                                  # accepts the connection, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/{USER}/citas/"
        started = time.monotonic()
        with pytest.raises(CalendarUnavailable, match=r"could not be reached \(no answer within 1 second\)"):
            CalDavCalendar(url, USER, "x", timeout=1).busy(*day(2026, 12, 2))
        assert time.monotonic() - started < 10


def test_a_wrong_path_is_calendar_unavailable(server, other):
    missing = CalDavCalendar(f"{server.base}/{USER}/no-such-calendar/", USER, "x")
    with pytest.raises(CalendarUnavailable, match=r"There is no calendar at .*404 Not Found"):
        missing.busy(*day(2026, 12, 2))
    account = CalDavCalendar(f"{server.base}/{USER}", USER, "x")       # the account's folder, not a calendar
    with pytest.raises(CalendarUnavailable, match="not a calendar"):
        account.busy(*day(2026, 12, 2))
    with pytest.raises(CalendarUnavailable, match="not a calendar"):
        account.create("bk-1", Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30)), "x", "")


def test_not_an_http_address_is_calendar_unavailable():
    with pytest.raises(CalendarUnavailable, match="not an http"):
        CalDavCalendar("cloud.example.com/calendars/ana", "ana", "x")


def test_check_says_what_the_admin_sees(other):
    slot = Interval(NOW.now() + timedelta(days=1), NOW.now() + timedelta(days=1, minutes=30))
    CalDavCalendar(other.url, USER, "x", clock=NOW).create("bk-9", slot, "Revisión", "")
    said = check(other.url, USER, "x", timezone="Europe/Madrid", clock=NOW)
    assert said.startswith("Connected to the calendar “Citas del taller” at http://127.0.0.1:")
    assert "1 busy time in the next 7 days" in said and "written" in said


READ_ONLY = """[owner]
user: .+
collection: {user}(/.*)?
permissions: RrWw

[reader]
user: reader
collection: staff(/.*)?
permissions: Rr

[root]
user: .+
collection:
permissions: R
"""


@pytest.fixture(scope="module")
def locked(tmp_path_factory):
    """A second Radicale that checks passwords (htpasswd): staff (s3cret) owns the calendars, reader (r3ad) may
    only read them."""
    with radicale(tmp_path_factory.mktemp("radicale-auth"), users={USER: "s3cret", "reader": "r3ad"},
                  rights=READ_ONLY) as running:
        yield running


def test_a_wrong_password_is_calendar_unavailable_and_names_the_variable(locked):
    url = locked.new_calendar().url
    wrong = CalDavCalendar(url, USER, "wrong", password_env="CALDAV_PASSWORD")
    with pytest.raises(CalendarUnavailable, match=r"401 Unauthorized.*password variable \(CALDAV_PASSWORD\)"):
        wrong.busy(*day(2026, 12, 2))
    with pytest.raises(CalendarUnavailable, match="401 Unauthorized"):
        check(url, USER, "", password_env="CALDAV_PASSWORD")
    in_url = url.replace("http://", f"http://{USER}:n0t-it@")       # credentials in the address never shown
    with pytest.raises(CalendarUnavailable, match="401 Unauthorized") as failed:
        CalDavCalendar(in_url, "", "").busy(*day(2026, 12, 2))
    assert "n0t-it" not in str(failed.value) and url in str(failed.value)
    right = CalDavCalendar(url, USER, "s3cret", timezone="Europe/Madrid")
    assert right.busy(*day(2026, 12, 2)) == []
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    assert right.create("bk-1", slot, "Revisión", "")
    assert right.busy(*day(2026, 12, 2)) == [slot]


def test_a_read_only_calendar_is_read_but_never_written(locked):
    staff = locked.new_calendar()
    slot = Interval(local(2026, 12, 2, 10), local(2026, 12, 2, 10, 30))
    assert staff.put("team.ics", ics("team", "DTSTART:20261202T090000Z", "DTEND:20261202T093000Z")).status_code == 201
    reader = CalDavCalendar(staff.url, "reader", "r3ad", timezone="Europe/Madrid")
    assert reader.busy(*day(2026, 12, 2)) == [slot]
    with pytest.raises(CalendarUnavailable, match="can be read but not written with this user"):
        reader.create("bk-1", slot, "Revisión", "")
    assert staff.get("bk-1.ics").status_code == 404
    said = check(staff.url, "reader", "r3ad", clock=NOW)
    assert "can be read (1 busy time in the next 7 days) but this user may not write to it" in said
