"""The widget end to end, as a business would see it: `python -m api` on a free port (the real embedder, the
offline responder, the demo tenant trained on first start), its /demo page in headless Chromium."""
from __future__ import annotations

import pytest

from tests.browser import needs_chromium, shot
from tests.servers import public_api

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def api_url(tmp_path_factory):
    with public_api(tmp_path_factory.mktemp("widget") / "data") as url:  # the first start trains the demo tenant
        yield url


@pytest.fixture(scope="module")
def demo(api_url, browser):  # browser: tests/api/conftest.py
    tab = browser.new_page(viewport={"width": 1280, "height": 900})
    tab.set_default_timeout(30_000)
    tab.goto(f"{api_url}/demo")
    return tab


def ask(page, question: str):
    page.locator("#cob-input").fill(question)
    page.locator("#cob-send").click()
    message = page.locator(".cob-msg.cob-assistant").last
    message.locator("xpath=self::*[@data-status]").wait_for()
    return message


def test_a_covered_question_gets_a_cited_answer_and_points_at_the_section(demo):
    assert demo.evaluate("window.scrollY") == 0
    demo.locator("#cob-bubble").click()
    demo.locator("#cob-panel").wait_for(state="visible")
    answer = ask(demo, "¿Cuánto tarda un envío a Canarias?")
    assert answer.get_attribute("data-status") == "answered"
    assert "5 a 8 días laborables" in answer.inner_text()
    cite = answer.locator(".cob-cite").first
    assert cite.is_visible() and "politicas/envios" in (cite.get_attribute("title") or "")
    cite.click()
    sources = answer.locator(".cob-sources")
    sources.wait_for(state="visible")
    assert "politicas/envios" in sources.inner_text()
    demo.wait_for_function("document.getElementById('envios').classList.contains('cobertura-highlight')")
    assert demo.evaluate("window.scrollY") > 0  # the page scrolled to the section
    shot(demo, "widget-answer.png")


def test_an_uncovered_question_gets_a_clear_refusal(demo):
    answer = ask(demo, "¿Organizáis rutas guiadas en bicicleta por la montaña?")
    assert answer.get_attribute("data-status") == "abstained"
    assert "no cubre" in answer.inner_text() and answer.locator(".cob-cite").count() == 0
    shot(demo, "widget-refusal.png")


def test_a_partial_answer_is_an_answer_with_its_citations_and_a_notice_of_what_is_missing(demo):
    answer = ask(demo, "¿Tenéis tienda en Valencia?")
    assert answer.get_attribute("data-status") == "partial" and answer.get_attribute("data-missing") == "Valencia"
    note = answer.locator(".cob-partial-note")
    assert note.count() == 1 and note.is_visible()
    assert note.inner_text().startswith("Nuestro material no menciona “Valencia”.")
    assert note.get_attribute("role") == "note" and note.locator(".cob-cite").count() == 0
    body = answer.locator(".cob-body")
    assert "Madrid" in body.inner_text() and "no cubre" not in body.inner_text()  # the facts, not a refusal
    cite = answer.locator(".cob-body > p .cob-cite").first  # a marker of the cited facts (not of the notice)
    assert cite.is_visible() and "tienda/horarios" in (cite.get_attribute("title") or "")
    colour = note.evaluate("n => getComputedStyle(n).backgroundColor")
    assert colour not in ("rgba(0, 0, 0, 0)", "transparent")  # styled as a notice, not plain answer text
    cite.click()
    answer.locator(".cob-sources").wait_for(state="visible")
    assert "tienda/horarios" in answer.locator(".cob-sources").inner_text()
    shot(demo, "widget-partial.png")
