"""MCP actions: the tools of a tenant's MCP server (streamable HTTP), through the official ``mcp`` SDK.

``discover`` lists a server's tools for ``definitions.connect_mcp`` (``readOnlyHint`` -> ``read_only``);
``McpExecutor`` runs one tool of an operation. Each exchange opens its own connection (``mcp.Client`` over
``streamable_http_client`` with an ``httpx2.AsyncClient`` carrying the auth header) on a fresh event loop in a
private thread, so it works from a worker thread and from a thread whose own loop is running (FastAPI,
Streamlit). The secret is read from the environment variable the config names at call time and never appears in
a result or a message. The idempotency key travels as the ``Idempotency-Key`` header of every HTTP request of the
exchange and as ``_meta.idempotencyKey`` of the ``tools/call`` request (MCP has no standard field for it).

The SDK (about a second to import) is imported on first use, not when the runtime starts.
"""
from __future__ import annotations

import json
import logging
import os
import threading
from collections.abc import Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from core.actions.model import (
    DEFAULT_TIMEOUT,
    MAX_RESULT_BYTES,
    MAX_TIMEOUT,
    ActionFault,
    Execution,
    Operation,
    timeout_of,
)

log = logging.getLogger(__name__)

MAX_PAGES = 20  # tools/list pages followed at most (a paginator that never ends cannot hang a connect)
MAX_TOOLS = 500
MAX_DESCRIPTION = 4000
IDEMPOTENCY_META = "idempotencyKey"  # _meta key of tools/call (an unprefixed name: not reserved by MCP)
CUSTOMER_META = "customerId"  # _meta key naming the identified customer the call is for, when there is one
_GRACE = 5.0  # the private thread gets this long beyond the exchange's own deadline


def auth_headers(config: Mapping, environ: Mapping[str, str]) -> dict[str, str]:
    """The auth header of an MCP server's ``config`` (``auth_header``, default ``Authorization``; ``auth_value``,
    default ``Bearer {secret}``), its secret read now from the variable ``auth_env`` names; ``{}`` without
    ``auth_env``. Raises ActionFault naming the variable when it is not set."""
    name = str(config.get("auth_env") or "").strip()
    if not name:
        return {}
    server = config.get("server") or "this MCP server"
    secret = environ.get(name, "")
    if not secret:
        raise ActionFault(f"The MCP server {server} needs its secret in the environment variable {name}, which is "
                          "not set where Cobertura runs: set it and restart Cobertura; nothing was sent.")
    value = str(config.get("auth_value") or "Bearer {secret}")
    if "{secret}" not in value:
        raise ActionFault(f"The auth value of the MCP server {server} must contain {{secret}} where the secret of "
                          f"{name} goes (e.g. \"Bearer {{secret}}\"): fix it and connect the server again.")
    return {str(config.get("auth_header") or "Authorization"): value.replace("{secret}", secret)}


def endpoint(url: str) -> str:
    """``url`` if it is an http(s) address with a host; otherwise the error says what a valid one looks like."""
    parts = urlsplit(str(url or "").strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ActionFault(f"{url!r} is not the address of an MCP server: give its streamable HTTP endpoint, an "
                          "http:// or https:// URL such as https://mcp.example.com/mcp.")
    return parts.geturl()


def where(url: str) -> str:
    """The host (and port) of ``url``, never its userinfo: how messages name a server's address."""
    parts = urlsplit(url)
    return f"{parts.hostname}:{parts.port}" if parts.port else str(parts.hostname)


# == One exchange on a private event loop =====================================================================

class _Aborted(Exception):
    """The private thread ended by a BaseException (not an error of the exchange itself)."""


@dataclass
class _Trace:
    """What an exchange saw: the status of its last POST and whether ``tools/call`` was sent."""

    last_post: int = 0
    sent: bool = False


def _run(job: Callable[[], Awaitable[Any]], limit: float) -> Any:
    """Run the coroutine function ``job`` on a fresh event loop in a private thread; its result, or its error."""
    import anyio

    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = anyio.run(job)
        except BaseException as exc:  # handed to the caller's thread, which classifies it
            box["error"] = exc

    thread = threading.Thread(target=target, name="cobertura-mcp", daemon=True)
    thread.start()
    thread.join(limit + _GRACE)
    if thread.is_alive():
        raise TimeoutError(f"the exchange outlived its {limit:g} s deadline")
    error = box.get("error")
    if error is not None and not isinstance(error, Exception):
        raise _Aborted(f"the exchange was aborted ({type(error).__name__})") from error
    if error is not None:
        raise error
    return box.get("value")


@asynccontextmanager
async def _client(url: str, headers: Mapping[str, str], limit: float, trace: _Trace):
    """An ``mcp.Client`` connected to ``url`` (server/discover, or the initialize handshake for older servers)."""
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp_types import Implementation

    async def note(response) -> None:
        if response.request.method == "POST":
            trace.last_post = response.status_code

    async with httpx2.AsyncClient(headers=dict(headers), timeout=httpx2.Timeout(limit),
                                  event_hooks={"response": [note]}) as http:
        async with Client(streamable_http_client(url, http_client=http), read_timeout_seconds=limit, cache=None,
                          client_info=Implementation(name="cobertura", version="1")) as client:
            yield client


async def _tools(client) -> list:
    tools, cursor = [], None
    for _ in range(MAX_PAGES):
        page = await client.list_tools(cursor=cursor)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor or len(tools) >= MAX_TOOLS:
            break
    return tools[:MAX_TOOLS]


def _leaves(exc: BaseException):
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            yield from _leaves(inner)
    else:
        yield exc


#: the errors the streamable HTTP transport makes up for an HTTP error without a JSON-RPC body
_STAND_INS = frozenset({"Server returned an error response", "Not Found", "Session terminated"})


@dataclass(frozen=True)
class _Failure:
    status: str  # unreachable | timeout | http_<code> | error | bad_result
    fact: str  # what the server did, after its name ("did not answer within 10 s"); never remote text
    detail: str = ""  # the server's own words (remote text: for the result body, never the message)


def _failure(exc: BaseException, trace: _Trace, limit: float) -> _Failure:
    """What went wrong in an exchange, from the (grouped) exceptions the SDK raised and the HTTP statuses seen."""
    import httpx2
    from mcp.shared.exceptions import MCPError
    from mcp_types import REQUEST_TIMEOUT

    leaves = list(_leaves(exc))
    if any(isinstance(x, TimeoutError | httpx2.TimeoutException)
           or (isinstance(x, MCPError) and x.code == REQUEST_TIMEOUT) for x in leaves):
        return _Failure("timeout", f"did not answer within {limit:g} s")
    for x in leaves:
        if isinstance(x, httpx2.TransportError):
            return _Failure("unreachable", f"could not be reached ({str(x) or type(x).__name__})")
    if trace.last_post in (401, 403):
        return _Failure(f"http_{trace.last_post}", f"answered HTTP {trace.last_post} (it refused the credentials)")
    errors = [x for x in leaves if isinstance(x, MCPError)]
    for x in errors:  # the server's own JSON-RPC error (at any HTTP status), not the transport's stand-in for one
        if x.message not in _STAND_INS:
            return _Failure("error", f"answered with the protocol error {x.code}", x.message[:2000])
    if trace.last_post >= 400:
        return _Failure(f"http_{trace.last_post}", f"answered HTTP {trace.last_post}")
    for x in errors:
        return _Failure("error", f"answered with the protocol error {x.code}", x.message[:2000])
    for x in leaves:
        if isinstance(x, RuntimeError) and ("schema" in str(x) or "structured content" in str(x)):
            # ClientSession.validate_tool_result: the tool ran, its result does not fit its declared output schema
            return _Failure("bad_result", "returned a result that does not match the tool's declared output schema",
                            str(x)[:2000])
    log.warning("MCP exchange failed unexpectedly", exc_info=exc)
    return _Failure("error", f"could not be used ({type(leaves[0]).__name__})")


# == Discovery ================================================================================================

def _tool_dict(tool) -> dict:
    notes = tool.annotations
    read_only = notes.read_only_hint if notes is not None else None
    if notes is not None and notes.destructive_hint:
        read_only = False  # a destructive tool is never a read, whatever else it claims
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else {}
    title = tool.title or (notes.title if notes is not None else None) or ""
    return {"name": tool.name, "title": title, "description": (tool.description or "")[:MAX_DESCRIPTION],
            "input_schema": dict(schema) or {"type": "object", "properties": {}}, "read_only": read_only}


def discover(url: str, headers: dict, timeout: float = DEFAULT_TIMEOUT) -> list[dict]:
    """The tools the MCP server at ``url`` offers, as ``[{"name", "title", "description", "input_schema",
    "read_only": True|False|None}]`` (``read_only`` from ``annotations.readOnlyHint``, False for a destructive
    tool, None when the server gives no hint). Raises ActionFault saying what failed and what to check."""
    url = endpoint(url)
    limit = min(max(float(timeout), 1.0), MAX_TIMEOUT)
    trace = _Trace()

    async def job() -> list:
        import anyio

        with anyio.fail_after(limit):
            async with _client(url, headers or {}, limit, trace) as client:
                return await _tools(client)

    try:
        tools = _run(job, limit)
    except Exception as exc:
        failure = _failure(exc, trace, limit)
        hint = {"unreachable": "check the URL and that the server is running",
                "timeout": "check that the server is running and answers quickly",
                "http_401": "check the secret and the auth header", "http_403": "check the secret and the auth header",
                "http_404": "check the URL: it must be the server's MCP endpoint, often ending in /mcp"}
        said = f" ({failure.detail[:200]})" if failure.detail else ""
        raise ActionFault(f"The MCP server at {where(url)} {failure.fact}{said}, so its tools could not be listed: "
                          f"{hint.get(failure.status, 'check the URL and the server')}, then connect again.") from None
    return [_tool_dict(tool) for tool in tools]


# == Execution ================================================================================================

def _block_text(block) -> str:
    kind = getattr(block, "type", "")
    if kind == "text":
        return block.text
    if kind == "resource":
        resource = block.resource
        return getattr(resource, "text", None) or f"[resource {resource.uri}]"
    if kind == "resource_link":
        return f"[link {block.uri}]"
    return f"[{kind or 'content'} omitted]"


def _capped(body: Any) -> tuple[Any, bool]:
    """``body`` if it fits in MAX_RESULT_BYTES as JSON; else its text cut to that size (and True)."""
    text = body if isinstance(body, str) else json.dumps(body, ensure_ascii=False, default=str)
    data = text.encode("utf-8")
    if len(data) <= MAX_RESULT_BYTES:
        return body, False
    return data[:MAX_RESULT_BYTES].decode("utf-8", errors="ignore"), True


def result_body(result) -> tuple[Any, bool]:
    """A ``CallToolResult`` as data: its structured content when present, else its text contents joined (a single
    text that is a JSON object or list is parsed); capped at 64 KB. Returns (body, truncated)."""
    if result.structured_content is not None:
        return _capped(result.structured_content)
    texts = [_block_text(block) for block in result.content]
    if len(texts) == 1:
        try:
            parsed = json.loads(texts[0])
        except ValueError:
            parsed = None
        if isinstance(parsed, dict | list):
            return _capped(parsed)
    return _capped("\n".join(texts))


def _masked(execution: Execution, secret: str) -> Execution:
    """``execution`` with every occurrence of ``secret`` replaced by *** (a server may echo what it received)."""
    if not secret:
        return execution
    dumped = json.dumps(execution.body, ensure_ascii=False, default=str)
    escaped = json.dumps(secret, ensure_ascii=False)[1:-1]
    if escaped not in dumped and secret not in execution.message:
        return execution
    return Execution(execution.ok, execution.status, json.loads(dumped.replace(escaped, "***")),
                     execution.message.replace(secret, "***"))


def _failed(failure: _Failure, server: str, tool: str, trace: _Trace, auth_env: str) -> Execution:
    fate = (f"whether {tool} ran is unknown: tell the person it could not be confirmed and do not retry it"
            if trace.sent else f"{tool} was not run: tell the person the service is unavailable right now")
    if failure.status in ("http_401", "http_403"):
        fate += f"; an administrator must check the secret in {auth_env or 'the server settings'}"
    elif failure.status == "bad_result":
        fate = f"{tool} ran but its result could not be read: tell the person so and do not retry it"
    elif failure.status == "error":
        fate = (f"{tool} did not run (the server's words are in the result): tell the person it did not work "
                "and do not retry it with the same parameters")
    return Execution(False, failure.status, {"error": failure.detail} if failure.detail else None,
                     f"The MCP server {server} {failure.fact}; {fate}.")


def _answer(result, server: str, tool: str) -> Execution:
    body, truncated = result_body(result)
    if result.is_error:
        return Execution(False, "tool_error", body, f"The MCP server {server} reported that {tool} failed (its "
                         "error text is in the result): tell the person it did not work; do not retry it with the "
                         "same parameters.")
    cut = " The result was longer than 64 KB and was cut." if truncated else ""
    return Execution(True, "ok", body, f"The MCP server {server} answered {tool}.{cut}")


class McpExecutor:
    """Runs MCP operations: ``op.config`` = ``server``, ``url``, ``tool``, optional ``auth_header``,
    ``auth_value``, ``auth_env``, ``timeout`` (seconds, default 10, at most 30)."""

    def __init__(self, settings, environ: Mapping[str, str] = os.environ):
        self.settings = settings
        self.environ = environ

    def current_state(self, ctx, op: Operation, params: dict, customer_id: str | None) -> dict | None:
        """MCP tools have no state URL: nothing to re-check before executing."""
        return None

    def execute(self, ctx, op: Operation, params: dict, customer_id: str | None, idempotency_key: str) -> Execution:
        """Call ``op.config["tool"]`` with ``params`` as frozen; never raises (a failure is ok=False)."""
        config = op.config or {}
        server, tool = str(config.get("server") or op.name), str(config.get("tool") or "")
        try:
            url = endpoint(config.get("url", ""))
            if not tool:
                raise ActionFault(f"The operation {op.name} names no MCP tool: an administrator should refresh the "
                                  f"MCP server {server}; nothing was sent.")
            headers = auth_headers({**config, "server": server}, self.environ)
        except ActionFault as exc:
            return Execution(False, "config_error", None, str(exc))
        auth_env = str(config.get("auth_env") or "").strip()
        secret = self.environ.get(auth_env, "") if auth_env else ""
        meta = {IDEMPOTENCY_META: idempotency_key, **({CUSTOMER_META: customer_id} if customer_id else {})}
        try:
            execution = self._call(url, {**headers, "Idempotency-Key": idempotency_key}, server, tool,
                                   dict(params), meta, timeout_of(config), auth_env)
        except Exception:  # a fault of ours; the caller still gets an answer, never an exception
            log.exception("MCP execution of %s failed", op.name)
            execution = Execution(False, "error", None, f"Running {tool} on the MCP server {server} failed inside "
                                  "Cobertura: tell the person it could not be done now.")
        return _masked(execution, secret)

    def _call(self, url: str, headers: dict, server: str, tool: str, params: dict, meta: dict, limit: float,
              auth_env: str) -> Execution:
        trace = _Trace()

        async def job():
            import anyio

            with anyio.fail_after(limit):
                async with _client(url, headers, limit, trace) as client:
                    if tool not in {offered.name for offered in await _tools(client)}:
                        return None
                    trace.sent = True
                    return await client.call_tool(tool, params, meta=meta)

        try:
            result = _run(job, limit)
        except Exception as exc:
            return _failed(_failure(exc, trace, limit), server, tool, trace, auth_env)
        if result is None:
            return Execution(False, "tool_missing", None, f"The MCP server {server} no longer offers the tool {tool}; "
                             "nothing was run: tell the person it is unavailable; an administrator should refresh "
                             "the server's tools.")
        return _answer(result, server, tool)
