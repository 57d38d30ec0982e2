"""A real local HTTP service for the card tests (uvicorn in a thread of the test process, ``tests.servers.in_thread``)
and the tenant world they point at it.

The shop has orders with a state URL (``GET /orders/{id}/state``), a write endpoint (``POST /orders/{id}/address``)
that holds each request for ``hold`` seconds so concurrent clicks overlap, and a write endpoint without a state URL
(``POST /tickets/{id}/notes``). It counts every request it receives, by method and path (thread-safe). ``on_state``,
when set, runs inside the state handler: a card's state is read again after the click claimed the card and before it
executes, so a test can flip a kill switch exactly between the approval and the execution.
"""
from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from tests.servers import in_thread

ORDERS = {"1001": {"customer": "alice", "status": "pending", "address": "Calle Mayor 1, Madrid"},
          "1002": {"customer": "alice", "status": "processing", "address": "Rua Augusta 10, Lisboa"},
          "2001": {"customer": "bob", "status": "pending", "address": "Gran Vía 5, Madrid"}}


class Shop:
    """The service and what it received: ``requests`` [(method, path)], ``writes`` (one dict per write request:
    path, order or ticket, JSON body, Idempotency-Key, X-Customer), ``state_reads``."""

    def __init__(self, hold: float = 0.0) -> None:
        self.hold = hold
        self.on_state: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self.url = ""
        self.reset()

    def reset(self) -> None:
        with self._lock:
            self.orders = copy.deepcopy(ORDERS)
            self.requests: list[tuple[str, str]] = []
            self.writes: list[dict] = []
            self.state_reads = 0
        self.on_state = None

    def state(self, order_id: str) -> dict | None:
        with self._lock:
            order = self.orders.get(order_id)
            return None if order is None else {"order_id": order_id, "status": order["status"],
                                               "address": order["address"]}

    def set(self, order_id: str, **fields) -> None:
        """Change an order behind every card's back."""
        with self._lock:
            self.orders[order_id].update(fields)

    def write_count(self) -> int:
        with self._lock:
            return len(self.writes)

    def non_state_requests(self) -> list[tuple[str, str]]:
        """Every request that was not a GET of a state URL (what a write would have sent)."""
        with self._lock:
            return [(m, p) for m, p in self.requests if not (m == "GET" and p.endswith("/state"))]

    # -- the app ------------------------------------------------------------------------------------------
    async def _state(self, request: Request) -> JSONResponse:
        with self._lock:
            self.state_reads += 1
        if self.on_state is not None:
            await run_in_threadpool(self.on_state)
        found = self.state(request.path_params["order_id"])
        if found is None:
            return JSONResponse({"error": "no such order"}, status_code=404)
        return JSONResponse(found)

    async def _write(self, request: Request, what: str) -> dict:
        body = await request.json() if (await request.body()) else None
        seen = {"path": request.url.path, what: request.path_params["key"], "body": body,
                "idempotency_key": request.headers.get("idempotency-key"),
                "customer": request.headers.get("x-customer")}
        with self._lock:
            self.writes.append(seen)
        if self.hold:
            await asyncio.sleep(self.hold)
        return seen

    async def _address(self, request: Request) -> JSONResponse:
        seen = await self._write(request, "order_id")
        with self._lock:
            order = self.orders.get(seen["order_id"])
            if order is None:
                return JSONResponse({"error": "no such order"}, status_code=404)
            order["address"] = (seen["body"] or {}).get("address", order["address"])
            return JSONResponse({"order_id": seen["order_id"], "address": order["address"]})

    async def _note(self, request: Request) -> JSONResponse:
        seen = await self._write(request, "ticket_id")
        return JSONResponse({"ticket_id": seen["ticket_id"], "noted": True})

    async def _other(self, request: Request) -> JSONResponse:
        return JSONResponse({"error": "not found"}, status_code=404)

    def app(self):
        inner = Starlette(routes=[
            Route("/orders/{order_id}/state", self._state, methods=["GET"]),
            Route("/orders/{key}/address", self._address, methods=["POST"]),
            Route("/tickets/{key}/notes", self._note, methods=["POST"]),
            Route("/{rest:path}", self._other, methods=["GET", "POST", "PUT", "PATCH", "DELETE"]),
        ])

        async def counted(scope, receive, send):
            if scope["type"] == "http":
                with self._lock:
                    self.requests.append((scope["method"], scope["path"]))
            await inner(scope, receive, send)

        return counted


@contextmanager
def shop_server(hold: float = 0.0) -> Iterator[Shop]:
    shop = Shop(hold)
    with in_thread(shop.app()) as base:
        shop.url = base
        yield shop


# -- the HTTP actions of the tenant, pointing at the shop -----------------------------------------------------
def address_action(base: str, timeout: float = 10) -> dict:
    """A write with a state URL and a state schema (only an order not shipped yet may change)."""
    return {"name": "change_delivery_address", "title": "Change the delivery address",
            "description": "Change the delivery address of one of the customer's orders that has not shipped.",
            "kind": "write", "method": "POST", "url": base + "/orders/{order_id}/address",
            "parameters": {"type": "object", "properties": {
                "order_id": {"type": "string", "pattern": "^[0-9]{4}$", "title": "order number"},
                "address": {"type": "string", "minLength": 5, "maxLength": 200, "title": "new address"}},
                "required": ["order_id", "address"], "additionalProperties": False},
            "examples": ["Change the delivery address of order 1001 to Calle Nueva 2"],
            "headers": {"X-Customer": "{customer_id}"}, "state_url": base + "/orders/{order_id}/state",
            "state_schema": {"type": "object", "properties": {"status": {"enum": ["pending", "processing"]}},
                             "required": ["status"]}, "timeout": timeout}


def note_action(base: str) -> dict:
    """A write without a state URL: nothing to re-check, only the card and the switches guard it."""
    return {"name": "add_ticket_note", "title": "Add a note to a ticket",
            "description": "Add a note to one of the customer's support tickets.", "kind": "write", "method": "POST",
            "url": base + "/tickets/{ticket_id}/notes",
            "parameters": {"type": "object", "properties": {
                "ticket_id": {"type": "string", "pattern": "^T-[0-9]{1,6}$"},
                "text": {"type": "string", "minLength": 1, "maxLength": 500}},
                "required": ["ticket_id", "text"]},
            "headers": {"X-Customer": "{customer_id}"}}


def status_action(base: str) -> dict:
    """A read the anonymous widget may use (identified_only false): the state URL as live data."""
    return {"name": "order_status", "title": "Order status", "description": "The status of an order.",
            "kind": "read", "method": "GET", "url": base + "/orders/{order_id}/state", "identified_only": False,
            "parameters": {"type": "object", "properties": {"order_id": {"type": "string", "pattern": "^[0-9]{4}$"}},
                           "required": ["order_id"]}}


class Recording:
    """An executor that records every call before passing it to the real one: what ran is what was approved."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self._lock = threading.Lock()
        self.executed: list[dict] = []
        self.states = 0

    def current_state(self, ctx, op, params, customer_id):
        with self._lock:
            self.states += 1
        return self.inner.current_state(ctx, op, params, customer_id)

    def execute(self, ctx, op, params, customer_id, idempotency_key):
        with self._lock:
            self.executed.append({"operation": op.name, "params": copy.deepcopy(params), "customer_id": customer_id,
                                  "key": idempotency_key})
        return self.inner.execute(ctx, op, params, customer_id, idempotency_key)
