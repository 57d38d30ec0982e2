"""Ownership before admission (issue 16, item 13): a conversation id that is not the visitor's own answers
exactly like a missing one (same status, body and headers), whatever the tenant's channel settings and kill
switch. Before the fix the channel check ran first and looked at the *found* conversation's channel, so a
foreign id got 403 ``channel_disabled`` where a missing one got 404 (or the other way round)."""
from __future__ import annotations

import itertools

import pytest

from core.channels import conversations
from core.tenancy import settings as tenant_settings, site_keys
from core.tenancy.context import local_operator
from tests.api.test_chat import Api, acme  # noqa: F401  (the fixture)

MISSING = "0123456789abcdef"
VOLATILE = {"date", "x-request-id"}
SETTINGS = [{"web": web, "identified": identified, "kill_switch": kill}
            for web, identified, kill in itertools.product([True, False], repeat=3)]


def setting_id(s: dict) -> str:
    return "-".join(f"{k}={'on' if v else 'off'}" for k, v in s.items())


@pytest.fixture
def api(rt, acme):  # noqa: F811
    client = Api(rt)
    yield client
    client.close()


@pytest.fixture
def foreign(rt, acme):  # noqa: F811
    """Conversations that belong to someone else: another visitor, customer, channel or tenant."""
    globex = local_operator(rt.store, "globex")
    return {"another anonymous visitor's": conversations.start(acme, rt.store, "web").id,
            "another customer's": conversations.start(acme, rt.store, "identified", "bob").id,
            "a sandbox conversation": conversations.start(acme, rt.store, "sandbox").id,
            "another tenant's": conversations.start(globex, rt.store, "web").id}


def apply(rt, acme, setting: dict) -> None:  # noqa: F811
    enabled = [c for c in tenant_settings.CHANNELS if setting.get(c, True)]
    tenant_settings.update(acme, rt.store, process=rt.settings, channels_enabled=enabled,
                           kill_switch=setting["kill_switch"])


def answer(response) -> tuple:
    return (response.status_code, response.content,
            sorted((k, v) for k, v in response.headers.items() if k.lower() not in VOLATILE))


def visitor_headers(api, rt, acme, who: str | None) -> dict:  # noqa: F811
    headers = {"X-Site-Key": api.key("acme")}
    if who:
        headers["X-Customer-Token"] = site_keys.sign_customer_token(site_keys.ensure(acme, rt.store).secret, who)
    return headers


@pytest.mark.parametrize("who", [None, "alice"], ids=["anonymous", "identified"])
@pytest.mark.parametrize("setting", SETTINGS, ids=[setting_id(s) for s in SETTINGS])
def test_a_foreign_conversation_answers_exactly_like_a_missing_one(api, rt, acme, foreign, setting, who):  # noqa: F811
    apply(rt, acme, setting)
    headers = visitor_headers(api, rt, acme, who)

    def chat(conversation_id):
        return api.client.post("/v1/chat", json={"message": "¿Y a Baleares?", "conversation_id": conversation_id},
                               headers=headers)

    def poll(conversation_id):
        return api.client.get(f"/v1/conversations/{conversation_id}/replies", headers=headers)

    def rate(conversation_id):  # answer feedback: the turn id does not matter, the conversation is checked first
        return api.client.post(f"/v1/conversations/{conversation_id}/turns/1/feedback", json={"rating": "down"},
                               headers=headers)

    for ask in (chat, poll, rate):
        missing = answer(ask(MISSING))
        assert missing[0] == 404 and b"conversation_not_found" in missing[1]
        for what, conversation_id in foreign.items():
            if who is None and what == "another anonymous visitor's":
                continue  # for anonymous visitors the id is the credential: whoever holds it is that visitor
            got = answer(ask(conversation_id))
            assert got == (missing[0], missing[1].replace(MISSING.encode(), conversation_id.encode()), missing[2]), \
                (ask.__name__, what)


def test_the_visitors_own_conversation_is_still_refused_when_its_channel_is_off(api, rt, acme):  # noqa: F811
    first = api.chat("¿Cuánto tardan los envíos a Canarias?")
    assert first.status_code == 200
    own = conversations.question_log(acme, rt.store)[0]["conversation_id"]
    apply(rt, acme, {"web": False, "identified": True, "kill_switch": False})
    response = api.chat("¿Y a Baleares?", conversation_id=own)
    assert response.status_code == 403 and response.json()["error"]["code"] == "channel_disabled"
