"""End to end in a real browser: `streamlit run app.py` on a free port, driven by headless Chromium.

Uses Debian's Chromium (`.ci/run` installs it) through playwright; the app runs on the real embedder
and the offline responder, exactly as a new user would start it."""
from __future__ import annotations

import os
import re

import pytest

from tests.browser import CHROMIUM, admin_tab, create_first_admin, needs_chromium
from tests.servers import admin_app

pytestmark = needs_chromium


def test_the_browser_is_there_when_required():
    assert CHROMIUM is not None, "COBERTURA_BROWSER_TESTS=required but no chromium on PATH (apt-get install chromium)"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    with admin_app(tmp_path_factory.mktemp("browser") / "data") as url:
        yield url


@pytest.fixture(scope="module")
def page(app_url):
    with admin_tab(timeout=180_000) as tab:  # the first start trains the demo tenant
        yield tab


def test_first_admin_then_the_backlog(page, app_url):
    page.goto(app_url)
    create_first_admin(page)
    page.get_by_role("heading", name="Sources").wait_for()  # landed (see create_first_admin)
    page.get_by_role("link", name="Gap backlog").click()
    page.get_by_role("heading", name="Gap backlog").wait_for()
    assert page.get_by_text("Traceback").count() == 0


def test_sources_write_train_then_the_sandbox_answers_from_it(page, app_url):
    """After the first test signed in: add a source, train it, ask the sandbox, get a cited answer."""
    page.get_by_role("link", name="Sources").click()
    page.get_by_role("heading", name="Sources").wait_for()
    page.get_by_role("tab", name="Add sources").click()
    page.get_by_label("Path in the tree").first.fill("politicas/descuentos")
    page.get_by_label("Title").last.fill("Descuentos para estudiantes")
    page.get_by_label("Content").last.fill(
        "Los estudiantes tienen un 10 % de descuento en bicicletas y accesorios presentando el carné "
        "universitario en vigor, en tienda y en la web.")
    page.get_by_role("button", name="Create the source").click()
    page.get_by_text(re.compile(r"Created\s+politicas/descuentos")).wait_for(timeout=30_000)
    page.get_by_role("button", name="Train", exact=True).click()
    page.get_by_text("The agent answers from it now").wait_for()

    page.get_by_role("link", name="Sandbox").click()
    page.get_by_role("heading", name="Sandbox").wait_for()
    page.get_by_placeholder("Write as the customer…").fill("¿Hacéis descuento a estudiantes?")
    page.keyboard.press("Enter")
    page.get_by_text("10 % de descuento").first.wait_for()
    page.get_by_text("politicas/descuentos").first.wait_for()  # the citation names the new source
    assert page.get_by_text("Traceback").count() == 0


def test_the_sandbox_marks_a_partial_answer_and_offers_the_qa_fix(page):
    """After the Sandbox test: the demo covers shops, not Valencia. The answer is marked partial, not refused."""
    page.get_by_placeholder("Write as the customer…").fill("¿Tenéis tienda en Valencia?")
    page.keyboard.press("Enter")
    page.get_by_text("Partial: point not covered").wait_for()
    page.get_by_text("Nuestro material no menciona").first.wait_for()
    page.get_by_role("button", name=re.compile("Create a Q&A source from this question")).wait_for()
    assert page.get_by_text("Not in the material:").count() == 1  # in the open trace
    assert page.get_by_text("tienda/horarios").count() >= 1 and page.get_by_text("Traceback").count() == 0
    if os.environ.get("COBERTURA_SCREENSHOTS"):
        page.get_by_text("Partial: point not covered").scroll_into_view_if_needed()
        page.screenshot(path=os.path.join(os.environ["COBERTURA_SCREENSHOTS"], "sandbox-partial.png"))
