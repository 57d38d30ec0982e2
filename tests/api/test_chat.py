"""The public endpoint (P1-P4): the SSE protocol, identity from site keys and signed tokens only, limits,
the private logs, staff replies, the widget and demo page, the error envelope."""
from __future__ import annotations

import json
import time

import pytest
from fastapi.testclient import TestClient

from api import create_app
from api.events import chunks
from core.agent import prompts
from core.agent.outcome import Outcome, Status, TurnTrace
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.base.config import load_settings
from core.channels import conversations, handoff
from core.knowledge import sources
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.fakes import ScriptedProvider

SHIPPING = "Los envíos a Canarias tardan de 5 a 8 días laborables. El envío es gratuito en pedidos de más de 50 €."
# the hashing embedder's similarities are lower than the real model's: the offline responder's floors to match
LENIENT = OfflineTuning(min_similarity=0.2, min_confidence=0.2)
RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."


def parse_sse(raw: str) -> list[tuple[str, dict]]:
    """The events of an SSE body as (name, data) pairs (comments skipped, multi-line data joined)."""
    events = []
    for block in raw.replace("\r\n", "\n").split("\n\n"):
        name, data = "message", []
        for line in block.split("\n"):
            if line.startswith(":") or not line:
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if data:
            events.append((name, json.loads("\n".join(data))))
    return events


class Api:
    """A test client of one app over a runtime with two tenants: acme (a small KB) and globex (empty)."""

    def __init__(self, rt, environ: dict | None = None, provider=None, clock=time.time, monotonic=time.monotonic):
        self.rt = rt
        env = {"COBERTURA_DATA_DIR": str(rt.settings.data_dir), "COBERTURA_RATE_PER_IP": "1000",
               "COBERTURA_RATE_PER_KEY": "1000", **(environ or {})}
        provider = provider or (lambda: OfflineResponder(LENIENT))
        self.app = create_app(load_settings(env), runtime=rt, provider=provider, clock=clock, monotonic=monotonic)
        self.client = TestClient(self.app, raise_server_exceptions=False)
        self.client.__enter__()

    def key(self, slug: str) -> str:
        return site_keys.ensure(local_operator(self.rt.store, slug), self.rt.store).public_key

    def chat(self, message: str, slug: str = "acme", *, key: str | None = None, token: str | None = None,
             headers: dict | None = None, **body):
        sent = {"X-Site-Key": key if key is not None else self.key(slug), **(headers or {})}
        if token:
            sent["X-Customer-Token"] = token
        return self.client.post("/v1/chat", json={"message": message, **body}, headers=sent)

    def events(self, *args, **kwargs) -> list[tuple[str, dict]]:
        response = self.chat(*args, **kwargs)
        assert response.status_code == 200, response.text
        assert response.headers["content-type"].startswith("text/event-stream")
        return parse_sse(response.text)

    def close(self):
        self.client.__exit__(None, None, None)


@pytest.fixture
def acme(rt, ctx):
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    rt.index.train(ctx)
    create_tenant(rt.store, "globex", "Globex")
    return ctx


@pytest.fixture
def api(rt, acme):
    client = Api(rt)
    yield client
    client.close()


def names(events):
    return [name for name, _ in events]


def text_of(events):
    return "".join(data["d"] for name, data in events if name == "text")


def only_done(events) -> dict:
    dones = [data for name, data in events if name == "done"]
    assert len(dones) == 1 and events[-1][0] == "done", names(events)
    return dones[0]


# -- the protocol ------------------------------------------------------------------------------------------
def test_a_covered_question_streams_progress_then_the_checked_answer_and_one_done(api):
    events = api.events("¿Cuánto tardan los envíos a Canarias?")
    order = names(events)
    assert order[0] == "provider" and order[1] == "tool"
    assert order.index("verify") < order.index("citations") < order.index("text")
    done = only_done(events)
    assert done["status"] == "answered" and done["truncated"] is False and done["conversation_id"]
    assert "5 a 8 días laborables" in text_of(events) and "[1]" in text_of(events)
    cited = dict(events)["citations"]["items"]
    assert cited[0]["n"] == 1 and cited[0]["path"] == "politicas/envios" and cited[0]["title"] == "Envíos"
    assert dict(events)["tool"] == {"name": "search_knowledge", "status": "found", "found": True}


def test_the_conversation_goes_on_with_the_id_from_done(api, rt, acme):
    first = only_done(api.events("¿Cuánto tardan los envíos a Canarias?"))
    second = only_done(api.events("¿Y el plazo para devolver un producto?", conversation_id=first["conversation_id"]))
    assert second["conversation_id"] == first["conversation_id"]
    assert len(conversations.turns(acme, rt.store, first["conversation_id"])) == 2


def test_an_unsupported_answer_is_withheld_whole_and_the_stream_refuses(rt, acme):
    invented = "Los envíos a Canarias cuestan 99 € y llegan en 2 horas."
    provider = ScriptedProvider(("search_knowledge", {"query": "envíos Canarias"}), invented, invented)
    api = Api(rt, provider=lambda: provider)
    events = api.events("¿Cuánto cuestan los envíos a Canarias?")
    raw = json.dumps(events, ensure_ascii=False)
    assert "99 €" not in raw and "2 horas" not in raw  # the withheld claims never travel, not even in verify
    verify = dict(events)["verify"]
    assert verify["ok"] is False and verify["unsupported"] >= 1 and verify["revised"] is True
    assert "no cubre" in text_of(events) and "citations" not in names(events)
    assert only_done(events)["status"] == "abstained"
    assert len(rt.backlog.gaps(acme)) == 1
    api.close()


def test_model_text_cannot_forge_an_event(api, rt, acme):
    forged = 'Hola.\n\nevent: done\ndata: {"truncated": false}\n\nevent: card\ndata: {"id": 1}\r\n\r\n: comment\n'

    class Forger:
        def answer(self, ctx, dialogue, question, **kwargs):
            return Outcome(Status.ANSWERED, forged, "es", TurnTrace(dialogue.channel, "es"))

    api.app.state.agent_for = lambda ctx: Forger()
    events = api.events("hola")
    assert names(events).count("done") == 1 and "card" not in names(events)
    assert text_of(events) == forged


def test_a_provider_that_never_finishes_ends_with_done_truncated(rt, acme):
    provider = ScriptedProvider(*[("search_knowledge", {"query": f"envíos {i}"}) for i in range(10)])
    api = Api(rt, provider=lambda: provider)
    events = api.events("¿Cuánto tardan los envíos?")
    done = only_done(events)
    assert done["truncated"] is True and done["status"] == "error"
    error = dict(events)["error"]
    assert error["code"] == "truncated" and error["retryable"] is True and error["message"]
    assert "text" not in names(events)
    api.close()


def test_a_crash_inside_the_turn_still_ends_the_stream_with_one_done(api):
    class Broken:
        def answer(self, ctx, dialogue, question, **kwargs):
            kwargs["on_event"]("provider", {"name": "x", "model": "y"})
            raise RuntimeError("secret internals /etc/passwd")

    api.app.state.agent_for = lambda ctx: Broken()
    response = api.chat("hola")
    events = parse_sse(response.text)
    assert names(events) == ["provider", "error", "done"] and only_done(events)["truncated"] is True
    assert "internals" not in response.text and dict(events)["error"]["code"] == "internal"


def test_transport_failure_of_every_provider_is_an_error_event_not_a_gap(rt, acme):
    from core.agent.protocol import TransportError

    api = Api(rt, provider=lambda: ScriptedProvider(TransportError("connection refused")))
    events = api.events("¿Cuánto tardan los envíos?")
    assert dict(events)["error"]["code"] == "provider_unavailable" and dict(events)["error"]["retryable"] is True
    assert only_done(events)["status"] == "error" and rt.backlog.gaps(acme) == []
    api.close()


def test_text_chunks_join_back_to_the_answer():
    text = "Según nuestra documentación:\n\n" + "palabra " * 60 + "[1]"
    pieces = chunks(text, 80)
    assert "".join(pieces) == text and len(pieces) > 3 and all(len(p) <= 80 for p in pieces)


def test_sections_and_followups_reach_the_stream(rt, acme):
    tenant_settings.update(acme, rt.store, process=rt.settings,
                           sections={"envios": "Envíos y entregas: plazos y costes de envío a Canarias"})
    sources.save(acme, rt.store, "faq/pago", title="¿Puedo pagar a plazos?", type="qa", language="es",
                 content="¿Puedo pagar a plazos?\nSí, en pedidos de más de 300 €.")
    rt.index.train(acme)
    api = Api(rt)
    events = api.events("¿Cuánto tardan los envíos a Canarias?")
    assert dict(events)["section"] == {"id": "envios",
                                       "description": "Envíos y entregas: plazos y costes de envío a Canarias"}
    assert names(events).index("text") < names(events).index("section")
    api.close()


def test_asking_for_a_person_hands_off_and_staff_replies_reach_the_widget(api, rt, acme):
    secret = site_keys.ensure(acme, rt.store).secret
    token = site_keys.sign_customer_token(secret, "cust-42")
    events = api.events("Quiero hablar con una persona", token=token)
    notice = dict(events)["handoff"]
    assert notice["reason"] == "customer_request" and notice["id"] and notice["message"]
    done = only_done(events)
    assert done["status"] == "handoff"
    handoff.reply(acme, rt.store, notice["id"], "Hola, soy Marta. ¿En qué te ayudo?")
    headers = {"X-Site-Key": api.key("acme"), "X-Customer-Token": token}
    url = f"/v1/conversations/{done['conversation_id']}/replies"
    got = api.client.get(url, headers=headers)
    assert (got.status_code == 200
            and [r["text"] for r in got.json()["replies"]] == ["Hola, soy Marta. ¿En qué te ayudo?"])
    assert api.client.get(url + "?after=1", headers=headers).json() == {"replies": []}
    other = site_keys.sign_customer_token(secret, "cust-7")
    assert api.client.get(url, headers={**headers, "X-Customer-Token": other}).status_code == 404
    assert api.client.get(url, headers={"X-Site-Key": api.key("acme")}).status_code == 404  # anonymous
    assert api.client.get(url, headers={**headers, "X-Site-Key": api.key("globex")}).status_code == 401  # token of acme


# -- identity ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("key, code", [(None, "missing_site_key"), ("", "missing_site_key"),
                                       ("pk_not-a-real-key", "invalid_site_key"), ("acme", "invalid_site_key")])
def test_a_missing_or_unknown_site_key_is_refused(api, key, code):
    response = api.client.post("/v1/chat", json={"message": "hola"},
                               headers={} if key is None else {"X-Site-Key": key})
    assert response.status_code == 401 and response.json()["error"]["code"] == code


def test_a_tenant_named_in_body_query_or_header_is_ignored(api, rt, acme):
    globex = local_operator(rt.store, "globex")
    response = api.client.post("/v1/chat?tenant=acme&tenant_id=1", json={
        "message": "¿Cuánto tardan los envíos a Canarias?", "tenant": "acme", "tenant_id": acme.tenant_id,
        "customer_id": "admin"}, headers={"X-Site-Key": api.key("globex"), "X-Tenant": "acme", "X-Tenant-Id": "1"})
    events = parse_sse(response.text)
    assert only_done(events)["status"] == "abstained" and "5 a 8" not in response.text  # globex's empty KB answered
    assert ([q["question"] for q in conversations.question_log(globex, rt.store)]
            == ["¿Cuánto tardan los envíos a Canarias?"])
    assert conversations.question_log(acme, rt.store) == []
    convo = conversations.get(globex, rt.store, only_done(events)["conversation_id"])
    assert convo.channel == "web" and convo.customer_id is None


def test_another_tenants_key_cannot_continue_a_conversation(api):
    started = only_done(api.events("¿Cuánto tardan los envíos a Canarias?"))
    response = api.chat("¿Y a Baleares?", "globex", conversation_id=started["conversation_id"])
    assert response.status_code == 404 and response.json()["error"]["code"] == "conversation_not_found"


def test_a_rotated_site_key_stops_working(api, rt, acme):
    old = api.key("acme")
    new = site_keys.rotate_public_key(acme, rt.store).public_key
    assert api.chat("hola", key=old).status_code == 401
    assert api.chat("¿Cuánto tardan los envíos a Canarias?", key=new).status_code == 200


def tamper(token: str) -> str:
    head, payload, signature = token.split(".")
    flipped = payload[:-2] + ("A" if payload[-2] != "A" else "B") + payload[-1]
    return ".".join([head, flipped, signature])


@pytest.mark.parametrize("case", ["tampered", "expired", "other_tenant", "garbage", "rotated"])
def test_a_bad_customer_token_is_refused(api, rt, acme, case):
    secret = site_keys.ensure(acme, rt.store).secret
    globex = local_operator(rt.store, "globex")
    token = {
        "tampered": lambda: tamper(site_keys.sign_customer_token(secret, "cust-1")),
        "expired": lambda: site_keys.sign_customer_token(secret, "cust-1", 60, clock=lambda: time.time() - 3600),
        "other_tenant": lambda: site_keys.sign_customer_token(site_keys.ensure(globex, rt.store).secret, "cust-1"),
        "garbage": lambda: "not.a.token",
        "rotated": lambda: site_keys.sign_customer_token(secret, "cust-1"),
    }[case]()
    if case == "rotated":
        site_keys.rotate_secret(acme, rt.store)
    response = api.chat("hola", token=token)
    assert response.status_code == 401 and response.json()["error"]["code"] == "invalid_customer_token"
    assert conversations.question_log(acme, rt.store) == []


def test_identified_conversations_belong_to_their_customer(api, rt, acme):
    secret = site_keys.ensure(acme, rt.store).secret
    alice, bob = (site_keys.sign_customer_token(secret, who) for who in ("alice", "bob"))
    started = only_done(api.events("¿Cuánto tardan los envíos a Canarias?", token=alice))
    convo = conversations.get(acme, rt.store, started["conversation_id"])
    assert convo.channel == "identified" and convo.customer_id == "alice"
    for token in (bob, None):  # another customer, or an anonymous visitor, cannot continue it
        response = api.chat("¿Y a Baleares?", token=token, conversation_id=started["conversation_id"])
        assert response.status_code == 404


# -- limits ------------------------------------------------------------------------------------------------
def test_a_message_over_the_limit_answers_413_without_a_model_call(rt, acme):
    provider = ScriptedProvider()
    api = Api(rt, provider=lambda: provider)
    response = api.chat("x" * 2001)
    assert response.status_code == 413 and response.json()["error"]["code"] == "message_too_long"
    assert "2001" in response.json()["error"]["message"] and provider.calls == []
    assert conversations.question_log(acme, rt.store) == []
    huge = api.client.post("/v1/chat", content=b'{"message": "' + b"y" * 40_000 + b'"}',
                           headers={"X-Site-Key": api.key("acme"), "Content-Type": "application/json"})
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "too_large" and provider.calls == []
    api.close()


def test_rate_limits_per_address_and_per_site_key(rt, acme):
    now = [1000.0]
    api = Api(rt, {"COBERTURA_RATE_PER_IP": "2"}, monotonic=lambda: now[0])
    assert [api.chat("¿Cuánto tardan los envíos?").status_code for _ in range(3)] == [200, 200, 429]
    limited = api.chat("hola")
    assert limited.json()["error"]["code"] == "rate_limited" and int(limited.headers["Retry-After"]) >= 1
    now[0] += 31  # one request a 30 s comes back
    assert api.chat("¿Cuánto tardan los envíos?").status_code == 200
    api.close()
    api = Api(rt, {"COBERTURA_RATE_PER_KEY": "1", "COBERTURA_TRUST_PROXY": "1"}, monotonic=lambda: now[0])
    assert api.chat("hola", headers={"X-Forwarded-For": "10.0.0.1"}).status_code == 200
    assert api.chat("hola", headers={"X-Forwarded-For": "10.0.0.2"}).status_code == 429  # same key, other address
    assert api.chat("hola", "globex", headers={"X-Forwarded-For": "10.0.0.3"}).status_code == 200
    api.close()


def test_a_disabled_channel_is_refused_before_any_turn(api, rt, acme):
    tenant_settings.update(acme, rt.store, process=rt.settings, channels_enabled=["identified"])
    response = api.chat("hola")
    assert response.status_code == 403 and response.json()["error"]["code"] == "channel_disabled"


def test_the_kill_switch_answers_a_fixed_error_and_done(api, rt, acme):
    tenant_settings.set_kill_switch(acme, rt.store, True)
    events = api.events("¿Cuánto tardan los envíos a Canarias?")
    assert names(events) == ["error", "done"] and dict(events)["error"]["code"] == "switched_off"
    assert dict(events)["error"]["retryable"] is False


# -- private logs ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("path", ["/v1/admin/questions?tenant=acme", "/v1/admin/turns?tenant=acme"])
def test_private_logs_fail_closed_without_a_configured_token(api, path):
    for headers in ({}, {"Authorization": "Bearer "}, {"Authorization": "Bearer anything"}):
        response = api.client.get(path, headers=headers)
        assert response.status_code == 403 and response.json()["error"]["code"] == "logs_closed"


def test_private_logs_need_the_admin_token(rt, acme):
    api = Api(rt, {"COBERTURA_ADMIN_TOKEN": "s3cret-admin-token"})
    api.events("¿Cuánto tardan los envíos a Canarias?")
    api.events("hola", "globex")
    for path in ("/v1/admin/questions?tenant=acme", "/v1/admin/turns?tenant=acme"):
        assert api.client.get(path).status_code == 401
        assert api.client.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    good = {"Authorization": "Bearer s3cret-admin-token"}
    questions = api.client.get("/v1/admin/questions?tenant=acme", headers=good)
    assert questions.status_code == 200 and questions.headers["cache-control"] == "no-store"
    assert [q["question"] for q in questions.json()["questions"]] == ["¿Cuánto tardan los envíos a Canarias?"]
    turns = api.client.get("/v1/admin/turns?tenant=acme&status=answered", headers=good).json()["turns"]
    assert len(turns) == 1 and turns[0]["trace"]["tools"][0]["tool"] == "search_knowledge"
    assert api.client.get("/v1/admin/turns?tenant=nope", headers=good).status_code == 404
    api.close()


# -- pages and envelope ------------------------------------------------------------------------------------
def test_widget_and_demo_page_are_served_with_the_demo_key(rt, acme):
    create_tenant(rt.store, "demo", "Demo")
    api = Api(rt)
    widget = api.client.get("/widget.js")
    assert widget.status_code == 200 and "javascript" in widget.headers["content-type"] and "/v1/chat" in widget.text
    demo = api.client.get("/demo")
    assert demo.status_code == 200 and api.key("demo") in demo.text and "{{SITE_KEY}}" not in demo.text
    for ident in ("envios", "devoluciones", "planes", "contacto"):
        assert f'id="{ident}"' in demo.text
    api.close()
    off = Api(rt, {"COBERTURA_DEMO_TENANT": ""})
    assert off.client.get("/demo").json()["error"]["code"] == "no_demo"
    off.close()


def test_cors_lets_any_site_call_the_chat_without_cookies(api):
    response = api.client.options("/v1/chat", headers={
        "Origin": "https://shop.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-site-key"})
    assert response.status_code == 200 and response.headers["access-control-allow-origin"] == "*"
    assert "access-control-allow-credentials" not in response.headers


@pytest.mark.parametrize("method, path, body, status", [
    ("get", "/nowhere", None, 404), ("get", "/v1/chat", None, 405), ("post", "/v1/chat", {"msg": "x"}, 422),
    ("post", "/v1/chat", {"message": 5}, 422),
    ("post", "/v1/chat", {"message": "hola", "conversation_id": "../x"}, 422),
    ("post", "/v1/chat", {"message": "   "}, 422)])
def test_every_error_uses_the_one_envelope(api, method, path, body, status):
    kwargs = {"headers": {"X-Site-Key": api.key("acme")}}
    if body is not None:
        kwargs["json"] = body
    response = getattr(api.client, method)(path, **kwargs)
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"code", "message", "retryable"} and error["message"] and isinstance(error["retryable"], bool)
    assert "Traceback" not in response.text


def test_a_body_that_is_not_json_gets_the_envelope_and_what_to_send(api):
    response = api.client.post("/v1/chat", content=b"\x0e\xffnot json", headers={
        "X-Site-Key": api.key("acme"), "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid_json" and '{"message"' in response.json()["error"]["message"]


def test_the_body_cap_answer_carries_cors_headers(api):
    response = api.client.post("/v1/chat", content=b'{"message": "' + b"y" * 40_000 + b'"}', headers={
        "X-Site-Key": api.key("acme"), "Content-Type": "application/json", "Origin": "https://shop.example"})
    assert response.status_code == 413 and response.headers["access-control-allow-origin"] == "*"


def test_a_query_parameter_error_points_at_the_schema_not_at_the_body(rt, acme):
    api = Api(rt, {"COBERTURA_ADMIN_TOKEN": "s3cret-admin-token"})
    response = api.client.get("/v1/admin/questions?tenant=acme&limit=0",
                              headers={"Authorization": "Bearer s3cret-admin-token"})
    message = response.json()["error"]["message"]
    assert response.status_code == 422 and "limit (query)" in message and '{"message"' not in message
    api.close()


def test_the_second_uncovered_question_is_logged_as_a_handoff(rt, acme):
    refuse = [("search_knowledge", {"query": "x"}), "No lo sé.", "No lo sé."]
    provider = ScriptedProvider(*refuse, *refuse)
    api = Api(rt, {"COBERTURA_ADMIN_TOKEN": "s3cret-admin-token"}, provider=lambda: provider)
    token = site_keys.sign_customer_token(site_keys.ensure(acme, rt.store).secret, "cust-9")
    first = only_done(api.events("¿Vendéis patinetes?", token=token))
    events = api.events("¿Tenéis tarjeta de fidelización?", token=token, conversation_id=first["conversation_id"])
    assert only_done(events)["status"] == "handoff" and dict(events)["handoff"]["reason"] == "not_covered_twice"
    turns = api.client.get("/v1/admin/turns?tenant=acme&status=handoff",
                           headers={"Authorization": "Bearer s3cret-admin-token"}).json()["turns"]
    assert [t["question"] for t in turns] == ["¿Tenéis tarjeta de fidelización?"]
    assert prompts.message("handoff", "es") in turns[0]["answer"]
    api.close()
