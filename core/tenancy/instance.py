"""The instance administrator: sees every tenant of the data directory, creates tenants and adds their first users.

The first-run admin is the instance admin (``create_first_admin``; on a data dir from before, migration
``013_instance_admins`` marks the oldest user who was admin of every tenant that existed when they were created);
the operator grants or takes back the role with ``python -m core users instance-admin EMAIL [--revoke]``. An
instance admin opens any tenant as its admin (:func:`core.tenancy.context.context_for`); everybody else sees only
the tenants they are a member of. Every function here re-reads the flag, so taking it back applies on the next run.
"""
from __future__ import annotations

from core.base.store import Store
from core.tenancy import members, tenants
from core.tenancy.context import AuthError, TenancyError, UserSession, context_for
from core.tenancy.issued import require_session
from core.tenancy.settings import MAX_NAME


def is_instance_admin(store: Store, session: UserSession) -> bool:
    """True when the signed-in user administers the whole instance."""
    return tenants.is_instance_admin(store, require_session(session).email)


def _require(store: Store, session: UserSession) -> str:
    email = require_session(session).email
    if not tenants.is_instance_admin(store, email):
        raise AuthError(f"Only the instance administrator sees every tenant and creates tenants; {email} is not. "
                        "The operator grants it with `python -m core users instance-admin EMAIL`.")
    return email


def overview(store: Store, session: UserSession) -> list[dict]:
    """Every tenant: ``{slug, name, created_at, members, admins}``."""
    _require(store, session)
    return tenants.tenant_overview(store)


def create_tenant(store: Store, session: UserSession, slug: str, name: str = "") -> dict:
    """A new tenant, validated as ``python -m core tenants create`` validates it (the slug's shape, not taken)."""
    _require(store, session)
    slug, name = (slug or "").strip(), " ".join((name or "").split())
    if len(name) > MAX_NAME:
        raise TenancyError(f"The tenant name has {len(name)} characters; keep it under {MAX_NAME}.")
    return tenants.create_tenant(store, slug, name or None)


def add_user(store: Store, session: UserSession, slug: str, email: str, role: str, password: str) -> dict:
    """Add a member to any tenant (a new user gets ``password``; an existing account keeps its own), with the
    same checks as Settings → Users of that tenant's admin."""
    _require(store, session)
    return members.add_member(context_for(store, session, slug), store, email, role, password)


def list_members(store: Store, session: UserSession, slug: str) -> list[dict]:
    """A tenant's members as ``{email, role}``."""
    _require(store, session)
    return members.list_members(context_for(store, session, slug), store)


def grant(store: Store, email: str, on: bool = True) -> None:
    """The operator (CLI) grants or takes back the instance-admin role; the last instance admin stays."""
    email = (email or "").strip().lower()
    with store.write():
        user = tenants.user_record(store, email)
        if user is None:
            raise TenancyError(f"No user {email!r}; list users with `python -m core users list`.")
        if not on and user["instance_admin"] and sum(u["instance_admin"] for u in tenants.list_users(store)) <= 1:
            raise TenancyError(f"{email} is the last instance admin; grant the role to someone else first.")
        tenants.set_instance_admin(store, email, on)
