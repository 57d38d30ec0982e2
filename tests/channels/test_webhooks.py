"""The handoff webhook (H1): signed, retried, its outcome written on the handoff. No sockets, no waiting:
an httpx MockTransport answers and a fake sleep records the delays."""
from __future__ import annotations

import hashlib
import hmac
import json

import httpx
import pytest

from core.agent.loop import Agent
from core.agent.providers.offline import OfflineResponder
from core.channels import conversations, handoff
from core.channels.webhooks import Notifier, signature
from core.knowledge import sources
from core.tenancy import settings as tenant_settings, site_keys

URL = "https://hooks.example.com/cobertura?token=abc"


class Receiver:
    """The tenant's endpoint: answers from a script (status codes or exceptions), keeps every request."""

    def __init__(self, *script):
        self.script = list(script) or [200]
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        step = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(step, type) and issubclass(step, Exception):
            raise step("connection refused", request=request)
        return httpx.Response(step, json={"ok": step < 300})


@pytest.fixture
def notifiers():
    made = []

    def make(rt, receiver, **kwargs):
        sleeps: list[float] = []
        kwargs.setdefault("background", False)
        notifier = Notifier(rt.store, client=httpx.Client(transport=httpx.MockTransport(receiver)),
                            sleep=sleeps.append, **kwargs)
        notifier.sleeps = sleeps
        made.append(notifier)
        return notifier

    yield make
    for notifier in made:
        notifier.close()


@pytest.fixture
def hooked(ctx, rt):
    """acme with site keys and a webhook URL."""
    site_keys.ensure(ctx, rt.store)
    tenant_settings.update(ctx, rt.store, process=rt.settings, handoff_webhook_url=URL)
    return ctx


def new_handoff(ctx, rt, reason="customer_request"):
    convo = conversations.start(ctx, rt.store, "identified")
    conversations.record_turn(ctx, rt.store, convo.id, question="Quiero hablar con una persona", status="handoff",
                              answer="Te paso con el equipo.", citations=[], evidence=[], truncated=False,
                              provider="offline", model="x", latency_ms=1, input_tokens=0, output_tokens=0, trace={},
                              uncovered=False)
    return handoff.create(ctx, rt.store, convo.id, reason)


def test_a_new_handoff_is_posted_once_signed_with_the_tenants_secret(hooked, rt, notifiers):
    receiver = Receiver(200)
    handoff_id = new_handoff(hooked, rt)
    assert handoff.require(hooked, rt.store, handoff_id)["webhook_status"] == "pending"
    assert notifiers(rt, receiver).deliver(hooked, handoff_id) == "delivered"
    [request] = receiver.requests
    assert request.method == "POST" and str(request.url) == URL
    body = json.loads(request.content)
    item = handoff.require(hooked, rt.store, handoff_id)
    assert body["event"] == "handoff.created" and body["tenant"] == "acme"
    assert {key: body["handoff"][key] for key in ("id", "reason", "conversation_id", "created_at", "gap_id")} == {
        key: item[key] for key in ("id", "reason", "conversation_id", "created_at", "gap_id")}
    convo = conversations.get(hooked, rt.store, item["conversation_id"])
    assert body["handoff"]["channel"] == convo.channel and body["handoff"]["customer_id"] == convo.customer_id
    sent = body["handoff"]["transcript"]
    assert sent[0]["question"] == "Quiero hablar con una persona"
    assert all(set(turn) == {"at", "question", "status", "answer", "citations"} for turn in sent)  # no traces leave
    assert request.headers["X-Cobertura-Event"] == "handoff.created"
    assert request.headers["Content-Type"] == "application/json"
    secret = site_keys.webhook_secret(hooked, rt.store)
    expected = "sha256=" + hmac.new(secret.encode(), request.content, hashlib.sha256).hexdigest()
    assert hmac.compare_digest(request.headers["X-Cobertura-Signature"], expected)
    assert signature(secret, request.content) == expected
    assert (item["webhook_status"], item["webhook_attempts"], item["webhook_error"]) == ("delivered", 1, None)
    assert item["webhook_at"]


def test_the_signature_does_not_verify_with_another_secret_or_body(hooked, other_ctx, rt, notifiers):
    receiver = Receiver(200)
    notifiers(rt, receiver).deliver(hooked, new_handoff(hooked, rt))
    request = receiver.requests[0]
    other = site_keys.ensure(other_ctx, rt.store).secret
    assert request.headers["X-Cobertura-Signature"] != signature(other, request.content)
    assert request.headers["X-Cobertura-Signature"] != signature(site_keys.webhook_secret(hooked, rt.store),
                                                                 request.content + b" ")


def test_each_delivery_has_its_own_id(hooked, rt, notifiers):
    receiver = Receiver(200)
    notifier = notifiers(rt, receiver)
    notifier.deliver(hooked, new_handoff(hooked, rt))
    notifier.deliver(hooked, new_handoff(hooked, rt))
    ids = [r.headers["X-Cobertura-Delivery"] for r in receiver.requests]
    assert len(set(ids)) == 2 and all(ids)


def test_a_failure_then_success_is_delivered_on_the_second_attempt(hooked, rt, notifiers):
    receiver = Receiver(503, 200)
    notifier = notifiers(rt, receiver, retry_delays=(1.5, 4.0))
    handoff_id = new_handoff(hooked, rt)
    assert notifier.deliver(hooked, handoff_id) == "delivered"
    item = handoff.require(hooked, rt.store, handoff_id)
    assert (item["webhook_status"], item["webhook_attempts"], item["webhook_error"]) == ("delivered", 2, None)
    assert notifier.sleeps == [1.5] and len(receiver.requests) == 2
    assert receiver.requests[0].content == receiver.requests[1].content  # the same signed body again


@pytest.mark.parametrize("script, last_error", [
    ((500, 502, 500), "attempt 3: " + URL + " answered HTTP 500"),
    ((500, 500, httpx.ConnectError), "attempt 3: could not reach " + URL + " (ConnectError)"),
    ((httpx.ConnectError, 404, 301), "attempt 3: " + URL + " answered HTTP 301"),  # redirects are not followed
], ids=["all 5xx", "ends unreachable", "unreachable then 4xx/3xx"])
def test_when_every_attempt_fails_the_handoff_records_the_failure(hooked, rt, notifiers, script, last_error):
    receiver = Receiver(*script)
    notifier = notifiers(rt, receiver, retry_delays=(1.0, 5.0))
    handoff_id = new_handoff(hooked, rt)
    assert notifier.deliver(hooked, handoff_id) == "failed"
    item = handoff.require(hooked, rt.store, handoff_id)
    assert (item["webhook_status"], item["webhook_attempts"], item["webhook_error"]) == ("failed", 3, last_error)
    assert notifier.sleeps == [1.0, 5.0] and len(receiver.requests) == 3
    assert handoff.require(hooked, rt.store, handoff_id)["status"] == "open"  # the handoff itself stands


def test_no_retry_delays_means_a_single_attempt(hooked, rt, notifiers):
    receiver = Receiver(500)
    notifier = notifiers(rt, receiver, retry_delays=())
    handoff_id = new_handoff(hooked, rt)
    assert notifier.deliver(hooked, handoff_id) == "failed"
    assert handoff.require(hooked, rt.store, handoff_id)["webhook_attempts"] == 1 and notifier.sleeps == []


def test_without_a_url_nothing_is_sent(ctx, rt, notifiers):
    site_keys.ensure(ctx, rt.store)
    receiver = Receiver(200)
    notifier = notifiers(rt, receiver)
    handoff_id = new_handoff(ctx, rt)
    assert notifier.handoff_created(ctx, handoff_id) is None
    assert notifier.deliver(ctx, handoff_id) == "none"
    assert receiver.requests == []
    assert handoff.require(ctx, rt.store, handoff_id)["webhook_status"] == "none"


def test_only_the_tenant_with_a_url_is_called(hooked, other_ctx, rt, notifiers):
    receiver = Receiver(200)
    notifier = notifiers(rt, receiver)
    notifier.handoff_created(other_ctx, new_handoff(other_ctx, rt))
    assert receiver.requests == []
    notifier.handoff_created(hooked, new_handoff(hooked, rt))
    assert [json.loads(r.content)["tenant"] for r in receiver.requests] == ["acme"]


def test_handoff_created_in_the_foreground_delivers_inline(hooked, rt, notifiers):
    receiver = Receiver(200)
    handoff_id = new_handoff(hooked, rt)
    assert notifiers(rt, receiver, background=False).handoff_created(hooked, handoff_id) is None
    assert len(receiver.requests) == 1  # already sent when the call returns
    assert handoff.require(hooked, rt.store, handoff_id)["webhook_status"] == "delivered"


def test_handoff_created_in_the_background_returns_a_future(hooked, rt, notifiers):
    receiver = Receiver(500, 200)
    handoff_id = new_handoff(hooked, rt)
    future = notifiers(rt, receiver, background=True, retry_delays=(0.5,)).handoff_created(hooked, handoff_id)
    assert future.result(timeout=10) == "delivered"
    item = handoff.require(hooked, rt.store, handoff_id)
    assert (item["webhook_status"], item["webhook_attempts"]) == ("delivered", 2)


def test_a_crash_in_a_background_delivery_is_recorded_as_failed(hooked, rt, notifiers):
    def explode(request):
        raise RuntimeError("bug in the transport")

    handoff_id = new_handoff(hooked, rt)
    future = notifiers(rt, explode, background=True).handoff_created(hooked, handoff_id)
    assert future.result(timeout=10) == "failed"
    item = handoff.require(hooked, rt.store, handoff_id)
    assert (item["webhook_status"], item["webhook_error"]) == ("failed", "internal error while delivering")
    assert "bug in the transport" not in (item["webhook_error"] or "")


# -- the agent notifies ------------------------------------------------------------------------------------
def test_the_agents_handoff_notifies_the_tenants_webhook(hooked, rt, notifiers):
    sources.save(hooked, rt.store, "politicas/envios", title="Envíos", language="es",
                 content="Los envíos a Canarias tardan de 5 a 8 días laborables.")
    rt.index.train(hooked)
    receiver = Receiver(200)
    rt.notifier.close()
    rt.notifier = notifiers(rt, receiver)
    result = rt.turns.run(hooked, Agent(rt, OfflineResponder()), "Quiero hablar con una persona", channel="identified")
    assert result.status == "handoff" and result.handoff_id is not None
    [request] = receiver.requests
    body = json.loads(request.content)["handoff"]
    assert (body["id"], body["reason"], body["conversation_id"]) == \
        (result.handoff_id, "customer_request", result.conversation_id)
    assert handoff.require(hooked, rt.store, result.handoff_id)["webhook_status"] == "delivered"


def test_the_agent_does_not_notify_when_it_does_not_hand_off(hooked, rt, notifiers):
    sources.save(hooked, rt.store, "politicas/envios", title="Envíos", language="es",
                 content="Los envíos a Canarias tardan de 5 a 8 días laborables.")
    rt.index.train(hooked)
    receiver = Receiver(200)
    rt.notifier.close()
    rt.notifier = notifiers(rt, receiver)
    rt.turns.run(hooked, Agent(rt, OfflineResponder()), "¿Vendéis patinetes eléctricos?", channel="identified")
    assert receiver.requests == []


def test_deliveries_left_pending_by_a_stopped_process_are_resumed(rt, ctx):
    """A handoff whose webhook call was under way when the process stopped is delivered on the next start."""
    import httpx as _httpx

    from core.channels import conversations as _conversations, handoff as _handoff
    from core.channels.webhooks import Notifier as _Notifier
    from core.tenancy import settings as _settings

    _settings.update(ctx, rt.store, process=rt.settings, handoff_webhook_url="https://hooks.example.com/in")
    convo = _conversations.start(ctx, rt.store, "identified").id
    handoff_id = _handoff.create(ctx, rt.store, convo, "customer_request")
    assert _handoff.require(ctx, rt.store, handoff_id)["webhook_status"] == "pending"
    seen = []
    client = _httpx.Client(transport=_httpx.MockTransport(lambda request: seen.append(request) or _httpx.Response(204)))
    notifier = _Notifier(rt.store, client=client, retry_delays=(), background=False)
    assert notifier.resume(ctx) == 1 and len(seen) == 1
    assert _handoff.require(ctx, rt.store, handoff_id)["webhook_status"] == "delivered"
    assert notifier.resume(ctx) == 0
