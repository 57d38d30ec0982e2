"""The Booking page in a real browser: `streamlit run app.py` on a fresh data dir (the demo tenant gets the workshop's
schedule on its first start), driven by headless Chromium as a new user would: the first admin, the Booking page, the
plotly timeline drawn with its legend, a block added by hand, a refused schedule field named.

Set COBERTURA_SCREENSHOTS to a folder to keep the screenshots."""
from __future__ import annotations

import re

import pytest

from tests.browser import admin_tab, create_first_admin, needs_chromium, shot
from tests.servers import admin_app

pytestmark = needs_chromium

LEGEND = ("Opening hours", "Booking", "Hold (a visitor is choosing)", "Block (staff)")


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    with admin_app(tmp_path_factory.mktemp("booking-browser") / "data") as url:
        yield url


def test_the_booking_page_draws_the_week_adds_a_block_and_names_a_refused_field(app_url):
    with admin_tab(timeout=180_000) as page:  # the first start trains the demo tenant
        page.goto(app_url)
        create_first_admin(page)
        page.get_by_role("heading", name="Sources").wait_for()  # landed (see create_first_admin)
        page.get_by_role("link", name="Booking").click()
        page.get_by_role("heading", name="Booking").wait_for()
        chart = page.locator(".stPlotlyChart").first
        chart.locator("svg.main-svg").first.wait_for()
        for name in LEGEND:
            assert chart.locator("text.legendtext", has_text=name).count() == 1, name
        assert chart.locator("g.ytick text", has_text=re.compile(r"· today$")).count() == 1
        assert chart.locator("g.trace.bars").count() >= 4  # the opening hours and the three kinds
        page.get_by_text("Next free times").wait_for()

        page.get_by_label("Reason").fill("Formación del equipo")
        page.get_by_role("button", name="Add the block").click()
        page.get_by_text(re.compile(r"Blocked \d{4}-\d\d-\d\d 10:00–11:00 \(Europe/Madrid\)")).wait_for()
        page.get_by_text(re.compile(r"0 booking\(s\), 0 live hold\(s\), 1 block\(s\)")).wait_for()
        page.get_by_role("button", name="Remove the block").wait_for()
        shot(page, "booking-timeline.png", chart)

        page.get_by_role("tab", name="Schedule").click()
        page.get_by_label("Tuesday hours").fill("09:00-14:00, 15:00-14:00")
        page.get_by_role("button", name="Save schedule").click()
        page.get_by_text("Not saved — Tuesday hours, range 2:").wait_for()
        page.get_by_text("Nothing was changed").wait_for()
        shot(page, "booking-schedule-refused.png")
        assert page.get_by_text("Traceback").count() == 0
