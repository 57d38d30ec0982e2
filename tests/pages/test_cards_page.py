"""The Cards page (the staff's queue of confirmation cards), driven through Streamlit's AppTest.

Cards are proposed the way customers cause them: an identified customer's turn through the turn pipeline with the
offline responder, which proposes the built-in ``update_contact_email`` card."""
from __future__ import annotations

import csv
import io
from datetime import datetime, timezone

import pytest
from streamlit.delta_generator import DeltaGenerator
from streamlit.testing.v1 import AppTest

from core.actions.builtin import profile, save_profile
from core.agent.factory import make_agent
from core.tenancy.context import local_customer, local_operator
from core.tenancy.tenants import create_tenant
from pages.display import sentence
from tests.apptest import signed_in
from tests.fakes import MovableClock

PAGE = "pages/cards.py"
OLD, NEW = "ana.old@ejemplo.com", "ana.nueva@ejemplo.com"


@pytest.fixture
def clock(runtime, monkeypatch):
    """The store's clock (it stamps cards and decides expiry), moved by the test."""
    moving = MovableClock(datetime.now(timezone.utc).replace(microsecond=0))
    monkeypatch.setattr(runtime.store, "clock", moving)
    return moving


@pytest.fixture
def acme(runtime, clock):
    create_tenant(runtime.store, "acme", "Acme")
    customer = local_customer(runtime.store, "acme", "cust-1")
    save_profile(customer, runtime.store, "cust-1", email=OLD)
    return runtime, customer


def propose(rt, customer, new: str = NEW) -> str:
    """The customer asks, the offline responder proposes the card; its id."""
    result = rt.turns.run(customer, make_agent(rt, ctx=customer), f"Cambia mi correo electrónico a {new}",
                          channel="identified")
    assert result.status == "card", result.answer
    [card] = result.cards
    return card["id"]


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(store, role: str = "admin", card: str | None = None) -> AppTest:
    at = signed_in(store, "acme", role)
    ok(at.run())
    at.switch_page(PAGE)
    if card is not None:
        at.query_params["card"] = card
    return ok(at.run())


def click(at: AppTest, key: str) -> AppTest:
    return ok(at.button(key=key).click().run())


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error", "title")
                     for e in getattr(at, kind)).replace("\\", "")


def plain(text: str) -> str:
    """A message as read (the page escapes markdown in what it quotes)."""
    return text.replace("\\", "")


def said(rt, card_id: str, what: str) -> str:
    """What the page says after a click on ``card_id``: what happened, then the reason the core stored (its words)."""
    card = rt.actions.card(local_operator(rt.store, "acme"), card_id)
    return f"**{card.title}** (`{card_id}`): {what} — {sentence(card.reason)}"


def email_of(rt, customer) -> str:
    return profile(customer, rt.store, "cust-1")["email"]


def executions(rt) -> int:
    return rt.store.query("SELECT COUNT(*) AS n FROM card_executions")[0]["n"]


def test_a_proposed_card_shows_the_change_its_parameters_and_who_asked(acme):
    rt, customer = acme
    card_id = propose(rt, customer)
    at = open_page(rt.store)
    assert at.segmented_control(key="cards_status").value == "Proposed"
    shown = texts(at)
    assert "#### Cambiar mi e-mail de contacto" in shown
    assert f"- **e-mail de contacto:** ~~`{OLD}`~~ → **`{NEW}`**" in shown
    assert "operation `update_contact_email`" in shown and "customer **cust-1**" in shown
    assert "channel **identified**" in shown and "expires " in shown and "(in 15 min)" in shown
    assert at.json[0].value == f'{{"new_email": "{NEW}"}}'
    assert [b.key for b in at.main.button] == [f"card_approve_{card_id}", f"card_reject_{card_id}"]
    assert at.expander[0].label == "Ledger (1 event)"
    assert list(at.dataframe[0].value["Event"]) == ["proposed"]
    assert list(at.dataframe[0].value["Who"]) == [customer.actor]


def test_approve_executes_the_card_once(acme):
    rt, customer = acme
    card_id = propose(rt, customer)
    at = open_page(rt.store)
    assert email_of(rt, customer) == OLD  # nothing changes until someone approves
    click(at, f"card_approve_{card_id}")
    [done] = at.success
    assert plain(done.value) == said(rt, card_id, "Approved and executed")
    assert "The contact e-mail was changed." in done.value.replace("\\", "")
    assert email_of(rt, customer) == NEW and executions(rt) == 1
    assert not at.main.button and "No proposed cards." in texts(at)  # it left the Proposed queue
    at.segmented_control(key="cards_status").set_value("Executed").run()
    assert "decided " in texts(at) and "by admin@acme.test" in texts(at)
    assert not [b for b in at.main.button if str(b.key).startswith("card_approve")]  # no second approval from here
    events = list(at.dataframe[0].value["Event"])
    assert events == ["proposed", "approved", "recheck", "executed"]
    again = rt.actions.decide(local_operator(rt.store, "acme"), card_id, True)  # a repeated click anywhere
    assert (again.outcome, again.repeated, executions(rt)) == ("executed", True, 1)


def test_reject_executes_nothing(acme):
    rt, customer = acme
    card_id = propose(rt, customer)
    at = open_page(rt.store, "editor")  # editors decide too
    click(at, f"card_reject_{card_id}")
    assert plain(at.success[0].value) == said(rt, card_id, "Rejected: nothing was executed")
    assert email_of(rt, customer) == OLD and executions(rt) == 0
    card = rt.actions.card(local_operator(rt.store, "acme"), card_id)
    assert (card.status, card.decided_by) == ("rejected", "editor@acme.test")
    at.segmented_control(key="cards_status").set_value("All").run()
    assert f"Reason: {sentence(card.reason)}" in texts(at).replace("**", "")
    assert "by editor@acme.test" in texts(at)


def test_an_editor_approves_too_and_qa_does_not_see_the_queue(acme):
    rt, customer = acme
    card_id = propose(rt, customer)
    at = open_page(rt.store, "editor")
    click(at, f"card_approve_{card_id}")
    assert "Approved and executed" in at.success[0].value and email_of(rt, customer) == NEW
    qa = signed_in(rt.store, "acme", "qa")
    ok(qa.run())
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        qa.switch_page(PAGE)


def test_with_actions_switched_off_approve_is_refused_and_changes_nothing(acme):
    rt, customer = acme
    card_id = propose(rt, customer)
    rt.actions.set_switch(local_operator(rt.store, "acme"), True, "audit")
    at = open_page(rt.store)
    stopped = rt.actions.stopped(local_operator(rt.store, "acme"))
    assert plain(at.warning[0].value).startswith(f"**Actions are off:** {sentence(stopped)}")
    click(at, f"card_approve_{card_id}")
    assert [plain(w.value) for w in at.warning if "Not executed" in w.value] == [
        said(rt, card_id, "Not executed: refused at the click")]
    assert stopped in plain(at.warning[-1].value)  # the refusal says why
    assert email_of(rt, customer) == OLD and executions(rt) == 0


def test_proposed_cards_come_first_then_the_newest(acme, clock):
    rt, customer = acme
    first = propose(rt, customer, "uno@ejemplo.com")
    clock.advance(minutes=1)
    second = propose(rt, customer, "dos@ejemplo.com")
    clock.advance(minutes=1)
    third = propose(rt, customer, "tres@ejemplo.com")
    rt.actions.decide(local_operator(rt.store, "acme"), third, False)
    at = open_page(rt.store)
    at.segmented_control(key="cards_status").set_value("All").run()
    approve_order = [b.key for b in at.main.button if str(b.key).startswith("card_approve_")]
    assert approve_order == [f"card_approve_{second}", f"card_approve_{first}"]
    ledgers = [e.label for e in at.expander]
    assert len(ledgers) == 3 and ledgers[2] == "Ledger (2 events)"  # the rejected one comes last


def test_the_ledger_downloads_as_csv(acme, monkeypatch):
    rt, customer = acme
    card_id = propose(rt, customer)
    served = {}
    original = DeltaGenerator.download_button

    def download_button(self, label, data, **kwargs):  # what the button would serve when clicked
        served[label] = data
        return original(self, label, data, **kwargs)

    monkeypatch.setattr(DeltaGenerator, "download_button", download_button)
    at = open_page(rt.store)
    click(at, f"card_approve_{card_id}")
    assert [b.label for b in at.get("download_button")] == ["Download ledger (CSV)"]
    rows = list(csv.DictReader(io.StringIO(served["Download ledger (CSV)"]())))
    assert [(r["card_id"], r["actor"], r["channel"], r["event"]) for r in rows] == [
        (card_id, customer.actor, "identified", "proposed"), (card_id, "admin@acme.test", "admin", "approved"),
        (card_id, "admin@acme.test", "admin", "recheck"), (card_id, "admin@acme.test", "admin", "executed")]
    assert rows[3]["reason"] == "The contact e-mail was changed."
    assert all(r["at"] for r in rows) and NEW in rows[0]["detail"]


def test_a_card_in_the_url_opens_alone_and_a_foreign_one_answers_like_a_missing_one(acme):
    rt, customer = acme
    mine = propose(rt, customer)
    create_tenant(rt.store, "globex", "Globex")
    theirs = propose(rt, local_customer(rt.store, "globex", "cust-9"))
    at = open_page(rt.store, card=mine)
    assert [b.key for b in at.main.button] == ["cards_all", f"card_approve_{mine}", f"card_reject_{mine}"]
    foreign = texts(open_page(rt.store, card=theirs))
    missing = texts(open_page(rt.store, card="c0000000000000000000"))
    assert foreign.replace(theirs, "ID") == missing.replace("c0000000000000000000", "ID")
    assert "There is no card `ID` in this tenant." in foreign.replace(theirs, "ID")
    assert "cust-9" not in foreign and "globex" not in foreign.lower()


def test_an_expired_card_says_so_at_the_click(acme, clock):
    rt, customer = acme
    card_id = propose(rt, customer)
    clock.advance(minutes=16)  # cards last 15 minutes (COBERTURA_CARD_MINUTES)
    at = open_page(rt.store)
    assert "(passed)" in texts(at)
    click(at, f"card_approve_{card_id}")
    assert [plain(w.value) for w in at.warning] == [said(rt, card_id, "Not executed: the card had expired")]
    assert rt.actions.card(local_operator(rt.store, "acme"), card_id).status == "expired"
    assert email_of(rt, customer) == OLD and executions(rt) == 0
