"""Tenants, users, password login, and the TenantContext that only authentication code builds.

Every function elsewhere that reads or writes tenant data takes a ``TenantContext`` first. A context
cannot be built outside this module: its constructor demands a private token, so a tenant id from a
request parameter can never become a context by accident.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import Callable

from core.base.store import Store, utcnow

ROLES = ("admin", "editor", "qa")
_AUTHENTICATED = object()
_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,39}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class AuthError(PermissionError):
    """Login failed or a membership is missing. The message never says which of email/password was wrong."""


class TenancyError(ValueError):
    """Bad input when creating tenants or users; the message says what to change."""


@dataclass(frozen=True)
class TenantContext:
    """Who is acting, for which tenant. Built only by this module after authentication."""

    tenant_id: int
    tenant_slug: str
    actor: str
    role: str
    channel: str = "admin"
    customer_id: str | None = None
    _token: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._token is not _AUTHENTICATED:
            raise AuthError("TenantContext is built only by core.tenancy after authentication.")

    def can(self, role: str) -> bool:
        """True when the actor's role includes ``role`` (admin includes every role)."""
        return self.role == "admin" or self.role == role


def _context(store: Store, slug: str, actor: str, role: str, channel: str) -> TenantContext:
    row = store.query("SELECT id, slug FROM tenants WHERE slug = ?", [slug])
    if not row:
        raise AuthError(f"No tenant '{slug}'. List tenants with `python -m core tenants`.")
    return TenantContext(row[0]["id"], row[0]["slug"], actor, role, channel, None, _AUTHENTICATED)


def hash_password(password: str) -> str:
    """scrypt hash with a random salt, as ``scrypt$n$r$p$salt$hash``."""
    salt = secrets.token_bytes(16)
    n, r, p = 2**14, 8, 1
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32)
    return "$".join(["scrypt", str(n), str(r), str(p), base64.b64encode(salt).decode(), base64.b64encode(digest).decode()])


def verify_password(password: str, stored: str) -> bool:
    """Constant-time check of ``password`` against a ``hash_password`` result."""
    try:
        scheme, n, r, p, salt, digest = stored.split("$")
    except ValueError:
        return False
    if scheme != "scrypt":
        return False
    candidate = hashlib.scrypt(
        password.encode("utf-8"), salt=base64.b64decode(salt), n=int(n), r=int(r), p=int(p), dklen=32
    )
    return hmac.compare_digest(candidate, base64.b64decode(digest))


def create_tenant(store: Store, slug: str, name: str | None = None) -> dict:
    """Create a tenant; the slug is 2-40 lowercase letters, digits or dashes."""
    if not _SLUG.match(slug or ""):
        raise TenancyError(
            f"Tenant slug {slug!r} is not valid: use 2-40 lowercase letters, digits or dashes, e.g. 'acme-shop'."
        )
    with store.write() as db:
        if store.query("SELECT 1 FROM tenants WHERE slug = ?", [slug]):
            raise TenancyError(f"Tenant '{slug}' already exists; pick another slug or use the existing one.")
        db.execute("INSERT INTO tenants (slug, name, created_at) VALUES (?, ?, ?)", [slug, name or slug, utcnow()])
    return store.query("SELECT id, slug, name, created_at FROM tenants WHERE slug = ?", [slug])[0]


def list_tenants(store: Store) -> list[dict]:
    """All tenants (operator view: the CLI and first-run setup only)."""
    return store.query("SELECT id, slug, name, created_at FROM tenants ORDER BY slug")


def create_user(store: Store, tenant_slug: str, email: str, password: str, role: str) -> dict:
    """Create the user if new (or reuse it) and give it ``role`` in the tenant."""
    email = (email or "").strip().lower()
    if not _EMAIL.match(email):
        raise TenancyError(f"{email!r} is not an e-mail address; users log in with their e-mail.")
    if role not in ROLES:
        raise TenancyError(f"Role {role!r} is not known; use one of {', '.join(ROLES)}.")
    tenant = store.query("SELECT id FROM tenants WHERE slug = ?", [tenant_slug])
    if not tenant:
        raise TenancyError(f"No tenant '{tenant_slug}'. Create it first: python -m core tenants create {tenant_slug}")
    with store.write() as db:
        user = store.query("SELECT id FROM users WHERE email = ?", [email])
        if user:
            user_id = user[0]["id"]
        else:
            if len(password or "") < 8:
                raise TenancyError("The password must have at least 8 characters.")
            user_id = db.execute(
                "INSERT INTO users (email, password_hash, created_at) VALUES (?, ?, ?)",
                [email, hash_password(password), utcnow()],
            ).lastrowid
        db.execute(
            "INSERT INTO memberships (tenant_id, user_id, role) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = excluded.role",
            [tenant[0]["id"], user_id, role],
        )
    return {"email": email, "tenant": tenant_slug, "role": role}


def memberships(store: Store, email: str) -> list[dict]:
    """The tenants a user belongs to, with the role in each."""
    return store.query(
        "SELECT t.slug, t.name, m.role FROM memberships m JOIN tenants t ON t.id = m.tenant_id "
        "JOIN users u ON u.id = m.user_id WHERE u.email = ? ORDER BY t.slug",
        [email.strip().lower()],
    )


def login(store: Store, email: str, password: str, tenant_slug: str) -> TenantContext:
    """Password login into one tenant; the only way a user's TenantContext comes to exist."""
    email = (email or "").strip().lower()
    rows = store.query(
        "SELECT u.password_hash, m.role FROM users u "
        "JOIN memberships m ON m.user_id = u.id JOIN tenants t ON t.id = m.tenant_id "
        "WHERE u.email = ? AND t.slug = ?",
        [email, tenant_slug],
    )
    if not rows or not verify_password(password or "", rows[0]["password_hash"]):
        raise AuthError("Wrong e-mail, password or tenant.")
    return _context(store, tenant_slug, email, rows[0]["role"], "admin")


@dataclass(frozen=True)
class UserSession:
    """A user who proved their password; built only by :func:`authenticate` or :func:`create_first_admin`.

    The admin app keeps one per browser session and turns it into a TenantContext for the tenant the
    user picks, through :func:`context_for`, which checks the membership every time."""

    email: str
    _token: object = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self._token is not _AUTHENTICATED:
            raise AuthError("A UserSession is built only by core.tenancy after a password check.")


def authenticate(store: Store, email: str, password: str) -> UserSession:
    """Check a password (whatever the tenant); the same error for an unknown e-mail and a wrong password."""
    email = (email or "").strip().lower()
    rows = store.query("SELECT password_hash FROM users WHERE email = ?", [email])
    stored = rows[0]["password_hash"] if rows else hash_password("timing-equaliser")
    if not verify_password(password or "", stored) or not rows:
        raise AuthError("Wrong e-mail or password.")
    return UserSession(email, _AUTHENTICATED)


def context_for(store: Store, session: UserSession, tenant_slug: str) -> TenantContext:
    """The signed-in user's context in one of their tenants; any other tenant is refused."""
    if not isinstance(session, UserSession):
        raise AuthError("Sign in first.")
    rows = store.query(
        "SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id JOIN tenants t ON t.id = m.tenant_id "
        "WHERE u.email = ? AND t.slug = ?", [session.email, tenant_slug])
    if not rows:
        raise AuthError(f"{session.email} is not a member of that tenant.")
    return _context(store, tenant_slug, session.email, rows[0]["role"], "admin")


def has_users(store: Store) -> bool:
    return bool(store.query("SELECT 1 FROM users LIMIT 1"))


def create_first_admin(store: Store, email: str, password: str) -> UserSession:
    """First run: the first user becomes admin of every existing tenant. Refused once any user exists."""
    if len(password or "") < 8:
        raise TenancyError("The password must have at least 8 characters.")
    tenants = list_tenants(store)
    if not tenants:
        raise TenancyError("Create a tenant first (the app creates the demo tenant on its first start).")
    with store.write():
        if has_users(store):
            raise AuthError("The first admin already exists; sign in instead.")
        for tenant in tenants:
            create_user(store, tenant["slug"], email, password, "admin")
    return UserSession((email or "").strip().lower(), _AUTHENTICATED)


def local_operator(store: Store, tenant_slug: str, actor: str = "operator") -> TenantContext:
    """The local operator of the CLI: whoever can run commands on the data directory is its admin."""
    return _context(store, tenant_slug, f"cli:{actor}", "admin", "cli")


def visitor_context(store: Store, public_key: str, customer_token: str | None = None, *,
                    clock: Callable[[], float] = time.time) -> TenantContext:
    """The public widget's context (P1): the tenant comes only from its site key; an identified customer
    (channel ``identified``) only from a token signed with that tenant's secret. Anonymous visitors get the
    ``web`` channel and no customer id."""
    from core.tenancy import site_keys

    found = site_keys.lookup(store, public_key)
    if found is None:
        raise AuthError("Unknown site key. Copy the widget snippet again from Settings → Website widget "
                        "(the key may have been rotated).")
    slug, secret = found
    if customer_token:
        customer = site_keys.verify_customer_token(secret, customer_token, clock=clock)
        ctx = _context(store, slug, f"customer:{customer}", "customer", "identified")
        return TenantContext(ctx.tenant_id, ctx.tenant_slug, ctx.actor, "customer", "identified", customer, _AUTHENTICATED)
    return _context(store, slug, "visitor", "customer", "web")


def log_reader(store: Store, configured_token: str, presented_token: str, tenant_slug: str) -> TenantContext:
    """The reader of the private question and turn logs (P4): whoever presents the process's admin token.

    Fails closed: with no token configured nobody can read them."""
    if not configured_token:
        raise AuthError("The private logs are closed: set COBERTURA_ADMIN_TOKEN on the server to open them.")
    if not hmac.compare_digest((presented_token or "").encode(), configured_token.encode()):
        raise AuthError("Wrong admin token.")
    return _context(store, tenant_slug, "admin-token", "admin", "api")
