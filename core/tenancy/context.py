"""Password login, user sessions, and the TenantContext that only authentication code builds.

Every function elsewhere that reads or writes tenant data takes a ``TenantContext`` first. A context
cannot be built, changed, copied or pickled outside this package (:mod:`core.tenancy.issued` keeps the
registry of issued contexts; the store takes only the tenant ids they hand out), so a tenant id from a
request parameter can never become a context, by accident or on purpose. The tenants, users and
memberships it is built from live in :mod:`core.tenancy.tenants` (the one module whose SQL touches those tables).
"""
from __future__ import annotations

import hmac
from typing import Callable

from core.base.clock import SYSTEM
from core.base.errors import UserError
from core.base.store import Store
from core.tenancy.issued import (  # noqa: F401  (re-exported: every module imports them from here)
    AuthError,
    ForgedContext,
    TenantContext,
    UserSession,
    _issue,
    _issue_session,
    require_context,
)
from core.tenancy.tenants import (
    create_user,
    find_tenant,
    has_users,
    hash_password,
    is_instance_admin,
    list_tenants,
    login_record,
    memberships,
    password_hash,
    role_in,
    set_instance_admin,
    verify_password,
)

ROLES = ("admin", "editor", "qa")


#: The channels a question can arrive on (the context's ``channel``; ``admin`` is the operator's own).
CHANNELS = ("web", "identified", "email", "sms", "team", "phone", "sandbox")
#: Where a second uncovered question hands the conversation to a person (A4); the public widget only refuses.
SUPPORT_CHANNELS = ("identified", "email", "sms", "team")

class TenancyError(UserError):
    """Bad input when creating tenants or users; the message says what to change."""


def _context(store: Store, slug: str, actor: str, role: str, channel: str) -> TenantContext:
    tenant = find_tenant(store, slug)
    if tenant is None:
        raise AuthError(f"No tenant '{slug}'. List tenants with `python -m core tenants`.")
    return _issue(tenant["id"], tenant["slug"], actor, role, channel)


def login(store: Store, email: str, password: str, tenant_slug: str) -> TenantContext:
    """Password login into one tenant; the only way a user's TenantContext comes to exist."""
    email = (email or "").strip().lower()
    found = login_record(store, email, tenant_slug)
    if found is None or not verify_password(password or "", found["password_hash"]):
        raise AuthError("Wrong e-mail, password or tenant.")
    return _context(store, tenant_slug, email, found["role"], "admin")


def authenticate(store: Store, email: str, password: str) -> UserSession:
    """Check a password (whatever the tenant); the same error for an unknown e-mail and a wrong password."""
    email = (email or "").strip().lower()
    found = password_hash(store, email)
    stored = found if found is not None else hash_password("timing-equaliser")
    if not verify_password(password or "", stored) or found is None:
        raise AuthError("Wrong e-mail or password.")
    return _issue_session(email)


def context_for(store: Store, session: UserSession, tenant_slug: str) -> TenantContext:
    """The signed-in user's context in one of their tenants (an instance admin: in any tenant, as its admin);
    any other tenant is refused, exactly like a tenant that does not exist."""
    if type(session) is not UserSession:
        raise AuthError("Sign in first.")
    role = role_in(store, session.email, tenant_slug)
    if role is None and find_tenant(store, tenant_slug) is not None and is_instance_admin(store, session.email):
        role = "admin"
    if role is None:
        raise AuthError(f"{session.email} is not a member of that tenant.")
    return _context(store, tenant_slug, session.email, role, "admin")


def tenants_of(store: Store, session: UserSession) -> list[dict]:
    """The tenants a signed-in user may open, as ``{slug, name, role}`` by slug: their memberships, and for an
    instance admin every tenant of the data dir (as admin where they are no member)."""
    if type(session) is not UserSession:
        raise AuthError("Sign in first.")
    mine = memberships(store, session.email)
    if not is_instance_admin(store, session.email):
        return mine
    roles = {m["slug"]: m["role"] for m in mine}
    return [{"slug": t["slug"], "name": t["name"], "role": roles.get(t["slug"], "admin")} for t in list_tenants(store)]


def create_first_admin(store: Store, email: str, password: str) -> UserSession:
    """First run: the first user becomes admin of every existing tenant and the instance admin (every tenant,
    also later ones; creates tenants in the admin app). Refused once any user exists."""
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
        set_instance_admin(store, email, True)  # sees every tenant, also those created later
    return _issue_session((email or "").strip().lower())


def local_operator(store: Store, tenant_slug: str, actor: str = "operator") -> TenantContext:
    """The local operator of the CLI: whoever can run commands on the data directory is its admin."""
    return _context(store, tenant_slug, f"cli:{actor}", "admin", "cli")


def local_customer(store: Store, tenant_slug: str, customer_id: str, actor: str = "operator") -> TenantContext:
    """The CLI asking as one identified customer (``ask --customer ID``): channel ``identified``, role customer,
    exactly what a widget with that customer's signed token gets. Whoever runs commands on the data directory
    holds the tenant's secret anyway, so they may act as any of its customers."""
    from core.tenancy.site_keys import MAX_CUSTOMER_ID

    customer = customer_id.strip() if isinstance(customer_id, str) else ""
    if not customer or len(customer) > MAX_CUSTOMER_ID or not customer.isprintable():
        raise TenancyError(f"A customer id is 1-{MAX_CUSTOMER_ID} printable characters (what your backend signs "
                           f"as 'sub' in the customer token); got {customer_id!r}.")
    ctx = _context(store, tenant_slug, f"customer:{customer}", "customer", "identified")
    return _issue(ctx.tenant_id, ctx.tenant_slug, f"customer:{customer} (cli:{actor})", "customer", "identified",
                  customer)


def local_caller(store: Store, tenant_slug: str, caller: str, actor: str = "operator") -> TenantContext:
    """The CLI asking as one phone caller (``ask --phone CALLER``): channel ``phone``, customer id
    ``phone:<caller>``, exactly what a voice gateway's phone token gets."""
    from core.tenancy.site_keys import MAX_CUSTOMER_ID

    sub = caller.strip() if isinstance(caller, str) else ""
    if not sub or len(sub) > MAX_CUSTOMER_ID or not sub.isprintable():
        raise TenancyError(f"A caller id is 1-{MAX_CUSTOMER_ID} printable characters (what the voice gateway signs "
                           f"as 'sub' in the phone token, e.g. the caller's number); got {caller!r}.")
    ctx = _context(store, tenant_slug, f"phone:{sub}", "customer", "phone")
    return _issue(ctx.tenant_id, ctx.tenant_slug, f"phone:{sub} (cli:{actor})", "customer", "phone", f"phone:{sub}")


def visitor_context(store: Store, public_key: str, customer_token: str | None = None, *,
                    phone_token: str | None = None, clock: Callable[[], float] = SYSTEM.timestamp) -> TenantContext:
    """The public widget's context (P1): the tenant comes only from its site key; an identified customer
    (channel ``identified``) only from a token signed with that tenant's secret; a phone call (channel ``phone``,
    customer id ``phone:<sub>``) only from a voice gateway's phone token signed with it. Anonymous visitors get
    the ``web`` channel and no customer id."""
    from core.tenancy import site_keys

    found = site_keys.lookup(store, public_key)
    if found is None:
        raise AuthError("Unknown site key. Copy the widget snippet again from Settings → Website widget "
                        "(the key may have been rotated).")
    slug, secret = found
    if customer_token and phone_token:
        raise site_keys.PhoneTokenError("Send a customer token or a phone token, not both: a voice gateway sends only "
                                        "X-Phone-Token.")
    if phone_token:
        caller = "phone:" + site_keys.verify_phone_token(secret, phone_token, clock=clock)
        ctx = _context(store, slug, caller, "customer", "phone")
        return _issue(ctx.tenant_id, ctx.tenant_slug, caller, "customer", "phone", caller)
    if customer_token:
        customer = site_keys.verify_customer_token(secret, customer_token, clock=clock)
        ctx = _context(store, slug, f"customer:{customer}", "customer", "identified")
        return _issue(ctx.tenant_id, ctx.tenant_slug, ctx.actor, "customer", "identified", customer)
    return _context(store, slug, "visitor", "customer", "web")


def log_reader(store: Store, configured_token: str, presented_token: str, tenant_slug: str) -> TenantContext:
    """The reader of the private question and turn logs (P4): whoever presents the process's admin token.

    Fails closed: with no token configured nobody can read them."""
    if not configured_token:
        raise AuthError("The private logs are closed: set COBERTURA_ADMIN_TOKEN on the server to open them.")
    if not hmac.compare_digest((presented_token or "").encode(), configured_token.encode()):
        raise AuthError("Wrong admin token.")
    return _context(store, tenant_slug, "admin-token", "admin", "api")

