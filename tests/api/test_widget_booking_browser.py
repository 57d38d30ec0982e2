"""The widget's booking window in headless Chromium, against the real endpoint (``served``: the offline responder,
the real booking routes, the demo workshop's schedule in Europe/Madrid): a visitor whose browser is in New York asks
for an appointment; the window lists the free times by day in the business's zone and says which zone; a click holds
the time (a countdown shows how long), the form names what is missing, Confirm books it and shows the code. A second
visitor who clicks the same time gets it refused, with the free times of that day in place of the buttons; Cancel
releases a hold. Server strings are text, never markup; an expired hold gives the times back.
Screenshots (COBERTURA_SCREENSHOTS): booking-window.png, booking-held.png, booking-missing.png, booking-booked.png,
booking-taken.png, booking-expired.png."""
from __future__ import annotations

import json
import re

import pytest

from core.booking.schedule import DEMO_SCHEDULE
from core.tenancy.context import local_operator
from tests.api.widget_page import ask, demo_page, mock_chat, sse
from tests.browser import needs_chromium, shot

pytestmark = needs_chromium  # the fixtures served and browser: tests/api/conftest.py

ASKED = "Quiero reservar una cita"
ZONE = "Horas en hora de Madrid (Europe/Madrid)"


@pytest.fixture(scope="module", autouse=True)
def workshop(served):
    """acme takes bookings with the demo workshop's hours (Europe/Madrid)."""
    served.rt.booking.save_schedule(local_operator(served.rt.store, "acme"), DEMO_SCHEDULE)


def visitor(browser, served, tz: str = "America/New_York"):
    """A fresh visitor on the demo page (their browser in another zone than the business), the panel open."""
    return demo_page(browser, served.url, timezone_id=tz, locale="es-ES")


def state(window, name: str) -> None:
    window.locator(f"xpath=self::*[@data-booking-state='{name}']").wait_for()


def bookings(served) -> list[dict]:
    return served.rt.booking.bookings(local_operator(served.rt.store, "acme"))


def test_a_visitor_picks_a_time_fills_the_form_and_gets_the_code(browser, served):
    with visitor(browser, served) as tab:
        turn = ask(tab, ASKED)
        window = turn.locator(".cob-booking")
        assert window.count() == 1 and window.get_attribute("data-booking-state") == "choose"
        assert window.locator(".cob-card-title").inner_text() == "Elige una hora"
        assert window.locator(".cob-booking-zone").inner_text() == ZONE
        assert window.locator(".cob-booking-hint").inner_text().startswith("Al elegir una hora te la guardamos 5 min")
        first_day = window.locator(".cob-booking-day").first
        day_label = first_day.locator(".cob-booking-day-label").text_content()  # shown with a capital
        slot = first_day.locator(".cob-slot").first
        time_text, start = slot.inner_text(), slot.get_attribute("data-start")
        assert re.fullmatch(r"\d\d:\d\d", time_text) and start.endswith(("+01:00", "+02:00"))  # Madrid, not New York
        assert start[11:16] == time_text and slot.get_attribute("aria-label") == f"{day_label}, {time_text}"
        shot(tab, "booking-window.png", window)

        slot.click()
        state(window, "held")
        form = window.locator(".cob-booking-form")
        assert form.locator(".cob-booking-chosen").inner_text() == f"{day_label}, {time_text}"
        assert re.fullmatch(r"Guardada para ti: quedan [45]:\d\d para confirmarla\.",
                            form.locator(".cob-booking-countdown").inner_text())
        assert window.locator(".cob-booking-days").is_hidden()
        hold_id = window.get_attribute("data-hold-id")
        [hold] = [h for h in served.rt.booking.holds(local_operator(served.rt.store, "acme"),
                                                     *_span(served)) if h["id"] == hold_id]
        assert hold["status"] == "held" and hold["conversation_id"] == tab.evaluate("window.Cobertura.conversationId")
        shot(tab, "booking-held.png", window)

        form.locator('[data-booking-action="confirm"]').click()  # nothing filled in: the server names the fields
        window.locator(".cob-booking-note.cob-error").wait_for()
        assert window.locator(".cob-booking-note").inner_text() == "Falta: nombre, correo electrónico."
        assert form.locator('[data-booking-field="name"]').get_attribute("aria-invalid") == "true"
        assert form.locator('[data-booking-field="email"]').get_attribute("aria-invalid") == "true"
        assert form.locator('[data-booking-field="phone"]').get_attribute("aria-invalid") is None
        shot(tab, "booking-missing.png", window)

        form.locator('[data-booking-field="name"]').fill("Ana Pérez")
        form.locator('[data-booking-field="email"]').fill("ana@example.com")
        form.locator('[data-booking-field="phone"]').fill("612 345 678")
        form.locator('[data-booking-action="confirm"]').click()
        state(window, "booked")
        code = window.get_attribute("data-booking-code")
        done = window.locator(".cob-booking-done").inner_text()
        assert done == f"Cita confirmada: {day_label}, {time_text}, hora de Madrid (Europe/Madrid). Código: {code}"
        assert window.locator("button").count() == 0
        [booked] = [b for b in bookings(served) if b["code"] == code]
        assert (booked["name"], booked["email"], booked["phone"], booked["channel"]) == (
            "Ana Pérez", "ana@example.com", "+34612345678", "web")
        assert booked["start_utc"] == hold["start_utc"]
        shot(tab, "booking-booked.png", window)
        assert tab.dialogs == []


def _span(served):
    from datetime import timedelta

    now = served.rt.store.clock.now()
    return now - timedelta(days=1), now + timedelta(days=70)


def test_a_second_visitor_gets_the_held_time_refused_with_that_days_free_times(browser, served):
    with visitor(browser, served) as first, visitor(browser, served, "Asia/Tokyo") as second:
        mine, theirs = ask(first, ASKED).locator(".cob-booking"), ask(second, ASKED).locator(".cob-booking")
        days = mine.locator(".cob-booking-day")  # a day with another free time besides the one both click
        fullest = max(range(days.count()), key=lambda n: days.nth(n).locator(".cob-slot").count())
        start = days.nth(fullest).locator(".cob-slot").first.get_attribute("data-start")
        assert theirs.locator(f'.cob-slot[data-start="{start}"]').count() == 1  # both were offered it
        mine.locator(f'.cob-slot[data-start="{start}"]').click()
        state(mine, "held")

        theirs.locator(f'.cob-slot[data-start="{start}"]').click()
        theirs.locator("xpath=self::*[@data-taken='true']").wait_for()
        state(theirs, "choose")
        assert theirs.locator(".cob-booking-note").inner_text() == ("Esa hora ya no está libre. Estas siguen libres "
                                                                      "ese día:")
        offered = [b.get_attribute("data-start") for b in theirs.locator(".cob-slot").all()]
        assert offered and start not in offered and len(offered) <= 5
        assert {s[:10] for s in offered} == {start[:10]}  # the same day
        assert theirs.locator(".cob-booking-day").count() == 1
        shot(second, "booking-taken.png", theirs)

        mine.locator('[data-booking-action="cancel"]').click()  # the first visitor lets it go: free again at once
        state(mine, "choose")
        assert mine.locator(".cob-booking-note").inner_text() == "Hora liberada. Puedes elegir otra."
        held = [h for h in served.rt.booking.holds(local_operator(served.rt.store, "acme"), *_span(served))
                if h["start_utc"][:16] == _utc(start)]
        assert held and all(h["status"] == "released" for h in held)
        theirs.locator(".cob-slot").first.click()
        state(theirs, "held")
        theirs.locator('[data-booking-action="cancel"]').click()
        state(theirs, "choose")


def _utc(local: str) -> str:
    from datetime import datetime, timezone

    return datetime.fromisoformat(local).astimezone(timezone.utc).isoformat()[:16]


WINDOW = {"mode": "day", "timezone": "Europe/Madrid", "zone_label": "hora de Madrid (Europe/Madrid)",
          "today": "2026-12-01", "hold_minutes": 5,
          "days": [{"date": "2026-12-02", "label": "miércoles 2 de diciembre", "slots": [
              {"start": "2026-12-02T10:00+01:00", "start_utc": "2026-12-02T09:00:00+00:00", "date": "2026-12-02",
               "time": "10:00", "label": "miércoles 2 de diciembre, 10:00", "timezone": "Europe/Madrid"}]}]}
DONE = {"truncated": False, "status": "answered", "conversation_id": "conv-b", "language": "es", "usage": {}}


def test_an_expired_hold_gives_the_times_back(page):
    mock_chat(page, lambda q: sse(("text", {"d": "Elige una hora."}), ("booking_window", WINDOW), ("done", DONE)))
    hold = {"id": "hold_x", "status": "held", "start": "2026-12-02T10:00+01:00", "end": "2026-12-02T10:30+01:00",
            "label": "miércoles 2 de diciembre, 10:00", "expires_in": 2}
    page.route(re.compile(r".*/v1/booking/holds\?.*"), lambda route: route.fulfill(
        status=201, headers={"content-type": "application/json"}, body=json.dumps({"hold": hold})))
    window = ask(page, "cita").locator(".cob-booking")
    window.locator(".cob-slot").click()
    state(window, "held")
    assert window.locator(".cob-booking-countdown").inner_text() in (
        "Guardada para ti: quedan 0:02 para confirmarla.", "Guardada para ti: quedan 0:01 para confirmarla.")
    state(window, "choose")  # two seconds later, without a click
    assert window.locator(".cob-booking-note").inner_text() == ("Se acabó el tiempo para confirmar. Elige una hora "
                                                                "otra vez.")
    assert window.locator(".cob-slot").count() == 1 and window.locator(".cob-booking-form").is_hidden()
    shot(page, "booking-expired.png", window)


def test_server_strings_in_the_window_are_text_never_markup(page):
    hostile = '<img src=x onerror="window.__pwned=1">'
    slot = {**WINDOW["days"][0]["slots"][0], "time": hostile, "label": hostile, "start": hostile}
    window = {**WINDOW, "zone_label": hostile, "days": [{"date": hostile, "label": hostile, "slots": [slot]}]}
    mock_chat(page, lambda q: sse(("booking_window", window), ("done", {**DONE, "language": "en"})))
    box = ask(page, "book").locator(".cob-booking")
    assert box.locator(".cob-booking-zone").inner_text() == f"Times in {hostile}"
    assert box.locator(".cob-booking-day-label").inner_text() == hostile
    assert box.locator(".cob-slot").inner_text() == hostile and box.locator("img").count() == 0
    assert box.locator(".cob-card-title").inner_text() == "Pick a time"  # the answer's language
    assert page.evaluate("window.__pwned") is None and page.dialogs == []
