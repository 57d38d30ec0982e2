"""Acceptance of answer feedback, end to end as people use it: a visitor's 👎 in the real widget (`python -m api`,
its /demo page, headless Chromium) appears on the Gap backlog of the real admin app (`streamlit run app.py` over
the same data directory) with the answer and its citations; the editor writes the article, the replay answers
the stored question differently, and the gap closes."""
from __future__ import annotations

import os
import re

import pytest

from tests.api.test_widget_browser import healthy
from tests.pages.test_browser import CHROMIUM, REQUIRED, admin_app, free_port, serving

pytestmark = pytest.mark.skipif(CHROMIUM is None and not REQUIRED,
                                reason="Chromium is not installed (`.ci/run` installs Debian's chromium)")
SHOTS = os.environ.get("COBERTURA_SCREENSHOTS", "")
ASKED = "¿Cuánto tarda un envío a Canarias?"
REASON = "No dice cuánto cuesta el envío a Canarias."
ARTICLE = ("politicas/envios-canarias", "Envíos a Canarias",
           "Los envíos a Canarias tardan de 5 a 8 días laborables y cuestan 9,90 €; son gratuitos en pedidos de más "
           "de 80 €.")


def shot(page, name: str, part=None) -> None:
    """The viewport, with ``part`` (a locator) scrolled into it, and ``part`` alone as ``<name>-part.png``."""
    if not SHOTS:
        return
    if part is not None:
        part.scroll_into_view_if_needed()
        part.screenshot(path=os.path.join(SHOTS, name.replace(".png", "-part.png")))
    page.screenshot(path=os.path.join(SHOTS, name))


@pytest.fixture(scope="module")
def servers(tmp_path_factory):
    """The public endpoint (its first start trains the demo tenant), then the admin app over the same data dir."""
    data = tmp_path_factory.mktemp("feedback") / "data"
    port = free_port()
    api = f"http://127.0.0.1:{port}"
    with serving(["api"], {"COBERTURA_DATA_DIR": str(data), "COBERTURA_API_PORT": str(port)},
                 data.parent / "api.log", lambda: healthy(api), 240):
        with admin_app(data) as admin:
            yield api, admin


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        yield chromium
        chromium.close()


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
    editor.get_by_text("Create the first admin").wait_for()
    editor.get_by_label("E-mail").fill("boss@example.com")
    editor.get_by_label("Password (at least 8 characters)").fill("a long password")
    editor.get_by_label("Repeat the password").fill("a long password")
    editor.get_by_role("button", name="Create admin and sign in").click()
    editor.get_by_text("Signed in as").wait_for()
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
