"""The widget's confirmation card in headless Chromium, against the real endpoint (``served``: the offline responder,
the real cards routes): an identified customer (a token signed with the tenant's secret on the script tag) asks to
change their e-mail; the card shows the change as before -> after, its expiry and Approve / Reject; while the click
runs both buttons are off; afterwards the card says what happened, in the visitor's language, and has no buttons.
Screenshots (COBERTURA_SCREENSHOTS): card.png (the proposed card) and approved.png (after Approve)."""
from __future__ import annotations

import urllib.request
from contextlib import contextmanager

from core.actions import builtin
from core.tenancy import site_keys
from core.tenancy.context import local_operator
from tests.api.widget_page import ask, mock_chat, sse
from tests.browser import needs_chromium, shot

pytestmark = needs_chromium  # the fixtures served and browser: tests/api/conftest.py

#: holds every card click until the test releases it (the widget calls the global fetch at click time)
HOLD_CLICKS = """() => {
  const real = window.fetch.bind(window);
  window.__cardClicks = [];
  window.__held = new Promise((release) => { window.__release = release; });
  window.fetch = (url, options) => {
    if (!String(url).includes('/v1/cards/')) return real(url, options);
    window.__cardClicks.push({url: String(url), headers: (options || {}).headers || {}});
    return window.__held.then(() => real(url, options));
  };
}"""


@contextmanager
def identified_tab(browser, served, customer: str):
    """The demo page as a business serves it to a signed-in customer: the widget tag carries their token."""
    ctx = local_operator(served.rt.store, "acme")
    token = site_keys.sign_customer_token(site_keys.ensure(ctx, served.rt.store).secret, customer)
    with urllib.request.urlopen(f"{served.url}/demo") as response:
        html = response.read().decode("utf-8")
    html = html.replace('data-site-key="', f'data-customer-token="{token}" data-site-key="', 1)
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    tab = context.new_page()
    tab.set_default_timeout(20_000)
    tab.dialogs = []
    tab.on("dialog", lambda d: (tab.dialogs.append(d.message), d.dismiss()))
    tab.route(f"{served.url}/account", lambda route: route.fulfill(status=200, body=html,
                                                                        headers={"content-type": "text/html"}))
    tab.goto(f"{served.url}/account")
    tab.locator("#cob-bubble").click()
    tab.locator("#cob-panel").wait_for(state="visible")
    try:
        yield tab, token
    finally:
        context.close()


def email_of(served, customer: str) -> str:
    found = builtin.profile(local_operator(served.rt.store, "acme"), served.rt.store, customer)
    return found["email"] if found else ""


def test_approve_in_the_widget_changes_the_email_once_and_says_so(browser, served):
    builtin.save_profile(local_operator(served.rt.store, "acme"), served.rt.store, "ana", "ana.vieja@example.com")
    with identified_tab(browser, served, "ana") as (tab, token):
        turn = ask(tab, "Cambia mi e-mail de contacto a ana.nueva@example.com")
        assert turn.get_attribute("data-status") == "card"
        card = turn.locator(".cob-card")
        assert card.locator(".cob-card-title").inner_text() == "Cambiar mi e-mail de contacto"
        row = card.locator("tr[data-change]")
        assert row.locator("th").inner_text() == "e-mail de contacto"
        assert row.locator(".cob-card-before").inner_text() == "ana.vieja@example.com"
        assert row.locator(".cob-card-after").inner_text() == "ana.nueva@example.com"
        assert card.locator(".cob-card-expires").inner_text().startswith("Caduca: ")
        approve, reject = card.locator('[data-card-action="approve"]'), card.locator('[data-card-action="reject"]')
        assert approve.inner_text() == "Aprobar" and reject.inner_text() == "Rechazar"
        assert email_of(served, "ana") == "ana.vieja@example.com"  # nothing changed before the click
        shot(tab, "card.png", card)

        tab.evaluate(HOLD_CLICKS)
        approve.click()
        assert approve.is_disabled() and reject.is_disabled()  # the click is under way: no second one
        assert card.locator(".cob-card-result").inner_text() == "Un momento…"
        [click] = tab.evaluate("window.__cardClicks")
        assert click["url"] == f"{served.url}/v1/cards/{card.get_attribute('data-card-id')}/approve"
        assert click["headers"]["X-Site-Key"] == served.key and click["headers"]["X-Customer-Token"] == token
        tab.evaluate("window.__release()")

        card.locator("xpath=self::*[@data-card-status='executed']").wait_for()
        assert card.locator(".cob-card-result").inner_text() == "Hecho: el cambio se ha aplicado."
        assert card.locator("button").count() == 0 and card.locator(".cob-card-expires").count() == 0
        assert email_of(served, "ana") == "ana.nueva@example.com"
        shot(tab, "approved.png", card)
        assert tab.dialogs == []


def test_reject_in_the_widget_changes_nothing(browser, served):
    builtin.save_profile(local_operator(served.rt.store, "acme"), served.rt.store, "bruno", "bruno@example.com")
    with identified_tab(browser, served, "bruno") as (tab, _):
        card = ask(tab, "Quiero cambiar mi correo electrónico a bruno.nuevo@example.com").locator(".cob-card")
        card.locator('[data-card-action="reject"]').click()
        card.locator("xpath=self::*[@data-card-status='rejected']").wait_for()
        assert card.locator(".cob-card-result").inner_text() == "Rechazado: no se ha cambiado nada."
        assert card.locator("button").count() == 0
        assert email_of(served, "bruno") == "bruno@example.com"
        shot(tab, "rejected.png", card)


def test_a_refused_approval_says_so_with_its_reason(browser, served):
    admin = local_operator(served.rt.store, "acme")
    with identified_tab(browser, served, "carla") as (tab, _):
        card = ask(tab, "Quiero cambiar mi correo electrónico a carla@example.com").locator(".cob-card")
        served.rt.actions.set_switch(admin, True, "mantenimiento")
        try:
            card.locator('[data-card-action="approve"]').click()
            card.locator("xpath=self::*[@data-card-status='refused']").wait_for()
        finally:
            served.rt.actions.set_switch(admin, False)
        assert card.locator(".cob-card-result").inner_text() == "No se ha aplicado y no se ha cambiado nada."
        reason = card.locator(".cob-card-reason").inner_text()
        assert "switched its actions off" in reason and "mantenimiento" not in reason
        assert card.locator("button").count() == 0 and email_of(served, "carla") == ""
        shot(tab, "refused.png", card)


def test_an_anonymous_visitor_never_sees_a_card(page, served):  # page: the demo page, no customer token
    turn = ask(page, "Cambia mi e-mail de contacto a nadie@example.com")
    assert turn.get_attribute("data-status") != "card" and turn.locator(".cob-card").count() == 0


def test_server_strings_on_a_card_are_text_never_markup(page):
    hostile = '<img src=x onerror="window.__pwned=1">'
    card = {"id": "c1", "operation": "x", "title": hostile, "params": {},
            "preview": [{"label": hostile, "before": hostile, "value": hostile}],
            "expires_at": "2030-01-01T00:00:00+00:00", "status": "proposed"}
    done = {"truncated": False, "status": "card", "conversation_id": "conv-9", "language": "en", "usage": {}}
    mock_chat(page, lambda q: sse(("text", {"d": "Please confirm."}), ("card", card), ("done", done)))
    box = ask(page, "change it").locator(".cob-card")
    assert box.locator(".cob-card-title").inner_text() == hostile and box.locator("img").count() == 0
    assert box.locator(".cob-card-after").inner_text() == hostile
    assert box.locator('[data-card-action="approve"]').inner_text() == "Approve"
    assert page.evaluate("window.__pwned") is None and page.dialogs == []
