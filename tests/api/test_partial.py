"""Partial answers through the public endpoint: the material covers the topic (shipping) but not the point asked
(Valencia). The real app, the offline responder and a small tenant: the turn streams its citations and its text
(the first paragraph says what is missing), ``done`` says ``partial`` and names the missing words, the question
is on the gap backlog, and the private turn log filters by the status."""
from __future__ import annotations

from typing import get_args

import pytest

from api.admin import TurnStatus
from api.events import done_payload
from core.agent.outcome import Status, TurnTrace
from core.channels import conversations
from core.channels.turn import TurnResult
from core.tenancy import site_keys
from tests.api.test_chat import Api, acme, names, only_done, text_of  # noqa: F401  (the fixture)

ADMIN_TOKEN = "partial-test-admin-token"
VALENCIA = "¿Cuánto tardan los envíos a Valencia?"


@pytest.fixture
def api(rt, acme):  # noqa: F811
    client = Api(rt, {"COBERTURA_ADMIN_TOKEN": ADMIN_TOKEN})
    yield client
    client.close()


def test_every_status_of_the_agent_is_one_the_admin_api_accepts():
    assert set(get_args(TurnStatus)) == {str(s) for s in Status}


def test_a_partial_answer_streams_cited_and_done_says_partial(api, rt, acme):  # noqa: F811
    events = api.events(VALENCIA)
    order = names(events)
    assert order.index("verify") < order.index("citations") < order.index("text") and "error" not in order
    done = only_done(events)
    assert done["status"] == "partial" and done["missing"] == ["Valencia"] and done["truncated"] is False
    lead, _, rest = text_of(events).partition("\n\n")
    assert lead.startswith("Nuestro material no menciona “Valencia”.")
    assert "5 a 8 días laborables" in rest and "[1]" in rest
    assert dict(events)["citations"]["items"][0]["path"] == "politicas/envios"
    gaps = rt.backlog.gaps(acme)
    assert len(gaps) == 1 and gaps[0].count == 1  # the point asked is still a gap
    stored = conversations.turns(acme, rt.store, done["conversation_id"])
    assert [t["status"] for t in stored] == ["partial"] and stored[0]["trace"]["missing"] == ["Valencia"]


def test_the_private_turn_log_filters_partial_turns(api):
    api.events("¿Cuánto tardan los envíos a Canarias?")
    api.events(VALENCIA)
    auth = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
    response = api.client.get("/v1/admin/turns?tenant=acme&status=partial", headers=auth)
    assert response.status_code == 200, response.text
    turns = response.json()["turns"]
    assert [t["question"] for t in turns] == [VALENCIA]
    assert turns[0]["status"] == "partial" and turns[0]["trace"]["abstained"] == "partial"
    assert turns[0]["citations"][0]["path"] == "politicas/envios"
    answered = api.client.get("/v1/admin/turns?tenant=acme&status=answered", headers=auth).json()["turns"]
    assert [t["question"] for t in answered] == ["¿Cuánto tardan los envíos a Canarias?"]
    assert api.client.get("/v1/admin/turns?tenant=acme&status=partly", headers=auth).status_code == 422
    schema = api.client.get("/openapi.json").json()
    param = next(p for p in schema["paths"]["/v1/admin/turns"]["get"]["parameters"] if p["name"] == "status")
    assert "partial" in str(param["schema"])


def test_a_partial_answer_is_the_second_uncovered_question_of_a_support_channel(api, rt, acme):  # noqa: F811
    token = site_keys.sign_customer_token(site_keys.ensure(acme, rt.store).secret, "cust-9")
    first = only_done(api.events("¿Vendéis patinetes eléctricos?", token=token))
    assert first["status"] == "abstained" and "missing" not in first
    events = api.events(VALENCIA, token=token, conversation_id=first["conversation_id"])
    done = only_done(events)
    assert done["status"] == "handoff" and done["missing"] == ["Valencia"]  # the facts still travel, cited
    assert "handoff" in names(events) and "citations" in names(events)
    assert text_of(events).startswith("Nuestro material no menciona “Valencia”.")


def test_done_names_what_is_missing_only_for_a_partial_answer():
    trace = TurnTrace("web", "es", missing=["Valencia"])
    partial = done_payload(TurnResult(Status.PARTIAL, "…", "c1", "es", trace=trace))
    assert partial["status"] == "partial" and partial["missing"] == ["Valencia"]
    answered = done_payload(TurnResult(Status.ANSWERED, "…", "c1", "es", trace=TurnTrace("web", "es")))
    assert "missing" not in answered
