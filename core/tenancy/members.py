"""The members of a tenant and their roles (S1): list, add, change a role, remove. Admin only.

Users are global (one e-mail, one password, any number of tenants); a membership gives a user a role in
one tenant. Removing a member deletes the membership only: the user keeps their other tenants, but every
sign-in session of theirs ends (:mod:`core.tenancy.sessions`). A tenant never loses its last admin through
these functions (demoting or removing them is refused).
"""
from __future__ import annotations

from core.base.errors import UserError
from core.base.store import Store
from core.tenancy import sessions, tenants
from core.tenancy.context import ROLES, AuthError, TenantContext, require_context


class MemberError(UserError):
    """A change of members that cannot be made; the message says why and what to do instead."""


def _require_admin(ctx: TenantContext) -> None:
    if not require_context(ctx).can("admin"):  # a look-alike holding a real key cannot claim the role
        raise AuthError(f"Only an admin can see and change the members of a tenant; '{ctx.actor}' is {ctx.role}.")


def _normal(email: str) -> str:
    return (email or "").strip().lower()


def list_members(ctx: TenantContext, store: Store) -> list[dict]:
    """The tenant's members as ``{email, role}``, admins first, then by e-mail."""
    _require_admin(ctx)
    return tenants.members(ctx, store)


def _check_role(role: str) -> None:
    if role not in ROLES:
        raise MemberError(f"Role {role!r} is not known; use one of {', '.join(ROLES)}.")


def add_member(ctx: TenantContext, store: Store, email: str, role: str, password: str = "") -> dict:
    """Give ``email`` a role in this tenant. A new user needs a password (8+ characters); an existing
    account keeps its own password (the one given here is ignored)."""
    _require_admin(ctx)
    email = _normal(email)
    _check_role(role)
    with store.write():
        current = tenants.member_role(ctx, store, email)
        if current is not None:
            raise MemberError(f"{email} is already a member ({current}); change their role instead.")
        tenants.create_user(store, ctx.tenant_slug, email, password, role)
    return {"email": email, "role": role}


def change_role(ctx: TenantContext, store: Store, email: str, role: str) -> dict:
    """Change a member's role; the last admin cannot be demoted."""
    _require_admin(ctx)
    email = _normal(email)
    _check_role(role)
    with store.write():
        current = tenants.member_role(ctx, store, email)
        if current is None:
            raise MemberError(f"{email} is not a member of this tenant; add them first.")
        if current == "admin" and role != "admin" and tenants.admin_count(ctx, store) <= 1:
            raise MemberError(f"{email} is the last admin of this tenant; make another member admin first, then "
                              "change this role.")
        tenants.set_member_role(ctx, store, email, role)
    return {"email": email, "role": role}


def remove_member(ctx: TenantContext, store: Store, email: str) -> None:
    """Take a member out of this tenant (their account and other tenants stay); never the last admin."""
    _require_admin(ctx)
    email = _normal(email)
    with store.write():
        current = tenants.member_role(ctx, store, email)
        if current is None:
            raise MemberError(f"{email} is not a member of this tenant.")
        if current == "admin" and tenants.admin_count(ctx, store) <= 1:
            raise MemberError(f"{email} is the last admin of this tenant; make another member admin first, then "
                              "remove this one.")
        tenants.remove_membership(ctx, store, email)
        # signed out everywhere: their other tenants (if any) need a fresh sign-in, and no open browser lingers
        sessions.revoke_user(store, email, f"removed from {ctx.tenant_slug} by {ctx.actor}")

