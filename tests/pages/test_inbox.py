"""The Inbox page (handoffs waiting for the team), driven through Streamlit's AppTest (no browser, no network).

Handoffs are made with core APIs (a conversation, its turns, a gap, ``handoff.create``); the webhook's HTTP
client is an ``httpx.MockTransport``, so no socket is opened.
"""
from __future__ import annotations

import httpx
import pytest
from streamlit.testing.v1 import AppTest

from core.channels import conversations, handoff
from core.channels.webhooks import Notifier
from core.tenancy import settings as tenant_settings
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.apptest import signed_in

PAGE = "pages/inbox.py"
HOOK = "https://hooks.acme.test/cobertura"
SCOOTERS = "¿Vendéis patinetes eléctricos?"
BITCOIN = "¿Puedo pagar con bitcoin?"
ABSTAIN = "No tengo información sobre eso en nuestra documentación."
VALENCIA = "¿Cuánto tardan los envíos a Valencia?"
EXPRESS = "¿Y por Correos Express?"


def turn(ctx, store, conversation_id: str, question: str, answer: str = ABSTAIN, status: str = "abstained") -> None:
    conversations.record_turn(ctx, store, conversation_id, question=question, status=status, answer=answer,
                              citations=[], evidence=[], truncated=False, provider="offline", model="", latency_ms=12,
                              input_tokens=0, output_tokens=0, trace={}, uncovered=status == "abstained")


def hand_off(rt, ctx, questions=(SCOOTERS, BITCOIN), customer: str | None = "cust-42",
             reason: str = "not_covered_twice") -> tuple[int, int | None]:
    """A conversation of uncovered questions handed to a person; returns (handoff id, gap id)."""
    convo = conversations.start(ctx, rt.store, "identified", customer_id=customer)
    gap_id = None
    for question in questions:
        turn(ctx, rt.store, convo.id, question)
        gap_id = rt.backlog.record(ctx, question, "es", "identified", convo.id)
    return handoff.create(ctx, rt.store, convo.id, reason, gap_id), gap_id


@pytest.fixture
def acme(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    return runtime, local_operator(runtime.store, "acme")


def ok(at: AppTest) -> AppTest:
    assert not at.exception, [e.value for e in at.exception]
    return at


def open_page(store, role: str = "editor", slug: str = "acme") -> AppTest:
    at = signed_in(store, slug, role)
    ok(at.run())
    return ok(at.switch_page(PAGE).run())


def texts(at: AppTest) -> str:
    """What the page says, with markdown escapes dropped (customers' text is shown literally)."""
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error", "title")
                     for e in getattr(at, kind)).replace("\\", "")


def metric(at: AppTest, label: str) -> str:
    return next(m.value for m in at.metric if m.label == label)


def click(at: AppTest, key: str) -> AppTest:
    return ok(at.button(key=key).click().run())


def test_an_open_handoff_shows_its_transcript_reason_channel_and_gap(acme):
    rt, ctx = acme
    handoff_id, gap_id = hand_off(rt, ctx)
    gap = rt.backlog.get(ctx, gap_id)
    at = open_page(rt.store)
    assert metric(at, "Open") == "1" and metric(at, "Closed") == "0"
    assert at.radio(key="inbox_status").value == "Open"
    [box] = at.expander
    assert box.label.startswith(f"**#{handoff_id}** · Two questions in a row") and "identified" in box.label
    shown = texts(at)
    assert SCOOTERS in shown and BITCOIN in shown and shown.count(ABSTAIN) == 2
    # the first question was refused; the second (the one that handed off) is shown as the handoff, with why (#17)
    assert shown.count(":orange-badge[Refused: not covered]") == 1
    assert shown.count(":violet-badge[Handed off to a person]") == 1
    assert ("Handed off because of `not_covered_twice` — Two questions in a row that the knowledge base does not "
            "cover") in shown
    assert "`not_covered_twice` — Two questions in a row that the knowledge base does not cover" in shown
    assert "channel **identified**" in shown and "customer **cust-42**" in shown
    assert f"**Gap #{gap_id}: " in shown and f"asked {gap.count}×" in shown
    assert "No reply from the team yet." in shown
    # the gap link opens the Gap backlog on that gap
    click(at, f"inbox_gap_{handoff_id}")
    assert at.selectbox(key="gap_id").value == gap_id
    assert "Gap backlog" in [t.value for t in at.title]


def test_partial_answers_in_a_transcript_say_what_the_material_does_not_mention(acme):
    rt, ctx = acme
    convo = conversations.start(ctx, rt.store, "identified", customer_id="cust-42")
    cited = [{"id": "c1", "path": "politicas/envios", "title": "Envíos", "url": ""}]
    for question, status, missing in ((VALENCIA, "partial", "Valencia"), (EXPRESS, "handoff", "Express")):
        conversations.record_turn(
            ctx, rt.store, convo.id, question=question, status=status, citations=cited, evidence=["c1"],
            answer=f"Nuestro material no menciona “{missing}”. Lo que sí dice:\n\nLos envíos tardan de 5 a 8 días. [1]",
            truncated=False, provider="offline", model="", latency_ms=12, input_tokens=0, output_tokens=0,
            trace={"abstained": "partial", "missing": [missing]}, uncovered=True)
    gap_id = rt.backlog.record(ctx, EXPRESS, "es", "identified", convo.id, "partial")
    handoff.create(ctx, rt.store, convo.id, "not_covered_twice", gap_id)
    shown = texts(open_page(rt.store))
    assert ":yellow-badge[Partial: point not covered]" in shown
    assert ":violet-badge[Partial, then handed off to a person]" in shown
    assert "Not in the material: “Valencia”" in shown and "Not in the material: “Express”" in shown
    assert shown.count("Cited: `politicas/envios`") == 2


def test_a_reply_is_shown_and_kept(acme):
    rt, ctx = acme
    handoff_id, _ = hand_off(rt, ctx)
    at = open_page(rt.store)
    click(at, f"inbox_send_{handoff_id}")  # an empty reply: the core's message, nothing stored
    assert [e.value for e in at.error] == ["The reply is empty; write what the customer should read."]
    assert handoff.get(ctx, rt.store, handoff_id)["replies"] == []
    at.text_area(key=f"inbox_reply_{handoff_id}").set_value("Hola, te escribe Ana: no vendemos patinetes.")
    click(at, f"inbox_send_{handoff_id}")
    assert "Reply sent: the customer sees it in the conversation." in texts(at)
    assert at.text_area(key=f"inbox_reply_{handoff_id}").value == ""
    [saved] = handoff.get(ctx, rt.store, handoff_id)["replies"]
    assert (saved["by"], saved["text"]) == ("editor@acme.test", "Hola, te escribe Ana: no vendemos patinetes.")
    again = open_page(rt.store)  # a new session reads it back
    assert "Hola, te escribe Ana: no vendemos patinetes." in texts(again)
    assert "editor@acme.test (team)" in texts(again)
    assert "1 reply" in again.expander[0].label


def test_a_reply_to_a_handoff_closed_meanwhile_is_refused_and_kept(acme):
    rt, ctx = acme
    handoff_id, _ = hand_off(rt, ctx)
    at = open_page(rt.store)
    at.text_area(key=f"inbox_reply_{handoff_id}").set_value("Te llamamos mañana.")
    handoff.close(ctx, rt.store, handoff_id)  # a colleague closes it while this reply is being written
    click(at, f"inbox_send_{handoff_id}")
    assert [e.value for e in at.error] == [
        f"Handoff #{handoff_id}: Handoff #{handoff_id} is closed; reopen it to reply."]
    at.radio(key="inbox_status").set_value("Closed").run()
    click(at, f"inbox_reopen_{handoff_id}")
    assert at.radio(key="inbox_status").value == "Closed" and not at.expander
    at.radio(key="inbox_status").set_value("Open").run()
    assert at.text_area(key=f"inbox_reply_{handoff_id}").value == "Te llamamos mañana."  # nothing typed is lost


def test_closing_moves_it_out_of_the_open_list_and_reopen_brings_it_back(acme):
    rt, ctx = acme
    first, _ = hand_off(rt, ctx)
    second, _ = hand_off(rt, ctx, questions=("¿Tenéis tienda en Oporto?",), reason="customer_request")
    at = open_page(rt.store)
    assert [e.label.split(" · ")[0] for e in at.expander] == [f"**#{first}**", f"**#{second}**"]  # oldest first
    click(at, f"inbox_close_{first}")
    assert f"Handoff #{first} closed." in texts(at)
    assert [e.label.split(" · ")[0] for e in at.expander] == [f"**#{second}**"]
    assert metric(at, "Open") == "1" and metric(at, "Closed") == "1"
    assert handoff.get(ctx, rt.store, first)["closed_by"] == "editor@acme.test"
    at.radio(key="inbox_status").set_value("Closed").run()
    assert [e.label.split(" · ")[0] for e in at.expander] == [f"**#{first}**"]
    assert "Closed by editor@acme.test" in texts(at) and not at.text_area
    at.radio(key="inbox_status").set_value("All").run()
    assert len(at.expander) == 2
    click(at, f"inbox_reopen_{first}")
    assert f"Handoff #{first} reopened" in texts(at)
    assert {h["id"] for h in handoff.handoffs(ctx, rt.store, "open")} == {first, second}


def test_qa_cannot_open_the_inbox(acme):
    rt, ctx = acme
    hand_off(rt, ctx)
    at = signed_in(rt.store, "acme", "qa")
    ok(at.run())
    with pytest.raises(ValueError, match="Could not find a navigation page"):
        at.switch_page(PAGE)


def test_a_failed_webhook_shows_its_error_and_retry_delivers(acme):
    rt, ctx = acme
    answers, calls = [500], []

    def hook(request: httpx.Request) -> httpx.Response:
        calls.append(request)
        return httpx.Response(answers[0])

    rt.notifier.close()
    rt.notifier = Notifier(rt.store, client=httpx.Client(transport=httpx.MockTransport(hook)), retry_delays=(),
                           background=False)
    tenant_settings.update(ctx, rt.store, handoff_webhook_url=HOOK)
    handoff_id, _ = hand_off(rt, ctx)
    assert rt.notifier.deliver(ctx, handoff_id) == "failed"
    at = open_page(rt.store)
    assert "webhook failed" in at.expander[0].label and metric(at, "Webhook failures") == "1"
    [error] = at.error
    assert "**Webhook delivery failed** after 1 attempt" in error.value
    assert f"`attempt 1: {HOOK} answered HTTP 500`" in error.value
    answers[0] = 204
    click(at, f"inbox_retry_{handoff_id}")
    assert len(calls) == 2 and calls[-1].url == HOOK
    assert handoff.get(ctx, rt.store, handoff_id)["webhook_status"] == "delivered"
    assert "Webhook delivered." in texts(at) and "**Webhook delivered**" in texts(at)
    assert not at.error and metric(at, "Webhook failures") == "0"


def test_another_tenants_handoffs_do_not_appear(acme):
    rt, ctx = acme
    create_tenant(rt.store, "globex", "Globex")
    globex = local_operator(rt.store, "globex")
    theirs, _ = hand_off(rt, globex, questions=("¿Dónde está mi pedido 123?",), customer="globex-7")
    at = open_page(rt.store)
    assert metric(at, "Open") == "0" and not at.expander
    assert "No handoffs yet." in texts(at)
    assert "globex" not in texts(at) and "pedido" not in texts(at)
    mine, _ = hand_off(rt, ctx)
    at = open_page(rt.store)
    assert [e.label.split(" · ")[0] for e in at.expander] == [f"**#{mine}**"] and theirs != mine
    assert "pedido" not in texts(at)
