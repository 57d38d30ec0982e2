"""The one schedule (B1): stored exactly as given or refused naming the field."""
from __future__ import annotations

import pytest

from core.booking.model import ScheduleError
from core.booking.schedule import DEMO_SCHEDULE, Schedule

BASE = {"timezone": "Europe/Madrid", "weekly": {"mon": [["09:00", "13:00"], ["15:00", "19:00"]]}}


def test_round_trip_is_exact():
    assert Schedule.from_dict(DEMO_SCHEDULE.to_dict()) == DEMO_SCHEDULE
    data = {**BASE, "slot_minutes": 20, "buffer_minutes": 5, "closed_dates": ["2026-12-25"], "country": "pt"}
    again = Schedule.from_dict(data).to_dict()
    assert again["weekly"]["mon"] == [["09:00", "13:00"], ["15:00", "19:00"]] and again["country"] == "PT"
    assert again["closed_dates"] == ["2026-12-25"] and again["weekly"]["tue"] == []


@pytest.mark.parametrize("change, named", [
    ({"timezone": "Mars/Olympus"}, "timezone"),
    ({"timezone": "../etc/passwd"}, "timezone"),
    ({"weekly": {"mon": [["13:00", "09:00"]]}}, "weekly.mon[0]"),
    ({"weekly": {"mon": [["09:00", "12:00"], ["11:00", "14:00"]]}}, "weekly.mon"),
    ({"weekly": {"mon": [["9h", "12:00"]]}}, "weekly.mon[0]"),
    ({"weekly": {"lunes": [["09:00", "12:00"]]}}, "weekly.lunes"),
    ({"weekly": [["09:00", "12:00"]]}, "weekly"),
    ({"weekly": {"mon": []}}, "weekly"),
    ({"slot_minutes": 0}, "slot_minutes"),
    ({"slot_minutes": "30"}, "slot_minutes"),
    ({"buffer_minutes": True}, "buffer_minutes"),
    ({"horizon_days": 5000}, "horizon_days"),
    ({"closed_dates": ["25/12/2026"]}, "closed_dates"),
    ({"country": "Spain"}, "country"),
    ({"opening": "9-5"}, "opening"),
])
def test_a_bad_field_is_refused_by_name(change, named):
    with pytest.raises(ScheduleError) as caught:
        Schedule.from_dict({**BASE, **change})
    assert str(caught.value).startswith(named)


def test_closed_dates_close_the_day():
    schedule = Schedule.from_dict({**BASE, "closed_dates": ["2026-12-07"]})
    from datetime import date

    assert schedule.ranges(date(2026, 12, 7)) == () and schedule.ranges(date(2026, 12, 14))


def test_saved_schedule_is_per_tenant(brt, shop, rival):
    other = Schedule.from_dict({**BASE, "timezone": "America/Sao_Paulo"})
    brt.booking.save_schedule(rival, other)
    assert brt.booking.schedule(shop) == DEMO_SCHEDULE and brt.booking.schedule(rival) == other
    brt.booking.remove_schedule(rival)
    assert brt.booking.schedule(rival) is None and brt.booking.schedule(shop) == DEMO_SCHEDULE
