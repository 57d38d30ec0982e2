"""rt.booking end to end on a real store (B3, B4): creates from model input, the re-check, alternatives, the past
date message, holds that never leak, staff blocks, tenants apart."""
from __future__ import annotations

import json
from datetime import date, datetime, time, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from core.booking.model import BookingNotFound, HoldNotFound, SlotTaken

MADRID = ZoneInfo("Europe/Madrid")
WED = date(2026, 12, 2)


def local(hhmm: str, day: date = WED) -> str:
    return f"{day.isoformat()}T{hhmm}"


def person(start: str, **extra) -> dict:
    return {"name": "Ana Pérez", "email": "ana@example.com", "phone": "+34 612 345 678", "start": start, **extra}


def times(result) -> list[str]:
    return [s.start.astimezone(MADRID).strftime("%H:%M") for s in result.alternatives]


def test_a_create_books_and_a_retry_with_its_key_returns_the_first(brt, shop):
    first = brt.booking.create(shop, person(local("10:00")), idempotency_key="call-1")
    assert first.ok and first.booking["start_utc"] == "2026-12-02T09:00:00+00:00"
    assert first.booking["phone"] == "+34612345678" and first.booking["code"].isalnum()
    again = brt.booking.create(shop, {"arguments": json.dumps(person(local("10:00")))}, idempotency_key="call-1")
    assert again.ok and again.repeated and again.booking["id"] == first.booking["id"]
    other = brt.booking.create(shop, person(local("11:00"), email="key2@example.com"), idempotency_key="call-1")
    assert other.status == "invalid" and "already used for another booking" in other.message and not other.ok
    assert len(brt.booking.bookings(shop)) == 1
    assert "10:00" in first.message and "Europe/Madrid" in first.message and first.booking["code"] in first.message


@pytest.mark.parametrize("raw", [
    {"arguments": json.dumps({"nombre": "Ana", "correo": "ana@example.com", "fecha": "2026-12-02", "hora": "10:00",
                              "telefono": "sin teléfono"})},
    json.dumps({"input": {"booking": {"name": "Ana", "email": "ana@example.com", "start": "2026-12-02T10:00"}}}),
    {"data": json.dumps(json.dumps({"name": "Ana", "email": "ana@example.com", "date": "2026-12-02",
                                    "time": "10:00", "phone": "undefined", "notes": "null"}))},
    [{"name": "Ana", "email": "ana@example.com", "start": "2026-12-02T09:00:00Z", "phone": "-"}],
])
def test_the_shapes_models_send_are_unwrapped_and_booked(brt, shop, raw):
    result = brt.booking.create(shop, raw)
    assert result.ok, result.message
    assert result.booking["start_utc"] == "2026-12-02T09:00:00+00:00"
    assert result.booking["phone"] == "" and result.booking["notes"] == ""


def test_missing_fields_are_listed_by_name_and_nothing_is_written(brt, shop):
    result = brt.booking.create(shop, {"name": "undefined", "email": "null", "start": local("10:00")})
    assert result.status == "missing" and set(result.missing) == {"name", "email"}
    assert "name" in result.message and "email" in result.message
    assert brt.booking.bookings(shop) == []


def test_a_past_date_states_today_in_the_business_zone(brt, shop, clock):
    result = brt.booking.create(shop, person("2026-11-28T10:00"))
    assert result.status == "past" and "2026-11-28" in result.message
    assert "2026-12-01" in result.message and "Europe/Madrid" in result.message and "new date" in result.message
    clock.moment = datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc)  # 00:30 on the 2nd in Madrid
    result = brt.booking.create(shop, person("2026-12-01T18:00"))
    assert result.status == "past" and "2026-12-02" in result.message


def test_a_taken_time_answers_with_up_to_five_free_times_of_that_day(brt, shop):
    assert brt.booking.create(shop, person(local("10:00"))).ok
    clash = brt.booking.create(shop, person(local("10:00"), email="bea@example.com"))
    assert clash.status == "taken" and len(clash.alternatives) == 5
    assert times(clash) == ["09:00", "11:00", "12:00", "13:00", "16:00"]
    assert all(s.start.astimezone(MADRID).date() == WED for s in clash.alternatives)
    assert "no longer free" in clash.message and "11:00" in clash.message


def test_a_time_the_schedule_does_not_have_or_too_soon_is_refused_with_times(brt, shop, clock):
    odd = brt.booking.create(shop, person(local("10:20")))
    assert odd.status == "not_a_slot" and times(odd) == ["09:00", "10:00", "11:00", "12:00", "13:00"]
    clock.moment = datetime.combine(WED, time(9, 30), tzinfo=MADRID).astimezone(timezone.utc)
    soon = brt.booking.create(shop, person(local("10:00")))
    assert soon.status == "not_a_slot" and "notice" in soon.message and times(soon)[0] == "12:00"


def test_a_staff_block_counts_at_once(brt, shop):
    start = datetime.combine(WED, time(9, 30), tzinfo=MADRID)
    block = brt.booking.add_block(shop, start, start + timedelta(hours=2), "revisión de herramientas")
    result = brt.booking.create(shop, person(local("10:00")))
    assert result.status == "taken"
    free = [s.start.astimezone(MADRID).strftime("%H:%M") for s in brt.booking.availability(shop, "day", WED).slots]
    assert free[:2] == ["12:00", "13:00"]
    brt.booking.remove_block(shop, block["id"])
    assert brt.booking.create(shop, person(local("10:00"))).ok


def test_one_slot_two_visitors_one_hold_and_expiry_frees_it_on_time(brt, shop, clock):
    hold = brt.booking.place_hold(shop, local("10:00"), "visitor-a")
    with pytest.raises(SlotTaken) as caught:
        brt.booking.place_hold(shop, local("10:00"), "visitor-b")
    assert caught.value.alternatives and "10:00" not in [
        s.start.astimezone(MADRID).strftime("%H:%M") for s in caught.value.alternatives]
    assert "10:00" not in [s.start.astimezone(MADRID).strftime("%H:%M")
                           for s in brt.booking.availability(shop, "day", WED).slots]
    clock.advance(minutes=4, seconds=59)
    with pytest.raises(SlotTaken):
        brt.booking.place_hold(shop, local("10:00"), "visitor-b")
    clock.advance(seconds=1)  # exactly at expires_at: free, no sweeper ran
    assert brt.booking.hold(shop, hold["id"])["status"] == "expired"
    second = brt.booking.place_hold(shop, local("10:00"), "visitor-b")
    assert second["status"] == "held"


def test_confirming_a_hold_rechecks_and_a_released_one_frees_the_slot(brt, shop, clock):
    hold = brt.booking.place_hold(shop, local("10:00"), "visitor-a")
    booked = brt.booking.confirm_hold(shop, hold["id"], {"name": "Ana", "email": "ana@example.com"})
    assert booked.ok and brt.booking.hold(shop, hold["id"])["status"] == "confirmed"
    with pytest.raises(HoldNotFound):
        brt.booking.confirm_hold(shop, hold["id"], {"name": "Ana", "email": "ana@example.com"})
    other = brt.booking.place_hold(shop, local("11:00"), "visitor-b")
    brt.booking.release_hold(shop, other["id"])
    assert brt.booking.place_hold(shop, local("11:00"), "visitor-c")["status"] == "held"
    late = brt.booking.place_hold(shop, local("12:00"), "visitor-d")
    clock.advance(minutes=6)
    brt.booking.create(shop, person(local("12:00"), email="eve@example.com"))  # someone else took it meanwhile
    taken = brt.booking.confirm_hold(shop, late["id"], {"name": "Dan", "email": "dan@example.com"})
    assert taken.status == "taken" and taken.alternatives


def test_a_new_hold_of_the_same_visitor_releases_the_first(brt, shop):
    first = brt.booking.place_hold(shop, local("10:00"), "visitor-a")
    brt.booking.place_hold(shop, local("11:00"), "visitor-a")
    assert brt.booking.hold(shop, first["id"])["status"] == "released"
    assert brt.booking.place_hold(shop, local("10:00"), "visitor-b")["status"] == "held"


def test_a_foreign_hold_or_booking_answers_like_a_missing_one(brt, shop, rival):
    hold = brt.booking.place_hold(shop, local("10:00"), "visitor-a")
    booking = brt.booking.create(shop, person(local("11:00"))).booking
    errors = []
    for call in (lambda: brt.booking.hold(rival, hold["id"]), lambda: brt.booking.hold(rival, "hold_nope")):
        with pytest.raises(HoldNotFound) as caught:
            call()
        errors.append(str(caught.value))
    assert errors[0] == errors[1]
    for key in (booking["code"], booking["id"]):
        with pytest.raises(BookingNotFound):
            brt.booking.booking(rival, key)
    assert brt.booking.create(rival, person(local("10:00"))).ok  # the rival's calendar is its own


def test_phone_books_only_a_slot_it_offered_in_that_conversation(brt, shop):
    offered = brt.booking.availability(shop, "first").slots[:3]
    brt.booking.record_offer(shop, "call-7", offered)
    wrong = brt.booking.create(shop, person(local("18:00")), channel="phone", conversation_id="call-7",
                               offered_only=True)
    assert wrong.status == "not_offered" and "09:00" in wrong.message
    right = brt.booking.create(shop, person(local("10:00")), channel="phone", conversation_id="call-7",
                               offered_only=True)
    assert right.ok and right.booking["channel"] == "phone"
    elsewhere = brt.booking.create(shop, person(local("11:00")), channel="phone", conversation_id="call-8",
                                   offered_only=True)
    assert elsewhere.status == "not_offered"


def test_cancel_and_reschedule(brt, shop):
    row = brt.booking.create(shop, person(local("10:00"))).booking
    moved = brt.booking.reschedule(shop, row["code"], local("16:00"))
    assert moved.ok and moved.booking["start_utc"] == "2026-12-02T15:00:00+00:00"
    assert brt.booking.create(shop, person(local("10:00"), email="b@example.com")).ok  # the old time is free
    assert brt.booking.cancel(shop, row["code"])["status"] == "cancelled"
    assert brt.booking.create(shop, person(local("16:00"), email="c@example.com")).ok


def test_a_phone_booking_without_a_phone_keeps_the_callers_number(brt, shop):
    brt.booking.record_offer(shop, "call-9", brt.booking.availability(shop, "first").slots)
    raw = {"name": "Luis", "email": "luis@example.com", "start": local("10:00")}
    made = brt.booking.create(shop, raw, channel="phone", conversation_id="call-9", customer_id="phone:600111222",
                              offered_only=True)
    assert made.ok and made.booking["phone"] == "+34600111222"
    hidden = brt.booking.create(shop, {**raw, "start": local("11:00"), "email": "ana@example.com"}, channel="phone",
                                conversation_id="call-9", customer_id="phone:anonymous", offered_only=True)
    assert hidden.ok and hidden.booking["phone"] == ""
