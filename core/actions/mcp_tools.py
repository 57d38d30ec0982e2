"""The MCP servers a tenant connects and their tools as operations (tables ``mcp_servers`` and ``mcp_tools``).

Discovery (``core.actions.mcp.discover``) gives each tool's name, description, input schema and readOnlyHint; a tool
with ``readOnlyHint`` true is a ``read`` operation, every other tool a ``write`` one (a card). The admin may override
the kind and disable any tool; a refresh keeps those choices for the tools that still exist. A tool's description
is the server's text: the agent's tools pass it through the injection guard before a model reads it.
"""
from __future__ import annotations

import json
import re

from core.actions import params
from core.actions.model import ActionDefinitionError, ActionError, Operation, OpKind, OpSource
from core.base.store import Store
from core.tenancy.context import AuthError, TenantContext

SERVER = re.compile(r"^[a-z][a-z0-9_]{1,30}$")
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")


def require_admin(ctx: TenantContext) -> None:
    if ctx.role != "admin":
        raise AuthError("Only an admin of the tenant can define actions or connect MCP servers.")


def operation_name(server: str, tool: str) -> str:
    """``shop`` + ``Get-Balance`` -> ``shop__get_balance`` (a tool name every provider accepts)."""
    cleaned = re.sub(r"[^a-z0-9_]+", "_", tool.lower()).strip("_") or "tool"
    return f"{server}__{cleaned}"[:64]


def connect_mcp(ctx: TenantContext, store: Store, name: str, url: str, tools: list[dict], auth_header: str = "",
                auth_value: str = "", auth_env: str = "") -> list[dict]:
    """Connect (or refresh) server ``name`` with the ``tools`` discovery found; returns the tools that could not be
    offered, each with why (their input schema is not a JSON Schema object: they are stored disabled)."""
    require_admin(ctx)
    if not SERVER.match(name or ""):
        raise ActionDefinitionError("The server name must be 2-31 characters: lowercase letters, digits and _.")
    if not url.startswith(("http://", "https://")):
        raise ActionDefinitionError("The MCP server URL must start with http:// or https:// (its streamable HTTP "
                                    "endpoint, often ending in /mcp).")
    if auth_env and not ENV_NAME.match(auth_env):
        raise ActionDefinitionError("auth_env must name an environment variable (A-Z, 0-9, _); the secret is never "
                                    "stored.")
    if bool(auth_header) != bool(auth_env):
        raise ActionDefinitionError("Give both the auth header and the env var that holds its secret, or neither.")
    kept = {row["tool"]: row for row in store.query(
        "SELECT tool, kind_override, disabled FROM mcp_tools WHERE tenant_id = ? AND server = ?",
        [ctx.tenant_id, name])}
    rows, problems, seen = [], [], set()
    for tool in tools:
        op = operation_name(name, str(tool.get("name", "")))
        if op in seen:
            problems.append({"tool": tool.get("name"), "problem": f"its name clashes with another tool as {op}"})
            continue
        seen.add(op)
        schema, bad = tool.get("input_schema") or {"type": "object", "properties": {}}, ""
        try:
            params.check_schema(schema)
        except ActionDefinitionError as exc:
            bad = str(exc)
            problems.append({"tool": tool.get("name"), "problem": bad})
        old = kept.get(tool.get("name"), {})
        read_only = tool.get("read_only")
        rows.append([ctx.tenant_id, name, str(tool.get("name")), op, str(tool.get("description") or "")[:2000],
                     json.dumps(schema), None if read_only is None else int(bool(read_only)),
                     old.get("kind_override"), 1 if bad else int(old.get("disabled") or 0)])
    with store.write() as db:
        db.execute("INSERT INTO mcp_servers (tenant_id, name, url, auth_header, auth_value, auth_env, refreshed_at) "
                   "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (tenant_id, name) DO UPDATE SET url = excluded.url, "
                   "auth_header = excluded.auth_header, auth_value = excluded.auth_value, "
                   "auth_env = excluded.auth_env, "
                   "refreshed_at = excluded.refreshed_at",
                   [ctx.tenant_id, name, url, auth_header, auth_value or ("Bearer {secret}" if auth_header else ""),
                    auth_env, store.clock.stamp()])
        db.execute("DELETE FROM mcp_tools WHERE tenant_id = ? AND server = ?", [ctx.tenant_id, name])
        for row in rows:
            db.execute("INSERT INTO mcp_tools (tenant_id, server, tool, operation, description, input_schema, "
                       "read_only, kind_override, disabled) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)
    return problems


def disconnect_mcp(ctx: TenantContext, store: Store, name: str) -> None:
    require_admin(ctx)
    with store.write() as db:
        db.execute("DELETE FROM mcp_tools WHERE tenant_id = ? AND server = ?", [ctx.tenant_id, name])
        gone = db.execute("DELETE FROM mcp_servers WHERE tenant_id = ? AND name = ?", [ctx.tenant_id, name]).rowcount
    if not gone:
        raise ActionError(f"There is no MCP server {name!r} on this tenant.")


def mcp_servers(ctx: TenantContext, store: Store) -> list[dict]:
    return store.query("SELECT name, url, auth_header, auth_value, auth_env, refreshed_at FROM mcp_servers "
                       "WHERE tenant_id = ? ORDER BY name", [ctx.tenant_id])


def mcp_operations(ctx: TenantContext, store: Store) -> list[Operation]:
    """Every discovered tool as an operation (disabled ones included, ``enabled`` False)."""
    rows = store.query(
        "SELECT t.server, t.tool, t.operation, t.description, t.input_schema, t.read_only, t.kind_override, "
        "t.disabled, s.url, s.auth_header, s.auth_value, s.auth_env FROM mcp_tools t JOIN mcp_servers s "
        "ON s.tenant_id = t.tenant_id AND s.name = t.server WHERE t.tenant_id = ? ORDER BY t.operation",
        [ctx.tenant_id])
    out = []
    for row in rows:
        kind = OpKind(row["kind_override"]) if row["kind_override"] else (
            OpKind.READ if row["read_only"] == 1 else OpKind.WRITE)
        config = {"server": row["server"], "tool": row["tool"], "url": row["url"], "read_only_hint": row["read_only"],
                  "kind_override": row["kind_override"]}
        if row["auth_header"]:
            config.update(auth_header=row["auth_header"], auth_value=row["auth_value"], auth_env=row["auth_env"])
        out.append(Operation(row["operation"], f"{row['tool']} ({row['server']})", row["description"] or row["tool"],
                             json.loads(row["input_schema"]), kind, OpSource.MCP, (), True, not row["disabled"],
                             config))
    return out


def set_tool_override(ctx: TenantContext, store: Store, op_name: str, *, kind: OpKind | str | None = None,
                      disabled: bool | None = None) -> None:
    """The admin's choice for one MCP tool: its kind (``read``/``write``; "" = back to the server's hint) and/or
    whether it is disabled."""
    require_admin(ctx)
    if kind not in (None, "", "read", "write"):
        raise ActionDefinitionError("kind must be read or write.")
    sets, args = [], []
    if kind is not None:
        sets.append("kind_override = ?")
        args.append(str(kind) or None)
    if disabled is not None:
        sets.append("disabled = ?")
        args.append(int(bool(disabled)))
    if not sets:
        return
    with store.write() as db:
        found = db.execute(f"UPDATE mcp_tools SET {', '.join(sets)} WHERE tenant_id = ? AND operation = ?",
                           [*args, ctx.tenant_id, op_name]).rowcount
    if not found:
        raise ActionError(f"There is no MCP tool {op_name!r} on this tenant; list them with "
                          "`python -m core actions SLUG`.")
