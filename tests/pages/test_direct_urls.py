"""A page URL opened first thing on a fresh server never renders the page outside app.py's frame.

``pages/`` beside app.py makes Streamlit serve its files on their own until app.py first runs in the process
(legacy file-based navigation); this test is that first request, in a real browser against `streamlit run`."""
from __future__ import annotations

import pytest

from tests.browser import chromium, needs_chromium
from tests.servers import admin_app

pytestmark = needs_chromium


@pytest.fixture(scope="module")
def fresh_url(tmp_path_factory):
    with admin_app(tmp_path_factory.mktemp("direct") / "data") as url:
        yield url


@pytest.mark.parametrize("url_path, title", [("settings", "Settings"), ("qa", "QA suites")])
def test_a_direct_page_url_on_a_fresh_server_asks_to_sign_in(fresh_url, url_path, title):
    with chromium() as browser:
        tab = browser.new_context().new_page()  # a fresh session: nothing signed in
        tab.set_default_timeout(180_000)  # the first start trains the demo tenant
        tab.goto(f"{fresh_url}/{url_path}")
        tab.get_by_text("Sign in first").or_(tab.get_by_text("Create the first admin")).first.wait_for()
        assert tab.get_by_role("heading", name=title).count() == 0
        assert tab.get_by_text("Traceback").count() == 0 and tab.locator("[data-testid=stException]").count() == 0
