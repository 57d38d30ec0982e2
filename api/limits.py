"""A cap on request bodies, enforced while they arrive (a huge or endless body is cut off at the cap, 413)."""
from __future__ import annotations

import json

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from api.errors import envelope

MAX_BODY_BYTES = 32 * 1024


class BodyTooLarge(Exception):
    pass


class BodyLimit:
    """ASGI middleware: refuse bodies over ``limit`` bytes with the 413 envelope, before any handler runs."""

    def __init__(self, app: ASGIApp, limit: int = MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.limit:
            await self._refuse(send)
            return
        seen = 0
        started = False

        async def limited() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.limit:
                    raise BodyTooLarge()
            return message

        async def tracking(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, limited, tracking)
        except BodyTooLarge:
            if not started:
                await self._refuse(send)

    async def _refuse(self, send: Send) -> None:
        body = json.dumps(envelope("too_large", f"The request body is over {self.limit // 1024} KB; a chat message is "
                                   "at most 2,000 characters.")).encode()
        await send({"type": "http.response.start", "status": 413,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
        await send({"type": "http.response.body", "body": body})
