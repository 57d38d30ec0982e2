"""What the runtime exposes as ``rt.actions``: a tenant's operations, the agent's tools for them, the cards and their
decisions, the ledger and the switches, over one store, one clock and the process's executors."""
from __future__ import annotations

import os
from typing import Mapping

from core.actions import cards as cards_mod, ledger, switch
from core.actions.builtin import BuiltinExecutor
from core.actions.cards import Card, CardNotFound, Decision, Runner  # noqa: F401  (re-exported for the API and pages)
from core.actions.model import ActionError, ActionFault, Execution, Executor, Operation, OpKind, OpSource
from core.actions.params import check
from core.actions.registry import Operations
from core.actions.tools import operation_tool
from core.agent.registry import Tool
from core.base.config import Settings
from core.base.store import Store
from core.tenancy.context import TenantContext


def default_executors(store: Store, settings: Settings, environ: Mapping[str, str] | None = None) -> dict:
    from core.actions.http import HttpExecutor
    from core.actions.mcp import McpExecutor

    env = os.environ if environ is None else environ
    return {OpSource.BUILTIN: BuiltinExecutor(store), OpSource.HTTP: HttpExecutor(settings, environ=env),
            OpSource.MCP: McpExecutor(settings, environ=env)}


class Actions:
    def __init__(self, store: Store, settings: Settings, executors: dict[OpSource, Executor] | None = None) -> None:
        self.store, self.settings = store, settings
        self.registry = Operations(store, executors if executors is not None else default_executors(store, settings))

    # -- operations -----------------------------------------------------------------------------------------
    def operations(self, ctx: TenantContext, lang: str = "en") -> list[Operation]:
        return self.registry.all(ctx, lang)

    def operation(self, ctx: TenantContext, name: str, lang: str = "en") -> Operation | None:
        return self.registry.get(ctx, name, lang)

    def executor(self, op: Operation) -> Executor:
        return self.registry.executor(op)

    def close(self) -> None:
        """Close what the executors hold open (the HTTP client's connections); the runtime's close calls it."""
        for executor in self.registry.executors.values():
            getattr(executor, "close", lambda: None)()

    def stamp(self) -> str:
        return self.store.clock.stamp()

    def tools(self, ctx: TenantContext, lang: str = "en") -> list[Tool]:
        """The agent's tools for this tenant's enabled operations (offered per turn by who is asking)."""
        return [operation_tool(self, op) for op in self.registry.enabled(ctx, lang)]

    # -- switches -------------------------------------------------------------------------------------------
    def stopped(self, ctx: TenantContext) -> str | None:
        return switch.stopped(ctx, self.store, self.settings)

    def set_switch(self, ctx: TenantContext, off: bool, reason: str = "") -> None:
        switch.set_actions_off(ctx, self.store, off, reason)

    # -- cards ----------------------------------------------------------------------------------------------
    def record(self, ctx: TenantContext, conversation_id: str, proposals: list[dict]) -> list[Card]:
        """The turn's proposals as cards (the turn pipeline calls this once the answer is settled)."""
        out = []
        for proposal in proposals:
            op = self.registry.get(ctx, proposal["operation"])
            if op is None or op.kind is not OpKind.WRITE:
                raise ActionError(f"{proposal['operation']} is not a write operation of this tenant.")
            out.append(cards_mod.propose(ctx, self.store, op, proposal["params"], conversation_id=conversation_id,
                                         preview=proposal["preview"], snapshot=proposal["snapshot"],
                                         minutes=self.settings.card_minutes, title=proposal.get("title", "")))
        return out

    def runner(self, ctx: TenantContext) -> Runner:
        return Runner(lambda name: self.registry.get(ctx, name), self.registry.executor, lambda: self.stopped(ctx))

    def decide(self, ctx: TenantContext, card_id: str, approve: bool) -> Decision:
        """A person's click on a card (CardNotFound for a card they may not see)."""
        if approve:
            return cards_mod.approve(ctx, self.store, card_id, self.runner(ctx))
        return cards_mod.reject(ctx, self.store, card_id)

    def cards(self, ctx: TenantContext, status: str | None = None, limit: int = 200) -> list[Card]:
        return cards_mod.listing(ctx, self.store, status, limit)

    def card(self, ctx: TenantContext, card_id: str) -> Card:
        return cards_mod.get(ctx, self.store, card_id)

    def ledger(self, ctx: TenantContext, card_id: str | None = None) -> list[dict]:
        if card_id:
            self.card(ctx, card_id)  # a card they may not see has no ledger for them either
        elif ctx.role not in cards_mod.STAFF or ctx.customer_id:
            raise CardNotFound()
        return ledger.entries(ctx, self.store, card_id)

    def ledger_csv(self, ctx: TenantContext, card_id: str | None = None) -> str:
        return ledger.as_csv(self.ledger(ctx, card_id))

    # -- trying an operation (the Actions page, the CLI) ----------------------------------------------------
    def _checked(self, ctx: TenantContext, name: str, arguments: dict) -> tuple[Operation, dict]:
        op = self.registry.get(ctx, name)
        if op is None:
            raise ActionError(f"There is no operation {name!r}; list them with `python -m core actions SLUG`.")
        checked = check(op.parameters, arguments)
        if not checked.ok:
            wrong = [*checked.problems, *(f"{m} is missing" for m in checked.missing)]
            raise ActionError(f"{name}: " + "; ".join(wrong))
        return op, checked.params

    def dry_run(self, ctx: TenantContext, name: str, arguments: dict, customer_id: str | None = None) -> dict:
        """What running ``name`` would send (secrets masked) and the state it would be checked against; changes
        nothing. A read operation is not run either: use :meth:`run_read`."""
        op, params = self._checked(ctx, name, arguments)
        out = {"operation": op.as_dict(), "params": params, "stopped": self.stopped(ctx)}
        if op.source is OpSource.HTTP:
            from core.actions.http import render_request

            out["request"] = render_request(op, params, customer_id, self.settings, os.environ)
        try:
            out["state"] = self.executor(op).current_state(ctx, op, params, customer_id)
        except ActionFault as exc:
            out["state_error"] = str(exc)
        return out

    def run_read(self, ctx: TenantContext, name: str, arguments: dict, customer_id: str | None = None) -> Execution:
        """Run a read operation now (staff testing it); a write operation is refused: only a card runs it."""
        if ctx.role not in cards_mod.STAFF:
            raise CardNotFound()
        op, params = self._checked(ctx, name, arguments)
        if op.kind is not OpKind.READ:
            raise ActionError(f"{name} changes data: it runs only through a card someone approves. Use the dry run.")
        why = self.stopped(ctx)
        if why:
            raise ActionError(f"Actions are off: {why}.")
        return self.executor(op).execute(ctx, op, params, customer_id, "test-read")
