"""``POST /v1/cards/{id}/approve|reject`` through the real app, with real customer tokens: the card event of an
identified conversation, one execution per card whatever the clicks, the stored decision for a repeated click (same
status, same bytes), each refusal with its own code, and a card that is not the caller's answering exactly like a
missing one."""
from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timezone

import pytest

from api.cards import answer
from core.actions import builtin
from core.actions.cards import Decision
from core.actions.model import Execution, OpSource
from core.runtime import open_runtime
from core.tenancy import site_keys
from core.tenancy.context import local_operator
from tests.api.test_chat import Api, acme, names, only_done  # noqa: F401  (the fixture)
from tests.conftest import TEST_TUNING
from tests.fakes import MovableClock, ScriptedProvider

ASKED = "Cambia mi e-mail de contacto a nuevo@example.com"
CARD_KEYS = {"id", "operation", "title", "preview", "params", "expires_at", "status"}


@pytest.fixture
def clock():
    return MovableClock(datetime.now(timezone.utc).replace(microsecond=0))


@pytest.fixture
def rt(settings, embedder, clock):  # the store's clock moves (card expiry); tokens keep the wall clock
    runtime = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING, clock=clock)
    yield runtime
    runtime.close()


class Cards(Api):
    """The app with a scripted provider per turn (``script``), and the calls of a widget."""

    def __init__(self, rt, environ=None, **kwargs):
        self.script: list = []
        super().__init__(rt, environ, provider=lambda: self.script.pop(0), **kwargs)

    def token(self, customer: str, slug: str = "acme") -> str:
        return site_keys.sign_customer_token(site_keys.ensure(local_operator(self.rt.store, slug), self.rt.store)
                                             .secret, customer)

    def propose(self, customer: str = "alice", email: str = "nuevo@example.com") -> dict:
        """An identified conversation in which the model proposes the e-mail change: the card event."""
        self.script.append(ScriptedProvider(("update_contact_email", {"new_email": email})))
        events = self.events(ASKED, token=self.token(customer))
        return dict(events)["card"]

    def click(self, card_id: str, verb: str = "approve", *, customer: str | None = "alice", slug: str = "acme",
              token: str | None = None):
        headers = {"X-Site-Key": self.key(slug)}
        if token or customer:
            headers["X-Customer-Token"] = token or self.token(customer, slug)
        return self.client.post(f"/v1/cards/{card_id}/{verb}", headers=headers)


@pytest.fixture
def api(rt, acme):  # noqa: F811
    client = Cards(rt)
    yield client
    client.close()


def email_of(rt, customer: str = "alice", slug: str = "acme") -> str:
    found = builtin.profile(local_operator(rt.store, slug), rt.store, customer)
    return found["email"] if found else ""


def events_of(rt, card_id: str, slug: str = "acme") -> list[str]:
    return [row["event"] for row in rt.actions.ledger(local_operator(rt.store, slug), card_id)]


# -- the card event -----------------------------------------------------------------------------------------
def test_an_identified_conversation_streams_the_card_after_the_text_and_before_done(api, rt):
    builtin.save_profile(local_operator(rt.store, "acme"), rt.store, "alice", "vieja@example.com")
    api.script.append(ScriptedProvider(("update_contact_email", {"new_email": "nuevo@example.com"})))
    events = api.events(ASKED, token=api.token("alice"))
    order = names(events)
    assert order.index("text") < order.index("card") < order.index("done") and order.count("card") == 1
    card = dict(events)["card"]
    assert set(card) == CARD_KEYS and card["status"] == "proposed" and card["operation"] == "update_contact_email"
    assert card["params"] == {"new_email": "nuevo@example.com"}
    assert card["preview"] == [{"label": "e-mail de contacto", "before": "vieja@example.com",
                                "value": "nuevo@example.com"}]
    assert datetime.fromisoformat(card["expires_at"]) > datetime.now(timezone.utc)
    assert only_done(events)["status"] == "card"
    assert email_of(rt) == "vieja@example.com"  # nothing changes until Approve


def test_an_anonymous_visitor_is_offered_no_write_tool_and_gets_no_card(api, rt):
    provider = ScriptedProvider("No puedo cambiar datos en esta conversación.")
    api.script.append(provider)
    events = api.events(ASKED)
    assert "card" not in names(events) and only_done(events)["status"] != "card"
    assert "update_contact_email" not in provider.calls[0]["tools"]
    assert rt.actions.cards(local_operator(rt.store, "acme")) == []


# -- approve, reject, repeated clicks -----------------------------------------------------------------------
def test_approve_executes_once_and_a_repeated_click_answers_the_same_bytes(api, rt):
    card = api.propose()
    first = api.click(card["id"])
    assert first.status_code == 200, first.text
    body = first.json()["card"]
    assert body["id"] == card["id"] and body["status"] == "executed" and body["reason"]
    assert body["result"]["ok"] is True and body["result"]["body"]["email"] == "nuevo@example.com"
    assert email_of(rt) == "nuevo@example.com"
    again = api.click(card["id"])
    assert (again.status_code, again.content) == (first.status_code, first.content)
    assert first.headers["cache-control"] == "no-store"
    assert events_of(rt, card["id"]).count("executed") == 1


def test_reject_changes_nothing_repeats_and_a_later_approve_is_consumed(api, rt):
    card = api.propose()
    rejected = api.click(card["id"], "reject")
    assert rejected.status_code == 200 and rejected.json()["card"]["status"] == "rejected"
    again = api.click(card["id"], "reject")
    assert (again.status_code, again.content) == (200, rejected.content)
    late = api.click(card["id"], "approve")
    assert late.status_code == 409
    assert late.json()["error"]["code"] == "card_consumed" and late.json()["card"]["status"] == "rejected"
    assert api.click(card["id"], "approve").content == late.content
    assert email_of(rt) == "" and "executed" not in events_of(rt, card["id"])


def test_a_reject_after_the_execution_is_consumed_and_changes_nothing(api, rt):
    card = api.propose()
    assert api.click(card["id"]).status_code == 200
    late = api.click(card["id"], "reject")
    assert late.status_code == 409 and late.json()["error"]["code"] == "card_consumed"
    assert late.json()["card"]["status"] == "executed" and email_of(rt) == "nuevo@example.com"


# -- not the caller's card ----------------------------------------------------------------------------------
def test_anonymous_another_customer_another_tenant_and_a_missing_card_answer_the_same_404(api, rt):
    card = api.propose()
    globex = local_operator(rt.store, "globex")
    site_keys.ensure(globex, rt.store)
    answers = {
        "missing": api.click("c" + "0" * 20),
        "anonymous": api.click(card["id"], customer=None),
        "other customer": api.click(card["id"], customer="bob"),
        "other tenant": api.click(card["id"], slug="globex"),  # alice of globex: a token of globex's secret
        "malformed": api.click("no such card!"),
        "too long": api.click("c" * 80),
        "reject, anonymous": api.click(card["id"], "reject", customer=None),
    }
    missing = answers["missing"]
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "card_not_found"
    for who, response in answers.items():
        assert (response.status_code, response.content, sorted(response.headers.items())) == (
            404, missing.content, sorted(missing.headers.items())), who
    assert events_of(rt, card["id"]) == ["proposed"] and email_of(rt) == ""  # nobody decided anything
    assert api.click(card["id"]).json()["card"]["status"] == "executed"  # its own customer still can


def test_a_token_of_another_tenant_is_refused_before_any_card_is_looked_at(api):
    card = api.propose()
    response = api.click(card["id"], token=api.token("alice", "globex"))  # acme's key, globex's signature
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_customer_token"


# -- refusals -----------------------------------------------------------------------------------------------
def test_an_expired_card_answers_card_expired_and_runs_nothing(api, rt, clock):
    card = api.propose()
    clock.advance(minutes=rt.settings.card_minutes + 1)
    expired = api.click(card["id"])
    assert expired.status_code == 409
    assert expired.json()["error"]["code"] == "card_expired" and expired.json()["card"]["status"] == "expired"
    assert api.click(card["id"]).content == expired.content and email_of(rt) == ""


def test_the_kill_switch_refuses_the_approval_and_says_why(api, rt):
    card = api.propose()
    rt.actions.set_switch(local_operator(rt.store, "acme"), True, "maintenance")
    refused = api.click(card["id"])
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "card_refused"
    assert refused.json()["card"]["status"] == "refused"
    assert "switched its actions off" in refused.json()["card"]["reason"]
    assert "maintenance" not in refused.text  # the admin's note stays with the staff
    rt.actions.set_switch(local_operator(rt.store, "acme"), False)
    assert api.click(card["id"]).content == refused.content and email_of(rt) == ""


def test_a_state_changed_since_the_card_is_refused_naming_the_change(api, rt):
    card = api.propose()
    builtin.save_profile(local_operator(rt.store, "acme"), rt.store, "alice", "otra@example.com")
    refused = api.click(card["id"])
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "card_refused"
    assert "otra@example.com" in refused.json()["card"]["reason"] and email_of(rt) == "otra@example.com"


class FailingShop:
    """The built-in source replaced by a backend that answers an error when the change runs."""

    def __init__(self):
        self.calls = 0

    def current_state(self, ctx, op, params, customer_id):
        return {"email": ""}

    def execute(self, ctx, op, params, customer_id, idempotency_key):
        self.calls += 1
        return Execution(False, "http_503", {"error": "the CRM is down"}, "The CRM answered 503.")


def test_a_failed_execution_is_card_failed_with_the_error_in_result_and_never_runs_again(settings, embedder, acme):  # noqa: F811
    shop = FailingShop()
    rt = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING, executors={OpSource.BUILTIN: shop})
    api = Cards(rt)
    try:
        card = api.propose()
        failed = api.click(card["id"])
        assert failed.status_code == 409 and failed.json()["error"]["code"] == "card_failed"
        assert failed.json()["card"]["status"] == "failed"
        assert failed.json()["card"]["result"]["body"] == {"error": "the CRM is down"}
        assert api.click(card["id"]).content == failed.content and shop.calls == 1
    finally:
        api.close()
        rt.close()


class SlowShop(FailingShop):
    """A backend that takes a moment to apply the change, so that clicks arrive while it runs."""

    def execute(self, ctx, op, params, customer_id, idempotency_key):
        self.calls += 1
        time.sleep(0.4)
        return Execution(True, "ok", {"email": params["new_email"], "key": idempotency_key}, "Changed.")


def test_simultaneous_clicks_execute_once_and_all_get_the_same_bytes(settings, embedder, acme):  # noqa: F811
    shop = SlowShop()
    rt = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING, executors={OpSource.BUILTIN: shop})
    api = Cards(rt)
    try:
        card = api.propose()
        started, finished = [], []

        def click(_):
            started.append(time.monotonic())
            response = api.click(card["id"])
            finished.append(time.monotonic())
            return response

        with ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(click, range(8)))
        assert max(started) < min(finished)  # every click was under way while the change ran
        assert {(a.status_code, a.content) for a in answers} == {(200, answers[0].content)}
        assert shop.calls == 1 and answers[0].json()["card"]["result"]["body"]["key"] == f"card-{card['id']}"
    finally:
        api.close()
        rt.close()


def test_a_card_another_click_is_carrying_out_answers_202_card_in_progress(api):
    card = api.propose()
    decision = Decision(api.rt.actions.card(local_operator(api.rt.store, "acme"), card["id"]), "in_progress",
                        "another approval of this card is executing it; ask again in a moment", True)
    response = answer(decision)
    body = response.body.decode()
    assert response.status_code == 202 and response.headers["retry-after"] == "2"
    assert '"code":"card_in_progress"' in body and '"retryable":true' in body and f'"id":"{card["id"]}"' in body


def test_clicks_are_rate_limited_per_address(rt, acme):  # noqa: F811
    api = Cards(rt, {"COBERTURA_RATE_PER_IP": "2"})
    try:
        answers = [api.click("c" + "0" * 20).status_code for _ in range(3)]
        assert answers == [404, 404, 429]
        limited = api.click("c" + "0" * 20)
        assert limited.json()["error"]["code"] == "rate_limited" and int(limited.headers["retry-after"]) >= 1
        api.script.append(ScriptedProvider("Hola, ¿en qué te ayudo?"))
        assert api.chat("hola").status_code == 200  # the questions keep a bucket of their own
    finally:
        api.close()
