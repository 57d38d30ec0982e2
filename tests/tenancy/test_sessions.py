"""Admin-app sessions (core/tenancy/sessions.py): a signed cookie over a server-side record that expires (idle and
absolute), is revoked on sign-out, on a password change and when the user is removed or deleted; only the token's
hash is stored; a tampered, foreign or replayed cookie never signs anyone in."""
from __future__ import annotations

import base64
import json
import os
import re
import stat
from datetime import datetime, timedelta, timezone

import jwt
import pytest

from core.base.config import ConfigError, load_settings
from core.base.store import Store
from core.tenancy import members, sessions, tenants
from core.tenancy.context import AuthError, ForgedContext, authenticate, context_for, create_first_admin
from core.tenancy.sessions import SessionEnded, SessionPolicy
from tests.fakes import MovableClock

PASSWORD = "a long test password"
T0 = datetime(2026, 3, 1, 9, 0, tzinfo=timezone.utc)


@pytest.fixture
def clock():
    return MovableClock(T0)


@pytest.fixture
def store(tmp_path, clock):
    store = Store(tmp_path / "data" / "cobertura.db", clock)
    tenants.create_tenant(store, "acme", "Acme")
    tenants.create_tenant(store, "globex", "Globex")
    tenants.create_user(store, "acme", "ed@acme.test", PASSWORD, "editor")
    tenants.create_user(store, "acme", "boss@acme.test", PASSWORD, "admin")
    yield store
    store.close()


@pytest.fixture
def policy():
    return SessionPolicy("s" * 48, lifetime=timedelta(hours=12), idle=timedelta(minutes=120))


def sign_in(store, policy, email="ed@acme.test") -> sessions.Opened:
    return sessions.open_session(store, authenticate(store, email, PASSWORD), policy)


def assert_ended(store, opened: sessions.Opened, policy, match: str) -> None:
    """Neither the live session nor its cookie (a reload) signs anyone in any more, saying ``match``."""
    with pytest.raises(SessionEnded, match=match):
        sessions.check(store, opened.session, policy)
    with pytest.raises(SessionEnded, match=match):
        sessions.resume(store, opened.cookie, policy)


def test_a_cookie_signs_the_same_user_in_again_after_a_reload(store, policy, clock):
    opened = sign_in(store, policy)
    assert opened.session.email == "ed@acme.test" and opened.session.session_id is not None
    assert opened.max_age == 120 * 60  # idle comes first
    clock.advance(minutes=5)
    again = sessions.resume(store, opened.cookie, policy)
    assert again.session == opened.session and again.session.session_id == opened.session.session_id
    assert again.session is not opened.session  # a new object, issued by core.tenancy
    assert context_for(store, again.session, "acme").role == "editor"


def test_only_a_hash_of_the_token_is_stored(store, policy):
    opened = sign_in(store, policy)
    token = jwt.decode(opened.cookie, policy.secret, algorithms=["HS256"], options={"verify_exp": False})["tok"]
    dump = "\n".join(store.db.conn.iterdump())
    assert token not in dump and opened.cookie not in dump
    assert len(store.query("SELECT token_hash FROM admin_sessions")[0]["token_hash"]) == 64


def test_an_idle_session_is_refused_and_activity_keeps_it_alive(store, policy, clock):
    opened = sign_in(store, policy)
    for _ in range(4):  # 4 × 100 minutes of use: past the idle lifetime in total, never idle that long
        clock.advance(minutes=100)
        assert sessions.check(store, opened.session, policy) == 120 * 60
    clock.advance(minutes=121)
    assert_ended(store, opened, policy, "without activity")


def test_the_absolute_lifetime_ends_a_session_however_active(store, policy, clock):
    opened = sign_in(store, policy)
    for _ in range(11):
        clock.advance(hours=1)
        sessions.check(store, opened.session, policy)
    assert sessions.check(store, opened.session, policy) == 3600  # the cookie ends with the session
    clock.advance(hours=1)
    assert_ended(store, opened, policy, "expired")


def test_a_sign_in_clears_out_the_sessions_past_their_end(store, policy, clock):
    old = sign_in(store, policy)
    sessions.end(store, sign_in(store, policy, "boss@acme.test").session)  # revoked, not yet past its end
    clock.advance(hours=13)
    sign_in(store, policy)
    assert len(store.query("SELECT id FROM admin_sessions")) == 1  # the new one; both old ones are gone
    with pytest.raises(SessionEnded, match="expired"):
        sessions.resume(store, old.cookie, policy)


def test_a_shorter_lifetime_configured_later_applies_at_once(store, policy, clock):
    opened = sign_in(store, policy)
    clock.advance(hours=3)
    shorter = SessionPolicy(policy.secret, lifetime=timedelta(hours=2), idle=timedelta(hours=8))
    with pytest.raises(SessionEnded, match="expired"):
        sessions.resume(store, opened.cookie, shorter)


def test_sign_out_revokes_the_cookie_and_every_copy_of_it(store, policy, clock):
    opened = sign_in(store, policy)
    copy = sessions.resume(store, opened.cookie, policy)  # another tab, or a stolen copy
    sessions.end(store, opened.session)
    for live in (opened.session, copy.session):
        with pytest.raises(SessionEnded, match="signed out"):
            sessions.check(store, live, policy)
    with pytest.raises(SessionEnded, match="signed out"):
        sessions.resume(store, opened.cookie, policy)
    assert sign_in(store, policy).session.session_id != opened.session.session_id  # signing in again works


@pytest.mark.parametrize("tamper", ["payload", "signature", "other secret", "alg none", "garbage", "empty", "huge",
                                    "no tok", "string exp"])
def test_a_tampered_or_foreign_cookie_is_refused(store, policy, tamper):
    cookie = sign_in(store, policy).cookie
    head, body, sig = cookie.split(".")
    claims = jwt.decode(cookie, policy.secret, algorithms=["HS256"], options={"verify_exp": False})

    def b64(data: dict) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    forged = {
        "payload": f"{head}.{b64({**claims, 'exp': claims['exp'] + 86400})}.{sig}",
        "signature": f"{head}.{body}.{sig[:-2]}{'AA' if not sig.endswith('AA') else 'BB'}",
        "other secret": jwt.encode(claims, "x" * 48, algorithm="HS256"),
        "alg none": f"{b64({'alg': 'none', 'typ': 'JWT'})}.{body}.",
        "garbage": "not-a-token",
        "empty": "",
        "huge": "a" * 5000,
        "no tok": jwt.encode({"exp": claims["exp"]}, policy.secret, algorithm="HS256"),
        "string exp": jwt.encode({**claims, "exp": str(claims["exp"])}, policy.secret, algorithm="HS256"),
    }[tamper]
    with pytest.raises(SessionEnded):
        sessions.resume(store, forged, policy)


def test_a_validly_signed_token_with_an_unknown_secret_part_is_refused(store, policy, clock):
    """Signed with the right secret but naming no recorded session (a data dir reset, a guessed token)."""
    cookie = jwt.encode({"tok": "guessed", "exp": int((clock.now() + timedelta(hours=1)).timestamp())},
                        policy.secret, algorithm="HS256")
    with pytest.raises(SessionEnded, match="no longer valid"):
        sessions.resume(store, cookie, policy)


def test_the_token_of_a_deleted_user_is_refused_even_if_their_id_comes_back(store, policy):
    opened = sign_in(store, policy, "boss@acme.test")
    tenants.create_user(store, "acme", "other@acme.test", PASSWORD, "admin")  # so boss is not the last admin
    tenants.delete_user(store, "boss@acme.test")
    with pytest.raises(SessionEnded):
        sessions.resume(store, opened.cookie, policy)
    with pytest.raises(SessionEnded, match="no longer valid"):
        sessions.check(store, opened.session, policy)
    tenants.create_user(store, "acme", "boss@acme.test", "another password", "admin")  # same e-mail, new account
    with pytest.raises(SessionEnded):
        sessions.resume(store, opened.cookie, policy)


def test_a_password_change_ends_every_other_session_of_the_user(store, policy):
    here, elsewhere = sign_in(store, policy), sign_in(store, policy)
    other_user = sign_in(store, policy, "boss@acme.test")
    with pytest.raises(AuthError):
        sessions.change_password(store, here.session, "wrong password", "brand new password", policy)
    sessions.check(store, elsewhere.session, policy)  # a wrong current password changes nothing
    fresh = sessions.change_password(store, here.session, PASSWORD, "brand new password", policy)
    for old in (here, elsewhere):
        with pytest.raises(SessionEnded, match="password changed"):
            sessions.resume(store, old.cookie, policy)
    assert sessions.resume(store, fresh.cookie, policy).session.email == "ed@acme.test"
    sessions.check(store, other_user.session, policy)  # another user's session is untouched
    authenticate(store, "ed@acme.test", "brand new password")


def test_an_operator_password_reset_and_sign_out_end_the_sessions(store, policy):
    opened = sign_in(store, policy)
    assert sessions.reset_password(store, "ed@acme.test", "reset by the operator") == 1
    with pytest.raises(SessionEnded, match="password reset"):
        sessions.check(store, opened.session, policy)
    again = sessions.open_session(store, authenticate(store, "ed@acme.test", "reset by the operator"), policy)
    assert sessions.live_sessions(store, "ed@acme.test", policy)[0]["id"] == again.session.session_id
    assert sessions.revoke_user(store, "ed@acme.test", "signed out by the operator") == 1
    assert sessions.live_sessions(store, "ed@acme.test", policy) == []


def test_removing_a_member_ends_their_sessions(store, policy):
    opened = sign_in(store, policy)
    admin = context_for(store, authenticate(store, "boss@acme.test", PASSWORD), "acme")
    members.remove_member(admin, store, "ed@acme.test")
    with pytest.raises(SessionEnded, match="removed from acme"):
        sessions.resume(store, opened.cookie, policy)


def test_a_session_without_a_record_holds_only_while_its_user_exists(store, policy):
    bare = authenticate(store, "ed@acme.test", PASSWORD)  # what tests and scripts put in the session state
    assert sessions.check(store, bare, policy) == 0
    sessions.end(store, bare)  # nothing to revoke: no error
    tenants.delete_user(store, "ed@acme.test")
    with pytest.raises(SessionEnded, match="no longer exists"):
        sessions.check(store, bare, policy)


def test_only_a_session_core_tenancy_issued_is_accepted(store, policy):
    class Fake:
        email, session_id = "ed@acme.test", 1

    for fn in (lambda s: sessions.check(store, s, policy), lambda s: sessions.end(store, s),
               lambda s: sessions.open_session(store, s, policy)):
        with pytest.raises(ForgedContext):
            fn(Fake())


def test_the_first_admin_gets_a_recorded_session_too(tmp_path, clock, policy):
    store = Store(tmp_path / "fresh.db", clock)
    tenants.create_tenant(store, "demo", "Demo")
    opened = sessions.open_session(store, create_first_admin(store, "boss@demo.test", PASSWORD), policy)
    assert sessions.resume(store, opened.cookie, policy).session.email == "boss@demo.test"
    store.close()


def test_the_secret_is_made_once_in_the_data_dir_private_and_an_env_secret_wins(tmp_path):
    settings = load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")})
    settings.data_dir.mkdir(parents=True)
    first = sessions.session_secret(settings)
    path = settings.data_dir / sessions.SECRET_FILE
    assert len(first) >= 32 and stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert sessions.session_secret(settings) == first  # the next start reuses it
    configured = load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data"), "COBERTURA_SESSION_SECRET": "e" * 40})
    assert sessions.session_secret(configured) == "e" * 40
    path.write_text("short")
    with pytest.raises(ConfigError, match="delete the file"):
        sessions.session_secret(settings)


def test_the_lifetimes_come_from_the_settings(tmp_path):
    settings = load_settings({"COBERTURA_DATA_DIR": str(tmp_path), "COBERTURA_SESSION_HOURS": "8",
                              "COBERTURA_SESSION_IDLE_MINUTES": "30", "COBERTURA_SESSION_SECRET": "k" * 32})
    policy = SessionPolicy.from_settings(settings)
    assert policy.lifetime == timedelta(hours=8) and policy.idle == timedelta(minutes=30)
    assert "k" * 32 not in repr(policy) and "k" * 32 not in repr(settings)
    for env in ({"COBERTURA_SESSION_HOURS": "0"}, {"COBERTURA_SESSION_IDLE_MINUTES": "soon"},
                {"COBERTURA_SESSION_SECRET": "too short"}):
        with pytest.raises(ConfigError, match=next(iter(env))):
            load_settings({"COBERTURA_DATA_DIR": str(tmp_path), **env})


def test_each_instance_names_its_cookie_after_its_secret(policy):
    other = SessionPolicy("t" * 48, policy.lifetime, policy.idle)
    assert re.fullmatch(r"cobertura_session_[0-9a-f]{10}", policy.cookie_name)
    assert policy.cookie_name != other.cookie_name  # two data dirs on one host keep apart
    assert policy.cookie_name == SessionPolicy(policy.secret, timedelta(1), timedelta(1)).cookie_name  # stable
    assert policy.secret[:10] not in policy.cookie_name
