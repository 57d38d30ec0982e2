"""Site keys (P1): how the public widget and identified customers name their tenant.

Each tenant has one **public key** (``pk_…``), pasted into the widget's script tag: it says which tenant a
visitor is talking to and nothing more, so it may be public. It also has one **secret** (``whsec_…``) that
never leaves the business's backend: the backend signs an identified customer's token with it (a standard
HS256 JWT whose ``sub`` is the customer id and ``exp`` its expiry) and the widget passes the token along.
The same secret signs the handoff webhook's calls, so the business can check they come from us. A voice
gateway (server to server) signs a **phone token** with it the same way, plus the claim ``chan = "phone"``;
its ``sub`` is the call's or the caller's id. The two kinds never stand in for each other.

Rotating the public key invalidates the old one at once (paste the new snippet); rotating the secret
invalidates every token signed with the old one. Only an admin sees or rotates them.
"""
from __future__ import annotations

import math
import secrets
from dataclasses import dataclass, field
from typing import Callable

import jwt

from core.base.clock import SYSTEM
from core.base.store import Store
from core.tenancy import tenants
from core.tenancy.context import AuthError, TenantContext, require_context

PUBLIC_PREFIX, SECRET_PREFIX = "pk_", "whsec_"
TOKEN_ALGORITHM = "HS256"
MAX_CUSTOMER_ID = 128
#: A token whose expiry lies further ahead than this is refused: a leaked token must die on its own.
MAX_TOKEN_LIFETIME = 7 * 24 * 3600
#: Allowed clock difference between the business's backend and this server.
LEEWAY_SECONDS = 30
#: The claim that makes a token a phone token: {"chan": "phone"} (a customer token has no "chan").
PHONE_CHANNEL = "phone"


class TokenError(AuthError):
    """A customer token that cannot be trusted; the message says why (never echoes the token)."""


class PhoneTokenError(TokenError):
    """A phone token (a voice gateway's) that cannot be trusted; the message says why."""


@dataclass(frozen=True)
class SiteKeys:
    public_key: str
    secret: str = field(repr=False)
    key_rotated_at: str
    secret_rotated_at: str
    rotated_by: str


def _require_admin(ctx: TenantContext) -> None:
    if require_context(ctx).role != "admin":  # a look-alike holding a real key cannot claim the role
        raise AuthError("Only an admin of this tenant can see or rotate its site key and secret.")


def _new_public() -> str:
    return PUBLIC_PREFIX + secrets.token_urlsafe(18)


def _new_secret() -> str:
    return SECRET_PREFIX + secrets.token_urlsafe(32)


def _row(ctx: TenantContext, store: Store) -> dict | None:
    rows = store.query("SELECT public_key, secret, key_rotated_at, secret_rotated_at, rotated_by FROM site_keys "
                       "WHERE tenant_id = ?", [ctx.tenant_id])
    return rows[0] if rows else None


def ensure(ctx: TenantContext, store: Store) -> SiteKeys:
    """The tenant's keys, created on first use (admins, and the operator building the demo)."""
    _require_admin(ctx)
    existing = _row(ctx, store)
    if existing is not None:  # the common case (every Settings render): no write transaction
        return SiteKeys(**existing)
    with store.write() as db:
        if _row(ctx, store) is None:
            now = store.clock.stamp()
            db.execute("INSERT INTO site_keys (tenant_id, public_key, secret, key_rotated_at, secret_rotated_at, "
                       "rotated_by) VALUES (?,?,?,?,?,?)",
                       [ctx.tenant_id, _new_public(), _new_secret(), now, now, ctx.actor])
    return SiteKeys(**_row(ctx, store))  # type: ignore[arg-type]


def rotate_public_key(ctx: TenantContext, store: Store) -> SiteKeys:
    """A new public key; the old one stops working at once."""
    return _rotate(ctx, store, "public_key", "key_rotated_at", _new_public())


def rotate_secret(ctx: TenantContext, store: Store) -> SiteKeys:
    """A new signing secret; every customer token signed with the old one is refused from now on."""
    return _rotate(ctx, store, "secret", "secret_rotated_at", _new_secret())


def _rotate(ctx: TenantContext, store: Store, column: str, stamp_column: str, value: str) -> SiteKeys:
    ensure(ctx, store)
    with store.write() as db:
        db.execute(f"UPDATE site_keys SET {column} = ?, {stamp_column} = ?, rotated_by = ? WHERE tenant_id = ?",
                   [value, store.clock.stamp(), ctx.actor, ctx.tenant_id])
    return SiteKeys(**_row(ctx, store))  # type: ignore[arg-type]


def webhook_secret(ctx: TenantContext, store: Store) -> str:
    """The secret that signs this tenant's webhook calls ("" when the tenant has no keys yet)."""
    rows = store.query("SELECT secret FROM site_keys WHERE tenant_id = ?", [ctx.tenant_id])
    return rows[0]["secret"] if rows else ""


def lookup(store: Store, public_key: str) -> tuple[str, str] | None:
    """(tenant slug, secret) for a public key, or None. For :mod:`core.tenancy` only, which builds the context."""
    if not isinstance(public_key, str) or not public_key.startswith(PUBLIC_PREFIX) or len(public_key) > 100:
        return None
    rows = store.query("SELECT tenant_id, secret FROM site_keys WHERE public_key = ?", [public_key])
    if not rows:
        return None
    slug = tenants.tenant_slug(store, rows[0]["tenant_id"])
    return (slug, rows[0]["secret"]) if slug is not None else None


def sign_customer_token(secret: str, customer_id: str, ttl_seconds: int = 3600, *,
                        clock: Callable[[], float] = SYSTEM.timestamp) -> str:
    """What the business's backend does (shown here for tests, the CLI and the README): an HS256 JWT with the
    customer id as ``sub`` and an expiry ``ttl_seconds`` from now."""
    return _sign(secret, {"sub": _check_customer_id(customer_id)}, ttl_seconds, TokenError, clock)


def sign_phone_token(secret: str, caller: str, ttl_seconds: int = 3600, *,
                     clock: Callable[[], float] = SYSTEM.timestamp) -> str:
    """What a voice gateway does for each call: an HS256 JWT with the call's or caller's id as ``sub``,
    ``chan = "phone"`` and an expiry ``ttl_seconds`` from now."""
    sub = _check_customer_id(caller, "caller id", PhoneTokenError)
    return _sign(secret, {"sub": sub, "chan": PHONE_CHANNEL}, ttl_seconds, PhoneTokenError, clock)


def _sign(secret: str, claims: dict, ttl_seconds: int, error: type[TokenError], clock: Callable[[], float]) -> str:
    if not 0 < ttl_seconds <= MAX_TOKEN_LIFETIME:
        raise error(f"A token lives between 1 second and {MAX_TOKEN_LIFETIME // 86400} days; "
                    f"{ttl_seconds} seconds is outside that.")
    now = int(clock())
    return jwt.encode({**claims, "iat": now, "exp": now + ttl_seconds}, secret, algorithm=TOKEN_ALGORITHM)


def verify_customer_token(secret: str, token: str, *, clock: Callable[[], float] = SYSTEM.timestamp) -> str:
    """The customer id a token vouches for; TokenError when it is malformed, tampered, expired or too long-lived,
    or when it is a phone token (``chan``)."""
    claims = _claims(secret, token, "customer", "'sub' (customer id) and 'exp'", TokenError, clock)
    if "chan" in claims:
        raise TokenError("This is a phone token (it has a 'chan' claim): a voice gateway sends it as X-Phone-Token. "
                         "A customer token has only 'sub' and 'exp'.")
    return _check_customer_id(claims.get("sub"))


def verify_phone_token(secret: str, token: str, *, clock: Callable[[], float] = SYSTEM.timestamp) -> str:
    """The caller id a phone token vouches for; PhoneTokenError when it is malformed, tampered, expired, too
    long-lived, or not a phone token (``chan`` is not "phone": a customer token is refused here)."""
    claims = _claims(secret, token, "phone", "'sub' (call or caller id), 'chan': 'phone' and 'exp'", PhoneTokenError,
                     clock)
    if claims.get("chan") != PHONE_CHANNEL:
        raise PhoneTokenError("This is not a phone token: a phone token carries the claim \"chan\": \"phone\" "
                              "(a customer token goes in X-Customer-Token).")
    return _check_customer_id(claims.get("sub"), "caller id", PhoneTokenError)


def _claims(secret: str, token: str, kind: str, shape: str, error: type[TokenError],
            clock: Callable[[], float]) -> dict:
    """The claims of a token signed with ``secret``, its expiry checked (``kind`` and ``shape`` say in the
    messages which token and what it must carry)."""
    if not secret:
        raise error("This tenant has no signing secret yet; an admin creates it in Settings → Website widget.")
    now = clock()
    try:
        claims = jwt.decode(token, secret, algorithms=[TOKEN_ALGORITHM], options={"require": ["sub", "exp"],
                            "verify_iat": False, "verify_exp": False})
    except jwt.InvalidTokenError as exc:
        raise error(f"The {kind} token is not valid ({exc.__class__.__name__}): sign it with the tenant's "
                    f"current secret, HS256, with {shape}.") from None
    exp = claims.get("exp")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool) or not math.isfinite(exp):
        raise error(f"The {kind} token's 'exp' must be a number (seconds since 1970).")
    if exp + LEEWAY_SECONDS < now:
        raise error(f"The {kind} token has expired; ask the business's backend for a fresh one.")
    if exp - now > MAX_TOKEN_LIFETIME + LEEWAY_SECONDS:
        raise error(f"The {kind} token expires more than {MAX_TOKEN_LIFETIME // 86400} days ahead; "
                    "issue short-lived tokens.")
    return claims


def _check_customer_id(customer_id, what: str = "customer id", error: type[TokenError] = TokenError) -> str:
    if not isinstance(customer_id, str) or not customer_id.strip() or len(customer_id) > MAX_CUSTOMER_ID \
            or not customer_id.isprintable():
        raise error(f"The {what} ('sub') must be 1-{MAX_CUSTOMER_ID} printable characters.")
    return customer_id.strip()
