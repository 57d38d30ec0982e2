"""The credentials this package issues, and nothing can forge: ``TenantContext`` and ``UserSession``.

Neither object holds state of its own. Their facts live in a registry of issued objects keyed by identity
(weak references: a context dies with its request and leaves nothing behind), read through properties that
refuse any object the registry does not hold. So ``dataclasses.replace``, ``object.__setattr__``, copies,
pickles, subclasses and look-alikes all fail with :class:`ForgedContext`; and a look-alike that never
touches these properties (a namespace with a ``tenant_id``) is refused by the store, which accepts only the
:class:`~core.base.tenant_scope.TenantKey` an issued context hands out. Only :mod:`core.tenancy.context`
calls :func:`_issue` / :func:`_issue_session`, after authentication, and :mod:`core.tenancy.sessions` calls
:func:`_issue_session` for a sign-in it recorded or restored from a verified cookie.
"""
from __future__ import annotations

import functools
import weakref
from typing import Any, NamedTuple

from core.base.errors import PermissionDenied
from core.base.tenant_scope import _SEAL, ForgedTenant, TenantKey, mint


class AuthError(PermissionDenied):
    """Login failed or a membership is missing. The message never says which of email/password was wrong."""


class ForgedContext(ForgedTenant, AuthError, TypeError):
    """An object that is not a context core.tenancy issued (a copy, a pickle, a look-alike) was used as one."""


_FORGED = ("This is not a {kind} issued by core.tenancy (copies, pickles, replaced or look-alike ones are "
           "refused); {how}.")
_HOW = {"TenantContext": "build one with login, context_for, local_operator or visitor_context",
        "UserSession": "sign in again (authenticate)"}


class _Registry:
    """id(object) -> (weak reference, facts) of the live objects issued. Plain dict operations, atomic under the
    GIL and lock-free, so the weakref callback may run in any thread, even in the middle of an insertion."""

    def __init__(self, kind: str) -> None:
        self.kind, self._entries = kind, {}

    def add(self, obj: object, facts: Any) -> None:
        key = id(obj)
        self._entries[key] = (weakref.ref(obj, functools.partial(self._forget, key)), facts)

    def _forget(self, key: int, ref: weakref.ref) -> None:
        entry = self._entries.get(key)
        if entry is not None and entry[0] is ref:
            self._entries.pop(key, None)

    def facts(self, obj: object, cls: type) -> Any:
        entry = self._entries.get(id(obj))
        if entry is None or entry[0]() is not obj or type(obj) is not cls:
            raise ForgedContext(_FORGED.format(kind=self.kind, how=_HOW[self.kind]))
        return entry[1]

    def __len__(self) -> int:
        return len(self._entries)


class _Sealed:
    """Shared refusals: no construction, subclassing, change, copy or pickle."""

    __slots__ = ()

    def __new__(cls, *args, **kwargs):
        raise ForgedContext(f"{cls.__name__} is built only by core.tenancy after authentication.")

    def __setattr__(self, name, value):
        raise ForgedContext(f"A {type(self).__name__} cannot be changed (tried to set {name!r}); issue a new one.")

    def __delattr__(self, name):
        raise ForgedContext(f"A {type(self).__name__} cannot be changed (tried to delete {name!r}).")

    def __reduce_ex__(self, protocol):
        raise ForgedContext(f"A {type(self).__name__} cannot be pickled or copied; the other side authenticates "
                            "and gets its own from core.tenancy.")

    def __copy__(self):
        raise ForgedContext(f"A {type(self).__name__} cannot be copied; pass the same object along.")

    def __deepcopy__(self, memo):
        raise ForgedContext(f"A {type(self).__name__} cannot be copied; pass the same object along.")


class _Facts(NamedTuple):
    tenant_id: TenantKey
    tenant_slug: str
    actor: str
    role: str
    channel: str
    customer_id: str | None


CONTEXTS = _Registry("TenantContext")


def _fact(name: str, doc: str) -> property:
    return property(lambda self: getattr(CONTEXTS.facts(self, TenantContext), name), doc=doc)


class TenantContext(_Sealed):
    """Who is acting, for which tenant. Issued only by :mod:`core.tenancy.context` after authentication;
    immutable. ``tenant_id`` is a :class:`~core.base.tenant_scope.TenantKey`, the only tenant id the store takes."""

    __slots__ = ("__weakref__",)

    def __init_subclass__(cls, **kwargs):
        raise TypeError("TenantContext cannot be subclassed: core.tenancy issues every context.")

    tenant_id = _fact("tenant_id", "The tenant's id (a TenantKey).")
    tenant_slug = _fact("tenant_slug", "The tenant's slug.")
    actor = _fact("actor", "Who acts: an e-mail, cli:NAME, visitor, customer:ID, admin-token.")
    role = _fact("role", "admin, editor, qa or customer.")
    channel = _fact("channel", "Where the request came from (admin, cli, api, web, identified...).")
    customer_id = _fact("customer_id", "An identified customer's id (signed token), else None.")

    def can(self, role: str) -> bool:
        """True when the actor's role includes ``role`` (admin includes every role)."""
        own = CONTEXTS.facts(self, TenantContext).role
        return own == "admin" or own == role

    def __eq__(self, other) -> bool:
        if type(other) is not TenantContext:
            return NotImplemented
        return CONTEXTS.facts(self, TenantContext) == CONTEXTS.facts(other, TenantContext)

    def __hash__(self) -> int:
        return hash(CONTEXTS.facts(self, TenantContext))

    def __repr__(self) -> str:
        try:
            facts = CONTEXTS.facts(self, TenantContext)
        except ForgedContext:
            return "<TenantContext not issued by core.tenancy>"
        return (f"TenantContext(tenant_id={int(facts.tenant_id)}, tenant_slug={facts.tenant_slug!r}, "
                f"actor={facts.actor!r}, role={facts.role!r}, channel={facts.channel!r}, "
                f"customer_id={facts.customer_id!r})")


def _issue(tenant_id: int, slug: str, actor: str, role: str, channel: str,
           customer_id: str | None = None) -> TenantContext:
    """The one place a TenantContext comes to exist (core.tenancy.context calls it after authentication)."""
    ctx = object.__new__(TenantContext)
    CONTEXTS.add(ctx, _Facts(mint(int(tenant_id), _SEAL), slug, actor, role, channel, customer_id))
    return ctx


def require_context(ctx: object) -> TenantContext:
    """``ctx`` itself when it is a context core.tenancy issued and still holds; ForgedContext otherwise."""
    CONTEXTS.facts(ctx, TenantContext)
    return ctx  # type: ignore[return-value]


SESSIONS = _Registry("UserSession")


class _SessionFacts(NamedTuple):
    email: str
    session_id: int | None  # the admin_sessions record (core.tenancy.sessions), None for a bare password check


class UserSession(_Sealed):
    """A user who proved their password; issued only by ``authenticate`` or ``create_first_admin``, and by
    :mod:`core.tenancy.sessions` for the sign-in it recorded (``session_id``) or restored from a verified cookie.

    The admin app keeps one per browser session and turns it into a TenantContext for the tenant the
    user picks, through ``context_for``, which checks the membership every time."""

    __slots__ = ("__weakref__",)

    def __init_subclass__(cls, **kwargs):
        raise TypeError("UserSession cannot be subclassed: core.tenancy issues every session.")

    @property
    def email(self) -> str:
        return SESSIONS.facts(self, UserSession).email

    @property
    def session_id(self) -> int | None:
        """The server-side record of this sign-in (revocable), or None for a bare password check."""
        return SESSIONS.facts(self, UserSession).session_id

    def __eq__(self, other) -> bool:
        if type(other) is not UserSession:
            return NotImplemented
        return self.email == other.email

    def __hash__(self) -> int:
        return hash(self.email)

    def __repr__(self) -> str:
        try:
            return f"UserSession(email={self.email!r})"
        except ForgedContext:
            return "<UserSession not issued by core.tenancy>"


def _issue_session(email: str, session_id: int | None = None) -> UserSession:
    """A signed-in user's session (core.tenancy.context calls it after a password check, core.tenancy.sessions
    for a recorded sign-in)."""
    session = object.__new__(UserSession)
    SESSIONS.add(session, _SessionFacts(email, session_id))
    return session


def require_session(session: object) -> UserSession:
    """``session`` itself when it is a UserSession core.tenancy issued; ForgedContext otherwise."""
    SESSIONS.facts(session, UserSession)
    return session  # type: ignore[return-value]
