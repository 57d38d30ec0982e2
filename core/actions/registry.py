"""Every operation of a tenant behind one interface (C4): the built-ins, its HTTP actions, its MCP tools, and the
operations other packages register (booking's cancel and reschedule) with their executor."""
from __future__ import annotations

from typing import Callable

from core.actions import definitions
from core.actions.builtin import builtin_operations
from core.actions.model import ActionError, Executor, Operation, OpSource
from core.base.store import Store
from core.tenancy.context import TenantContext

#: lists the operations of a tenant (in ``lang``) that a package registers
Provider = Callable[[TenantContext, str], list[Operation]]


class Operations:
    """The registry: lists a tenant's operations (``lang`` localises the built-ins' titles) and names the executor
    of each source."""

    def __init__(self, store: Store, executors: dict[OpSource, Executor]) -> None:
        self.store, self.executors = store, executors
        self.providers: list[Provider] = []

    def register(self, source: OpSource, provider: Provider, executor: Executor) -> None:
        """Operations another package brings: ``provider(ctx, lang)`` lists them, ``executor`` runs them."""
        self.providers.append(provider)
        self.executors.setdefault(source, executor)

    def all(self, ctx: TenantContext, lang: str = "en") -> list[Operation]:
        """Built-ins first, then the registered ones, HTTP actions, MCP tools; disabled ones included."""
        return [*builtin_operations(lang), *(op for provider in self.providers for op in provider(ctx, lang)),
                *definitions.http_actions(ctx, self.store), *definitions.mcp_operations(ctx, self.store)]

    def enabled(self, ctx: TenantContext, lang: str = "en") -> list[Operation]:
        return [op for op in self.all(ctx, lang) if op.enabled]

    def get(self, ctx: TenantContext, name: str, lang: str = "en") -> Operation | None:
        return next((op for op in self.all(ctx, lang) if op.name == name), None)

    def executor(self, op: Operation) -> Executor:
        found = self.executors.get(op.source)
        if found is None:
            raise ActionError(f"No executor for {op.source} operations is configured in this process.")
        return found
