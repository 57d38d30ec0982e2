"""Acceptance of answer feedback, end to end as people use it: a visitor's 👎 in the real widget (`python -m api`,
its /demo page, headless Chromium) appears on the Gap backlog of the real admin app (`streamlit run app.py` over
the same data directory) with the answer and its citations; the editor writes the article, the replay answers
the stored question differently, and the gap closes."""
from __future__ import annotations

import re

import pytest

from tests.browser import create_first_admin, needs_chromium, shot
from tests.servers import admin_app, public_api

pytestmark = needs_chromium  # the fixture browser: tests/api/conftest.py
ASKED = "¿Cuánto tarda un envío a Canarias?"
REASON = "No dice cuánto cuesta el envío a Canarias."
ARTICLE = ("politicas/envios-canarias", "Envíos a Canarias",
           "Los envíos a Canarias tardan de 5 a 8 días laborables y cuestan 9,90 €; son gratuitos en pedidos de más "
           "de 80 €.")


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The public endpoint (its first start trains the demo tenant), then the admin app over the same data dir."""
    data = tmp_path_factory.mktemp("feedback") / "data"
    with public_api(data) as api, admin_app(data) as admin:
        yield api, admin


def test_a_thumbs_down_in_the_widget_reaches_the_backlog_and_a_changed_answer_closes_it(servers, browser):
    api, admin = servers
    widget = browser.new_page(viewport={"width": 1280, "height": 900})
    widget.set_default_timeout(60_000)
    widget.goto(f"{api}/demo")
    widget.locator("#cob-bubble").click()
    widget.locator("#cob-input").fill(ASKED)
    widget.locator("#cob-send").click()
    answer = widget.locator(".cob-msg.cob-assistant").last
    answer.locator("xpath=self::*[@data-status]").wait_for()
    assert answer.get_attribute("data-status") == "answered" and "5 a 8 días laborables" in answer.inner_text()
    answer.locator('button[data-feedback="down"]').click()
    answer.locator("textarea[data-feedback-reason]").fill(REASON)
    answer.locator("button[data-feedback-send]").click()
    answer.locator('.cob-feedback[data-state="sent"]').wait_for()
    assert answer.locator('.cob-feedback[data-rating="down"]').count() == 1
    shot(widget, "widget-thumbs-down.png", widget.locator("#cob-panel"))

    editor = browser.new_page(viewport={"width": 1400, "height": 1000})
    editor.set_default_timeout(120_000)
    editor.goto(admin)
    create_first_admin(editor)
    editor.get_by_role("heading", name="Sources").wait_for()  # landed (see create_first_admin)
    editor.get_by_role("link", name="Gap backlog").click()
    editor.get_by_role("heading", name="Gap backlog").wait_for()
    tab = editor.get_by_role("tabpanel").filter(has_text="The answer marked unhelpful")
    tab.wait_for()
    assert "5 a 8 días laborables" in tab.inner_text() and "politicas/envios" in tab.inner_text()
    assert REASON in tab.inner_text() and "Reason given" in tab.inner_text() and ASKED in tab.inner_text()
    assert editor.get_by_text("answered but not helpful").count() >= 1
    shot(editor, "backlog-table.png", editor.get_by_text("answered but not helpful").first)
    shot(editor, "backlog-not-helpful.png", tab)

    editor.get_by_role("tab", name="Write article").click()
    path, title, content = ARTICLE
    editor.get_by_role("textbox", name="Path in the knowledge tree", exact=True).fill(path)
    editor.get_by_role("textbox", name="Title", exact=True).fill(title)
    editor.get_by_role("textbox", name="Article", exact=True).fill(content)
    editor.get_by_role("button", name="Publish, train and check").click()
    editor.get_by_text(re.compile(r"1 of 1 stored question\(s\) answered differently")).wait_for(timeout=180_000)
    editor.get_by_text("Every stored question now gets another answer.").wait_for()
    shot(editor, "backlog-check-changed.png",
         editor.get_by_role("tabpanel").filter(has_text="answered differently"))
    editor.get_by_role("button", name="Close gap with this article").click()
    editor.get_by_text(re.compile(rf"closed with\s+{re.escape(path)}")).first.wait_for()
    assert editor.get_by_text("Traceback").count() == 0
    shot(editor, "backlog-closed.png", editor.get_by_text(re.compile(rf"closed with\s+{re.escape(path)}")).first)
