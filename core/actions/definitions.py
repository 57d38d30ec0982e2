"""The operations a tenant defines (C4): HTTP actions (table ``action_definitions``) and the tools of the MCP servers
it connects (``mcp_servers``, ``mcp_tools`` with the admin's kind override and disabled flag).

A definition is stored exactly as given or refused with the field that is wrong: no field is guessed, dropped or
defaulted silently beyond the documented defaults. Secrets are never stored: a definition names the environment
variable that holds one (``auth_env``), read when the action runs.
"""
from __future__ import annotations

import json
import re

from core.actions import params
from core.actions.builtin import builtin_operations
from core.actions.mcp_tools import (  # noqa: F401  (re-exported: definitions are HTTP actions and MCP tools)
    connect_mcp,
    disconnect_mcp,
    mcp_operations,
    mcp_servers,
    require_admin as _require_admin,
    set_tool_override,
)
from core.actions.model import NAME, ActionDefinitionError, Operation, OpKind, OpSource
from core.base.store import Store
from core.tenancy.context import TenantContext

METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
FIELDS = {"name", "title", "description", "kind", "method", "url", "parameters", "examples", "identified_only",
          "auth_header", "auth_value", "auth_env", "state_url", "state_schema", "headers", "timeout", "enabled"}
REQUIRED = ("name", "title", "description", "kind", "method", "url", "parameters")
ENV_NAME = re.compile(r"^[A-Z_][A-Z0-9_]{0,63}$")
HEADER = re.compile(r"^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$")
CONTEXT_FIELDS = {"customer_id", "public_url"}
_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


def _text(spec: dict, key: str, limit: int, required: bool = True) -> str:
    value = spec.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()) or len(value) > limit:
        raise ActionDefinitionError(f"{key} must be text of 1 to {limit} characters." if required else
                                    f"{key} must be text of at most {limit} characters.")
    return value.strip()


def _template(spec: dict, key: str, names: set[str]) -> str:
    url = _text(spec, key, 2000)
    if not url.startswith(("http://", "https://", "{public_url}")):
        raise ActionDefinitionError(f"{key} must start with http://, https:// or {{public_url}} (the endpoint's own "
                                    f"address), not {url[:40]!r}.")
    unknown = sorted(set(_PLACEHOLDER.findall(url)) - names - CONTEXT_FIELDS)
    if unknown:
        raise ActionDefinitionError(f"{key} uses {', '.join('{' + u + '}' for u in unknown)}, which is neither a "
                                    "parameter nor {customer_id} / {public_url}.")
    return url


def _auth(spec: dict) -> dict:
    header, env = spec.get("auth_header", ""), spec.get("auth_env", "")
    if not header and not env:
        return {}
    if not isinstance(header, str) or not HEADER.match(header):
        raise ActionDefinitionError("auth_header must be a header name such as Authorization or X-Api-Key.")
    if not isinstance(env, str) or not ENV_NAME.match(env):
        raise ActionDefinitionError("auth_env must name an environment variable (A-Z, 0-9, _), e.g. SHOP_API_TOKEN; "
                                    "the secret itself is never stored.")
    value = spec.get("auth_value", "Bearer {secret}")
    if not isinstance(value, str) or "{secret}" not in value or len(value) > 200:
        raise ActionDefinitionError('auth_value must contain {secret} where the secret goes, e.g. "Bearer {secret}".')
    return {"auth_header": header, "auth_env": env, "auth_value": value}


def _headers(spec: dict, auth: dict, names: set[str]) -> dict:
    headers = spec.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(k, str) and HEADER.match(k) and isinstance(v, str)
                                                and len(v) <= 500 for k, v in headers.items()):
        raise ActionDefinitionError("headers must be an object of header names to text values.")
    if auth and any(k.lower() == auth["auth_header"].lower() for k in headers):
        raise ActionDefinitionError(f"headers must not set {auth['auth_header']}: it carries the secret (auth_env).")
    unknown = sorted({p for v in headers.values() for p in _PLACEHOLDER.findall(v)} - names - CONTEXT_FIELDS)
    if unknown:
        raise ActionDefinitionError(f"headers use {', '.join(unknown)}, which is not a parameter or customer_id.")
    return headers


def validate(spec) -> dict:
    """The HTTP action definition as it will be stored (documented defaults filled in), or the error naming the
    field."""
    if not isinstance(spec, dict):
        raise ActionDefinitionError("An action is a JSON object with at least: " + ", ".join(REQUIRED) + ".")
    unknown, missing = sorted(set(spec) - FIELDS), [k for k in REQUIRED if k not in spec]
    if unknown:
        raise ActionDefinitionError(f"Unknown field(s) {', '.join(unknown)}; the fields are: "
                                    f"{', '.join(sorted(FIELDS))}.")
    if missing:
        raise ActionDefinitionError(f"Missing field(s): {', '.join(missing)}.")
    name = spec["name"]
    if not isinstance(name, str) or not NAME.match(name):
        raise ActionDefinitionError(f"name {name!r} must be 3-64 characters: lowercase letters, digits and _ , "
                                    "starting with a letter (it is the tool name the model calls).")
    if name in {op.name for op in builtin_operations()}:
        raise ActionDefinitionError(f"name {name!r} is a built-in operation; choose another name.")
    if spec["kind"] not in ("read", "write"):
        raise ActionDefinitionError('kind must be "read" (live data) or "write" (changes data; always a card).')
    method = spec["method"].upper() if isinstance(spec["method"], str) else ""
    if method not in METHODS:
        raise ActionDefinitionError(f"method must be one of {', '.join(METHODS)}.")
    schema = params.check_schema(spec["parameters"])
    names = set(schema.get("properties", {}))
    out = {"name": name, "title": _text(spec, "title", 80), "description": _text(spec, "description", 1000),
           "kind": spec["kind"], "method": method, "url": _template(spec, "url", names), "parameters": schema}
    examples = spec.get("examples", [])
    if not isinstance(examples, list) or len(examples) > 20 or not all(
            isinstance(e, str) and 0 < len(e.strip()) <= 200 for e in examples):
        raise ActionDefinitionError("examples must be a list of at most 20 phrasings, each 1-200 characters.")
    out["examples"] = [e.strip() for e in examples]
    for flag, default in (("identified_only", True), ("enabled", True)):
        if not isinstance(spec.get(flag, default), bool):
            raise ActionDefinitionError(f"{flag} must be true or false.")
        out[flag] = spec.get(flag, default)
    if out["kind"] == "write" and not out["identified_only"]:
        raise ActionDefinitionError("identified_only cannot be false for a write action: anonymous visitors never "
                                    "cause a card.")
    auth = _auth(spec)
    out.update(auth)
    out["headers"] = _headers(spec, auth, names)
    if spec.get("state_url"):
        out["state_url"] = _template(spec, "state_url", names)
    if "state_schema" in spec:
        if not isinstance(spec["state_schema"], dict):
            raise ActionDefinitionError("state_schema must be a JSON Schema object the current state must satisfy.")
        params.check_state_schema(spec["state_schema"])
        out["state_schema"] = spec["state_schema"]
    timeout = spec.get("timeout", 10)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 1 <= timeout <= 30:
        raise ActionDefinitionError("timeout must be seconds between 1 and 30.")
    out["timeout"] = timeout
    return out


def operation_of(spec: dict) -> Operation:
    config = {k: v for k, v in spec.items() if k not in ("name", "title", "description", "kind", "parameters",
                                                           "examples", "identified_only", "enabled")}
    return Operation(spec["name"], spec["title"], spec["description"], spec["parameters"], OpKind(spec["kind"]),
                     OpSource.HTTP, tuple(spec["examples"]), spec["identified_only"], spec["enabled"], config)


def save_http_action(ctx: TenantContext, store: Store, spec) -> Operation:
    """Create or replace one HTTP action (admins)."""
    return import_specs(ctx, store, [spec])[0]


def import_specs(ctx: TenantContext, store: Store, specs: list) -> list[Operation]:
    """Store every definition or none: the first wrong one is named with its position and field."""
    _require_admin(ctx)
    checked, seen = [], set()
    for n, spec in enumerate(specs, start=1):
        try:
            clean = validate(spec)
        except ActionDefinitionError as exc:
            raise ActionDefinitionError(f"Action {n}{_named(spec)}: {exc} Nothing was stored.") from None
        if clean["name"] in seen:
            raise ActionDefinitionError(f"Action {n}: the name {clean['name']!r} appears twice. Nothing was stored.")
        seen.add(clean["name"])
        checked.append(clean)
    taken = {op.name for op in mcp_operations(ctx, store)} & seen
    if taken:
        raise ActionDefinitionError(f"{', '.join(sorted(taken))} is the name of an MCP tool of this tenant; rename the "
                                    "action. Nothing was stored.")
    now = store.clock.stamp()
    with store.write() as db:
        for clean in checked:
            db.execute("INSERT INTO action_definitions (tenant_id, name, spec, created_at, updated_at) "
                       "VALUES (?, ?, ?, ?, ?) ON CONFLICT (tenant_id, name) DO UPDATE SET spec = excluded.spec, "
                       "updated_at = excluded.updated_at",
                       [ctx.tenant_id, clean["name"], json.dumps(clean, ensure_ascii=False), now, now])
    return [operation_of(clean) for clean in checked]


def _named(spec) -> str:
    return f" ({spec['name']!r})" if isinstance(spec, dict) and isinstance(spec.get("name"), str) else ""


def import_actions(ctx: TenantContext, store: Store, text: str) -> list[Operation]:
    """A JSON file of one action or a list of them; all stored or none."""
    try:
        data = json.loads(text)
    except (json.JSONDecodeError, TypeError) as exc:
        raise ActionDefinitionError(f"The file is not JSON ({exc}). Nothing was stored.") from None
    return import_specs(ctx, store, data if isinstance(data, list) else [data])


def delete_action(ctx: TenantContext, store: Store, name: str) -> None:
    _require_admin(ctx)
    with store.write() as db:
        gone = db.execute("DELETE FROM action_definitions WHERE tenant_id = ? AND name = ?",
                          [ctx.tenant_id, name]).rowcount
    if not gone:
        raise ActionDefinitionError(f"There is no HTTP action {name!r}; list them with `python -m core actions SLUG`.")


def http_actions(ctx: TenantContext, store: Store) -> list[Operation]:
    rows = store.query("SELECT spec FROM action_definitions WHERE tenant_id = ? ORDER BY name", [ctx.tenant_id])
    return [operation_of(json.loads(row["spec"])) for row in rows]


def http_spec(ctx: TenantContext, store: Store, name: str) -> dict | None:
    """One stored definition as its spec dict (the Actions page edits it)."""
    rows = store.query("SELECT spec FROM action_definitions WHERE tenant_id = ? AND name = ?", [ctx.tenant_id, name])
    return json.loads(rows[0]["spec"]) if rows else None

