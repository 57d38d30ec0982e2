"""Contexts that cannot be forged (issue 16, item 12): ``dataclasses.replace``, ``object.__setattr__``, copies,
pickles, subclasses and look-alikes of a TenantContext read no tenant's sources, handoffs or webhook secret.

Each attempt is made by code holding a real context of tenant acme and knowing globex's tenant id (a number),
against real reads; before the fix every one of them read globex's data."""
from __future__ import annotations

import ast
import copy
import dataclasses
import gc
import pickle
import threading
import types
from pathlib import Path

import pytest

from core.base.errors import PermissionDenied
from core.base.tenant_scope import ForgedTenant, TenantKey, check_params, tenant_slots
from core.channels import conversations, handoff
from core.knowledge import sources
from core.tenancy import issued, site_keys
from core.tenancy.context import (
    ForgedContext,
    TenantContext,
    UserSession,
    authenticate,
    local_operator,
    require_context,
)
from core.tenancy.tenants import create_user

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def victim(rt, other_ctx):
    """globex with a source, an open handoff and site keys: what a forger is after."""
    sources.save(other_ctx, rt.store, "secret/plan", title="Plan", content="Only for Globex.")
    convo = conversations.start(other_ctx, rt.store, "identified", "bob")
    handoff.create(other_ctx, rt.store, convo.id, "customer_request")
    site_keys.ensure(other_ctx, rt.store)
    return other_ctx


def reads(ctx, rt) -> dict:
    """The three reads of the issue: sources, handoffs, the webhook secret."""
    return {"sources": [s.path for s in sources.list_sources(ctx, rt.store)],
            "handoffs": [h["conversation_id"] for h in handoff.handoffs(ctx, rt.store, None)],
            "secret": site_keys.webhook_secret(ctx, rt.store)}


def look_alike(tenant_id):
    return types.SimpleNamespace(tenant_id=tenant_id, tenant_slug="globex", actor="cli:operator", role="admin",
                                 channel="cli", customer_id=None, can=lambda role: True)


def test_the_victims_data_is_there_for_its_own_context(rt, victim):
    got = reads(victim, rt)
    assert got["sources"] == ["secret/plan"] and len(got["handoffs"]) == 1 and got["secret"]


# -- the attempts that build an object -----------------------------------------------------------------------
ATTEMPTS = {
    "dataclasses.replace": lambda ctx, victim_id: dataclasses.replace(ctx, tenant_id=victim_id, role="admin"),
    "object.__setattr__": lambda ctx, victim_id: object.__setattr__(ctx, "tenant_id", victim_id),
    "setattr": lambda ctx, victim_id: setattr(ctx, "tenant_id", victim_id),
    "delattr": lambda ctx, victim_id: delattr(ctx, "role"),
    "pickle round trip": lambda ctx, victim_id: pickle.loads(pickle.dumps(ctx)),
    "copy.copy": lambda ctx, victim_id: copy.copy(ctx),
    "copy.deepcopy": lambda ctx, victim_id: copy.deepcopy(ctx),
    "the constructor": lambda ctx, victim_id: TenantContext(victim_id, "globex", "me", "admin"),
    "a subclass": lambda ctx, victim_id: type("Mine", (TenantContext,), {}),
    "a key of the victim's id": lambda ctx, victim_id: TenantKey(victim_id),
    "a key from the context's own type": lambda ctx, victim_id: type(ctx.tenant_id)(victim_id),
}


@pytest.mark.parametrize("attempt", ATTEMPTS, ids=list(ATTEMPTS))
def test_every_way_to_make_a_forged_context_is_refused_with_an_error(rt, ctx, victim, attempt):
    with pytest.raises((ForgedContext, ForgedTenant, TypeError, AttributeError)):
        ATTEMPTS[attempt](ctx, int(victim.tenant_id))
    assert ctx.tenant_slug == "acme" and ctx.role == "admin"  # the real context is untouched
    assert reads(ctx, rt)["sources"] == []


# -- the attempts that hand a look-alike to the data modules --------------------------------------------------
LOOK_ALIKES = {
    "a namespace with the victim's id": lambda ctx, victim_id: look_alike(victim_id),
    "a namespace with the id as text": lambda ctx, victim_id: look_alike(str(victim_id)),
    "a namespace with a copied key": lambda ctx, victim_id: look_alike(copy.copy(victim_id)),
    "a namespace with a pickled key": lambda ctx, victim_id: look_alike(pickle.loads(pickle.dumps(victim_id))),
    "an instance nobody issued": lambda ctx, victim_id: object.__new__(TenantContext),
    "a class with the same name": lambda ctx, victim_id: type("TenantContext", (), {
        "tenant_id": victim_id, "tenant_slug": "globex", "actor": "x", "role": "admin", "channel": "cli",
        "customer_id": None, "can": lambda self, role: True})(),
}


@pytest.mark.parametrize("what", ["sources", "handoffs", "secret"])
@pytest.mark.parametrize("forgery", LOOK_ALIKES, ids=list(LOOK_ALIKES))
def test_a_look_alike_reads_nothing_of_any_tenant(rt, ctx, victim, forgery, what):
    victim_key = victim.tenant_id
    fake = LOOK_ALIKES[forgery](ctx, victim_key if "key" in forgery else int(victim_key))
    with pytest.raises(PermissionDenied, match="issued by core.tenancy"):
        reads_one = {"sources": lambda: sources.list_sources(fake, rt.store),
                     "handoffs": lambda: handoff.handoffs(fake, rt.store, None),
                     "secret": lambda: site_keys.webhook_secret(fake, rt.store)}[what]
        reads_one()


def test_the_tenant_row_refuses_a_look_alike(rt, ctx, victim):
    """``tenants`` is keyed by ``id``, which the store cannot tell from other ids: tenancy checks the context."""
    from core.tenancy import tenants
    fake = look_alike(int(victim.tenant_id))
    for call in (lambda: tenants.tenant_name(fake, rt.store), lambda: tenants.rename_tenant(fake, rt.store, "Pwned"),
                 lambda: tenants.retention_days(fake, rt.store), lambda: tenants.set_retention_days(fake, rt.store, 1)):
        with pytest.raises(ForgedContext):
            call()
    assert tenants.tenant_name(victim, rt.store) == "Globex"


def test_a_look_alike_with_a_real_key_cannot_claim_the_admin_role(rt, ctx):
    """The store takes a key borrowed from a real context (same tenant); the admin-only reads of tenancy check the
    context itself, so a qa member's key does not become an admin's."""
    from core.tenancy import members
    from core.tenancy.context import login
    create_user(rt.store, "acme", "qa@example.com", "s3cret-pass", "qa")
    qa = login(rt.store, "qa@example.com", "s3cret-pass", "acme")
    fake = look_alike(qa.tenant_id)
    for call in (lambda: site_keys.ensure(fake, rt.store), lambda: site_keys.rotate_secret(fake, rt.store),
                 lambda: members.list_members(fake, rt.store)):
        with pytest.raises(ForgedContext):
            call()


def test_a_look_alike_writes_nothing_either(rt, ctx, victim):
    with pytest.raises(ForgedTenant):
        sources.save(look_alike(int(victim.tenant_id)), rt.store, "planted", title="Planted", content="x")
    with pytest.raises(ForgedTenant):
        conversations.start(look_alike(int(victim.tenant_id)), rt.store, "web")
    assert reads(victim, rt)["sources"] == ["secret/plan"]


def test_the_higher_level_services_refuse_a_look_alike_too(rt, ctx, victim):
    rt.index.train(victim)
    fake = look_alike(int(victim.tenant_id))
    for call in (lambda: rt.knowledge.browse(fake, ""), lambda: rt.knowledge.read(fake, "secret/plan"),
                 lambda: rt.retriever.search(fake, "Only for Globex")):
        with pytest.raises(PermissionDenied):
            call()


def test_require_context_names_what_to_do(ctx):
    assert require_context(ctx) is ctx
    for fake in (look_alike(1), object.__new__(TenantContext), None, "acme"):
        with pytest.raises(ForgedContext, match="build one with login, context_for, local_operator"):
            require_context(fake)


# -- legit contexts keep working ----------------------------------------------------------------------------
def test_an_issued_context_reads_like_the_old_dataclass(rt, ctx):
    same = local_operator(rt.store, "acme")
    assert same == ctx and hash(same) == hash(ctx) and same is not ctx and len({same, ctx}) == 1
    assert ctx.tenant_id == 1 and isinstance(ctx.tenant_id, TenantKey) and f"t{ctx.tenant_id}" == "t1"
    assert repr(ctx).startswith("TenantContext(tenant_id=1, tenant_slug='acme'")
    assert ctx.can("editor") and ctx != local_operator(rt.store, "acme", "someone-else")
    assert "not issued" in repr(object.__new__(TenantContext))


def test_contexts_are_forgotten_when_they_die(rt, ctx):
    gc.collect()
    before = len(issued.CONTEXTS)
    made = [local_operator(rt.store, "acme") for _ in range(2000)]
    assert len(issued.CONTEXTS) == before + 2000
    del made
    gc.collect()
    assert len(issued.CONTEXTS) == before


def test_contexts_cross_threads_and_threads_issue_their_own(rt, ctx):
    sources.save(ctx, rt.store, "kb/a", title="A", content="text")
    seen, errors = [], []

    def work():
        try:
            mine = local_operator(rt.store, "acme")
            seen.append((len(sources.list_sources(ctx, rt.store)), len(sources.list_sources(mine, rt.store))))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and seen == [(1, 1)] * 8


def test_a_user_session_cannot_be_forged_into_another_users(rt, ctx):
    create_user(rt.store, "acme", "ann@example.com", "s3cret-pass", "qa")
    session = authenticate(rt.store, "ann@example.com", "s3cret-pass")
    assert session.email == "ann@example.com" and session == authenticate(rt.store, "ann@example.com", "s3cret-pass")
    for attempt in (lambda: dataclasses.replace(session, email="boss@example.com"),
                    lambda: object.__setattr__(session, "email", "boss@example.com"),
                    lambda: pickle.dumps(session), lambda: copy.copy(session),
                    lambda: UserSession("boss@example.com"), lambda: object.__new__(UserSession).email):
        with pytest.raises((ForgedContext, TypeError, AttributeError)):
            attempt()


# -- the store's half: which statements take a tenant id ----------------------------------------------------
@pytest.mark.parametrize("sql, slots", [
    ("SELECT x FROM sources WHERE tenant_id = ? AND path = ?", (0,)),
    ("UPDATE t SET a = ? WHERE tenant_id=? AND id = ?", (1,)),
    ("SELECT * FROM a s JOIN b t ON t.tenant_id = s.tenant_id WHERE s.tenant_id = ? AND x = ?", (0,)),
    ("INSERT INTO read_log (tenant_id, at, actor) VALUES (?,?,?)", (0,)),
    ('INSERT INTO "t" ("a", "tenant_id") VALUES (?, ?), (?, ?)', (1, 3)),
    ("INSERT INTO t (a, tenant_id) VALUES (?, ?) ON CONFLICT (tenant_id) DO UPDATE SET a = excluded.a", (1,)),
    ("DELETE FROM t WHERE [tenant_id] = :tid", ("tid",)),
    ("SELECT 1 FROM t WHERE owner_tenant_id = ? AND s.tenant_id = ? AND [x].[tenant_id] = ?", (1, 2)),
    ("INSERT INTO gaps (tenant_id, label, status, count) VALUES (?, ?, 'open', 0)", (0,)),
    ("INSERT INTO gaps (label, status, tenant_id) VALUES (?, 'a,b(c', ?)", (1,)),
    ("INSERT INTO g (tenant_id, version) VALUES (?, 1) ON CONFLICT (tenant_id) DO UPDATE SET version = version + 1",
     (0,)),
    ("INSERT INTO t (a, tenant_id, b) VALUES (coalesce(?, 1), ?, ?)", (1,)),
    ("INSERT INTO t (tenant_id, a) VALUES (:tid, :a)", ("tid",)),
    ("INSERT INTO t (a, tenant_id) SELECT a, tenant_id FROM u WHERE tenant_id = ?", (0,)),
    ("SELECT slug FROM tenants WHERE id = ?", ()),
    ("SELECT t.slug FROM site_keys k JOIN tenants t ON t.id = k.tenant_id WHERE k.public_key = ?", ()),
])
def test_tenant_slots_of_statements(sql, slots):
    assert tenant_slots(sql) == slots


def test_the_store_refuses_plain_numbers_in_tenant_slots(ctx):
    check_params("SELECT 1 FROM sources WHERE tenant_id = ?", [ctx.tenant_id])
    check_params("SELECT 1 FROM tenants WHERE id = ?", [2])
    for value in (2, "2", 2.0, None, True):
        with pytest.raises(ForgedTenant, match="TenantContext issued by core.tenancy"):
            check_params("SELECT 1 FROM sources WHERE tenant_id = ?", [value])
    with pytest.raises(ForgedTenant):
        check_params("DELETE FROM t WHERE tenant_id = :tid", {"tid": 2})


MINTERS = ("core/base/tenant_scope.py", "core/tenancy/")  # the key type and the one package that issues


def test_only_tenancy_mints_tenant_keys():
    """Static guard: the seal and ``mint`` are named only where keys are issued."""
    offenders = []
    for folder in ("core", "api", "pages"):
        for path in (ROOT / folder).rglob("*.py"):
            rel = path.relative_to(ROOT).as_posix()
            if rel.startswith(MINTERS):
                continue
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ({a.name for a in node.names} if isinstance(node, ast.ImportFrom) else
                         {node.id} if isinstance(node, ast.Name) else
                         {node.attr} if isinstance(node, ast.Attribute) else set())
                if names & {"_SEAL", "mint", "_issue", "_issue_session"}:
                    offenders.append(f"{rel}:{node.lineno}")
    assert offenders == []
