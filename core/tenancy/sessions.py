"""Admin-app sign-ins that survive a reload and end: the one module whose SQL touches ``admin_sessions``.

A sign-in (a password check: ``authenticate`` or ``create_first_admin``) opens a **session**: a random 32-byte
token, of which only the SHA-256 is stored, with the user, when it began, when it was last used and when it ends.
The browser keeps the token in a cookie, inside an HS256 JWT signed with the instance's session secret
(``COBERTURA_SESSION_SECRET``, or a random one created in the data dir on first start), so a forged or altered
cookie is refused before any look-up. A cookie signs its holder in only while its record holds: not revoked
(sign-out, a password change, the user removed from a tenant or deleted), used within the idle lifetime
(``COBERTURA_SESSION_IDLE_MINUTES``), younger than the absolute lifetime (``COBERTURA_SESSION_HOURS``), and its
user still there under the same e-mail. Only then does this module issue the :class:`UserSession` the app works
with. Revocation is server-side: a copied cookie stops working the moment its session ends.
"""
from __future__ import annotations

import hashlib
import math
import os
import secrets
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

import jwt

from core.base.clock import iso
from core.base.config import ConfigError, Settings
from core.base.store import Store
from core.tenancy import tenants
from core.tenancy.context import AuthError, UserSession, authenticate
from core.tenancy.issued import _issue_session, require_session

COOKIE_PREFIX = "cobertura_session_"
SECRET_FILE = "session-secret"
ALGORITHM = "HS256"
#: ``last_seen_at`` is written at most this often (a page run reads the record; it writes only now and then).
TOUCH_SECONDS = 60
MAX_COOKIE = 1024


class SessionEnded(AuthError):
    """A cookie or a live session that no longer signs anyone in; the message says why and to sign in again."""


@dataclass(frozen=True)
class SessionPolicy:
    """How long a sign-in lives, and the secret that signs its cookie."""

    secret: str = field(repr=False)
    lifetime: timedelta
    idle: timedelta

    @classmethod
    def from_settings(cls, settings: Settings) -> SessionPolicy:
        return cls(session_secret(settings), timedelta(hours=settings.session_hours),
                   timedelta(minutes=settings.session_idle_minutes))

    @property
    def cookie_name(self) -> str:
        """``cobertura_session_`` and 10 hex digits of a hash of the secret: cookies are per host, not per port, so
        two instances on one host (two data dirs) each keep their own cookie instead of overwriting each other's."""
        return COOKIE_PREFIX + hashlib.sha256(b"cookie-name:" + self.secret.encode()).hexdigest()[:10]


@dataclass(frozen=True)
class Opened:
    """A session just opened or restored: the UserSession and the cookie that carries it (value, Max-Age)."""

    session: UserSession
    cookie: str = field(repr=False)
    max_age: int


def session_secret(settings: Settings) -> str:
    """``COBERTURA_SESSION_SECRET``, else the data dir's ``session-secret`` file (created, mode 0600, on first use)."""
    if settings.session_secret:
        return settings.session_secret
    path = Path(settings.data_dir) / SECRET_FILE
    if not path.exists():  # written whole under another name, then linked in: a process starting at the same
        draft = path.with_name(f".{SECRET_FILE}.{os.getpid()}.{secrets.token_hex(4)}")  # time never reads half
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w", encoding="ascii") as out:
            out.write(secrets.token_urlsafe(48) + "\n")
        try:
            os.link(draft, path)
        except FileExistsError:
            pass  # another process made it first: everybody uses that one
        finally:
            draft.unlink()
    secret = path.read_text(encoding="ascii").strip()
    if len(secret) < 32:
        raise ConfigError(f"{path} holds no usable session secret (under 32 characters); delete the file (everybody "
                          "is signed out and a new one is made) or set COBERTURA_SESSION_SECRET.")
    return secret


def _hash(token: str) -> str:
    return hashlib.sha256(token.encode("ascii")).hexdigest()


def _max_age(row: dict, policy: SessionPolicy, now: datetime) -> int:
    """Seconds until the session ends if it is not used again (idle or absolute, whichever comes first)."""
    ends = min(datetime.fromisoformat(row["last_seen_at"]) + policy.idle, _absolute_end(row, policy))
    return max(1, math.floor((ends - now).total_seconds()))


def _absolute_end(row: dict, policy: SessionPolicy) -> datetime:
    # the shorter of the lifetime stored at sign-in and the one configured now (lowering it applies at once)
    return min(datetime.fromisoformat(row["expires_at"]), datetime.fromisoformat(row["created_at"]) + policy.lifetime)


def _why_ended(store: Store, row: dict | None, policy: SessionPolicy, now: datetime) -> str | None:
    """None while the session holds; otherwise what ended it, in words for the sign-in page."""
    if row is None:
        return "This sign-in is no longer valid (its user was deleted, or the data directory reset); sign in again."
    if row["revoked_at"]:
        return f"This sign-in has ended ({row['revoked_why'] or 'revoked'}); sign in again."
    if now >= _absolute_end(row, policy):
        return "Your sign-in has expired; sign in again."
    if now >= datetime.fromisoformat(row["last_seen_at"]) + policy.idle:
        return "You were signed out after a while without activity; sign in again."
    if tenants.user_email(store, row["user_id"]) != row["email"]:
        return "This user no longer exists; ask an admin to add you again."
    return None


_SELECT = ("SELECT id, user_id, email, created_at, last_seen_at, expires_at, revoked_at, revoked_why "
           "FROM admin_sessions WHERE ")


def _row(store: Store, session_id: int | None = None, token_hash: str | None = None) -> dict | None:
    rows = (store.query(_SELECT + "id = ?", [int(session_id)]) if session_id is not None
            else store.query(_SELECT + "token_hash = ?", [token_hash]))
    return rows[0] if rows else None


def open_session(store: Store, proof: UserSession, policy: SessionPolicy) -> Opened:
    """Record a new session for the user who just proved their password (``proof``, from ``authenticate`` or
    ``create_first_admin``); returns the session bound to the record and its signed cookie."""
    email = require_session(proof).email
    user = tenants.user_record(store, email)
    if user is None:
        raise SessionEnded("This user no longer exists; ask an admin to add you again.")
    token, now = secrets.token_urlsafe(32), store.clock.now()
    expires = now + policy.lifetime
    with store.write() as db:
        # sessions past their absolute end can never sign in again: each sign-in clears them out (all users)
        db.execute("DELETE FROM admin_sessions WHERE expires_at < ?", [iso(now)])
        session_id = db.execute(
            "INSERT INTO admin_sessions (token_hash, user_id, email, created_at, last_seen_at, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?)", [_hash(token), user["id"], user["email"], iso(now), iso(now), iso(expires)],
        ).lastrowid
    cookie = jwt.encode({"tok": token, "iat": math.floor(now.timestamp()), "exp": math.floor(expires.timestamp())},
                        policy.secret, algorithm=ALGORITHM)
    row = _row(store, session_id=session_id)
    return Opened(_issue_session(user["email"], session_id), cookie, _max_age(row, policy, now))


def resume(store: Store, cookie: str, policy: SessionPolicy) -> Opened:
    """The session a cookie carries, issued anew after a reload: signature, expiry, the record and the user are
    checked; SessionEnded (saying why) otherwise. Counts as activity."""
    if not isinstance(cookie, str) or not cookie or len(cookie) > MAX_COOKIE:
        raise SessionEnded("The session cookie is not valid; sign in again.")
    try:
        claims = jwt.decode(cookie, policy.secret, algorithms=[ALGORITHM],
                            options={"require": ["tok", "exp"], "verify_exp": False, "verify_iat": False})
    except jwt.InvalidTokenError:
        raise SessionEnded("The session cookie is not valid (not signed by this instance); sign in again.") from None
    now = store.clock.now()
    exp, token = claims.get("exp"), claims.get("tok")
    if not isinstance(exp, int) or isinstance(exp, bool) or not isinstance(token, str) or not token.isascii():
        raise SessionEnded("The session cookie is not valid; sign in again.")
    if exp <= now.timestamp():
        raise SessionEnded("Your sign-in has expired; sign in again.")
    row = _row(store, token_hash=_hash(token))
    why = _why_ended(store, row, policy, now)
    if why is not None:
        raise SessionEnded(why)
    _touch(store, row, now, force=True)
    row = _row(store, session_id=row["id"])
    return Opened(_issue_session(row["email"], row["id"]), cookie, _max_age(row, policy, now))


def check(store: Store, session: UserSession, policy: SessionPolicy) -> int:
    """On every page run: the seconds the session's cookie may live from now (the record is touched at most once
    a minute); SessionEnded once it was revoked, expired or its user is gone. A session with no record (a bare
    password check, as tests and scripts make) holds while its user exists, and returns 0."""
    session = require_session(session)
    now = store.clock.now()
    if session.session_id is None:
        if tenants.user_record(store, session.email) is None:
            raise SessionEnded("This user no longer exists; ask an admin to add you again.")
        return 0
    row = _row(store, session_id=session.session_id)
    why = _why_ended(store, row, policy, now)
    if why is not None:
        raise SessionEnded(why)
    if _touch(store, row, now):
        row = _row(store, session_id=row["id"])
    return _max_age(row, policy, now)


def _touch(store: Store, row: dict, now: datetime, force: bool = False) -> bool:
    if not force and (now - datetime.fromisoformat(row["last_seen_at"])).total_seconds() < TOUCH_SECONDS:
        return False
    with store.write() as db:
        db.execute("UPDATE admin_sessions SET last_seen_at = ? WHERE id = ? AND revoked_at IS NULL",
                   [iso(now), row["id"]])
    return True


def end(store: Store, session: UserSession, why: str = "signed out") -> None:
    """Sign-out: revoke the session's record, so its cookie (and every copy of it) stops working."""
    session = require_session(session)
    if session.session_id is None:
        return
    with store.write() as db:
        db.execute("UPDATE admin_sessions SET revoked_at = ?, revoked_why = ? WHERE id = ? AND revoked_at IS NULL",
                   [store.clock.stamp(), why, session.session_id])


def revoke_user(store: Store, email: str, why: str) -> int:
    """End every live session of a user (password changed, removed, deleted); returns how many. Joins the
    caller's transaction."""
    user = tenants.user_record(store, email)
    if user is None:
        return 0
    with store.write() as db:
        return db.execute("UPDATE admin_sessions SET revoked_at = ?, revoked_why = ? "
                          "WHERE user_id = ? AND revoked_at IS NULL", [store.clock.stamp(), why, user["id"]]).rowcount


def live_sessions(store: Store, email: str, policy: SessionPolicy) -> list[dict]:
    """A user's sessions that still sign in: ``{id, created_at, last_seen_at, expires_at}`` (the CLI lists them)."""
    user = tenants.user_record(store, email)
    if user is None:
        return []
    rows = store.query(_SELECT + "user_id = ? AND revoked_at IS NULL ORDER BY id", [user["id"]])
    now = store.clock.now()
    return [{k: r[k] for k in ("id", "created_at", "last_seen_at", "expires_at")} for r in rows
            if _why_ended(store, r, policy, now) is None]


def change_password(store: Store, session: UserSession, current: str, new: str, policy: SessionPolicy) -> Opened:
    """The signed-in user changes their password: the current one is checked, every session of theirs ends
    (other browsers are signed out), and this browser gets a new session."""
    email = require_session(session).email
    proof = authenticate(store, email, current)  # AuthError: wrong password
    with store.write():
        tenants.set_password(store, email, new)
        revoke_user(store, email, "password changed")
    return open_session(store, proof, policy)


def reset_password(store: Store, email: str, new: str) -> int:
    """The operator sets a user's password (the CLI); every session of the user ends. Returns how many ended."""
    with store.write():
        tenants.set_password(store, email, new)
        return revoke_user(store, email, "password reset")
