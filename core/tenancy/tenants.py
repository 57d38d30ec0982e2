"""Tenants, users and memberships: the one module whose SQL reads or writes the ``tenants``, ``users`` and
``memberships`` tables, and the password hashing of ``users.password_hash``.

Users are global (one e-mail, one password, any number of tenants); a membership gives a user a role in one
tenant. Building a ``TenantContext`` from these rows is :mod:`core.tenancy.context`'s job (login, sessions,
the operator and visitors); the lookups it needs for that take the store alone, since no context exists yet.
Everything about one tenant's own row or members takes its ``TenantContext`` first.

:mod:`core.tenancy.context` imports this module, so this one imports it only for type hints and, inside the
functions that need them, for ``ROLES`` and ``TenancyError``.
"""
from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import TYPE_CHECKING

from core.base.store import Store
from core.base.tenant_scope import _SEAL, mint
from core.tenancy.issued import require_context

if TYPE_CHECKING:
    from core.tenancy.context import TenantContext

_SLUG = re.compile(r"^[a-z0-9][a-z0-9-]{1,39}$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


# -- passwords ---------------------------------------------------------------------------------------------
def hash_password(password: str) -> str:
    """scrypt hash with a random salt, as ``scrypt$n$r$p$salt$hash``."""
    salt = secrets.token_bytes(16)
    n, r, p = 2**14, 8, 1
    digest = hashlib.scrypt(password.encode("utf-8"), salt=salt, n=n, r=r, p=p, dklen=32)
    return "$".join(["scrypt", str(n), str(r), str(p), base64.b64encode(salt).decode(),
                     base64.b64encode(digest).decode()])


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


# -- tenants and users (operator view: the CLI, first-run setup, the demo) ---------------------------------
def create_tenant(store: Store, slug: str, name: str | None = None) -> dict:
    """Create a tenant; the slug is 2-40 lowercase letters, digits or dashes."""
    from core.tenancy.context import TenancyError

    if not _SLUG.match(slug or ""):
        raise TenancyError(
            f"Tenant slug {slug!r} is not valid: use 2-40 lowercase letters, digits or dashes, e.g. 'acme-shop'."
        )
    with store.write() as db:
        if store.query("SELECT 1 FROM tenants WHERE slug = ?", [slug]):
            raise TenancyError(f"Tenant '{slug}' already exists; pick another slug or use the existing one.")
        db.execute("INSERT INTO tenants (slug, name, created_at) VALUES (?, ?, ?)",
                   [slug, name or slug, store.clock.stamp()])
    return store.query("SELECT id, slug, name, created_at FROM tenants WHERE slug = ?", [slug])[0]


def list_tenants(store: Store) -> list[dict]:
    """All tenants (operator view: the CLI and first-run setup only)."""
    return store.query("SELECT id, slug, name, created_at FROM tenants ORDER BY slug")


def create_user(store: Store, tenant_slug: str, email: str, password: str, role: str) -> dict:
    """Create the user if new (or reuse it) and give it ``role`` in the tenant."""
    from core.tenancy.context import ROLES, TenancyError

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
                [email, hash_password(password), store.clock.stamp()],
            ).lastrowid
        db.execute(
            "INSERT INTO memberships (tenant_id, user_id, role) VALUES (?, ?, ?) "
            "ON CONFLICT (tenant_id, user_id) DO UPDATE SET role = excluded.role",
            [mint(tenant[0]["id"], _SEAL), user_id, role],  # provisioning, before any context exists
        )
    return {"email": email, "tenant": tenant_slug, "role": role}


def has_users(store: Store) -> bool:
    return bool(store.query("SELECT 1 FROM users LIMIT 1"))


def memberships(store: Store, email: str) -> list[dict]:
    """The tenants a user belongs to, with the role in each."""
    return store.query(
        "SELECT t.slug, t.name, m.role FROM memberships m JOIN tenants t ON t.id = m.tenant_id "
        "JOIN users u ON u.id = m.user_id WHERE u.email = ? ORDER BY t.slug",
        [email.strip().lower()],
    )


def tenant_overview(store: Store) -> list[dict]:
    """Every tenant with its member and admin counts (operator and instance-admin view)."""
    return store.query(
        "SELECT t.slug, t.name, t.created_at, COUNT(m.user_id) AS members, "
        "COALESCE(SUM(m.role = 'admin'), 0) AS admins FROM tenants t LEFT JOIN memberships m ON m.tenant_id = t.id "
        "GROUP BY t.id ORDER BY t.slug")


# -- users by e-mail: the instance-admin flag, passwords, removal (sessions, the CLI) ------------------------
def _normal(email: str) -> str:
    return (email or "").strip().lower()


def user_record(store: Store, email: str) -> dict | None:
    """``{id, email, instance_admin}`` of a user, or None."""
    rows = store.query("SELECT id, email, instance_admin FROM users WHERE email = ?", [_normal(email)])
    return {**rows[0], "instance_admin": bool(rows[0]["instance_admin"])} if rows else None


def user_email(store: Store, user_id: int) -> str | None:
    """The e-mail of the user with that id, or None once the user is gone."""
    rows = store.query("SELECT email FROM users WHERE id = ?", [int(user_id)])
    return rows[0]["email"] if rows else None


def is_instance_admin(store: Store, email: str) -> bool:
    """True when the user administers the whole instance (every tenant of the data dir)."""
    return bool(store.query("SELECT 1 FROM users WHERE email = ? AND instance_admin = 1", [_normal(email)]))


def set_instance_admin(store: Store, email: str, on: bool = True) -> bool:
    """Grant (or take back) the instance-admin flag; False when no such user. Joins the caller's transaction."""
    with store.write() as db:
        changed = db.execute("UPDATE users SET instance_admin = ? WHERE email = ?", [int(bool(on)), _normal(email)])
    return changed.rowcount > 0


def list_users(store: Store) -> list[dict]:
    """Every user: ``{email, instance_admin, tenants: [{slug, role}]}`` (operator view: the CLI)."""
    users = store.query("SELECT id, email, instance_admin FROM users ORDER BY email")
    roles = store.query("SELECT m.user_id, t.slug, m.role FROM memberships m JOIN tenants t ON t.id = m.tenant_id "
                        "ORDER BY t.slug")
    return [{"email": u["email"], "instance_admin": bool(u["instance_admin"]),
             "tenants": [{"slug": r["slug"], "role": r["role"]} for r in roles if r["user_id"] == u["id"]]}
            for u in users]


def set_password(store: Store, email: str, password: str) -> None:
    """Store a new password for the user (8+ characters). The caller ends the user's sessions
    (:func:`core.tenancy.sessions.revoke_user`)."""
    from core.tenancy.context import TenancyError

    if len(password or "") < 8:
        raise TenancyError("The password must have at least 8 characters.")
    with store.write() as db:
        if not db.execute("UPDATE users SET password_hash = ? WHERE email = ?",
                          [hash_password(password), _normal(email)]).rowcount:
            raise TenancyError(f"No user {_normal(email)!r}; list users with `python -m core users list`.")


def last_admin_of(store: Store, email: str) -> list[str]:
    """The slugs of the tenants whose only admin is this user."""
    rows = store.query(
        "SELECT t.slug FROM memberships m JOIN users u ON u.id = m.user_id JOIN tenants t ON t.id = m.tenant_id "
        "WHERE u.email = ? AND m.role = 'admin' AND (SELECT COUNT(*) FROM memberships o "
        "WHERE o.tenant_id = m.tenant_id AND o.role = 'admin') = 1 ORDER BY t.slug", [_normal(email)])
    return [r["slug"] for r in rows]


def delete_user(store: Store, email: str) -> None:
    """Delete a user, their memberships and their sign-in sessions (the foreign keys cascade). Refused for the
    last admin of a tenant. Joins the caller's transaction."""
    from core.tenancy.context import TenancyError

    with store.write() as db:
        if user_record(store, email) is None:
            raise TenancyError(f"No user {_normal(email)!r}; list users with `python -m core users list`.")
        alone = last_admin_of(store, email)
        if alone:
            raise TenancyError(f"{_normal(email)} is the last admin of {', '.join(alone)}; make another member admin "
                               "there first (python -m core users create SLUG EMAIL --role admin).")
        db.execute("DELETE FROM users WHERE email = ?", [_normal(email)])


# -- lookups that build a context (core.tenancy.context and site_keys only) --------------------------------
def find_tenant(store: Store, slug: str) -> dict | None:
    """``{id, slug}`` of the tenant with that slug, or None."""
    rows = store.query("SELECT id, slug FROM tenants WHERE slug = ?", [slug])
    return rows[0] if rows else None


def tenant_slug(store: Store, tenant_id: int) -> str | None:
    """The slug of the tenant with that id, or None (a site key names its tenant by id)."""
    rows = store.query("SELECT slug FROM tenants WHERE id = ?", [tenant_id])
    return rows[0]["slug"] if rows else None


def password_hash(store: Store, email: str) -> str | None:
    """The stored password hash of a (normalised) e-mail, or None for no such user."""
    rows = store.query("SELECT password_hash FROM users WHERE email = ?", [email])
    return rows[0]["password_hash"] if rows else None


def login_record(store: Store, email: str, tenant_slug: str) -> dict | None:
    """``{password_hash, role}`` of a (normalised) e-mail that is a member of the tenant, or None."""
    rows = store.query(
        "SELECT u.password_hash, m.role FROM users u "
        "JOIN memberships m ON m.user_id = u.id JOIN tenants t ON t.id = m.tenant_id "
        "WHERE u.email = ? AND t.slug = ?",
        [email, tenant_slug],
    )
    return rows[0] if rows else None


def role_in(store: Store, email: str, tenant_slug: str) -> str | None:
    """The role of a (normalised) e-mail in the tenant with that slug, or None when it is no member."""
    rows = store.query(
        "SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id JOIN tenants t ON t.id = m.tenant_id "
        "WHERE u.email = ? AND t.slug = ?", [email, tenant_slug])
    return rows[0]["role"] if rows else None


# -- one tenant's row ----------------------------------------------------------------------------------------
def _own_id(ctx: TenantContext) -> int:
    """The tenant id of an issued context: the ``tenants`` table's key is ``id``, which the store cannot tell
    from any other id, so a look-alike context is refused here."""
    return require_context(ctx).tenant_id


def tenant_name(ctx: TenantContext, store: Store) -> str | None:
    """The tenant's display name (``tenants.name``); None for no such tenant."""
    rows = store.query("SELECT name FROM tenants WHERE id = ?", [_own_id(ctx)])
    return rows[0]["name"] if rows else None


def rename_tenant(ctx: TenantContext, store: Store, name: str) -> None:
    """Store the tenant's display name (the settings check the role and the value first); joins the
    caller's transaction."""
    with store.write() as db:
        db.execute("UPDATE tenants SET name = ? WHERE id = ?", [name, _own_id(ctx)])


def retention_days(ctx: TenantContext, store: Store) -> int | None:
    """How many days the tenant keeps masked gap samples (``tenants.retention_days``); None for no such tenant."""
    rows = store.query("SELECT retention_days FROM tenants WHERE id = ?", [_own_id(ctx)])
    return int(rows[0]["retention_days"]) if rows else None


def set_retention_days(ctx: TenantContext, store: Store, days: int) -> None:
    """Store the tenant's retention (the gap backlog checks the role and the range first)."""
    with store.write() as db:
        db.execute("UPDATE tenants SET retention_days = ? WHERE id = ?", [int(days), _own_id(ctx)])


# -- one tenant's members (core.tenancy.members checks the role and the last-admin rule first) --------------
def members(ctx: TenantContext, store: Store) -> list[dict]:
    """The tenant's members as ``{email, role}``, admins first, then by e-mail."""
    return store.query(
        "SELECT u.email, m.role FROM memberships m JOIN users u ON u.id = m.user_id "
        "WHERE m.tenant_id = ? ORDER BY CASE m.role WHEN 'admin' THEN 0 WHEN 'editor' THEN 1 ELSE 2 END, u.email",
        [ctx.tenant_id])


def member_role(ctx: TenantContext, store: Store, email: str) -> str | None:
    """The role of a (normalised) e-mail in this tenant, or None when it is no member."""
    rows = store.query(
        "SELECT m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.tenant_id = ? AND u.email = ?",
        [ctx.tenant_id, email])
    return rows[0]["role"] if rows else None


def admin_count(ctx: TenantContext, store: Store) -> int:
    """How many admins the tenant has."""
    return store.query("SELECT COUNT(*) AS n FROM memberships WHERE tenant_id = ? AND role = 'admin'",
                       [ctx.tenant_id])[0]["n"]


def set_member_role(ctx: TenantContext, store: Store, email: str, role: str) -> None:
    """Change a member's role in this tenant; joins the caller's transaction."""
    with store.write() as db:
        db.execute(
            "UPDATE memberships SET role = ? WHERE tenant_id = ? AND user_id = (SELECT id FROM users WHERE email = ?)",
            [role, ctx.tenant_id, email])


def remove_membership(ctx: TenantContext, store: Store, email: str) -> None:
    """Delete a member's membership of this tenant (the user and their other tenants stay); joins the
    caller's transaction."""
    with store.write() as db:
        db.execute(
            "DELETE FROM memberships WHERE tenant_id = ? AND user_id = (SELECT id FROM users WHERE email = ?)",
            [ctx.tenant_id, email])
