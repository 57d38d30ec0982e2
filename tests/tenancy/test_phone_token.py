"""Phone tokens (the phone channel): a voice gateway signs each call with the tenant's secret, claim chan = "phone";
the visitor context is then channel ``phone``, customer ``phone:<sub>``. A customer token is never a phone token,
nor the other way round; a wrong secret, an expired or tampered token are refused with the reason."""
from __future__ import annotations

import jwt
import pytest

from core.tenancy import site_keys
from core.tenancy.context import TenancyError, local_caller, visitor_context
from core.tenancy.site_keys import (
    LEEWAY_SECONDS,
    MAX_TOKEN_LIFETIME,
    PhoneTokenError,
    TokenError,
    sign_customer_token,
    sign_phone_token,
    verify_customer_token,
    verify_phone_token,
)

NOW = 1_700_000_000.0


def clock(at: float = NOW):
    return lambda: at


def test_a_phone_token_round_trips_to_its_caller(keys):
    token = sign_phone_token(keys.secret, "+34600111222", 600, clock=clock())
    claims = jwt.decode(token, keys.secret, algorithms=["HS256"], options={"verify_exp": False})
    assert claims["chan"] == "phone" and claims["sub"] == "+34600111222" and claims["exp"] == int(NOW) + 600
    assert verify_phone_token(keys.secret, token, clock=clock(NOW + 599)) == "+34600111222"


def test_a_token_signed_with_another_secret_is_refused(keys, other_keys, rt):
    token = sign_phone_token(other_keys.secret, "call-1", 600)
    with pytest.raises(PhoneTokenError, match="not valid") as refused:
        verify_phone_token(keys.secret, token)
    assert token not in str(refused.value)
    with pytest.raises(PhoneTokenError):
        visitor_context(rt.store, keys.public_key, phone_token=token)


def test_an_expired_phone_token_is_refused_after_the_leeway(keys):
    token = sign_phone_token(keys.secret, "call-1", 60, clock=clock())
    assert verify_phone_token(keys.secret, token, clock=clock(NOW + 60 + LEEWAY_SECONDS - 1)) == "call-1"
    with pytest.raises(PhoneTokenError, match="phone token has expired"):
        verify_phone_token(keys.secret, token, clock=clock(NOW + 60 + LEEWAY_SECONDS + 1))


def test_a_customer_token_is_not_a_phone_token_and_a_phone_token_not_a_customer_token(keys, rt):
    customer = sign_customer_token(keys.secret, "+34600111222", 600)
    with pytest.raises(PhoneTokenError, match="not a phone token"):
        verify_phone_token(keys.secret, customer)
    with pytest.raises(PhoneTokenError):
        visitor_context(rt.store, keys.public_key, phone_token=customer)
    phone = sign_phone_token(keys.secret, "+34600111222", 600)
    with pytest.raises(TokenError, match="X-Phone-Token"):
        verify_customer_token(keys.secret, phone)
    with pytest.raises(TokenError):
        visitor_context(rt.store, keys.public_key, phone)
    other_channel = jwt.encode({"sub": "x", "chan": "sms", "exp": int(NOW) + 60}, keys.secret, algorithm="HS256")
    with pytest.raises(PhoneTokenError, match="not a phone token"):
        verify_phone_token(keys.secret, other_channel, clock=clock())


@pytest.mark.parametrize("claims", [{"chan": "phone", "exp": int(NOW) + 60},
                                    {"sub": "call-1", "chan": "phone"},
                                    {"sub": "call-1", "chan": "phone", "exp": int(NOW) + MAX_TOKEN_LIFETIME + 3600},
                                    {"sub": "bad\nid", "chan": "phone", "exp": int(NOW) + 60}])
def test_a_phone_token_without_sub_or_exp_or_too_long_lived_is_refused(keys, claims):
    with pytest.raises(PhoneTokenError):
        verify_phone_token(keys.secret, jwt.encode(claims, keys.secret, algorithm="HS256"), clock=clock())


def test_the_visitor_of_a_phone_token_is_on_the_phone_channel_as_phone_caller(keys, ctx, rt):
    caller = visitor_context(rt.store, keys.public_key, phone_token=sign_phone_token(keys.secret, "+34600111222"))
    assert (caller.channel, caller.role, caller.customer_id) == ("phone", "customer", "phone:+34600111222")
    assert caller.tenant_id == ctx.tenant_id and caller.actor == "phone:+34600111222"
    with pytest.raises(PhoneTokenError, match="not both"):
        visitor_context(rt.store, keys.public_key, sign_customer_token(keys.secret, "alice"),
                        phone_token=sign_phone_token(keys.secret, "+34600111222"))


def test_rotating_the_secret_kills_phone_tokens(keys, ctx, rt):
    old = sign_phone_token(keys.secret, "call-9")
    site_keys.rotate_secret(ctx, rt.store)
    with pytest.raises(PhoneTokenError):
        visitor_context(rt.store, keys.public_key, phone_token=old)


@pytest.mark.parametrize("caller", ["", "   ", "x" * 129, "bad\nid", None])
def test_signing_and_the_cli_refuse_unusable_caller_ids(keys, ctx, rt, caller):
    with pytest.raises(PhoneTokenError, match="caller id"):
        sign_phone_token(keys.secret, caller)
    with pytest.raises(TenancyError, match="caller id"):
        local_caller(rt.store, "acme", caller)


def test_the_cli_caller_gets_what_a_phone_token_gets(ctx, rt):
    caller = local_caller(rt.store, "acme", " +34600111222 ")
    assert (caller.channel, caller.role, caller.customer_id) == ("phone", "customer", "phone:+34600111222")
    assert caller.tenant_id == ctx.tenant_id


def test_ask_phone_runs_the_turn_as_that_caller_on_the_phone_channel(tmp_path, monkeypatch, capsys):
    import json

    from core.__main__ import main
    from core.base.config import load_settings
    from core.channels import conversations
    from core.runtime import open_runtime
    from core.tenancy.context import local_operator
    from tests.fakes import HashEmbedder

    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    assert main(["tenants", "create", "acme", "--name", "Acme"]) == 0
    capsys.readouterr()
    assert main(["ask", "acme", "Hola, ¿a qué hora abrís?", "--phone", "+34600111222", "--json"]) == 0
    convo_id = json.loads(capsys.readouterr().out)["conversation_id"]
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder())
    try:
        convo = conversations.get(local_operator(rt.store, "acme"), rt.store, convo_id)
        assert (convo.channel, convo.customer_id) == ("phone", "phone:+34600111222")
    finally:
        rt.close()
    with pytest.raises(SystemExit):  # one identity at a time
        main(["ask", "acme", "hola", "--phone", "+34600111222", "--customer", "alice"])
    assert "not allowed with argument" in capsys.readouterr().err
    assert main(["ask", "acme", "hola", "--phone", " "]) == 2
    assert "caller id" in capsys.readouterr().err
