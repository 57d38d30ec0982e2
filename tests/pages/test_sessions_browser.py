"""Sessions and tenants as people use them, in a real browser against `streamlit run app.py` (issue #17, items 1-2).

A sign-in survives a reload on the same page; a page URL opened before signing in asks to sign in, then opens that
page; sign-out revokes the session server-side, so the old cookie replayed in another browser signs nobody in; the
instance admin creates a tenant and its editor in the UI, and the editor (a fresh browser) sees only that tenant.
The tests run in order on one server (the first one creates the first admin)."""
from __future__ import annotations

import re
import time

import pytest

from tests.browser import BOSS, BOSS_PASSWORD, chromium, create_first_admin, needs_chromium, shot, sign_in
from tests.servers import admin_app

pytestmark = needs_chromium

EDITOR, EDITOR_PASSWORD = "ed@acme-shop.test", "the editor's password"
COOKIE = "cobertura_session_"  # and 10 hex digits of the instance's secret
IDLE_SECONDS = 120 * 60  # COBERTURA_SESSION_IDLE_MINUTES' default


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    with admin_app(tmp_path_factory.mktemp("sessions") / "data") as url:
        yield url


@pytest.fixture(scope="module")
def browser():
    with chromium() as b:
        yield b


def fresh(browser, cookies=()):
    """A new browser context (nothing shared with the others) and its tab."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    if cookies:
        context.add_cookies(list(cookies))
    tab = context.new_page()
    tab.set_default_timeout(180_000)  # the first start trains the demo tenant
    return context, tab


def session_cookie(context, present: bool = True, seconds: float = 15) -> dict | None:
    """The session cookie once the page has written it (or None once it cleared it)."""
    deadline = time.monotonic() + seconds
    while True:
        found = next((c for c in context.cookies() if c["name"].startswith(COOKIE)), None)
        if (found is not None) == present:
            return found
        assert time.monotonic() < deadline, f"the {COOKIE} cookie was {'never set' if present else 'not cleared'}"
        time.sleep(0.2)


def clean(tab) -> None:
    assert tab.get_by_text("Page not found").count() == 0
    assert tab.get_by_text("Traceback").count() == 0 and tab.locator("[data-testid=stException]").count() == 0


def test_a_page_url_on_a_fresh_server_asks_for_the_first_admin_then_signs_them_in(browser, app_url):
    context, tab = fresh(browser)
    tab.goto(f"{app_url}/inbox")
    tab.get_by_text("Create the first admin").wait_for()
    clean(tab)
    create_first_admin(tab, BOSS, BOSS_PASSWORD)
    tab.get_by_text(f"Signed in as {BOSS} (instance admin)").wait_for()
    tab.get_by_role("heading", name="Inbox").wait_for()
    assert session_cookie(context) is not None
    context.close()


def test_a_sign_in_survives_a_reload_on_the_same_page(browser, app_url):
    context, tab = fresh(browser)
    tab.goto(f"{app_url}/gaps")  # before signing in: the sign-in form, not "Page not found"
    tab.get_by_role("heading", name="Sign in").wait_for()
    clean(tab)
    assert tab.get_by_label("E-mail").get_attribute("autocomplete") == "username"
    assert tab.get_by_label("Password", exact=True).get_attribute("autocomplete") == "current-password"
    sign_in(tab, BOSS, BOSS_PASSWORD)
    tab.get_by_role("heading", name="Gap backlog").wait_for()  # the page the URL named
    assert tab.url.endswith("/gaps?tenant=demo")
    cookie = session_cookie(context)
    assert cookie["path"] == "/" and cookie["sameSite"] == "Strict" and not cookie["secure"]  # http: not Secure
    assert IDLE_SECONDS - 120 < cookie["expires"] - time.time() <= IDLE_SECONDS + 5  # Max-Age: the idle lifetime
    tab.reload()
    tab.get_by_role("heading", name="Gap backlog").wait_for()
    tab.get_by_text(f"Signed in as {BOSS}").wait_for()
    assert tab.url.endswith("/gaps?tenant=demo") and tab.get_by_role("heading", name="Sign in").count() == 0
    clean(tab)
    shot(tab, "session-after-reload.png")
    tab.goto(f"{app_url}/settings")  # a page URL typed while signed in opens that page
    tab.get_by_role("heading", name="Settings").wait_for()
    clean(tab)
    tab.goto(f"{app_url}/sources")  # the first page too, though "/" opens it
    tab.get_by_role("heading", name="Sources").wait_for()
    clean(tab)
    tab.goto(app_url)
    tab.get_by_role("heading", name="Sources").wait_for()
    assert tab.url.endswith("/sources?tenant=demo")
    clean(tab)
    context.close()


def test_sign_out_ends_the_session_and_its_cookie_replayed_signs_nobody_in(browser, app_url):
    context, tab = fresh(browser)
    tab.goto(f"{app_url}/sandbox")
    sign_in(tab, BOSS, BOSS_PASSWORD)
    tab.get_by_role("heading", name="Sandbox").wait_for()
    old = session_cookie(context)
    tab.get_by_role("button", name="Sign out").click()
    tab.get_by_role("heading", name="Sign in").wait_for()
    tab.get_by_text("You signed out.").wait_for()
    assert session_cookie(context, present=False) is None
    tab.reload()
    tab.get_by_role("heading", name="Sign in").wait_for()
    assert tab.get_by_text("Signed in as").count() == 0
    context.close()

    replayed = {key: old[key] for key in ("name", "value", "domain", "path", "sameSite")}
    context, tab = fresh(browser, [replayed])  # someone who copied the cookie before the sign-out
    tab.goto(f"{app_url}/sandbox")
    tab.get_by_role("heading", name="Sign in").wait_for()
    tab.get_by_text(re.compile(r"This sign-in has ended \(signed out\)")).wait_for()
    assert tab.get_by_text("Signed in as").count() == 0 and tab.get_by_role("heading", name="Sandbox").count() == 0
    clean(tab)
    assert session_cookie(context, present=False) is None  # and the dead cookie is cleared
    context.close()


def test_the_instance_admin_creates_a_tenant_and_its_editor_who_sees_only_it(browser, app_url):
    context, tab = fresh(browser)
    tab.goto(f"{app_url}/tenants")
    sign_in(tab, BOSS, BOSS_PASSWORD)
    tab.get_by_role("heading", name="Tenants").wait_for()
    tab.get_by_role("textbox", name="Name").fill("Acme Shop")
    tab.get_by_role("textbox", name="Slug").fill("acme-shop")
    tab.get_by_role("button", name="Create the tenant").click()
    tab.get_by_text("Created tenant 'acme-shop' (Acme Shop)").wait_for()
    tab.get_by_role("textbox", name="E-mail").fill(EDITOR)
    tab.get_by_label(re.compile("Initial password")).fill(EDITOR_PASSWORD)
    role = tab.locator("[data-testid=stSelectbox]").filter(has_text="Role")
    role.click()
    tab.get_by_role("option", name="editor").click()
    tab.get_by_role("button", name="Add the user").click()
    tab.get_by_text(f"{EDITOR} is editor of 'acme-shop'").wait_for()
    clean(tab)
    shot(tab, "tenants-created.png")
    switch = tab.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").filter(has_text="Tenant")
    switch.click()
    tab.get_by_role("option", name="Acme Shop (admin)").click()
    tab.wait_for_url(re.compile(r"tenant=acme-shop"))
    tab.locator("[data-testid=stSidebarNav]").get_by_text("Gap backlog").click()
    tab.get_by_role("heading", name="Gap backlog").wait_for()
    tab.reload()  # a reload keeps the picked tenant (the URL names it), not the first of the list
    tab.get_by_role("heading", name="Gap backlog").wait_for()
    assert tab.url.endswith("/gaps?tenant=acme-shop")
    switch.click()
    tab.get_by_role("option", name="Acme Shop (admin)", selected=True).wait_for()
    tab.keyboard.press("Escape")
    context.close()

    context, tab = fresh(browser)  # the editor, in a browser of their own
    tab.goto(app_url)
    sign_in(tab, EDITOR, EDITOR_PASSWORD)
    tab.get_by_role("heading", name="Sources").wait_for()
    switch = tab.locator("[data-testid=stSidebar] [data-testid=stSelectbox]").filter(has_text="Tenant")
    switch.click()
    assert tab.get_by_role("option").all_inner_texts() == ["Acme Shop (editor)"]
    tab.keyboard.press("Escape")
    nav = tab.locator("[data-testid=stSidebarNav]").inner_text()
    assert "Tenants" not in nav and "Settings" not in nav and "Sources" in nav
    assert session_cookie(context) is not None  # the sign-in's cookie is written before the URL is typed
    tab.goto(f"{app_url}/tenants")  # the URL of a page the editor may not open says so
    tab.get_by_text("Tenants is not open to you").wait_for()
    assert tab.get_by_role("button", name="Create the tenant").count() == 0
    clean(tab)
    shot(tab, "tenants-editor-view.png")
    context.close()
