"""Headless Chromium for the browser tests (Debian's, through playwright; `.ci/run` installs it): the skip when it is
missing, a browser and an admin-app tab, screenshots, and signing in to the admin app as people do.

CI (`.ci/run`) sets COBERTURA_BROWSER_TESTS=required: there a missing browser fails the suite instead of skipping
it; on a developer machine without Chromium the browser tests are skipped (``pytestmark = needs_chromium``)."""
from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
REQUIRED = os.environ.get("COBERTURA_BROWSER_TESTS") == "required"
needs_chromium = pytest.mark.skipif(CHROMIUM is None and not REQUIRED,
                                    reason="Chromium is not installed (`.ci/run` installs Debian's chromium)")

#: the first admin the browser tests create through the first-run form
BOSS, BOSS_PASSWORD = "boss@example.com", "a long password"


@contextmanager
def chromium() -> Iterator:
    """A headless Chromium (playwright's Browser), closed when the block ends."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        try:
            yield browser
        finally:
            browser.close()


@contextmanager
def admin_tab(timeout: float, height: int = 1000) -> Iterator:
    """A tab 1,400 px wide in a Chromium of its own; ``timeout`` (ms) is its default wait."""
    with chromium() as browser:
        tab = browser.new_page(viewport={"width": 1400, "height": height})
        tab.set_default_timeout(timeout)
        yield tab


def shot(page, name: str, part=None) -> None:
    """Under COBERTURA_SCREENSHOTS (a folder), the viewport as ``name``; with ``part`` (a locator) scrolled into it,
    and ``part`` alone as ``<name>-part.png``."""
    folder = os.environ.get("COBERTURA_SCREENSHOTS")
    if not folder:
        return
    if part is not None:
        part.scroll_into_view_if_needed()
        part.screenshot(path=os.path.join(folder, name.replace(".png", "-part.png")))
    page.screenshot(path=os.path.join(folder, name))


def create_first_admin(page, email: str = BOSS, password: str = BOSS_PASSWORD) -> None:
    """Fill the first-run form of a fresh data dir (the page is on its way to it) and wait until signed in.

    Signed in at "/", the app is not settled yet: its hidden home page then switches to the first page (Sources for
    an admin, ``st.switch_page``), and a sidebar click in that moment is overridden by the switch (the tab ends on
    Sources, or on an AuthError traceback). A test clicks on after the landing page's heading has shown."""
    page.get_by_text("Create the first admin").wait_for()
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password (at least 8 characters)").fill(password)
    page.get_by_label("Repeat the password").fill(password)
    page.get_by_role("button", name="Create admin and sign in").click()
    page.get_by_text("Signed in as").wait_for()


def sign_in(page, email: str, password: str) -> None:
    """Fill the sign-in form (the page is on its way to it) and wait until signed in."""
    page.get_by_role("heading", name="Sign in").wait_for()
    page.get_by_label("E-mail").fill(email)
    page.get_by_label("Password", exact=True).fill(password)
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Signed in as").wait_for()
