"""Handoffs (H1): the tenant's closed catalog of reasons, the inbox (reply, close, reopen), what a customer's
widget reads back, tenant isolation, and the agent handing a conversation to a person."""
from __future__ import annotations

import json

import pytest

from core.agent import prompts
from core.agent.loop import Agent
from core.agent.protocol import Dialogue
from core.agent.providers.offline import OfflineResponder
from core.channels import conversations, handoff
from core.channels.handoff import HandoffError
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import AuthError, login, visitor_context
from core.tenancy.site_keys import sign_customer_token
from core.tenancy.tenants import create_user
from tests.fakes import ScriptedProvider


@pytest.fixture
def staff(ctx, rt):
    """An editor and a qa user of acme, logged in."""
    create_user(rt.store, "acme", "ed@acme.test", "correct-horse", "editor")
    create_user(rt.store, "acme", "qa@acme.test", "correct-horse", "qa")
    return {"editor": login(rt.store, "ed@acme.test", "correct-horse", "acme"),
            "qa": login(rt.store, "qa@acme.test", "correct-horse", "acme")}


def talk(ctx, rt, *questions, channel="identified"):
    """A stored conversation with one recorded turn per question (no agent needed)."""
    convo = conversations.start(ctx, rt.store, channel)
    for n, question in enumerate(questions):
        conversations.record_turn(ctx, rt.store, convo.id, question=question, status="abstained", answer=f"answer {n}",
                                  citations=[], evidence=[], truncated=False, provider="scripted", model="s",
                                  latency_ms=1, input_tokens=0, output_tokens=0, trace={}, uncovered=True)
    return convo.id


# -- the catalog -------------------------------------------------------------------------------------------
def test_an_unknown_reason_is_refused_with_the_catalog(ctx, rt):
    convo = talk(ctx, rt, "hola")
    with pytest.raises(HandoffError) as refused:
        handoff.create(ctx, rt.store, convo, "angry_customer")
    message = str(refused.value)
    assert "angry_customer" in message
    assert all(code in message for code in handoff.REASONS)
    assert handoff.handoffs(ctx, rt.store, None) == []


def test_a_reason_the_tenant_added_can_be_used(ctx, rt):
    tenant_settings.update(ctx, rt.store, process=rt.settings,
                           handoff_reasons={**handoff.REASONS, "billing": "A billing dispute"})
    convo = talk(ctx, rt, "Me habéis cobrado dos veces")
    handoff_id = handoff.create(ctx, rt.store, convo, "billing")
    assert handoff.require(ctx, rt.store, handoff_id)["reason"] == "billing"


def test_a_reason_is_only_in_the_catalog_of_its_tenant(ctx, other_ctx, rt):
    tenant_settings.update(ctx, rt.store, process=rt.settings,
                           handoff_reasons={**handoff.REASONS, "billing": "A billing dispute"})
    theirs = talk(other_ctx, rt, "hola")
    with pytest.raises(HandoffError, match="billing"):
        handoff.create(other_ctx, rt.store, theirs, "billing")


def test_a_handoff_holds_the_whole_conversation(ctx, rt):
    convo = talk(ctx, rt, "¿Vendéis patinetes?", "¿Y monopatines?")
    created = handoff.require(ctx, rt.store, handoff.create(ctx, rt.store, convo, "not_covered_twice", gap_id=7))
    assert [t["question"] for t in created["transcript"]] == ["¿Vendéis patinetes?", "¿Y monopatines?"]
    assert [t["answer"] for t in created["transcript"]] == ["answer 0", "answer 1"]
    assert ((created["status"], created["conversation_id"], created["gap_id"], created["replies"])
            == ("open", convo, 7, []))
    assert created["webhook_status"] == "none"  # no webhook URL configured
    assert conversations.get(ctx, rt.store, convo).handed_off


def test_a_handoff_needs_an_existing_conversation_of_the_tenant(ctx, other_ctx, rt):
    theirs = talk(other_ctx, rt, "hola")
    for convo in ("missing", theirs):
        with pytest.raises(conversations.ConversationError, match="No conversation"):
            handoff.create(ctx, rt.store, convo, "customer_request")
    assert handoff.handoffs(ctx, rt.store, None) == [] and len(handoff.handoffs(other_ctx, rt.store, None)) == 0


def test_unknown_inbox_status_is_refused(ctx, rt):
    with pytest.raises(HandoffError, match="open, closed"):
        handoff.handoffs(ctx, rt.store, "pending")


# -- the inbox ---------------------------------------------------------------------------------------------
@pytest.fixture
def item(ctx, rt):
    return handoff.create(ctx, rt.store, talk(ctx, rt, "Quiero hablar con alguien"), "customer_request")


def test_reply_close_reopen(staff, ctx, rt, item):
    editor = staff["editor"]
    replied = handoff.reply(editor, rt.store, item, "  Hola, soy Ana. Te llamo hoy.  ")
    assert replied["status"] == "open"
    assert [(r["by"], r["text"]) for r in replied["replies"]] == [("ed@acme.test", "Hola, soy Ana. Te llamo hoy.")]
    closed = handoff.close(editor, rt.store, item)
    assert (closed["status"], closed["closed_by"]) == ("closed", "ed@acme.test") and closed["closed_at"]
    assert handoff.open_handoffs(ctx, rt.store) == []
    assert [h["id"] for h in handoff.handoffs(ctx, rt.store, "closed")] == [item]
    assert closed["replies"] == replied["replies"]  # closing keeps what was said
    reopened = handoff.reopen(ctx, rt.store, item)
    assert (reopened["status"], reopened["closed_at"], reopened["closed_by"]) == ("open", None, None)
    assert len(handoff.reply(ctx, rt.store, item, "Seguimos.")["replies"]) == 2


@pytest.mark.parametrize("action", [
    lambda who, store, hid: handoff.reply(who, store, hid, "hola"),
    lambda who, store, hid: handoff.close(who, store, hid),
    lambda who, store, hid: handoff.reopen(who, store, hid),
], ids=["reply", "close", "reopen"])
def test_the_qa_role_does_not_answer_handoffs(staff, ctx, rt, item, action):
    before = handoff.require(ctx, rt.store, item)
    with pytest.raises(AuthError, match="admin or an editor"):
        action(staff["qa"], rt.store, item)
    assert handoff.require(ctx, rt.store, item) == before


def test_a_customer_cannot_answer_a_handoff(ctx, rt, item):
    keys = site_keys.ensure(ctx, rt.store)
    visitor = visitor_context(rt.store, keys.public_key, sign_customer_token(keys.secret, "alice", 600))
    with pytest.raises(AuthError):
        handoff.reply(visitor, rt.store, item, "I am staff now")


@pytest.mark.parametrize("text", ["", "   \n ", None])
def test_an_empty_reply_is_refused(ctx, rt, item, text):
    with pytest.raises(HandoffError, match="empty"):
        handoff.reply(ctx, rt.store, item, text)
    assert handoff.require(ctx, rt.store, item)["replies"] == []


def test_a_reply_over_the_limit_is_refused(ctx, rt, item):
    with pytest.raises(HandoffError, match="limit is 4,000"):
        handoff.reply(ctx, rt.store, item, "x" * (handoff.MAX_REPLY + 1))
    assert len(handoff.reply(ctx, rt.store, item, "x" * handoff.MAX_REPLY)["replies"]) == 1


def test_a_closed_handoff_takes_no_reply(ctx, rt, item):
    handoff.close(ctx, rt.store, item)
    with pytest.raises(HandoffError, match="closed; reopen it"):
        handoff.reply(ctx, rt.store, item, "hola")
    assert handoff.require(ctx, rt.store, item)["replies"] == []


# -- tenant isolation --------------------------------------------------------------------------------------
def _masked(exc: Exception, handoff_id: int) -> str:
    return str(exc).replace(f"#{handoff_id}", "#N")


@pytest.mark.parametrize("action", [
    handoff.require,
    lambda who, store, hid: handoff.reply(who, store, hid, "hola"),
    handoff.close,
    handoff.reopen,
], ids=["require", "reply", "close", "reopen"])
def test_another_tenants_handoff_answers_exactly_like_a_missing_one(ctx, other_ctx, rt, action):
    theirs = handoff.create(other_ctx, rt.store, talk(other_ctx, rt, "hola"), "customer_request")
    missing = theirs + 1000
    with pytest.raises(Exception) as on_theirs:
        action(ctx, rt.store, theirs)
    with pytest.raises(Exception) as on_missing:
        action(ctx, rt.store, missing)
    assert type(on_theirs.value) is type(on_missing.value) is HandoffError
    assert _masked(on_theirs.value, theirs) == _masked(on_missing.value, missing)
    assert handoff.get(ctx, rt.store, theirs) is None
    after = handoff.require(other_ctx, rt.store, theirs)
    assert (after["status"], after["replies"]) == ("open", [])  # untouched


def test_inboxes_are_per_tenant(ctx, other_ctx, rt):
    ours = handoff.create(ctx, rt.store, talk(ctx, rt, "a"), "customer_request")
    theirs = handoff.create(other_ctx, rt.store, talk(other_ctx, rt, "b"), "customer_request")
    assert [h["id"] for h in handoff.handoffs(ctx, rt.store, None)] == [ours]
    assert [h["id"] for h in handoff.handoffs(other_ctx, rt.store, None)] == [theirs]


def test_record_delivery_does_not_reach_another_tenant(ctx, other_ctx, rt):
    theirs = handoff.create(other_ctx, rt.store, talk(other_ctx, rt, "b"), "customer_request")
    handoff.record_delivery(ctx, rt.store, theirs, "delivered", 1)
    assert handoff.require(other_ctx, rt.store, theirs)["webhook_status"] == "none"


# -- replies for the customer's widget ---------------------------------------------------------------------
@pytest.fixture
def visitors(ctx, other_ctx, rt):
    keys, other = site_keys.ensure(ctx, rt.store), site_keys.ensure(other_ctx, rt.store)
    return {
        "alice": visitor_context(rt.store, keys.public_key, sign_customer_token(keys.secret, "alice", 600)),
        "bob": visitor_context(rt.store, keys.public_key, sign_customer_token(keys.secret, "bob", 600)),
        "anonymous": visitor_context(rt.store, keys.public_key),
        "globex alice": visitor_context(rt.store, other.public_key, sign_customer_token(other.secret, "alice", 600)),
    }


def test_replies_are_numbered_across_the_conversations_handoffs(ctx, rt, visitors):
    convo = conversations.start(visitors["alice"], rt.store, "identified").id
    first = handoff.create(ctx, rt.store, convo, "customer_request")
    handoff.reply(ctx, rt.store, first, "uno")
    handoff.reply(ctx, rt.store, first, "dos")
    handoff.close(ctx, rt.store, first)
    second = handoff.create(ctx, rt.store, convo, "out_of_scope")
    handoff.reply(ctx, rt.store, second, "tres")
    got = handoff.replies_for(visitors["alice"], rt.store, convo)
    assert [(r["id"], r["text"]) for r in got] == [(1, "uno"), (2, "dos"), (3, "tres")]
    assert set(got[0]) == {"id", "at", "text"}  # who answered stays inside the team
    assert [r["text"] for r in handoff.replies_for(visitors["alice"], rt.store, convo, after=2)] == ["tres"]
    assert handoff.replies_for(visitors["alice"], rt.store, convo, after=3) == []


def test_replies_of_another_conversation_are_not_mixed_in(ctx, rt, visitors):
    mine = conversations.start(visitors["alice"], rt.store, "identified").id
    other = conversations.start(visitors["alice"], rt.store, "identified").id
    handoff.reply(ctx, rt.store, handoff.create(ctx, rt.store, other, "customer_request"), "para la otra")
    assert handoff.replies_for(visitors["alice"], rt.store, mine) == []


def test_a_widget_polling_with_after_sees_every_new_reply_once(ctx, rt, visitors):
    alice = visitors["alice"]
    convo = conversations.start(alice, rt.store, "identified").id
    first = handoff.create(ctx, rt.store, convo, "customer_request")
    second = handoff.create(ctx, rt.store, convo, "out_of_scope")
    handoff.reply(ctx, rt.store, first, "a1")
    handoff.reply(ctx, rt.store, second, "b1")
    seen = handoff.replies_for(alice, rt.store, convo)
    assert [r["text"] for r in seen] == ["a1", "b1"]
    handoff.reply(ctx, rt.store, first, "a2")  # the first handoff is still open: staff answer there again
    new = handoff.replies_for(alice, rt.store, convo, after=seen[-1]["id"])
    assert [r["text"] for r in new] == ["a2"]


@pytest.mark.parametrize("who", ["bob", "anonymous", "globex alice"])
def test_replies_of_a_customers_conversation_are_for_that_customer_only(ctx, rt, visitors, who):
    convo = conversations.start(visitors["alice"], rt.store, "identified").id
    handoff.reply(ctx, rt.store, handoff.create(ctx, rt.store, convo, "customer_request"), "Hola Alice")
    with pytest.raises(HandoffError) as refused:
        handoff.replies_for(visitors[who], rt.store, convo)
    with pytest.raises(HandoffError) as missing:
        handoff.replies_for(visitors[who], rt.store, "nonexistent0000")
    assert str(refused.value).replace(convo, "X") == str(missing.value).replace("nonexistent0000", "X")


def test_an_identified_customer_cannot_read_an_anonymous_conversation(ctx, rt, visitors):
    convo = conversations.start(visitors["anonymous"], rt.store, "web").id
    handoff.reply(ctx, rt.store, handoff.create(ctx, rt.store, convo, "customer_request"), "hola")
    assert [r["text"] for r in handoff.replies_for(visitors["anonymous"], rt.store, convo)] == ["hola"]
    with pytest.raises(HandoffError):
        handoff.replies_for(visitors["alice"], rt.store, convo)


# -- the agent hands off -----------------------------------------------------------------------------------
def test_asking_for_a_person_hands_off_without_a_gap(kb, rt):
    result = rt.turns.run(kb, Agent(rt, OfflineResponder()), "Quiero hablar con una persona", channel="identified")
    assert result.status == "handoff" and result.gap_id is None and result.handoff_id is not None
    queue = handoff.open_handoffs(kb, rt.store)
    assert [(h["id"], h["reason"], h["conversation_id"], h["gap_id"]) for h in queue] == \
        [(result.handoff_id, "customer_request", result.conversation_id, None)]
    assert rt.backlog.gaps(kb) == []
    assert result.answer == prompts.message("handoff", "es")
    assert [c["tool"] for c in result.trace.tools] == ["handoff"]  # no search for a request for a person
    stored = conversations.turns(kb, rt.store, result.conversation_id)
    assert [t["status"] for t in stored] == ["handoff"]


def test_the_second_uncovered_question_on_a_support_channel_hands_off_with_its_gap(kb, rt):
    bot = Agent(rt, OfflineResponder())
    first = rt.turns.run(kb, bot, "¿Vendéis patinetes eléctricos?", channel="identified")
    assert first.status == "abstained" and first.gap_id is not None and first.handoff_id is None
    second = rt.turns.run(kb, bot, "¿Tenéis cascos para moto?", conversation_id=first.conversation_id)
    assert second.status == "handoff" and second.gap_id is not None and second.gap_id != first.gap_id
    queue = handoff.open_handoffs(kb, rt.store)
    assert ([(h["id"], h["reason"], h["gap_id"]) for h in queue]
            == [(second.handoff_id, "not_covered_twice", second.gap_id)])
    assert [t["question"] for t in queue[0]["transcript"]] == [
        "¿Vendéis patinetes eléctricos?", "¿Tenéis cascos para moto?"]
    assert second.answer.endswith(prompts.message("handoff", "es"))


def test_uncovered_questions_on_the_web_channel_never_hand_off(kb, rt):
    bot = Agent(rt, OfflineResponder())
    first = rt.turns.run(kb, bot, "¿Vendéis patinetes eléctricos?", channel="web")
    second = rt.turns.run(kb, bot, "¿Tenéis cascos para moto?", conversation_id=first.conversation_id)
    third = rt.turns.run(kb, bot, "¿Y guantes de invierno?", conversation_id=first.conversation_id)
    assert [r.status for r in (first, second, third)] == ["abstained"] * 3
    assert handoff.handoffs(kb, rt.store, None) == []
    assert len(rt.backlog.gaps(kb)) >= 1 and sum(g.count for g in rt.backlog.gaps(kb)) == 3


def test_a_model_requested_handoff_in_a_dry_run_creates_nothing(kb, rt):
    handing = prompts.message("handoff", "es")
    provider = ScriptedProvider(("handoff", {"reason": "customer_request"}), handing, handing)  # answer + revision
    result = Agent(rt, provider).answer(kb, Dialogue("identified"), "Quiero hablar con una persona")
    assert result.status == "handoff" and result.handoff_requested == "customer_request"
    assert handoff.handoffs(kb, rt.store, None) == [] and rt.backlog.gaps(kb) == []
    assert rt.store.query("SELECT COUNT(*) AS n FROM conversations")[0]["n"] == 0


def test_an_unknown_reason_from_the_model_is_a_readable_error_and_no_handoff(kb, rt):
    provider = ScriptedProvider(("handoff", {"reason": "vip"}), "No lo sé.", "No lo sé.")
    result = rt.turns.run(kb, Agent(rt, provider), "Soy cliente VIP", channel="identified")
    tool_result = json.loads(provider.calls[1]["messages"][-1].content)
    assert tool_result["status"] == "error" and "'vip'" in tool_result["message"]
    assert all(code in tool_result["message"] for code in handoff.REASONS)
    assert result.status != "handoff" and handoff.handoffs(kb, rt.store, None) == []


def test_one_open_handoff_per_conversation(kb, rt):
    bot = Agent(rt, OfflineResponder())
    first = rt.turns.run(kb, bot, "Quiero hablar con una persona", channel="identified")
    again = rt.turns.run(kb, bot, "Por favor, necesito hablar con un humano ya", conversation_id=first.conversation_id)
    assert again.status == "handoff" and again.handoff_id is None
    assert [h["id"] for h in handoff.open_handoffs(kb, rt.store)] == [first.handoff_id]


def test_asking_again_after_the_handoff_was_closed_queues_a_new_one(kb, rt):
    bot = Agent(rt, OfflineResponder())
    first = rt.turns.run(kb, bot, "Quiero hablar con una persona", channel="identified")
    handoff.close(kb, rt.store, first.handoff_id)
    again = rt.turns.run(kb, bot, "Quiero hablar con una persona otra vez", conversation_id=first.conversation_id)
    assert again.status == "handoff"
    assert again.handoff_id is not None
    assert [h["conversation_id"] for h in handoff.open_handoffs(kb, rt.store)] == [first.conversation_id]
