"""Slot generation and availability (B1, B2): pure functions, table-driven and with hypothesis properties across
the DST changes of three zones."""
from __future__ import annotations

from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings, strategies as st

from core.booking import slots
from core.booking.model import Interval, Slot
from core.booking.schedule import DEMO_SCHEDULE, Schedule

UTC = timezone.utc
MADRID = ZoneInfo("Europe/Madrid")


def at(day: date, hhmm: str, tz=MADRID) -> datetime:
    hours, minutes = map(int, hhmm.split(":"))
    return datetime.combine(day, time(hours, minutes), tzinfo=tz)


def local_times(found) -> list[str]:
    return [s.start.astimezone(MADRID).strftime("%H:%M") for s in found]


WED = date(2026, 12, 2)
NOW = datetime(2026, 12, 1, 21, 0, tzinfo=UTC)


def test_the_grid_follows_hours_breaks_and_the_buffer():
    assert local_times(slots.day_grid(DEMO_SCHEDULE, WED)) == [
        "09:00", "10:00", "11:00", "12:00", "13:00", "16:00", "17:00", "18:00"]
    assert slots.day_grid(DEMO_SCHEDULE, date(2026, 12, 6)) == []  # Sunday
    assert slots.day_grid(DEMO_SCHEDULE, date(2026, 12, 8)) == []  # a closed holiday


@pytest.mark.parametrize("busy, free_at_10", [
    (("10:10", "10:30"), False),  # the seed's case: starts differ, the intervals overlap
    (("09:30", "10:05"), False),
    (("10:00", "10:45"), False),
    (("10:44", "11:30"), False),
    (("10:45", "11:00"), False),  # touching, but inside the 15-minute buffer
    (("11:00", "11:45"), True),   # touching the buffer's end: free
    (("08:00", "09:45"), True),   # ends exactly where the buffer before 10:00 starts
])
def test_overlap_is_interval_overlap_with_the_buffer(busy, free_at_10):
    blocked = [Interval(at(WED, busy[0]), at(WED, busy[1]))]
    assert ("10:00" in local_times(slots.free(DEMO_SCHEDULE, WED, blocked, NOW))) is free_at_10


def test_touching_intervals_do_not_overlap_without_a_buffer():
    a, b = Interval(at(WED, "10:00"), at(WED, "10:20")), Interval(at(WED, "10:20"), at(WED, "10:40"))
    assert not a.overlaps(b) and not b.overlaps(a)
    assert Interval(at(WED, "10:00"), at(WED, "10:20")).overlaps(Interval(at(WED, "10:10"), at(WED, "10:30")))


def test_past_too_soon_and_beyond_the_horizon_are_never_offered():
    now = at(WED, "09:30").astimezone(UTC)  # notice 120 min: the first offer is 12:00
    assert local_times(slots.free(DEMO_SCHEDULE, WED, [], now))[0] == "12:00"
    assert slots.free(DEMO_SCHEDULE, WED - timedelta(days=1), [], now) == []
    assert slots.free(DEMO_SCHEDULE, WED + timedelta(days=61), [], now) == []
    assert slots.free(DEMO_SCHEDULE, WED + timedelta(days=58), [], now)


def test_modes_day_week_first():
    none = lambda start, end: []  # noqa: E731
    first = slots.find(DEMO_SCHEDULE, "first", None, none, NOW)
    assert len(first.slots) == 5 and first.slots[0].start == at(WED, "09:00")
    week = slots.find(DEMO_SCHEDULE, "week", date(2026, 12, 7), none, NOW)
    days = {s.start.astimezone(MADRID).date() for s in week.slots}
    assert date(2026, 12, 8) not in days and date(2026, 12, 13) not in days and len(days) == 5
    day = slots.find(DEMO_SCHEDULE, "day", WED, lambda s, e: [Interval(at(WED, "09:00"), at(WED, "14:00"))], NOW)
    assert local_times(day.slots) == ["16:00", "17:00", "18:00"]
    shape = day.to_dict("es")
    assert shape["zone_label"] == "hora de Madrid (Europe/Madrid)"
    assert shape["days"][0]["label"] == "miércoles 2 de diciembre"


def test_first_skips_a_full_week_and_reads_busy_time_a_week_at_a_time():
    calls = []

    def busy(start, end):
        calls.append((start, end))
        return [Interval(start, at(date(2026, 12, 10), "00:00"))]  # everything until Thursday the 10th

    found = slots.find(DEMO_SCHEDULE, "first", None, busy, NOW)
    assert found.slots[0].start == at(date(2026, 12, 10), "09:00") and len(calls) == 2


def test_alternatives_are_the_nearest_free_times_of_that_day_in_time_order():
    taken = [Interval(at(WED, "12:00"), at(WED, "12:45"))]
    near = slots.alternatives(DEMO_SCHEDULE, WED, taken, NOW, around=at(WED, "12:00"), limit=3)
    assert local_times(near) == ["10:00", "11:00", "13:00"]  # 16:00 is four hours away, 10:00 two


ZONES = ["Europe/Madrid", "America/Sao_Paulo", "America/New_York"]
#: days around the changes of recent and coming years (Sao Paulo has had none since 2019: its days stay plain)
DST_DAYS = [date(2026, 3, 29), date(2026, 10, 25), date(2026, 3, 8), date(2026, 11, 1), date(2018, 11, 4),
            date(2019, 2, 17), date(2027, 3, 28), date(2027, 10, 31), date(2027, 3, 14), date(2027, 11, 7)]


@settings(max_examples=150, deadline=None)
@given(zone=st.sampled_from(ZONES), day=st.sampled_from(DST_DAYS) | st.dates(date(2018, 1, 1), date(2030, 12, 31)),
       slot=st.sampled_from([15, 20, 30, 45, 60, 90]), buffer=st.sampled_from([0, 5, 10, 15]),
       opens=st.integers(0, 3), span=st.integers(2, 20))
def test_no_slot_is_a_nonexistent_or_duplicated_local_time(zone, day, slot, buffer, opens, span):
    start, end = time(opens), time(min(opens + span, 23), 59 if opens + span >= 23 else 0)
    name = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")[day.weekday()]
    schedule = Schedule.from_dict({"timezone": zone, "slot_minutes": slot, "buffer_minutes": buffer,
                                   "weekly": {name: [[f"{start:%H:%M}", f"{end:%H:%M}"]]}})
    grid = slots.day_grid(schedule, day)
    tz = ZoneInfo(zone)
    locals_ = [s.start.astimezone(tz) for s in grid]
    assert len({t.replace(tzinfo=None) for t in locals_}) == len(locals_)  # no local time twice
    for slot_, local in zip(grid, locals_):
        assert local.date() == day
        # the wall time exists: converting it back gives the same instant (offset from the tz database)
        assert datetime.combine(day, local.time(), tzinfo=tz).astimezone(UTC) == slot_.start
        assert slot_.end - slot_.start == timedelta(minutes=slot)
    for a, b in zip(grid, grid[1:]):
        assert a.end <= b.start  # slots never overlap one another, across a change too


def test_spring_gap_and_autumn_fold_in_madrid():
    schedule = Schedule.from_dict({"timezone": "Europe/Madrid", "weekly": {"sun": [["01:00", "04:00"]]}})
    spring = [s.start.astimezone(MADRID).strftime("%H:%M%z") for s in slots.day_grid(schedule, date(2026, 3, 29))]
    assert spring == ["01:00+0100", "01:30+0100", "03:00+0200", "03:30+0200"]
    autumn = [s.start.astimezone(MADRID).strftime("%H:%M%z") for s in slots.day_grid(schedule, date(2026, 10, 25))]
    assert autumn == ["01:00+0200", "01:30+0200", "02:00+0200", "02:30+0200", "03:00+0100", "03:30+0100"]


def test_the_offset_comes_from_the_database_on_both_sides_of_the_change():
    before, after = date(2027, 3, 27), date(2027, 3, 29)  # Madrid moves to +02:00 on the 28th
    offsets = {s.start.astimezone(MADRID).utcoffset() for s in slots.day_grid(DEMO_SCHEDULE, before)}
    assert offsets == {timedelta(hours=1)}
    offsets = {s.start.astimezone(MADRID).utcoffset() for s in slots.day_grid(DEMO_SCHEDULE, after)}
    assert offsets == {timedelta(hours=2)}
    assert slots.day_grid(DEMO_SCHEDULE, after)[0].start == datetime(2027, 3, 29, 7, 0, tzinfo=UTC)


def test_a_slot_equals_itself_after_a_round_trip_through_storage():
    slot = slots.day_grid(DEMO_SCHEDULE, WED)[0]
    from core.base.clock import iso

    assert Slot.stored(iso(slot.start), iso(slot.end)) == slot
