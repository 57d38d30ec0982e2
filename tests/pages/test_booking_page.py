"""The Booking page (schedule editor, timeline, blocks, bookings, outbox, calendar), driven through Streamlit's
AppTest over the real service (``rt.booking``) on a moved clock: Tuesday 1 December 2026, 09:00 in Madrid."""
from __future__ import annotations

import json
from datetime import date, datetime, time, timezone

import pytest
from streamlit.testing.v1 import AppTest

from core.booking.model import ScheduleError
from core.booking.schedule import DEMO_SCHEDULE, Schedule
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from pages import booking_schedule, booking_timeline, common
from tests.apptest import APP, signed_in
from tests.fakes import MovableClock

PAGE = "pages/booking.py"
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)  # Tue 1 Dec 2026, 09:00 in Madrid
HOURS = [["09:00", "14:00"], ["16:00", "19:00"]]
#: a workshop: weekdays 09:00-14:00 and 16:00-19:00, Saturday mornings, 30-min slots every 40 min, 2 h notice
SHOP = Schedule.from_dict({"timezone": "Europe/Madrid", "slot_minutes": 30, "buffer_minutes": 10,
                           "min_notice_minutes": 120, "horizon_days": 60, "country": "ES",
                           "closed_dates": ["2026-12-08"],
                           "weekly": {"mon": HOURS, "tue": HOURS, "wed": HOURS, "thu": HOURS, "fri": HOURS,
                                      "sat": [["10:00", "14:00"]], "sun": []}})


@pytest.fixture
def clock(runtime, monkeypatch):
    moving = MovableClock(NOW)
    monkeypatch.setattr(runtime.store, "clock", moving)
    return moving


@pytest.fixture
def acme(runtime, clock):
    create_tenant(runtime.store, "acme", "Acme")
    return runtime, local_operator(runtime.store, "acme")


@pytest.fixture
def open_shop(acme):
    """acme with the workshop's schedule (SHOP)."""
    rt, ctx = acme
    rt.booking.save_schedule(ctx, SHOP)
    return rt, ctx


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(store, role: str = "admin", tab: str | None = None) -> AppTest:
    at = signed_in(store, "acme", role)
    ok(at.run())
    at.switch_page(PAGE)
    if tab:
        at.query_params["tab"] = tab
    return ok(at.run())


def reopen(at: AppTest, tab: str) -> AppTest:
    """The page opened again on another tab by the same signed-in user (AppTest cannot click a tab)."""
    fresh = AppTest.from_file(str(APP), default_timeout=60)
    for key in (common.SESSION_KEY, common.TENANT_KEY):
        fresh.session_state[key] = at.session_state[key]
    ok(fresh.run())
    fresh.switch_page(PAGE)
    fresh.query_params["tab"] = tab
    return ok(fresh.run())


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error", "title")
                     for e in getattr(at, kind)).replace("\\", "")


def book(rt, ctx, start: str, name: str = "Ana Pérez", email: str = "ana@example.com"):
    result = rt.booking.create(ctx, {"name": name, "email": email, "phone": "+34 612 345 678", "start": start},
                               channel="web")
    assert result.ok, result.message
    return result.booking


def chart(at: AppTest) -> dict:
    [element] = at.get("plotly_chart")
    return json.loads(element.proto.spec)


def traces(at: AppTest) -> dict[str, list]:
    """Each trace of the timeline: its name -> the rows (days) its bars are on."""
    return {trace["name"]: list(trace.get("y") or []) for trace in chart(at)["data"]}


# -- the editor's text <-> the schedule --------------------------------------------------------------------------
def test_ranges_are_read_as_people_write_them():
    assert booking_schedule.parse_ranges("mon", "09:00-14:00, 16:00 – 19:00") == [["09:00", "14:00"],
                                                                                 ["16:00", "19:00"]]
    assert booking_schedule.parse_ranges("sun", "  ") == []
    with pytest.raises(ScheduleError, match=r"^weekly\.tue\[1\]: '16h' is not a range"):
        booking_schedule.parse_ranges("tue", "09:00-14:00, 16h")
    assert booking_schedule.ranges_text([["09:00", "14:00"], ["16:00", "19:00"]]) == "09:00-14:00, 16:00-19:00"


def test_a_refused_field_is_named_with_the_forms_label():
    assert booking_schedule.field_label("weekly.tue[1]: 15:00-14:00 ends before it starts") == "Tuesday hours, range 2"
    assert booking_schedule.field_label("weekly.sat: the ranges overlap at 11:00") == "Saturday hours"
    assert booking_schedule.field_label("closed_dates: '2026-13-01' is not a date") == "Closed dates"
    assert booking_schedule.field_label("slot_minutes: a whole number from 5 to 480") == "Slot length (minutes)"
    assert booking_schedule.field_label("country: the two-letter ISO code") == "Country for phone numbers"


def test_the_form_round_trips_the_demo_schedule():
    data = DEMO_SCHEDULE.to_dict()
    values = {"timezone": data["timezone"], "country": "es", "closed_dates": "\n".join(data["closed_dates"]),
              **{day: booking_schedule.ranges_text(ranges) for day, ranges in data["weekly"].items()},
              **{name: data[name] for name in booking_schedule.NUMBERS}}
    assert Schedule.from_dict(booking_schedule.form_data(values)) == DEMO_SCHEDULE


# -- the page ----------------------------------------------------------------------------------------------------
def test_without_a_schedule_booking_is_off_and_the_editor_starts_from_a_workshop(acme):
    rt, _ = acme
    at = open_page(rt.store, "editor")
    assert at.title[0].value == "Booking"
    assert "Booking is off:" in texts(at) and not at.get("plotly_chart")
    at = open_page(rt.store, "editor", tab="Schedule")
    assert at.selectbox(key=next(k for k in keys(at) if k.endswith("_timezone"))).value == "Europe/Madrid"
    demo = DEMO_SCHEDULE.to_dict()["weekly"]
    assert text_input(at, "mon").value == booking_schedule.ranges_text(demo["mon"])
    assert text_input(at, "sun").value == ""
    assert "this tenant has no schedule" in texts(at)


def keys(at: AppTest) -> list[str]:
    return [str(w.key) for kind in ("text_input", "selectbox", "number_input", "text_area")
            for w in getattr(at, kind) if w.key]


def text_input(at: AppTest, name: str):
    [key] = [k for k in keys(at) if k.startswith("booking_schedule_") and k.endswith(f"_{name}")]
    return next(w for kind in ("text_input", "text_area", "number_input", "selectbox") for w in getattr(at, kind)
                if w.key == key)


def save(at: AppTest) -> AppTest:
    [button] = [b for b in at.button if b.label == "Save schedule"]
    return ok(button.click().run())


def test_saving_the_schedule_turns_booking_on(acme):
    rt, ctx = acme
    at = open_page(rt.store, "editor", tab="Schedule")
    text_input(at, "timezone").set_value("America/Sao_Paulo")
    text_input(at, "sat").set_value("9:00-13:00")
    text_input(at, "wed").set_value("08:00-12:00 , 13:00-17:30")
    text_input(at, "slot_minutes").set_value(45)
    text_input(at, "country").set_value("br")
    text_input(at, "closed").set_value("2026-12-25\n2027-01-01")
    at = save(at)
    saved = rt.booking.schedule(ctx)
    assert saved.timezone == "America/Sao_Paulo" and saved.slot_minutes == 45 and saved.country == "BR"
    assert saved.weekly[5] == ((time(9), time(13)),) and saved.weekly[2] == ((time(8), time(12)),
                                                                             (time(13), time(17, 30)))
    assert saved.closed_dates == frozenset({date(2026, 12, 25), date(2027, 1, 1)})
    assert "Schedule saved: 6 day(s) a week open, 45-minute slots, times in America/Sao_Paulo" in texts(at)
    assert text_input(at, "sat").value == "09:00-13:00"  # the form now shows what was stored
    stored = rt.store.query("SELECT updated_by FROM booking_schedules")
    assert stored == [{"updated_by": "editor@acme.test"}]


@pytest.mark.parametrize("field, value, named, words", [
    ("tue", "09:00-14:00, 15:00-14:00", "Tuesday hours, range 2", "ends before it starts"),
    ("fri", "nine to five", "Friday hours, range 1", "is not a range"),
    ("mon", "09:00-14:00, 13:00-15:00", "Monday hours", "the ranges overlap at 13:00"),
    ("thu", "09:00-25:00", "Thursday hours, range 1", "is not a time"),
    ("closed", "2026-12-25\n25/12/2026", "Closed dates", "'25/12/2026' is not a date"),
    ("country", "E1", "Country for phone numbers", "two-letter ISO code"),
])
def test_a_refused_field_is_named_and_nothing_is_saved(open_shop, field, value, named, words):
    rt, ctx = open_shop
    at = open_page(rt.store, "editor", tab="Schedule")
    text_input(at, "slot_minutes").set_value(20)  # a valid change in the same form: not saved either
    text_input(at, field).set_value(value)
    at = save(at)
    [error] = at.error
    assert error.value.startswith(f"**Not saved — {named}:**") and words in error.value.replace("\\", "")
    assert "Nothing was changed" in error.value
    assert rt.booking.schedule(ctx) == SHOP
    assert text_input(at, field).value == value  # what was typed stays, to be fixed


def test_every_day_closed_is_refused(open_shop):
    rt, ctx = open_shop
    at = open_page(rt.store, "admin", tab="Schedule")
    for day in ("mon", "tue", "wed", "thu", "fri", "sat"):
        text_input(at, day).set_value("")
    at = save(at)
    assert at.error[0].value.startswith("**Not saved — Weekly hours:**")
    assert rt.booking.schedule(ctx) == SHOP


def test_qa_does_not_manage_booking(acme):
    rt, _ = acme
    at = signed_in(rt.store, "acme", "qa")
    ok(at.run())
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(PAGE)


# -- the timeline ------------------------------------------------------------------------------------------------
def test_pieces_are_drawn_at_local_wall_times_across_the_spring_change():
    """Europe/Madrid moves from +01:00 to +02:00 on Sunday 28 March 2027: 10:00 local is 09:00 UTC the day before
    and 08:00 UTC that day; a whole-day block of the change day (23 hours) still covers 00:00-24:00."""
    rows = [{"kind": "booking", "start_utc": "2027-03-27T09:00:00+00:00", "end_utc": "2027-03-27T09:30:00+00:00"},
            {"kind": "booking", "start_utc": "2027-03-28T08:00:00+00:00", "end_utc": "2027-03-28T08:30:00+00:00"},
            {"kind": "block", "start_utc": "2027-03-27T23:00:00+00:00", "end_utc": "2027-03-28T22:00:00+00:00"}]
    drawn = booking_timeline.pieces(rows, SHOP, date(2027, 3, 27), days=2)
    assert [(p["day"].isoformat(), p["local"]) for p in drawn] == [
        ("2027-03-27", "10:00–10:30"), ("2027-03-28", "10:00–10:30"), ("2027-03-28", "00:00–24:00")]
    block = drawn[-1]
    assert (block["x0"].time(), (block["x1"] - block["x0"]).total_seconds()) == (time(0), 24 * 3600)


def test_cancelled_bookings_and_ended_holds_are_not_drawn():
    rows = [{"kind": "booking", "status": "confirmed"}, {"kind": "booking", "status": "cancelled"},
            {"kind": "hold", "status": "held"}, {"kind": "hold", "status": "expired"},
            {"kind": "hold", "status": "released"}, {"kind": "hold", "status": "confirmed"},
            {"kind": "block", "status": "block"}]
    assert [(r["kind"], r["status"]) for r in booking_timeline.drawn_rows(rows)] == [
        ("booking", "confirmed"), ("hold", "held"), ("block", "block")]


def test_the_legend_names_every_kind_even_when_the_week_has_none():
    fig = booking_timeline.figure([], SHOP, NOW)
    names = [trace.name for trace in fig.data]
    assert names == ["Opening hours", "Booking", "Hold (a visitor is choosing)", "Block (staff)", "Now"]
    low, _ = fig.layout.xaxis.range
    assert all(trace.base[0] < low for trace in fig.data[1:4])  # their placeholder bars lie outside the hours shown
    night = booking_timeline.figure([], SHOP, NOW.replace(hour=22))  # 23:00 in Madrid: no "now" on the hours shown
    assert [trace.name for trace in night.data][-1] == "Block (staff)"


def test_the_timeline_shows_bookings_live_holds_and_blocks_of_the_coming_week(open_shop, clock):
    rt, ctx = open_shop
    kept = book(rt, ctx, "2026-12-02T10:20")  # Wednesday, Madrid time
    gone = book(rt, ctx, "2026-12-02T12:20", name="Luis", email="luis@example.com")
    rt.booking.cancel(ctx, gone["code"])
    rt.booking.place_hold(ctx, "2026-12-03T09:00", conversation_id="c-old")
    clock.advance(minutes=6)  # that hold expired: its slot is free, it is not drawn
    rt.booking.place_hold(ctx, "2026-12-03T11:00", conversation_id="c-new")
    rt.booking.add_block(ctx, datetime(2026, 12, 4, 15, tzinfo=timezone.utc), datetime(2026, 12, 4, 16,
                                                                                       tzinfo=timezone.utc),
                         reason="Formación")
    at = open_page(rt.store, "editor")
    drawn = traces(at)
    assert drawn["Booking"] == ["Wed 02 Dec"]
    assert drawn["Hold (a visitor is choosing)"] == ["Thu 03 Dec"]
    assert drawn["Block (staff)"] == ["Fri 04 Dec"]
    assert drawn["Opening hours"].count("Tue 01 Dec · today") == 2
    spec = chart(at)
    hours = next(t for t in spec["data"] if t["name"] == "Opening hours")
    closed = [w for day, w in zip(hours["y"], hours["x"]) if day == "Sun 06 Dec · closed"]
    assert closed == [0]  # a closed day keeps its row (a bar of no width) and shows no hours
    booking_bar = next(t for t in spec["data"] if t["name"] == "Booking")
    assert booking_bar["customdata"] == [["10:20–10:50", f"{kept['code']} Ana Pérez", "confirmed"]]
    assert spec["layout"]["yaxis"]["categoryarray"][0] == "Tue 01 Dec · today"
    assert spec["layout"]["yaxis"]["categoryarray"][-2:] == ["Sun 06 Dec · closed", "Mon 07 Dec"]
    assert "Next 7 days: 1 booking(s), 1 live hold(s), 1 block(s). Times in Europe/Madrid" in texts(at)
    assert "Busy in the connected calendar" not in drawn  # the embedded calendar adds no busy time of its own
    free = next(m.value for m in at.markdown if m.value.startswith("**Next free times**"))
    assert "offered): Tuesday 1 December: 11:40, 12:20" in free  # 09:06 now + 120 min notice


def test_a_block_added_on_the_page_counts_at_once(open_shop):
    rt, ctx = open_shop
    before = rt.booking.availability(ctx, mode="day", day="2026-12-04", lang="en")
    assert "16:00" in [s.local(SHOP.zone).strftime("%H:%M") for s in before.slots]
    at = open_page(rt.store, "editor")
    at.date_input(key="booking_block_day").set_value(date(2026, 12, 4))
    at.time_input(key="booking_block_from").set_value(time(16))
    at.time_input(key="booking_block_to").set_value(time(17))
    at.text_input(key="booking_block_reason").set_value("Formación")
    at = ok(next(b for b in at.button if b.label == "Add the block").click().run())
    assert "Blocked 2026-12-04 16:00–17:00 (Europe/Madrid): no customer is offered that time." in texts(at)
    [block] = rt.booking.blocks(ctx, NOW, datetime(2026, 12, 10, tzinfo=timezone.utc))
    assert (block["start_utc"], block["end_utc"], block["reason"], block["created_by"]) == (
        "2026-12-04T15:00:00+00:00", "2026-12-04T16:00:00+00:00", "Formación", "editor@acme.test")
    after = rt.booking.availability(ctx, mode="day", day="2026-12-04", lang="en")
    assert not {"16:00", "16:40"} & {s.local(SHOP.zone).strftime("%H:%M") for s in after.slots}
    assert traces(at)["Block (staff)"] == ["Fri 04 Dec"]
    assert list(next(d.value for d in at.dataframe if "Reason" in d.value.columns)["Reason"]) == ["Formación"]
    at = ok(at.button(key="booking_block_remove").click().run())
    assert "Removed the block Fri 2026-12-04 16:00 – 17:00 · Formación" in texts(at)
    assert rt.booking.blocks(ctx, NOW, datetime(2026, 12, 10, tzinfo=timezone.utc)) == []


@pytest.mark.parametrize("day, start, end, said", [
    (date(2027, 3, 28), time(2, 30), time(4), "From: 02:30 does not exist on 2027-03-28 in Europe/Madrid"),
    (date(2026, 12, 4), time(17), time(16), "To: 16:00 is not after 17:00"),
])
def test_a_block_that_cannot_be_is_refused_by_name(open_shop, day, start, end, said):
    rt, ctx = open_shop
    at = open_page(rt.store, "admin")
    at.date_input(key="booking_block_day").set_value(day)
    at.time_input(key="booking_block_from").set_value(start)
    at.time_input(key="booking_block_to").set_value(end)
    at = ok(next(b for b in at.button if b.label == "Add the block").click().run())
    [error] = at.error
    assert error.value.startswith("**Block not added:**") and said in error.value.replace("\\", "")
    assert rt.booking.blocks(ctx, NOW, datetime(2027, 12, 1, tzinfo=timezone.utc)) == []


# -- bookings ----------------------------------------------------------------------------------------------------
def test_the_bookings_table_lists_this_tenants_bookings_and_cancels_one(open_shop, runtime):
    rt, ctx = open_shop
    first = book(rt, ctx, "2026-12-02T10:20")
    second = book(rt, ctx, "2026-12-03T16:40", name="Luis Gómez", email="luis@example.com")
    create_tenant(rt.store, "globex", "Globex")
    other = local_operator(rt.store, "globex")
    rt.booking.save_schedule(other, SHOP)
    foreign = book(rt, other, "2026-12-02T10:20", name="Otra Persona", email="otra@example.com")
    at = open_page(rt.store, "editor", tab="Bookings")
    table = next(d.value for d in at.dataframe if "Code" in d.value.columns)
    assert list(table.columns) == ["Code", "When", "Name", "E-mail", "Phone", "Channel", "Status"]
    assert list(table["Code"]) == [first["code"], second["code"]] and foreign["code"] not in list(table["Code"])
    assert list(table["When"]) == ["Wed 2026-12-02 10:20–10:50", "Thu 2026-12-03 16:40–17:10"]
    assert list(table["Phone"]) == ["+34612345678"] * 2 and list(table["Status"]) == ["confirmed"] * 2
    at.selectbox(key="booking_cancel_pick").set_value(second["id"])
    at = ok(at.button(key="booking_cancel").click().run())
    assert f"Cancelled booking `{second['code']}`" in texts(at)
    assert rt.booking.booking(ctx, second["code"])["status"] == "cancelled"
    assert rt.booking.booking(other, foreign["code"])["status"] == "confirmed"
    table = next(d.value for d in at.dataframe if "Code" in d.value.columns)
    assert list(table["Code"]) == [first["code"]]
    at.segmented_control(key="booking_list_filter").set_value("Cancelled").run()
    table = next(d.value for d in at.dataframe if "Code" in d.value.columns)
    assert list(table["Code"]) == [second["code"]] and list(table["Status"]) == ["cancelled"]


# -- the outbox --------------------------------------------------------------------------------------------------
@pytest.fixture
def refusing_smtp(environ):
    """A real SMTP server (aiosmtpd) that refuses every message until the test lets it accept; the admin app's
    settings point at it (before the runtime opens)."""
    from tests.booking.smtp_server import Inbox, smtp_server

    inbox = Inbox(refuse=True)
    with smtp_server(inbox) as port:
        environ.update({"COBERTURA_SMTP_HOST": "127.0.0.1", "COBERTURA_SMTP_PORT": str(port),
                        "COBERTURA_SMTP_SECURITY": "none", "COBERTURA_SMTP_FROM": "citas@acme.test"})
        yield inbox


def test_without_smtp_the_messages_wait_and_the_page_says_what_to_set(open_shop):
    rt, ctx = open_shop
    book(rt, ctx, "2026-12-02T10:20")
    at = open_page(rt.store, "editor", tab="Outbox")
    assert "No e-mail is sent yet." in texts(at) and "COBERTURA_SMTP_HOST" in texts(at)
    table = next(d.value for d in at.dataframe if "Subject" in d.value.columns)
    assert list(table["Status"]) == ["pending"] and list(table["To"]) == ["ana@example.com"]
    assert "SMTP is not configured" in table["Last error"][0]
    assert at.button(key="booking_outbox_send").disabled and not at.error


def test_a_failed_confirmation_is_shown_in_red_and_retried(refusing_smtp, open_shop, clock):
    rt, ctx = open_shop
    booked = book(rt, ctx, "2026-12-02T10:20")
    for _ in range(5):  # refused at booking time, then at every retry until the outbox gives up
        if rt.booking.outbox.failures(ctx):
            break
        clock.advance(minutes=121)
        rt.booking.outbox.deliver_due(ctx)
    [failed] = rt.booking.outbox.failures(ctx)
    assert refusing_smtp.attempts == 5
    at = open_page(rt.store, "editor", tab="Outbox")
    assert at.error[0].value.startswith("**1 confirmation e-mail(s) could not be sent.**")  # above the tabs
    assert "1 message(s) could not be delivered" in texts(at) and "554" in texts(at)
    [element] = [d for d in at.dataframe if "Subject" in d.value.columns]
    assert list(element.value["Status"]) == ["failed"] and list(element.value["Attempts"]) == [5]
    styles = json.dumps(element.proto.arrow_data.styler.styles if element.proto.arrow_data.HasField("styler")
                        else "")
    assert "#fde2e1" in styles  # the failed row is red
    refusing_smtp.refuse = False
    at = ok(at.button(key=f"booking_outbox_retry_{failed['id']}").click().run())
    assert "Sent the message to `ana@example.com`." in texts(at)
    [message] = refusing_smtp.messages
    assert booked["code"] in message.get_body(("plain",)).get_content()
    assert not rt.booking.outbox.failures(ctx) and not [b for b in at.button if str(b.key).startswith(
        "booking_outbox_retry_")]


# -- the calendar connection -------------------------------------------------------------------------------------
def caldav_form(at: AppTest, url: str, user: str = "staff", env: str = "") -> AppTest:
    at.text_input(key="booking_caldav_url").set_value(url)
    at.text_input(key="booking_caldav_user").set_value(user)
    at.text_input(key="booking_caldav_env").set_value(env)
    return at


def press(at: AppTest, label: str) -> AppTest:
    return ok(next(b for b in at.button if b.label == label).click().run())


@pytest.mark.parametrize("url, env, named", [
    ("cloud.example.com/dav", "", "Calendar URL"),
    ("https://cloud.example.com/dav/calendars/ana/citas/", "my password", "Password variable"),
])
def test_a_bad_connection_is_refused_by_name_and_nothing_is_saved(open_shop, url, env, named):
    rt, ctx = open_shop
    at = open_page(rt.store, "admin", tab="Calendar")
    assert "Embedded calendar" in texts(at)
    at = press(caldav_form(at, url, env=env), "Save the connection")
    assert at.error[0].value.startswith(f"**Not saved — {named}:**")
    assert rt.booking.connection(ctx) is None


def test_test_connection_names_an_unset_password_variable(open_shop, monkeypatch):
    rt, _ = open_shop
    monkeypatch.delenv("COBERTURA_TEST_CALDAV_UNSET", raising=False)
    at = open_page(rt.store, "admin", tab="Calendar")
    at = press(caldav_form(at, "https://cloud.example.com/dav/calendars/ana/citas/", env="COBERTURA_TEST_CALDAV_UNSET"),
               "Test connection")
    assert at.error[0].value.startswith("**Password variable:** `COBERTURA_TEST_CALDAV_UNSET` is not set")


def test_a_real_caldav_calendar_is_tested_connected_read_and_disconnected(open_shop, tmp_path, monkeypatch):
    """Against a real Radicale: Test connection reads it, Save connects it, its events are busy time (the next free
    times skip them), Disconnect goes back to the embedded calendar."""
    from tests.booking.radicale_server import radicale

    rt, ctx = open_shop
    monkeypatch.setenv("COBERTURA_TEST_CALDAV_PASSWORD", "any password")
    with radicale(tmp_path / "radicale") as server:
        calendar = server.new_calendar("Citas")
        event = ("BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\nBEGIN:VEVENT\r\nUID:staff-1\r\n"
                 "DTSTAMP:20261201T080000Z\r\nDTSTART:20261201T100000Z\r\nDTEND:20261201T130000Z\r\n"
                 "SUMMARY:Dentist\r\nEND:VEVENT\r\nEND:VCALENDAR\r\n")
        assert calendar.put("staff-1.ics", event).status_code in (201, 204)
        at = open_page(rt.store, "admin", tab="Calendar")
        caldav_form(at, calendar.url, env="COBERTURA_TEST_CALDAV_PASSWORD")
        at = press(at, "Test connection")
        [works] = at.success
        assert works.value.startswith("**Connection works:**") and "Citas" in works.value
        assert "1 busy time in the next 7 days" in works.value and rt.booking.connection(ctx) is None
        at = press(at, "Save the connection")
        assert rt.booking.connection(ctx)["url"] == calendar.url
        assert "CalDAV calendar connected:" in texts(at) and "COBERTURA_TEST_CALDAV_PASSWORD" in texts(at)
        at = reopen(at, "Timeline")
        free = next(m.value for m in at.markdown if m.value.startswith("**Next free times**"))
        assert "offered): Tuesday 1 December: 16:00" in free  # 11:00-14:00 Madrid is the staff's dentist
        assert traces(at)["Busy in the connected calendar"] == ["Tue 01 Dec · today"]
        dentist = next(t for t in chart(at)["data"] if t["name"] == "Busy in the connected calendar")
        assert dentist["customdata"] == [["11:00–14:00", "busy in the connected calendar", "busy"]]
        assert "1 busy time(s) in the connected calendar" in texts(at)
        at = reopen(at, "Calendar")
        at = ok(at.button(key="booking_caldav_disconnect").click().run())
        assert rt.booking.connection(ctx) is None and "Embedded calendar" in texts(at)
