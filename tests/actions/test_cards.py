"""Confirmation cards through the turn pipeline and the click (C1-C3), on the built-in e-mail operation: a card is the
only effect of a write tool, the click re-checks expiry, state and switches, and every decision is in the ledger."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from core.actions import builtin
from core.actions.cards import CardNotFound
from core.agent.factory import make_agent
from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy import settings as tenant_settings
from core.tenancy.context import local_customer, local_operator
from core.tenancy.tenants import create_tenant
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, MovableClock, ScriptedProvider

EMAIL = "update_contact_email"


@pytest.fixture
def clock():
    return MovableClock(datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc))


@pytest.fixture
def world(tmp_path, clock):
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder(),
                      tuning=TEST_TUNING, clock=clock)
    for slug in ("acme", "globex"):
        create_tenant(rt.store, slug, slug.title())
    staff = local_operator(rt.store, "acme")
    builtin.save_profile(staff, rt.store, "c1", "old@example.com")
    yield rt, staff
    rt.close()


def propose(rt, customer="c1", arguments=None, message="Cambia mi e-mail a nueva@example.com"):
    ctx = local_customer(rt.store, "acme", customer)
    provider = ScriptedProvider((EMAIL, arguments if arguments is not None else {"new_email": "nueva@example.com"}),
                                "unused", "unused")
    return ctx, rt.turns.run(ctx, make_agent(rt, provider, ctx=ctx), message, channel="identified"), provider


def email_of(rt, staff, customer="c1"):
    return builtin.profile(staff, rt.store, customer)["email"]


def test_a_write_tool_only_proposes_a_card_and_the_turn_says_so(world):
    rt, staff = world
    ctx, result, provider = propose(rt)
    assert result.status == "card" and "Aprobar" in result.answer and result.gap_id is None
    [card] = result.cards
    assert card["operation"] == EMAIL and card["status"] == "proposed" and card["params"] == {"new_email":
                                                                                           "nueva@example.com"}
    assert card["title"] == "Cambiar mi e-mail de contacto"  # the built-in speaks the question's language
    assert card["preview"] == [{"label": "e-mail de contacto", "before": "old@example.com",
                                "value": "nueva@example.com"}]
    assert len(provider.calls) == 1  # the card ends the turn: no second round
    assert email_of(rt, staff) == "old@example.com"
    assert [e["event"] for e in rt.actions.ledger(staff, card["id"])] == ["proposed"]


def test_approval_executes_the_frozen_card_once_and_a_second_click_returns_the_same_body(world):
    rt, staff = world
    ctx, result, _ = propose(rt)
    card_id = result.cards[0]["id"]
    first = rt.actions.decide(ctx, card_id, True)
    assert first.outcome == "executed" and email_of(rt, staff) == "nueva@example.com"
    again = rt.actions.decide(ctx, card_id, True)
    assert again.repeated and again.as_dict() == first.as_dict()
    assert rt.actions.decide(ctx, card_id, False).outcome == "consumed"
    events = [e["event"] for e in rt.actions.ledger(staff, card_id)]
    assert events == ["proposed", "approved", "recheck", "executed", "repeated", "repeated"]


def test_staff_may_decide_a_card_and_another_customer_or_tenant_cannot_even_see_it(world):
    rt, staff = world
    _, result, _ = propose(rt)
    card_id = result.cards[0]["id"]
    messages = set()
    for stranger in (local_customer(rt.store, "acme", "c2"), local_operator(rt.store, "globex"),
                     local_customer(rt.store, "globex", "c1")):
        for attempt in (lambda who: rt.actions.decide(who, card_id, True), lambda who: rt.actions.card(who, card_id),
                        lambda who: rt.actions.ledger(who, card_id)):
            with pytest.raises(CardNotFound) as err:
                attempt(stranger)
            messages.add(str(err.value))
    with pytest.raises(CardNotFound) as missing:
        rt.actions.card(staff, "c0000000000000000000")
    assert messages == {str(missing.value)}  # a foreign card answers exactly like a missing one
    assert rt.actions.decide(staff, card_id, False).outcome == "rejected"
    assert rt.actions.decide(local_customer(rt.store, "acme", "c1"), card_id, True).outcome == "consumed"
    assert email_of(rt, staff) == "old@example.com"


def test_an_expired_card_never_runs(world, clock):
    rt, staff = world
    ctx, result, _ = propose(rt)
    clock.advance(minutes=rt.settings.card_minutes, seconds=1)
    decision = rt.actions.decide(ctx, result.cards[0]["id"], True)
    assert decision.outcome == "expired" and "expired" in decision.reason
    assert rt.actions.decide(ctx, result.cards[0]["id"], True).as_dict() == decision.as_dict()
    assert email_of(rt, staff) == "old@example.com"


def test_a_state_changed_since_the_card_refuses_it_naming_what_changed(world):
    rt, staff = world
    ctx, result, _ = propose(rt)
    builtin.save_profile(staff, rt.store, "c1", "changed@example.com")
    decision = rt.actions.decide(ctx, result.cards[0]["id"], True)
    assert decision.outcome == "refused" and "email was 'old@example.com', now 'changed@example.com'" in decision.reason
    assert email_of(rt, staff) == "changed@example.com"


@pytest.mark.parametrize("switch", ["actions", "tenant"])
def test_a_switched_off_tenant_executes_no_card(world, switch):
    rt, staff = world
    ctx, result, _ = propose(rt)
    if switch == "actions":
        rt.actions.set_switch(staff, True, "incident 42")
    else:
        tenant_settings.set_kill_switch(staff, rt.store, True)
    decision = rt.actions.decide(ctx, result.cards[0]["id"], True)
    assert decision.outcome == "refused" and "switched its" in decision.reason and "incident" not in decision.reason
    assert email_of(rt, staff) == "old@example.com"


def test_the_global_kill_switch_stops_cards_and_proposals(tmp_path, clock):
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "d"), "COBERTURA_KILL_SWITCH": "1"}),
                      embedder=HashEmbedder(), tuning=TEST_TUNING, clock=clock)
    try:
        create_tenant(rt.store, "acme", "Acme")
        ctx, result, _ = propose(rt)
        assert result.cards == [] and result.status != "card"
        assert rt.actions.stopped(ctx).startswith("the global kill switch")
    finally:
        rt.close()


def test_missing_parameters_are_asked_for_by_name_and_no_card_is_made(world):
    rt, _ = world
    _, result, _ = propose(rt, arguments={}, message="Quiero cambiar mi e-mail")
    assert result.status == "clarify" and result.cards == []
    assert "nuevo e-mail" in result.answer
    assert rt.actions.cards(local_operator(rt.store, "acme")) == []


def test_an_invalid_address_goes_back_to_the_model_and_proposes_nothing(world):
    rt, _ = world
    provider = ScriptedProvider((EMAIL, {"new_email": "not an address"}), "No puedo.", "No puedo.")
    ctx = local_customer(rt.store, "acme", "c1")
    result = rt.turns.run(ctx, make_agent(rt, provider, ctx=ctx), "cambia mi e-mail", channel="identified")
    assert result.cards == [] and "refuses" in provider.calls[1]["messages"][-1].content


def test_the_same_address_is_refused_in_the_customers_words_and_ends_the_turn(world):
    rt, _ = world
    _, result, provider = propose(rt, arguments={"new_email": "old@example.com"},
                                 message="Quiero cambiar mi correo electrónico de contacto")
    assert result.cards == [] and len(provider.calls) == 1
    assert result.status == "answered" and result.gap_id is None
    assert result.answer == "Ese dato ya es el actual: no hay nada que cambiar.\n\n- email: old@example.com [1]"
    assert result.citations[0]["live"] and result.citations[0]["path"] == "live/update_contact_email"


def test_a_switched_off_tenant_says_so_when_asked_for_a_change_and_records_no_gap(world):
    rt, staff = world
    rt.actions.set_switch(staff, True, "incident 42")
    _, result, _ = propose(rt)
    assert result.status == "error" and result.cards == [] and result.gap_id is None
    assert result.answer.startswith("Las gestiones automáticas están desactivadas") and "incident" not in result.answer


def test_the_ledger_exports_as_csv_with_customer_text_kept_inert(world):
    rt, staff = world
    ctx, result, _ = propose(rt, arguments={"new_email": "=cmd@example.com"}, message="cambia mi e-mail")
    csv_text = rt.actions.ledger_csv(staff)
    assert csv_text.splitlines()[0] == "card_id,at,actor,channel,event,reason,detail"
    assert result.cards[0]["id"] in csv_text and "\n=" not in csv_text and ",=" not in csv_text
    with pytest.raises(CardNotFound):
        rt.actions.ledger_csv(ctx)  # a customer never reads the tenant's ledger


def test_an_operation_edited_after_its_card_was_proposed_refuses_the_card(world):
    from core.actions import definitions

    rt, staff = world
    action = {"name": "add_note", "title": "Add a note", "description": "Adds a note to the customer's file.",
              "kind": "write", "method": "POST", "url": "http://127.0.0.1:9/notes",
              "parameters": {"type": "object", "properties": {"text": {"type": "string", "minLength": 3}},
                             "required": ["text"]}}
    definitions.save_http_action(staff, rt.store, action)
    ctx = local_customer(rt.store, "acme", "c1")
    provider = ScriptedProvider(("add_note", {"text": "call me back"}), "unused")
    result = rt.turns.run(ctx, make_agent(rt, provider, ctx=ctx), "Add a note: call me back", channel="identified")
    definitions.save_http_action(staff, rt.store, {**action, "url": "http://127.0.0.1:9/elsewhere"})
    decision = rt.actions.decide(ctx, result.cards[0]["id"], True)
    assert decision.outcome == "refused" and "was changed since the card was proposed" in decision.reason
