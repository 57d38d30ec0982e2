"""The tenant world the card tests share: a runtime over a fresh data dir whose executors record every call, tenant
acme with the built-in e-mail operation, HTTP actions pointing at the real local shop (``tests.actions.shop_server``)
and optionally a real local MCP server (``tests.actions.mcp_server``); tenant globex beside it; the people who click.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.actions import builtin, definitions
from core.actions.builtin import BuiltinExecutor
from core.actions.http import HttpExecutor
from core.actions.mcp import McpExecutor, discover
from core.actions.model import OpKind, OpSource
from core.base.clock import SYSTEM
from core.base.config import load_settings
from core.runtime import Runtime, open_runtime
from core.tenancy import site_keys
from core.tenancy.context import TenantContext, local_customer, local_operator, visitor_context
from core.tenancy.tenants import create_tenant
from tests.actions.mcp_server import TOKEN
from tests.actions.shop_server import Recording, Shop, address_action, note_action, status_action
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder

MCP_ENV = "CARDS_TEST_MCP_TOKEN"
PROFILES = {"alice": "alice@old.example", "bob": "bob@old.example"}


@dataclass
class World:
    rt: Runtime
    shop: Shop
    mcp: object | None
    recorders: dict[OpSource, Recording]
    admin: TenantContext = field(init=False)
    alice: TenantContext = field(init=False)
    bob: TenantContext = field(init=False)
    other_admin: TenantContext = field(init=False)
    other_alice: TenantContext = field(init=False)

    def __post_init__(self) -> None:
        store = self.rt.store
        self.admin, self.other_admin = local_operator(store, "acme"), local_operator(store, "globex")
        self.alice, self.bob = local_customer(store, "acme", "alice"), local_customer(store, "acme", "bob")
        self.other_alice = local_customer(store, "globex", "alice")  # the same customer id, another tenant

    def visitor(self, slug: str = "acme") -> TenantContext:
        """An anonymous visitor of the widget (channel ``web``, no customer id)."""
        owner = self.admin if slug == "acme" else self.other_admin
        return visitor_context(self.rt.store, site_keys.ensure(owner, self.rt.store).public_key)

    def write_names(self) -> set[str]:
        return {op.name for op in self.rt.actions.operations(self.admin) if op.kind is OpKind.WRITE and op.enabled}

    def profiles(self) -> list[dict]:
        """Every row of customer_profiles, all tenants (the before/after dump)."""
        return self.rt.store.query("SELECT * FROM customer_profiles ORDER BY tenant_id, customer_id")

    def executions(self) -> list[dict]:
        return self.rt.store.query("SELECT * FROM card_executions ORDER BY card_id")

    def close(self) -> None:
        self.recorders[OpSource.HTTP].inner.close()  # its httpx client's connections
        self.rt.close()

    def executed(self) -> list[dict]:
        """What every executor was asked to execute, in order of source."""
        return [call for recorder in self.recorders.values() for call in recorder.executed]


def open_world(data_dir: Path, shop: Shop, mcp=None, clock=SYSTEM, environ: dict | None = None) -> World:
    """The world over ``data_dir`` (fresh); ``mcp`` a running McpTestServer to connect as server ``shop``."""
    settings = load_settings({"COBERTURA_DATA_DIR": str(data_dir), **(environ or {})})
    executors: dict = {}  # filled once the store exists: the built-in executor works on the runtime's own store
    rt = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING, clock=clock, executors=executors)
    recorders = {OpSource.BUILTIN: Recording(BuiltinExecutor(rt.store)),
                 OpSource.HTTP: Recording(HttpExecutor(settings)),
                 OpSource.MCP: Recording(McpExecutor(settings, environ={MCP_ENV: TOKEN}))}
    executors.update(recorders)
    for slug, name in (("acme", "Acme"), ("globex", "Globex")):
        create_tenant(rt.store, slug, name)
    world = World(rt, shop, mcp, recorders)
    for ctx in (world.admin, world.other_admin):
        for customer, email in PROFILES.items():
            builtin.save_profile(ctx, rt.store, customer, email)
    definitions.import_specs(world.admin, rt.store, [address_action(shop.url), note_action(shop.url),
                                                     status_action(shop.url)])
    if mcp is not None:
        tools = discover(mcp.url, {"Authorization": f"Bearer {TOKEN}"})
        problems = definitions.connect_mcp(world.admin, rt.store, "shop", mcp.url, tools, auth_header="Authorization",
                                           auth_env=MCP_ENV)
        assert problems == [], problems
    assert rt.actions.executor(rt.actions.operation(world.admin, builtin.UPDATE_EMAIL)) is recorders[OpSource.BUILTIN]
    return world
