"""``POST /v1/conversations/{id}/turns/{turn}/feedback``: the visitor's 👍/👎, with the replies route's identity
and ownership rules; the done event names the turn it rates."""
from __future__ import annotations

import pytest

from core.channels import conversations
from core.gaps import feedback
from core.gaps.model import NOT_HELPFUL
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import local_operator
from tests.api.test_chat import Api, acme, only_done  # noqa: F401  (the fixture)

ASKED = "¿Cuánto tardan los envíos a Canarias?"


@pytest.fixture
def api(rt, acme):  # noqa: F811
    client = Api(rt)
    yield client
    client.close()


def ask(api, message=ASKED, **kwargs) -> dict:
    return only_done(api.events(message, **kwargs))


def rate(api, conversation_id, turn_id, body, slug="acme", headers=None):
    return api.client.post(f"/v1/conversations/{conversation_id}/turns/{turn_id}/feedback", json=body,
                           headers={"X-Site-Key": api.key(slug), **(headers or {})})


def test_the_done_event_names_the_recorded_turn(api, rt, acme):  # noqa: F811
    done = ask(api)
    assert done["status"] == "answered" and isinstance(done["turn_id"], int)
    [turn] = conversations.turns(acme, rt.store, done["conversation_id"])
    assert turn["id"] == done["turn_id"]


def test_a_thumbs_down_lands_on_the_backlog_and_a_thumbs_up_replaces_it(api, rt, acme):  # noqa: F811
    done = ask(api)
    down = rate(api, done["conversation_id"], done["turn_id"], {"rating": "down", "reason": "Falta el precio."})
    assert down.status_code == 200, down.text
    body = down.json()
    assert body["recorded"] is True and body["rating"] == "down" and isinstance(body["gap_id"], int)
    gap = rt.backlog.require(acme, body["gap_id"])
    assert gap.kind == NOT_HELPFUL and gap.count == 1 and gap.channels == ("web",)
    up = rate(api, done["conversation_id"], done["turn_id"], {"rating": "up"})
    assert up.status_code == 200 and up.json() == {"recorded": True, "rating": "up", "gap_id": None}
    assert rt.backlog.get(acme, body["gap_id"]) is None  # it was that gap's only question
    assert feedback.get(acme, rt.store, done["turn_id"]).rating == "up"


def test_an_identified_customer_rates_their_own_answer(api, rt, acme):  # noqa: F811
    token = site_keys.sign_customer_token(site_keys.ensure(acme, rt.store).secret, "alice")
    done = ask(api, token=token)
    response = rate(api, done["conversation_id"], done["turn_id"], {"rating": "down"},
                    headers={"X-Customer-Token": token})
    assert response.status_code == 200 and rt.backlog.require(acme, response.json()["gap_id"]).channels == (
        "identified",)
    bob = site_keys.sign_customer_token(site_keys.ensure(acme, rt.store).secret, "bob")
    other = rate(api, done["conversation_id"], done["turn_id"], {"rating": "up"}, headers={"X-Customer-Token": bob})
    assert other.status_code == 404 and other.json()["error"]["code"] == "conversation_not_found"


def test_a_foreign_turn_answers_exactly_like_a_missing_one(api, rt, acme):  # noqa: F811
    mine, other = ask(api), ask(api)
    missing = rate(api, mine["conversation_id"], 999_999, {"rating": "down"})
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "turn_not_found"
    foreign = rate(api, mine["conversation_id"], other["turn_id"], {"rating": "down"})
    assert (foreign.status_code, foreign.content) == (missing.status_code, missing.content)
    globex = local_operator(rt.store, "globex")
    theirs = conversations.start(globex, rt.store, "web")
    turn_id = conversations.record_turn(globex, rt.store, theirs.id, question="?", status="answered", answer="x",
                                        citations=[], evidence=[], truncated=False, provider="", model="",
                                        latency_ms=0, input_tokens=0, output_tokens=0, trace={}, uncovered=False)
    as_acme = rate(api, theirs.id, turn_id, {"rating": "down"})
    as_missing = rate(api, "0123456789abcdef", turn_id, {"rating": "down"})
    assert as_acme.status_code == 404 and (as_acme.content, sorted(as_acme.headers.items())) == (
        as_missing.content, sorted(as_missing.headers.items()))
    assert rt.backlog.gaps(acme) == [] and rt.backlog.gaps(globex) == []


@pytest.mark.parametrize("body, says", [
    ({"rating": "meh"}, "rating (body): Input should be 'up' or 'down'"),
    ({}, "rating (body): Field required"),
    ({"rating": "down", "reason": "x" * 501}, "reason (body): String should have at most 500 characters"),
    ({"rating": "down", "reason": ["no"]}, "reason (body)"),
])
def test_a_bad_rating_or_a_long_reason_is_a_422_that_says_what_to_send(api, rt, acme, body, says):  # noqa: F811
    done = ask(api)
    response = rate(api, done["conversation_id"], done["turn_id"], body)
    assert response.status_code == 422
    message = response.json()["error"]["message"]
    assert says in message and '"rating": "up" or "down"' in message and '{"message"' not in message
    assert feedback.get(acme, rt.store, done["turn_id"]) is None


def test_a_reason_of_spaces_around_500_characters_is_taken_stripped(api, rt, acme):  # noqa: F811
    done = ask(api)
    response = rate(api, done["conversation_id"], done["turn_id"], {"rating": "down", "reason": "  " + "a" * 496})
    assert response.status_code == 200 and feedback.get(acme, rt.store, done["turn_id"]).reason == "a" * 496


def test_no_site_key_is_a_401_and_ratings_are_rate_limited(rt, acme):  # noqa: F811
    now = [1000.0]
    api = Api(rt, {"COBERTURA_RATE_PER_IP": "3"}, monotonic=lambda: now[0])
    done = ask(api)
    anonymous = api.client.post(f"/v1/conversations/{done['conversation_id']}/turns/{done['turn_id']}/feedback",
                                json={"rating": "up"})
    assert anonymous.status_code == 401 and anonymous.json()["error"]["code"] == "missing_site_key"
    codes = [rate(api, done["conversation_id"], done["turn_id"], {"rating": "up"}).status_code for _ in range(4)]
    assert codes == [200, 200, 200, 429]
    limited = rate(api, done["conversation_id"], done["turn_id"], {"rating": "up"})
    assert "Too many ratings" in limited.json()["error"]["message"] and int(limited.headers["Retry-After"]) >= 1
    assert api.chat("¿Y a Baleares?", conversation_id=done["conversation_id"]).status_code == 200  # own bucket
    api.close()


def test_rating_needs_no_open_channel_the_kill_switch_stops_only_the_agent(api, rt, acme):  # noqa: F811
    done = ask(api)
    tenant_settings.update(acme, rt.store, process=rt.settings, channels_enabled=["identified"], kill_switch=True)
    response = rate(api, done["conversation_id"], done["turn_id"], {"rating": "down"})
    assert response.status_code == 200 and response.json()["gap_id"] is not None


def test_a_body_that_is_not_json_says_what_a_rating_looks_like(api):
    done = ask(api)
    response = api.client.post(f"/v1/conversations/{done['conversation_id']}/turns/{done['turn_id']}/feedback",
                               content=b"\xff not json", headers={"X-Site-Key": api.key("acme"),
                                                                  "Content-Type": "application/json"})
    assert response.status_code == 400 and '"rating": "up" or "down"' in response.json()["error"]["message"]
