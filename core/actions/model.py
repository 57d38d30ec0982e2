"""The records every part of ``core.actions`` shares: an operation, what executing it returned, the errors."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

from core.base.errors import UserError
from core.tenancy.context import TenantContext

#: a tool name every provider accepts (Anthropic: ^[a-zA-Z0-9_-]{1,64}$), lowercase so names never collide by case
NAME = re.compile(r"^[a-z][a-z0-9_]{2,63}$")
MAX_RESULT_BYTES = 64 * 1024
DEFAULT_TIMEOUT, MAX_TIMEOUT = 10.0, 30.0


def timeout_of(config) -> float:
    """An action's time limit in seconds for the whole exchange: its config's ``timeout`` (default 10), kept
    between 1 and 30."""
    try:
        value = float(config.get("timeout") or DEFAULT_TIMEOUT)
    except (TypeError, ValueError):
        value = DEFAULT_TIMEOUT
    return min(max(value, 1.0), MAX_TIMEOUT)


class OpKind(StrEnum):
    READ = "read"  # live data: runs during the turn, its result is evidence for this turn only
    WRITE = "write"  # changes data: only through a card a person approves


class OpSource(StrEnum):
    BUILTIN = "builtin"
    HTTP = "http"
    MCP = "mcp"
    BOOKING = "booking"  # cancel and reschedule a booking (registered by core.booking)


@dataclass(frozen=True)
class Operation:
    """One operation of a tenant, whatever its source. ``config`` holds what its executor needs (an HTTP
    action's method and URL template, an MCP tool's server); never a secret, only the name of its env var."""

    name: str
    title: str
    description: str
    parameters: dict
    kind: OpKind
    source: OpSource
    examples: tuple[str, ...] = ()
    identified_only: bool = True
    enabled: bool = True
    config: dict = field(default_factory=dict)

    @property
    def requires_customer(self) -> bool:
        """Write operations always need an identified customer (C3); a read one when its definition says so."""
        return self.kind is OpKind.WRITE or self.identified_only

    def as_dict(self) -> dict:
        return {"name": self.name, "title": self.title, "description": self.description,
                "parameters": self.parameters, "kind": str(self.kind), "source": str(self.source),
                "examples": list(self.examples), "identified_only": self.requires_customer, "enabled": self.enabled,
                "config": dict(self.config)}


@dataclass(frozen=True)
class Execution:
    """What running an operation (or reading its state) returned."""

    ok: bool
    status: str  # "ok" | "error" | "timeout" | "unreachable" | "config_error" | "http_<code>" | "tool_error"
    body: Any = None
    message: str = ""

    def as_dict(self) -> dict:
        return {"ok": self.ok, "status": self.status, "body": self.body, "message": self.message}


class ActionError(UserError):
    """Bad input about an operation or a card; the message says what to change."""


class ActionDefinitionError(ActionError):
    """An action definition that cannot be stored as given (names the field)."""


class ActionFault(ActionError):
    """A failing action (unreachable, timeout, unreadable state): a fault, never a gap (G4)."""


class Executor(Protocol):
    def current_state(self, ctx: TenantContext, op: Operation, params: dict,
                      customer_id: str | None) -> dict | None: ...

    def execute(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None,
                idempotency_key: str) -> Execution: ...
