"""The booking window's calls through the real app (B4-B5): free times in the business's zone, a hold that blocks
its time for others and frees it at once when released or expired, the confirmation that re-checks inside the write
(409 with the day's free times), refused fields named (422), another tenant's hold answering exactly like a missing
one (404), the rate limits; and the phone channel of /v1/chat (X-Phone-Token)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from core.channels import conversations
from core.runtime import open_runtime
from core.tenancy import site_keys
from core.tenancy.context import local_operator
from tests.api.test_chat import Api, acme, only_done, parse_sse  # noqa: F401  (the fixture)
from tests.conftest import TEST_TUNING
from tests.fakes import MovableClock, ScriptedProvider

#: Tuesday 1 December 2026, 09:00 in Madrid (08:00 UTC)
NOW = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)
HOURS = [["09:00", "12:00"]]
SCHEDULE = {"timezone": "Europe/Madrid", "slot_minutes": 30, "buffer_minutes": 0, "min_notice_minutes": 60,
            "horizon_days": 30, "country": "ES", "closed_dates": ["2026-12-08"],
            "weekly": {"mon": HOURS, "tue": HOURS, "wed": HOURS, "thu": HOURS, "fri": HOURS, "sat": [], "sun": []}}
WED_10 = "2026-12-02T10:00+01:00"
ANA = {"name": "Ana Pérez", "email": "ana@example.com", "phone": "612 345 678"}


@pytest.fixture
def clock():
    return MovableClock(NOW)


@pytest.fixture
def rt(settings, embedder, clock):
    runtime = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING, clock=clock)
    yield runtime
    runtime.close()


class Window(Api):
    """The app, and the calls the widget's booking window makes."""

    def headers(self, slug: str = "acme") -> dict:
        return {"X-Site-Key": self.key(slug)}

    def free(self, slug: str = "acme", **query):
        return self.client.get("/v1/booking/availability", params=query, headers=self.headers(slug))

    def hold(self, start: str = WED_10, slug: str = "acme", **body):
        return self.client.post("/v1/booking/holds", json={"start": start, **body}, headers=self.headers(slug))

    def release(self, hold_id: str, slug: str = "acme"):
        return self.client.delete(f"/v1/booking/holds/{hold_id}", headers=self.headers(slug))

    def confirm(self, hold_id: str, details: dict, slug: str = "acme", **query):
        return self.client.post(f"/v1/booking/holds/{hold_id}/confirm", json=details, params=query,
                                headers=self.headers(slug))

    def starts(self, day: str = "2026-12-02", slug: str = "acme") -> list[str]:
        response = self.free(slug, mode="day", date=day)
        assert response.status_code == 200, response.text
        return [slot["start"] for slot in response.json()["slots"]]


@pytest.fixture
def api(rt, acme):  # noqa: F811
    rt.booking.save_schedule(local_operator(rt.store, "acme"), SCHEDULE)
    client = Window(rt)
    yield client
    client.close()


# -- availability -------------------------------------------------------------------------------------------
def test_a_day_lists_its_times_in_the_business_zone_and_names_it(api):
    response = api.free(mode="day", date="2026-12-02")
    assert response.status_code == 200 and response.headers["cache-control"] == "no-store"
    body = response.json()
    assert (body["mode"], body["timezone"], body["today"]) == ("day", "Europe/Madrid", "2026-12-01")
    assert body["zone_label"] == "hora de Madrid (Europe/Madrid)"
    [day] = body["days"]
    assert (day["date"], day["label"]) == ("2026-12-02", "miércoles 2 de diciembre")
    assert [s["time"] for s in day["slots"]] == ["09:00", "09:30", "10:00", "10:30", "11:00", "11:30"]
    first = day["slots"][0]
    assert (first["start"], first["start_utc"]) == ("2026-12-02T09:00+01:00", "2026-12-02T08:00:00+00:00")
    assert first["label"] == "miércoles 2 de diciembre, 09:00"
    english = api.free(mode="day", date="2026-12-02", lang="en").json()
    assert english["zone_label"] == "Madrid time (Europe/Madrid)"
    assert english["slots"][0]["label"] == "Wednesday 2 December, 09:00"


def test_first_and_week_follow_the_notice_the_closed_days_and_the_weekend(api):
    first = api.free().json()  # mode first by default: today from 10:00 (60 minutes' notice at 09:00)
    assert first["mode"] == "first" and [s["start"] for s in first["slots"]] == [
        "2026-12-01T10:00+01:00", "2026-12-01T10:30+01:00", "2026-12-01T11:00+01:00", "2026-12-01T11:30+01:00",
        "2026-12-02T09:00+01:00"]
    week = api.free(mode="week", date="2026-12-04").json()  # Friday to Thursday: no weekend, no 8 December
    assert [d["date"] for d in week["days"]] == ["2026-12-04", "2026-12-07", "2026-12-09", "2026-12-10"]


@pytest.mark.parametrize("query", [{"mode": "month"}, {"date": "2 December"}, {"mode": "day", "date": "2026-13-45"},
                                   {"lang": "fr"}])
def test_a_bad_query_is_refused_with_what_to_send(api, query):
    response = api.free(**query)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["message"]


def test_a_tenant_without_a_schedule_takes_no_bookings_and_keys_are_required(api):
    off = api.free("globex")
    assert off.status_code == 404 and off.json()["error"]["code"] == "booking_off"
    assert api.hold(slug="globex").json()["error"]["code"] == "booking_off"
    anonymous = api.client.get("/v1/booking/availability")
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "missing_site_key"
    wrong = api.client.get("/v1/booking/availability", headers={"X-Site-Key": "pk_nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["code"] == "invalid_site_key"


# -- holds --------------------------------------------------------------------------------------------------
def test_a_hold_blocks_its_time_for_others_who_get_the_free_times_of_that_day(api):
    response = api.hold()
    assert response.status_code == 201, response.text
    hold = response.json()["hold"]
    assert hold["id"].startswith("hold_") and hold["status"] == "held"
    assert (hold["start"], hold["end"], hold["label"]) == (WED_10, "2026-12-02T10:30+01:00",
                                                           "miércoles 2 de diciembre, 10:00")
    assert hold["zone_label"] == "hora de Madrid (Europe/Madrid)" and hold["expires_in"] == 300
    assert hold["expires_at"] == "2026-12-01T08:05:00+00:00"
    assert WED_10 not in api.starts()

    same = api.hold("2026-12-02T09:00:00Z")  # the same instant written in UTC: the same slot
    assert same.status_code == 409 and same.json()["error"]["code"] == "slot_taken"
    refused = api.hold(WED_10)
    body = refused.json()
    assert refused.status_code == 409 and body["error"]["code"] == "slot_taken"
    assert body["error"]["message"] and refused.headers["cache-control"] == "no-store"
    assert sorted(s["time"] for s in body["alternatives"]) == ["09:00", "09:30", "10:30", "11:00", "11:30"]
    assert all(s["date"] == "2026-12-02" and s["timezone"] == "Europe/Madrid" for s in body["alternatives"])


def test_a_released_hold_frees_its_time_at_once_and_is_gone(api):
    hold = api.hold().json()["hold"]
    released = api.release(hold["id"])
    assert released.status_code == 200 and released.json()["hold"]["status"] == "released"
    assert WED_10 in api.starts()
    gone = api.release(hold["id"])
    assert gone.status_code == 404 and gone.json()["error"]["code"] == "hold_not_found"
    assert api.confirm(hold["id"], ANA).status_code == 404
    assert api.hold().status_code == 201


def test_an_expired_hold_frees_its_time_on_the_second_and_then_confirms_only_if_still_free(api, clock):
    first = api.hold().json()["hold"]
    clock.advance(minutes=4, seconds=59)
    assert api.hold().status_code == 409
    clock.advance(seconds=1)  # expires_at reached: free for the next visitor without any sweeper
    second = api.hold()
    assert second.status_code == 201
    late = api.confirm(first["id"], ANA)  # re-checked like a new booking: the other visitor holds it now
    assert late.status_code == 409 and late.json()["error"]["code"] == "slot_taken"
    assert api.confirm(second.json()["hold"]["id"], ANA).status_code == 201


@pytest.mark.parametrize("start", ["2026-12-02T10:10+01:00", "2026-11-30T10:00+01:00", "2026-12-01T09:30+01:00",
                                   "2026-12-05T10:00+01:00", "pronto", ""])
def test_a_time_the_schedule_does_not_offer_is_refused_with_a_reason(api, start):
    response = api.hold(start)
    assert response.status_code == 422, response.text
    assert response.json()["error"]["code"] in ("invalid_start", "invalid_request")
    assert response.json()["error"]["message"]


def test_a_conversation_of_another_visitor_is_not_recorded_on_a_hold(api, rt):
    other = conversations.start(local_operator(rt.store, "globex"), rt.store, "web")
    response = api.hold(conversation_id=other.id)
    assert response.status_code == 404 and response.json()["error"]["code"] == "conversation_not_found"
    assert WED_10 in api.starts()


# -- confirm --------------------------------------------------------------------------------------------------
def test_confirm_books_the_held_time_once(api, rt):
    hold = api.hold().json()["hold"]
    response = api.confirm(hold["id"], {**ANA, "notes": "ruido al frenar"})
    assert response.status_code == 201, response.text
    booking = response.json()["booking"]
    assert booking["status"] == "confirmed" and len(booking["code"]) >= 4
    assert (booking["start"], booking["label"]) == (WED_10, "miércoles 2 de diciembre, 10:00")
    assert booking["zone_label"] == "hora de Madrid (Europe/Madrid)"
    assert (booking["name"], booking["email"], booking["phone"]) == ("Ana Pérez", "ana@example.com", "+34612345678")
    assert booking["channel"] == "web" and booking["code"] in response.json()["message"]
    [stored] = rt.booking.bookings(local_operator(rt.store, "acme"))
    assert stored["code"] == booking["code"] and stored["notes"] == "ruido al frenar"
    assert WED_10 not in api.starts()
    again = api.confirm(hold["id"], ANA)  # the hold was used: the same answer as any missing hold
    assert again.status_code == 404 and again.json()["error"]["code"] == "hold_not_found"
    assert len(rt.booking.bookings(local_operator(rt.store, "acme"))) == 1


def test_a_block_added_after_the_hold_is_found_by_the_recheck_and_answered_with_alternatives(api, rt):
    hold = api.hold().json()["hold"]
    staff = local_operator(rt.store, "acme")
    rt.booking.add_block(staff, datetime(2026, 12, 2, 8, 45, tzinfo=timezone.utc),
                         datetime(2026, 12, 2, 9, 45, tzinfo=timezone.utc), "averia")
    response = api.confirm(hold["id"], ANA)
    body = response.json()
    assert response.status_code == 409 and body["error"]["code"] == "slot_taken"
    assert sorted(s["time"] for s in body["alternatives"]) == ["09:00", "11:00", "11:30"]  # 09:45-10:45 blocked
    assert rt.booking.bookings(staff) == []


def test_missing_and_invalid_fields_are_named_and_the_hold_stays_usable(api):
    hold = api.hold().json()["hold"]
    missing = api.confirm(hold["id"], {"name": "  ", "email": "undefined", "phone": "sin teléfono"})
    body = missing.json()
    assert missing.status_code == 422 and body["error"]["code"] == "missing_fields"
    assert body["missing"] == ["name", "email"] and "name" in body["error"]["message"]
    invalid = api.confirm(hold["id"], {"name": "Ana", "email": "ana@", "phone": "12"})
    body = invalid.json()
    assert invalid.status_code == 422 and body["error"]["code"] == "invalid_fields" and body["missing"] == []
    problems = " ".join(body["problems"]).lower()
    assert "email" in problems and "phone" in problems
    too_long = api.confirm(hold["id"], {"name": "x" * 201, "email": "ana@example.com"})
    assert too_long.status_code == 422 and "name" in too_long.json()["error"]["message"]
    assert api.confirm(hold["id"], ANA).status_code == 201


# -- another tenant's hold, rate limits ------------------------------------------------------------------------
def test_another_tenants_hold_answers_exactly_like_a_missing_one(api, rt):
    rt.booking.save_schedule(local_operator(rt.store, "globex"), SCHEDULE)
    foreign = api.hold(slug="globex").json()["hold"]["id"]
    for call in (lambda hold_id: api.release(hold_id), lambda hold_id: api.confirm(hold_id, ANA)):
        unknown, theirs, malformed = call("hold_" + "x" * 24), call(foreign), call("hold.x;1")
        assert unknown.status_code == theirs.status_code == malformed.status_code == 404
        assert unknown.content == theirs.content == malformed.content
        assert theirs.headers.get("content-type") == unknown.headers.get("content-type")
    assert api.confirm(foreign, ANA, slug="globex").status_code == 201  # still theirs, untouched


def test_booking_calls_are_rate_limited_per_address(rt, acme):  # noqa: F811
    rt.booking.save_schedule(local_operator(rt.store, "acme"), SCHEDULE)
    client = Window(rt, {"COBERTURA_RATE_PER_IP": "3"}, monotonic=lambda: 1000.0)
    try:
        assert [client.free().status_code for _ in range(3)] == [200, 200, 200]
        limited = client.hold()
        assert limited.status_code == 429 and limited.json()["error"]["code"] == "rate_limited"
        assert int(limited.headers["retry-after"]) >= 1 and "booking requests" in limited.json()["error"]["message"]
        assert rt.booking.holds(local_operator(rt.store, "acme"), NOW, NOW.replace(month=12, day=31)) == []
    finally:
        client.close()


# -- the phone channel ------------------------------------------------------------------------------------------
def phone_token(rt, caller: str, slug: str = "acme") -> str:
    return site_keys.sign_phone_token(site_keys.ensure(local_operator(rt.store, slug), rt.store).secret, caller)


def test_a_phone_token_puts_the_turn_on_the_phone_channel_as_that_caller(rt, acme):  # noqa: F811
    client = Api(rt, provider=lambda: ScriptedProvider("Claro, le ayudo con su cita."))
    try:
        response = client.chat("Hola, quiero una cita", headers={"X-Phone-Token": phone_token(rt, "+34600111222")})
        assert response.status_code == 200, response.text
        done = only_done(parse_sse(response.text))
        convo = conversations.get(local_operator(rt.store, "acme"), rt.store, done["conversation_id"])
        assert (convo.channel, convo.customer_id) == ("phone", "phone:+34600111222")
        customer = site_keys.sign_customer_token(site_keys.ensure(local_operator(rt.store, "acme"), rt.store).secret,
                                                 "+34600111222")
        for token, header in ((customer, "X-Phone-Token"), (phone_token(rt, "+34600111222"), "X-Customer-Token"),
                              (phone_token(rt, "+34600111222", "globex"), "X-Phone-Token"), ("junk", "X-Phone-Token")):
            refused = client.chat("Hola", headers={header: token})
            code = "invalid_phone_token" if header == "X-Phone-Token" else "invalid_customer_token"
            assert refused.status_code == 401 and refused.json()["error"]["code"] == code, (header, refused.text)
            assert token not in refused.text
    finally:
        client.close()


def test_the_booking_window_is_the_websites_a_phone_token_books_in_the_conversation(api, rt):
    headers = {**api.headers(), "X-Phone-Token": phone_token(rt, "+34600111222")}
    for response in (api.client.get("/v1/booking/availability", headers=headers),
                     api.client.post("/v1/booking/holds", json={"start": WED_10}, headers=headers)):
        assert response.status_code == 403 and response.json()["error"]["code"] == "channel_not_allowed"
    assert WED_10 in api.starts()
    token = site_keys.sign_customer_token(site_keys.ensure(local_operator(rt.store, "acme"), rt.store).secret, "ana")
    identified = api.client.post("/v1/booking/holds", json={"start": WED_10},
                                 headers={**api.headers(), "X-Customer-Token": token})
    assert identified.status_code == 201
    booked = api.client.post(f"/v1/booking/holds/{identified.json()['hold']['id']}/confirm", json=ANA,
                             headers={**api.headers(), "X-Customer-Token": token})
    assert booked.status_code == 201 and booked.json()["booking"]["channel"] == "identified"
    [row] = rt.booking.bookings(local_operator(rt.store, "acme"))
    assert row["customer_id"] == "ana"


def test_a_website_chat_switched_off_takes_no_bookings_through_the_window(api, rt):
    from core.tenancy import settings as tenant_settings

    tenant_settings.update(local_operator(rt.store, "acme"), rt.store, channels_enabled=["identified", "phone"])
    for response in (api.free(), api.hold()):
        assert response.status_code == 403 and response.json()["error"]["code"] == "channel_disabled"
    assert rt.booking.holds(local_operator(rt.store, "acme"), NOW, NOW.replace(day=31)) == []
