"""Site keys and customer tokens (P1), the visitor and log-reader contexts (P4): the tenant comes only from its
key, a customer only from a token signed with that tenant's current secret, the logs only from the admin token."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json

import jwt
import pytest

from core.channels import conversations
from core.tenancy import site_keys
from core.tenancy.context import AuthError, log_reader, login, visitor_context
from core.tenancy.site_keys import MAX_TOKEN_LIFETIME, TokenError, sign_customer_token, verify_customer_token
from core.tenancy.tenants import create_user

NOW = 1_700_000_000.0
DAY = 86400


def clock(at: float = NOW):
    return lambda: at


@pytest.fixture
def editor(ctx, rt):
    create_user(rt.store, "acme", "ed@acme.test", "correct-horse", "editor")
    return login(rt.store, "ed@acme.test", "correct-horse", "acme")


def _b64(data: dict) -> str:
    return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()


# -- keys ------------------------------------------------------------------------------------------------
def test_ensure_is_idempotent(ctx, rt):
    first = site_keys.ensure(ctx, rt.store)
    again = site_keys.ensure(ctx, rt.store)
    assert first == again
    assert first.public_key.startswith("pk_") and first.secret.startswith("whsec_")
    assert site_keys.webhook_secret(ctx, rt.store) == first.secret


def test_the_secret_is_not_in_the_repr(keys):
    assert keys.secret not in repr(keys) and keys.public_key in repr(keys)


@pytest.mark.parametrize("action", [site_keys.ensure, site_keys.rotate_public_key, site_keys.rotate_secret])
def test_keys_are_admin_only(editor, ctx, rt, action):
    with pytest.raises(AuthError, match="Only an admin"):
        action(editor, rt.store)
    assert site_keys.webhook_secret(ctx, rt.store) == ""  # nothing was created on the way to the refusal


def test_editor_cannot_rotate_existing_keys(editor, keys, ctx, rt):
    for action in (site_keys.rotate_public_key, site_keys.rotate_secret):
        with pytest.raises(AuthError):
            action(editor, rt.store)
    assert site_keys.ensure(ctx, rt.store) == keys


def test_keys_are_per_tenant_and_lookup_names_the_owner(keys, other_keys, ctx, other_ctx, rt):
    assert keys.public_key != other_keys.public_key and keys.secret != other_keys.secret
    assert site_keys.lookup(rt.store, keys.public_key) == ("acme", keys.secret)
    assert site_keys.lookup(rt.store, other_keys.public_key) == ("globex", other_keys.secret)
    theirs = visitor_context(rt.store, other_keys.public_key)
    assert (theirs.tenant_slug, theirs.tenant_id) == ("globex", other_ctx.tenant_id)
    ours = visitor_context(rt.store, keys.public_key)
    assert (ours.tenant_slug, ours.tenant_id) == ("acme", ctx.tenant_id)


@pytest.mark.parametrize("key", ["", "nope", "pk_unknown", "whsec_x", None, 42, "pk_" + "a" * 200])
def test_lookup_of_anything_else_is_none(keys, rt, key):
    assert site_keys.lookup(rt.store, key) is None


def test_lookup_does_not_accept_the_secret_as_a_key(keys, rt):
    assert site_keys.lookup(rt.store, keys.secret) is None
    with pytest.raises(AuthError, match="Unknown site key"):
        visitor_context(rt.store, keys.secret)


def test_rotating_the_public_key_retires_the_old_one_at_once(keys, ctx, rt):
    rotated = site_keys.rotate_public_key(ctx, rt.store)
    assert rotated.public_key != keys.public_key and rotated.secret == keys.secret
    assert rotated.rotated_by == ctx.actor
    with pytest.raises(AuthError, match="Unknown site key"):
        visitor_context(rt.store, keys.public_key)
    assert visitor_context(rt.store, rotated.public_key).tenant_slug == "acme"


def test_rotating_the_secret_keeps_the_public_key(keys, ctx, rt):
    rotated = site_keys.rotate_secret(ctx, rt.store)
    assert rotated.secret != keys.secret and rotated.public_key == keys.public_key
    assert site_keys.webhook_secret(ctx, rt.store) == rotated.secret


def test_webhook_secret_is_empty_without_keys(ctx, rt):
    assert site_keys.webhook_secret(ctx, rt.store) == ""


# -- customer tokens -------------------------------------------------------------------------------------
def test_token_round_trip_gives_the_customer_id(keys):
    token = sign_customer_token(keys.secret, "cust-42", 600, clock=clock())
    assert verify_customer_token(keys.secret, token, clock=clock(NOW + 599)) == "cust-42"


def _tampered_payload(secret):
    header, _payload, signature = sign_customer_token(secret, "alice", 600, clock=clock()).split(".")
    return f"{header}.{_b64({'sub': 'mallory', 'exp': int(NOW) + 600})}.{signature}"


def _tampered_signature(secret):
    header, payload, signature = sign_customer_token(secret, "alice", 600, clock=clock()).split(".")
    flipped = ("A" if signature[0] != "A" else "B") + signature[1:]
    return f"{header}.{payload}.{flipped}"


def _hs512(secret, payload):
    # by hand: PyJWT warns (an error here) about a key shorter than SHA-512's block
    signing_input = f"{_b64({'alg': 'HS512', 'typ': 'JWT'})}.{_b64(payload)}"
    mac = hmac.new(secret.encode(), signing_input.encode(), hashlib.sha512).digest()
    return f"{signing_input}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def _alg_none(secret):
    return f"{_b64({'alg': 'none', 'typ': 'JWT'})}.{_b64({'sub': 'alice', 'exp': int(NOW) + 600})}."


BAD_TOKENS = {
    "tampered payload": _tampered_payload,
    "tampered signature": _tampered_signature,
    "alg none": _alg_none,
    "HS512 with the right secret": lambda s: _hs512(s, {"sub": "alice", "exp": int(NOW) + 600}),
    "expired": lambda s: sign_customer_token(s, "alice", 60, clock=clock(NOW - 60 - site_keys.LEEWAY_SECONDS - 1)),
    "exp more than 7 days ahead": lambda s: jwt.encode({"sub": "alice", "exp": int(NOW) + MAX_TOKEN_LIFETIME + 3600},
                                                       s, algorithm="HS256"),
    "missing sub": lambda s: jwt.encode({"exp": int(NOW) + 600}, s, algorithm="HS256"),
    "missing exp": lambda s: jwt.encode({"sub": "alice"}, s, algorithm="HS256"),
    "empty sub": lambda s: jwt.encode({"sub": "  ", "exp": int(NOW) + 600}, s, algorithm="HS256"),
    "exp not a number": lambda s: jwt.encode({"sub": "alice", "exp": "tomorrow"}, s, algorithm="HS256"),
    "not a jwt": lambda s: "definitely-not-a-token",
}


@pytest.mark.parametrize("make", BAD_TOKENS.values(), ids=BAD_TOKENS.keys())
def test_untrustworthy_tokens_are_refused(keys, make):
    token = make(keys.secret)
    with pytest.raises(TokenError) as refused:
        verify_customer_token(keys.secret, token, clock=clock())
    assert token not in str(refused.value)  # the message says why, never echoes the token


def test_a_token_whose_exp_is_nan_is_refused(keys):
    # json (and so PyJWT) round-trips NaN; every comparison with NaN is False, so the token would never expire
    token = jwt.encode({"sub": "alice", "exp": float("nan")}, keys.secret, algorithm="HS256")
    with pytest.raises(TokenError):
        verify_customer_token(keys.secret, token, clock=clock())


def test_expiry_has_a_small_leeway_and_no_more(keys):
    token = sign_customer_token(keys.secret, "alice", 60, clock=clock())
    assert verify_customer_token(keys.secret, token, clock=clock(NOW + 60 + site_keys.LEEWAY_SECONDS - 1)) == "alice"
    with pytest.raises(TokenError, match="expired"):
        verify_customer_token(keys.secret, token, clock=clock(NOW + 60 + site_keys.LEEWAY_SECONDS + 1))


def test_a_seven_day_token_is_accepted(keys):
    token = sign_customer_token(keys.secret, "alice", MAX_TOKEN_LIFETIME, clock=clock())
    assert verify_customer_token(keys.secret, token, clock=clock()) == "alice"


def test_a_token_signed_with_another_tenants_secret_is_refused(keys, other_keys, rt):
    token = sign_customer_token(other_keys.secret, "alice", 600)
    with pytest.raises(TokenError):
        verify_customer_token(keys.secret, token)
    with pytest.raises(TokenError):
        visitor_context(rt.store, keys.public_key, token)


def test_tokens_signed_with_the_old_secret_die_with_rotation(keys, ctx, rt):
    old = sign_customer_token(keys.secret, "alice", 600)
    assert visitor_context(rt.store, keys.public_key, old).customer_id == "alice"
    rotated = site_keys.rotate_secret(ctx, rt.store)
    with pytest.raises(TokenError):
        visitor_context(rt.store, keys.public_key, old)
    fresh = sign_customer_token(rotated.secret, "alice", 600)
    assert visitor_context(rt.store, keys.public_key, fresh).customer_id == "alice"


@pytest.mark.parametrize("ttl", [0, -1, MAX_TOKEN_LIFETIME + 1])
def test_signing_refuses_lifetimes_outside_the_limit(keys, ttl):
    with pytest.raises(TokenError, match="7 days"):
        sign_customer_token(keys.secret, "alice", ttl)


@pytest.mark.parametrize("customer", ["", "   ", "x" * 129, "bad\nid", None])
def test_signing_refuses_unusable_customer_ids(keys, customer):
    with pytest.raises(TokenError, match="customer id"):
        sign_customer_token(keys.secret, customer, 600)


def test_verifying_without_a_secret_is_refused():
    with pytest.raises(TokenError, match="no signing secret"):
        verify_customer_token("", "a.b.c")


# -- visitor context ---------------------------------------------------------------------------------------
def test_visitor_with_a_valid_token_is_an_identified_customer(keys, ctx, rt):
    token = sign_customer_token(keys.secret, "cust-7", 600)
    visitor = visitor_context(rt.store, keys.public_key, token)
    assert (visitor.channel, visitor.role, visitor.customer_id) == ("identified", "customer", "cust-7")
    assert visitor.tenant_id == ctx.tenant_id and visitor.actor == "customer:cust-7"


@pytest.mark.parametrize("token", [None, ""])
def test_visitor_without_a_token_is_anonymous_on_the_web_channel(keys, rt, token):
    visitor = visitor_context(rt.store, keys.public_key, token)
    assert (visitor.channel, visitor.role, visitor.customer_id) == ("web", "customer", None)


def test_a_bad_token_is_refused_not_downgraded_to_anonymous(keys, rt):
    with pytest.raises(TokenError):
        visitor_context(rt.store, keys.public_key, "garbage.token.here")


def test_visitor_token_expiry_follows_the_injected_clock(keys, rt):
    token = sign_customer_token(keys.secret, "alice", 60, clock=clock())
    assert visitor_context(rt.store, keys.public_key, token, clock=clock(NOW + 10)).customer_id == "alice"
    with pytest.raises(TokenError, match="expired"):
        visitor_context(rt.store, keys.public_key, token, clock=clock(NOW + 3600))


def test_a_visitor_cannot_see_or_rotate_keys(keys, rt):
    visitor = visitor_context(rt.store, keys.public_key, sign_customer_token(keys.secret, "alice", 600))
    for action in (site_keys.ensure, site_keys.rotate_public_key, site_keys.rotate_secret):
        with pytest.raises(AuthError):
            action(visitor, rt.store)


# -- log reader --------------------------------------------------------------------------------------------
@pytest.mark.parametrize("configured, presented", [("", ""), ("", "anything"), ("", None)])
def test_log_reader_fails_closed_without_a_configured_token(ctx, rt, configured, presented):
    with pytest.raises(AuthError, match="COBERTURA_ADMIN_TOKEN"):
        log_reader(rt.store, configured, presented, "acme")


@pytest.mark.parametrize("presented", ["", None, "s3cret-token-x", "s3cret-token", "S3CRET-TOKEN-1"])
def test_log_reader_refuses_a_wrong_token(ctx, rt, presented):
    with pytest.raises(AuthError, match="Wrong admin token"):
        log_reader(rt.store, "s3cret-token-1", presented, "acme")


def test_log_reader_accepts_the_right_token(ctx, rt):
    reader = log_reader(rt.store, "s3cret-token-1", "s3cret-token-1", "acme")
    assert (reader.tenant_id, reader.role, reader.channel) == (ctx.tenant_id, "admin", "api")


def test_log_reader_of_an_unknown_tenant_is_refused(ctx, rt):
    with pytest.raises(AuthError, match="No tenant"):
        log_reader(rt.store, "s3cret-token-1", "s3cret-token-1", "nobody")


def test_the_question_log_is_read_with_the_token_per_tenant(keys, other_keys, rt):
    alice = visitor_context(rt.store, keys.public_key, sign_customer_token(keys.secret, "alice", 600))
    stranger = visitor_context(rt.store, other_keys.public_key)
    convo = conversations.start(alice, rt.store, "identified")
    conversations.log_question(alice, rt.store, convo.id, "identified", "es", "¿Dónde está mi pedido?")
    conversations.log_question(stranger, rt.store, "x", "web", "en", "Do you ship to Mars?")
    reader = log_reader(rt.store, "tok", "tok", "acme")
    logged = conversations.question_log(reader, rt.store)
    assert [(q["question"], q["customer_id"], q["conversation_id"]) for q in logged] == \
        [("¿Dónde está mi pedido?", "alice", convo.id)]
    with pytest.raises(PermissionError):
        conversations.question_log(alice, rt.store)
    with pytest.raises(PermissionError):
        conversations.turn_log(alice, rt.store)
