"""The widget's 👍/👎 in headless Chromium, against mocked routes (``page.route``): the buttons appear under a
recorded answer (``done.turn_id``) that was answered or partial, labelled in the answer's language; 👍 sends at
once, 👎 asks for an optional reason first; both POST {rating, reason} to the turn's feedback URL with the site key,
show a thank-you and lock the buttons; an error shows its text and leaves the answer and the buttons usable.
The end-to-end test against the real feedback route lives with the feedback backend's tests."""
from __future__ import annotations

import json

import pytest

from api.render import render_answer
from tests.api.widget_page import answer_stream, ask, mock_chat
from tests.browser import needs_chromium, shot

pytestmark = needs_chromium  # the fixtures served, browser and page: tests/api/conftest.py

ANSWER_EN = "Returns are accepted within **30 days**. [1]"
ANSWER_ES = "Aceptamos devoluciones en **30 días**. [1]"
CITED = [{"n": 1, "id": "c1", "title": "Returns", "path": "faq/returns", "url": ""}]
FEEDBACK_PATH = "/v1/conversations/conv-7/turns/41/feedback"


def answering(page, text: str, language: str, **done):
    done.setdefault("turn_id", 41)
    mock_chat(page, lambda q: answer_stream(text, render_answer(text), language=language, citations=CITED,
                                            conversation_id="conv-7", **done))


def feedback_route(page, replies: list[tuple[int, dict]]):
    """Answer each feedback POST with the next (status, JSON body); returns the requests seen."""
    seen = []

    def handle(route):
        request = route.request
        seen.append({"method": request.method, "url": request.url, "headers": request.headers,
                     "body": json.loads(request.post_data or "null")})
        status, body = replies.pop(0)
        route.fulfill(status=status, headers={"content-type": "application/json"}, body=json.dumps(body))

    page.route("**/v1/conversations/*/turns/*/feedback", handle)
    return seen


def test_thumbs_up_sends_at_once_thanks_and_locks_the_buttons(page, served):
    answering(page, ANSWER_EN, "en")
    seen = feedback_route(page, [(200, {"recorded": True, "rating": "up", "gap_id": None})])
    answer = ask(page, "Can I return it?")
    up, down = answer.locator('button[data-feedback="up"]'), answer.locator('button[data-feedback="down"]')
    assert up.locator("svg").count() == 1 and down.locator("svg").count() == 1  # drawn thumbs, not font emoji
    assert up.get_attribute("aria-label") == "Yes, this helped"
    assert down.get_attribute("aria-label") == "No, this did not help"
    assert answer.locator(".cob-feedback-ask").inner_text() == "Was this answer helpful?"
    shot(page, "widget-feedback-buttons.png")
    up.click()
    result = answer.locator(".cob-feedback-result")
    result.filter(has_text="Thank you for your feedback.").wait_for()
    assert up.is_disabled() and down.is_disabled() and up.get_attribute("aria-pressed") == "true"
    assert answer.locator("textarea[data-feedback-reason]").is_hidden()
    [request] = seen
    assert request["method"] == "POST" and request["url"] == served.url + FEEDBACK_PATH
    assert request["body"] == {"rating": "up", "reason": ""}
    assert request["headers"]["x-site-key"] == served.key
    assert request["headers"]["content-type"] == "application/json"
    shot(page, "widget-feedback-thanks.png")


def test_thumbs_down_asks_for_a_reason_then_sends_it(page):
    answering(page, ANSWER_ES, "es")
    seen = feedback_route(page, [(200, {"recorded": True, "rating": "down", "gap_id": 3})])
    answer = ask(page, "¿Puedo devolverlo?")
    down = answer.locator('button[data-feedback="down"]')
    assert down.get_attribute("aria-label") == "No me ha servido"
    reason = answer.locator("textarea[data-feedback-reason]")
    assert reason.is_hidden()
    down.click()
    assert reason.is_visible() and reason.get_attribute("maxlength") == "500"
    assert reason.get_attribute("placeholder") == "¿Qué faltaba o estaba mal? (opcional)"
    assert seen == []  # nothing sent until the reason is sent (or skipped with an empty one)
    reason.fill("No dice si el envío de vuelta es gratis.  ")
    shot(page, "widget-feedback-reason.png")
    answer.locator("button[data-feedback-send]").click()
    answer.locator(".cob-feedback-result").filter(has_text="Gracias por tu opinión.").wait_for()
    assert seen[0]["body"] == {"rating": "down", "reason": "No dice si el envío de vuelta es gratis."}
    assert reason.is_hidden() and down.is_disabled()


def test_a_reason_is_capped_at_500_characters(page):
    answering(page, ANSWER_EN, "en")
    seen = feedback_route(page, [(200, {"recorded": True, "rating": "down", "gap_id": 3})])
    answer = ask(page, "Can I return it?")
    answer.locator('button[data-feedback="down"]').click()
    answer.locator("textarea[data-feedback-reason]").fill("x" * 700)
    answer.locator("button[data-feedback-send]").click()
    answer.locator(".cob-feedback-result").filter(has_text="Thank you").wait_for()
    assert seen[0]["body"]["reason"] == "x" * 500


def test_an_error_shows_its_text_and_keeps_the_answer_and_the_buttons(page):
    answering(page, ANSWER_EN, "en")
    seen = feedback_route(page, [
        (404, {"error": {"code": "turn_not_found", "message": "That answer does not exist in this conversation.",
                         "retryable": False}}),
        (200, {"recorded": True, "rating": "up", "gap_id": None})])
    answer = ask(page, "Can I return it?")
    up = answer.locator('button[data-feedback="up"]')
    up.click()
    result = answer.locator(".cob-feedback-result")
    result.filter(has_text="That answer does not exist in this conversation.").wait_for()
    assert "cob-error" in result.get_attribute("class")
    assert "30 days" in answer.locator(".cob-body").inner_text()
    assert up.is_enabled() and answer.locator('button[data-feedback="down"]').is_enabled()
    shot(page, "widget-feedback-error.png")
    up.click()
    result.filter(has_text="Thank you for your feedback.").wait_for()
    assert len(seen) == 2 and "cob-error" not in result.get_attribute("class")


def test_a_network_failure_says_so_in_the_visitors_language(page):
    answering(page, ANSWER_ES, "es")
    page.route("**/v1/conversations/*/turns/*/feedback", lambda route: route.abort())
    answer = ask(page, "¿Puedo devolverlo?")
    answer.locator('button[data-feedback="up"]').click()
    answer.locator(".cob-feedback-result").filter(has_text="No se pudo conectar").wait_for()


@pytest.mark.parametrize("done", [{"turn_id": None}, {"status": "abstained"}, {"status": "handoff"},
                                  {"status": "clarify"}])
def test_no_buttons_without_a_recorded_answer(page, done):
    answering(page, ANSWER_EN, "en", **done)
    answer = ask(page, "Can I return it?")
    assert answer.locator("[data-feedback]").count() == 0


def test_a_partial_answer_can_be_rated(page):
    answering(page, ANSWER_EN, "en", status="partial")
    answer = ask(page, "Can I return it?")
    assert answer.locator('button[data-feedback="up"]').is_visible()
