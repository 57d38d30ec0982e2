"""The Inbox shows the turn that handed a conversation over as a handoff, with its reason (#17 item 8), never as a
refusal. Conversations go through the real turn pipeline (offline responder) on the identified channel."""
from __future__ import annotations

from core.agent.factory import make_agent
from core.knowledge import sources
from tests.pages import test_inbox
from tests.pages.test_inbox import open_page, texts

acme = test_inbox.acme  # the Inbox tests' fixture: (runtime, tenant acme)

RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."
REFUSED = ":orange-badge[Refused: not covered]"
HANDED = ":violet-badge[Handed off to a person]"


def trained(rt, ctx):
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    rt.index.train(ctx)
    return make_agent(rt, ctx=ctx)


def test_the_second_uncovered_question_is_shown_as_the_handoff_with_its_reason(acme):
    rt, ctx = acme
    agent = trained(rt, ctx)
    first = rt.turns.run(ctx, agent, "¿Vendéis patinetes eléctricos?", channel="identified")
    second = rt.turns.run(ctx, agent, "¿Puedo pagar con bitcoin?", channel="identified",
                          conversation_id=first.conversation_id)
    assert (str(first.status), str(second.status)) == ("abstained", "handoff") and second.handoff_id
    shown = texts(open_page(rt.store))
    assert shown.count(REFUSED) == 1 and shown.count(HANDED) == 1
    assert shown.index(REFUSED) < shown.index(HANDED)  # the refusal first, then the turn that handed off
    assert "Handed off because of `not_covered_twice` — Two questions in a row that the knowledge base does not " \
           "cover" in shown


def test_a_customer_who_asks_for_a_person_is_shown_as_a_handoff_not_a_refusal(acme):
    rt, ctx = acme
    agent = trained(rt, ctx)
    asked = rt.turns.run(ctx, agent, "Quiero hablar con una persona, por favor", channel="identified")
    assert str(asked.status) == "handoff" and asked.handoff_id
    shown = texts(open_page(rt.store))
    assert REFUSED not in shown and shown.count(HANDED) == 1
    assert "Handed off because of `customer_request` — The customer asked for a person" in shown
