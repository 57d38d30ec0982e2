"""Tenant HTTP actions (C4): one request per execution, built from the operation's ``config`` (method, URL template,
headers, the auth header whose secret is read from the environment variable the definition names, the optional
state URL), with an ``Idempotency-Key``, a total time limit and a 64 KB cap on what is read back.

Nothing here ever puts the secret into a result, a message, a log line or an exception: the one place it exists is
the header of the request being sent, and anything the service echoes back is scrubbed before it is returned.
"""
from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx

from core.actions.model import MAX_RESULT_BYTES, ActionFault, Execution, Operation, timeout_of
from core.base.config import Settings
from core.tenancy.context import TenantContext

log = logging.getLogger("cobertura.actions.http")

BODY_METHODS = ("POST", "PUT", "PATCH")
METHODS = (*BODY_METHODS, "GET", "DELETE")
MASK = "***"
_PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)\}")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class _Problem(Exception):
    """A request that cannot be built: the Execution status and one sentence saying what to do."""

    def __init__(self, status: str, message: str):
        super().__init__(message)
        self.status, self.message = status, message


@dataclass
class _Request:
    method: str
    url: str
    headers: dict[str, str]
    body: Any = None  # the JSON body of POST/PUT/PATCH; None for GET/DELETE (their params are in the URL)
    secret: str = field(default="", repr=False)
    warnings: list[str] = field(default_factory=list)


def _scalar(name: str, value: Any) -> str:
    """A parameter as the text that goes into a URL or a header."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float, str)):
        return str(value)
    raise _Problem("invalid_params", f"The parameter {name} must be a single value (text or a number) to go into "
                                     "the address of the request; correct it and try again.")


def quote_segment(text: str) -> str:
    """``text`` safe for any place of a URL: every reserved character escaped (``/ ? # %`` and spaces included), and
    a value made only of dots (``.`` or ``..``, which a client would resolve as a path step) escaped too."""
    quoted = quote(text, safe="")
    return quoted.replace(".", "%2E") if quoted and not quoted.strip(".") else quoted


def _fill(template: str, what: str, op: Operation, params: Mapping, customer_id: str | None, settings: Settings,
          used: set[str], in_url: bool, dry: bool) -> str:
    """``template`` with its ``{name}`` placeholders filled in (URL-quoted in a URL); the names used go in ``used``."""

    def one(match: re.Match) -> str:
        name = match.group(1)
        if name == "public_url":
            return settings.endpoint_url
        if name == "customer_id":
            if customer_id is None:
                if dry:
                    return match.group(0)
                raise _Problem("not_identified", f"“{op.title}” needs an identified customer ({{customer_id}} in its "
                                                 f"{what}); it can only run for a customer signed in on the widget.")
            value = str(customer_id)
        elif name in params and params[name] is not None:
            used.add(name)
            value = _scalar(name, params[name])
            if value == "":
                raise _Problem("invalid_params", f"The parameter {name} is empty; ask the customer for it.")
        elif name in (op.parameters.get("properties") or {}):
            raise _Problem("invalid_params", f"The parameter {name} is missing; ask the customer for it.")
        else:
            raise _Problem("config_error", f"The {what} of the action {op.name} uses {{{name}}}, which is not one of "
                                           "its parameters; correct the action's definition.")
        if in_url:
            return quote_segment(value)
        if _CONTROL.search(value):
            raise _Problem("invalid_params", f"A value for the header of the action {op.name} contains a line break "
                                             "or another control character; correct it and try again.")
        return value

    return _PLACEHOLDER.sub(one, template)


def _secret(op: Operation, environ: Mapping[str, str], dry: bool) -> tuple[str, list[str]]:
    """The secret from the environment variable the action names ("" when it names none), read now."""
    env = op.config.get("auth_env") or ""
    if not env:
        return "", []
    secret = environ.get(env, "").strip()
    if secret and not _CONTROL.search(secret):
        return secret, []
    problem = (f"The action {op.name} needs its secret in the environment variable {env}, which is not set in this "
               f"process; set {env} to the key the service expects and restart Cobertura."
               if not secret else f"The environment variable {env} of the action {op.name} contains a line break or "
               f"another control character; set it to the key alone and restart Cobertura.")
    if dry:
        return "", [problem]
    raise _Problem("config_error", problem)


def _build(op: Operation, params: Mapping, customer_id: str | None, settings: Settings, environ: Mapping[str, str],
           state: bool = False, dry: bool = False) -> _Request:
    """The request an execution (or, with ``state``, the state read) sends; raises _Problem when it cannot be built."""
    config = op.config
    method = "GET" if state else str(config.get("method") or "GET").upper()
    if method not in METHODS:
        raise _Problem("config_error", f"The action {op.name} has the method {method!r}; use one of "
                                       f"{', '.join(METHODS)}.")
    what = "state_url" if state else "url"
    template = config.get(what)
    if not isinstance(template, str) or not template.strip():
        raise _Problem("config_error", f"The action {op.name} has no {what}; add one to its definition.")
    used: set[str] = set()
    url = _fill(template.strip(), what, op, params, customer_id, settings, used, True, dry)
    headers = {"Accept": "application/json", "User-Agent": "Cobertura-actions/1"}
    for name, value in (config.get("headers") or {}).items():
        headers[str(name)] = _fill(str(value), "headers", op, params, customer_id, settings, used, False, dry)
    secret, warnings = _secret(op, environ, dry)
    if config.get("auth_env"):
        value = str(config.get("auth_value") or "Bearer {secret}")
        headers[str(config.get("auth_header") or "Authorization")] = value.replace("{secret}", secret or MASK)
    rest = {k: v for k, v in params.items() if k not in used}
    body = None  # a state read asks for what its URL names, nothing else
    if not state and method in BODY_METHODS:
        body = rest
    elif not state and rest:
        url = str(httpx.URL(url).copy_merge_params({k: _query(k, v) for k, v in rest.items() if v is not None}))
    if dry and customer_id is None and "{customer_id}" in template + "".join(map(str, headers.values())):
        warnings.append("{customer_id} is filled in with the identified customer when the action runs.")
    try:
        parsed = httpx.URL(url)
    except httpx.InvalidURL:
        parsed = None
    if parsed is None or parsed.scheme not in ("http", "https") or not parsed.host:
        raise _Problem("config_error", f"The {what} of the action {op.name} is not an http(s) address once filled "
                                       "in; correct the action's definition.")
    return _Request(method, url, headers, body, secret, warnings)


def _query(name: str, value: Any):
    if isinstance(value, list):
        return [_scalar(name, v) for v in value]
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False)
    return _scalar(name, value)


def render_request(op: Operation, params: Mapping, customer_id: str | None, settings: Settings,
                   environ: Mapping[str, str]) -> dict:
    """What executing ``op`` would send, for a dry run: ``{method, url, headers, body, state_url, warnings}`` with the
    secret masked as ``***``. A missing secret or customer is a warning here; anything else raises ActionFault."""
    try:
        request = _build(op, params, customer_id, settings, environ, dry=True)
        state = (_build(op, params, customer_id, settings, environ, state=True, dry=True).url
                 if op.config.get("state_url") else None)
    except _Problem as problem:
        raise ActionFault(problem.message) from None
    headers = dict(request.headers)
    if op.config.get("auth_env"):
        auth = str(op.config.get("auth_header") or "Authorization")
        headers[auth] = str(op.config.get("auth_value") or "Bearer {secret}").replace("{secret}", MASK)
    headers["Idempotency-Key"] = "card-<id> (the card's id, on every execution)"
    return {"method": request.method, "url": request.url, "headers": headers, "body": request.body,
            "state_url": state, "warnings": list(dict.fromkeys(request.warnings))}


def _scrub(value: Any, secret: str) -> Any:
    """``value`` with every occurrence of the secret replaced by ``***`` (strings, keys, nested lists and dicts)."""
    if not secret:
        return value
    if isinstance(value, str):
        return value.replace(secret, MASK)
    if isinstance(value, list):
        return [_scrub(v, secret) for v in value]
    if isinstance(value, dict):
        return {_scrub(k, secret): _scrub(v, secret) for k, v in value.items()}
    return value


def _read(response: httpx.Response, deadline: float, limit: int = MAX_RESULT_BYTES) -> tuple[bytes, bool]:
    """At most ``limit`` bytes of the (decoded) body, and whether there was more; a TimeoutException past the
    deadline (the time limit is for the whole exchange, not for each read)."""
    data = bytearray()
    for chunk in response.iter_bytes():
        data += chunk
        if len(data) > limit:
            return bytes(data[:limit]), True
        if time.monotonic() > deadline:
            raise httpx.ReadTimeout("the whole answer took longer than the action's time limit")
    return bytes(data), False


def _body(response: httpx.Response, raw: bytes, truncated: bool, secret: str) -> tuple[Any, bool]:
    """The answer as JSON when it is JSON (and whole); otherwise ``{"text": ...}``; None when empty; and whether it
    was JSON."""
    try:
        text = raw.decode(response.encoding or "utf-8", errors="replace")
    except LookupError:
        text = raw.decode("utf-8", errors="replace")
    text = _scrub(text, secret)
    if not text.strip():
        return None, False
    kind = response.headers.get("content-type", "").lower()
    if not truncated and ("json" in kind or text.lstrip()[:1] in ("{", "[")):
        try:
            return _scrub(json.loads(text), secret), True
        except ValueError:
            pass
    return ({"text": text, "truncated": True} if truncated else {"text": text}), False


def _detail(body: Any) -> str:
    """The service's own words about a refusal, when its answer has some (``error.message``, ``detail``...)."""
    candidates = []
    if isinstance(body, dict):
        error = body.get("error")
        candidates += [error.get("message") if isinstance(error, dict) else error, body.get("message"),
                       body.get("detail"), body.get("text")]
    text = next((c for c in candidates if isinstance(c, str) and c.strip()), "")
    text = " ".join(text.split())
    return text if len(text) <= 300 else text[:297] + "..."


def _refusal(op: Operation, status: int, body: Any, location: str = "") -> str:
    """One sentence for people and the model about an answer that is not a success."""
    said = _detail(body)
    said = f": {said.rstrip('.')}" if said else ""
    if status >= 500:
        return (f"The service behind “{op.title}” failed (HTTP {status}){said}; tell the customer it is not "
                "available right now and to try again later.")
    if 300 <= status < 400:
        where = f" to {location}" if location else ""
        return (f"The service behind “{op.title}” answered with a redirect (HTTP {status}{where}); the action's "
                "address must be the final one, so tell the customer it is not available right now.")
    if status in (401, 407):
        return (f"The service behind “{op.title}” did not accept Cobertura's credentials (HTTP {status}){said}; tell "
                "the customer it is not available right now (the operator must check the action's secret).")
    return (f"The service behind “{op.title}” refused the request (HTTP {status}){said}; tell the customer what it "
            "said, and do not retry with the same values.")


class HttpExecutor:
    """The executor of ``OpSource.HTTP`` operations. ``client_factory()`` builds the ``httpx.Client`` (one per
    executor, made on first use); ``environ`` is where the secrets named by ``auth_env`` are read, at each call."""

    def __init__(self, settings: Settings, client_factory: Callable[[], httpx.Client] | None = None,
                 environ: Mapping[str, str] = os.environ):
        self.settings, self.environ = settings, environ
        self._factory = client_factory or (lambda: httpx.Client(follow_redirects=False))
        self._client: httpx.Client | None = None
        self._lock = threading.Lock()

    def client(self) -> httpx.Client:
        with self._lock:
            if self._client is None:
                self._client = self._factory()
            return self._client

    def close(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
                self._client = None

    def current_state(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None) -> dict | None:
        """The state the operation re-checks (a GET of ``state_url``), or None when it has none; ActionFault when the
        state cannot be read (unreachable, a refusal, not a JSON object)."""
        if not op.config.get("state_url"):
            return None
        try:
            request = _build(op, params, customer_id, self.settings, self.environ, state=True)
        except _Problem as problem:
            raise ActionFault(problem.message) from None
        result = self._send(op, request, "state")
        if not result.ok:
            raise ActionFault(f"The current state for “{op.title}” could not be read. {result.message}")
        return result.body

    def execute(self, ctx: TenantContext, op: Operation, params: dict, customer_id: str | None,
                idempotency_key: str) -> Execution:
        """Send the operation's request once, with ``Idempotency-Key``; a failure is an ``ok=False`` Execution."""
        try:
            request = _build(op, params, customer_id, self.settings, self.environ)
        except _Problem as problem:
            return Execution(False, problem.status, None, problem.message)
        request.headers["Idempotency-Key"] = idempotency_key
        return self._send(op, request, "execute")

    def _send(self, op: Operation, request: _Request, what: str) -> Execution:
        """One exchange; never raises."""
        limit = timeout_of(op.config)
        started = time.monotonic()
        try:
            result = self._exchange(op, request, limit, started, what == "state")
        except httpx.TimeoutException:
            unknown = " It is not known whether the change was made; do not say it was." if (
                what == "execute" and request.method != "GET") else ""
            seconds = f"{limit:g} second{'' if limit == 1 else 's'}"
            result = Execution(False, "timeout", None, f"The service behind “{op.title}” did not answer within "
                               f"{seconds}; tell the customer it is not available right now.{unknown}")
        except httpx.ConnectError:
            result = Execution(False, "unreachable", None, f"The service behind “{op.title}” could not be reached; "
                               "tell the customer it is not available right now and to try again later.")
        except httpx.TransportError:
            result = Execution(False, "unreachable", None, f"The connection to the service behind “{op.title}” broke "
                               "before it answered; tell the customer it is not available right now.")
        except Exception as exc:  # a fault of ours or of the client; its text may hold request details: not shown
            log.warning("action %s (%s): %s", op.name, what, type(exc).__name__)
            result = Execution(False, "error", None, f"“{op.title}” could not be run ({type(exc).__name__}); tell "
                               "the customer it is not available right now.")
        log.info("action %s %s %s -> %s in %.2fs", op.name, what, request.method, result.status,
                 time.monotonic() - started)
        return result

    def _exchange(self, op: Operation, request: _Request, limit: float, started: float, state: bool) -> Execution:
        kwargs: dict[str, Any] = {"headers": request.headers, "timeout": httpx.Timeout(limit)}
        if request.body is not None:
            kwargs["content"] = json.dumps(request.body, ensure_ascii=False).encode("utf-8")
            kwargs["headers"] = {**request.headers, "Content-Type": "application/json"}
        with self.client().stream(request.method, request.url, **kwargs) as response:
            raw, truncated = _read(response, started + limit)
            body, is_json = _body(response, raw, truncated, request.secret)
            status, location = response.status_code, response.headers.get("location", "")
        note = "The answer was longer than 64 KB; only its beginning was kept." if truncated else ""
        if 200 <= status < 300 and state and not (is_json and isinstance(body, dict)):
            return Execution(False, "not_json", body, f"The state URL of “{op.title}” did not answer with a JSON "
                             "object, so the change cannot be checked; tell the customer it is not available now.")
        if 200 <= status < 300:
            return Execution(True, "ok", body, note)
        return Execution(False, f"http_{status}", body, _refusal(op, status, body, _scrub(location, request.secret)))
