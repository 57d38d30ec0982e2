"""``POST /v1/chat`` (P2-P3): one question in, a stream of server-sent events out; and the staff replies of
a handed-off conversation, for the widget to poll.

The turn runs in a worker thread (the agent, the tools and the stores are synchronous); its progress
(``provider``, ``tool``) is forwarded as it happens, the answer only once the gate has passed it. When the
client goes away the turn is told to stop before its next provider round or tool call.
"""
from __future__ import annotations

import asyncio
import json
import logging
from typing import AsyncIterator

from fastapi import APIRouter, Depends, Query, Request
from pydantic import BaseModel, ConfigDict, Field
from sse_starlette import EventSourceResponse

from api.errors import ApiError, ErrorEnvelope
from api.events import EVENTS, done_payload, turn_events
from api.identity import client_address, visitor
from api.ratelimit import enforce
from core.agent.cancel import Cancelled, CancelToken
from core.base.language import detect
from core.channels import conversations, handoff
from core.channels.turn import Admitted
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext

log = logging.getLogger("api")
router = APIRouter()
PING_SECONDS = 15
_RESULT, _FAILED = object(), object()  # what the turn's thread posts last (never an event name)


class ChatRequest(BaseModel):
    """A visitor's message. Any other field (a tenant id, a customer id) is ignored: they come from the headers."""

    model_config = ConfigDict(extra="ignore")
    message: str = Field(description="The visitor's question, at most 2,000 characters (longer answers 413).",
                         examples=["¿Cuánto tarda un envío a Canarias?"])
    conversation_id: str | None = Field(None, max_length=64, pattern=r"^[A-Za-z0-9_-]+$",
                                        description="The id from the previous turn's done event; omit to start one.")


class Reply(BaseModel):
    id: int
    at: str
    text: str


class Replies(BaseModel):
    replies: list[Reply]


_ERRORS = {status: {"model": ErrorEnvelope, "description": text} for status, text in (
    (400, "The body is not valid JSON"),
    (401, "Missing or unknown site key, or an invalid customer token"),
    (403, "The tenant has not enabled this channel"),
    (404, "No such conversation for this visitor"),
    (413, "The message is over 2,000 characters, or the body over 32 KB (no model call is made)"),
    (422, "The body is not a valid request"),
    (429, "Too many requests for this site key or address; see Retry-After"))}
_STREAM_DOC = {200: {"description": "Server-sent events: provider, tool, verify, citations, text, rendered {html: "
                     "the whole text as safe HTML, a subset of markdown}, section, card {id, operation, title, "
                     "preview: [{label, value, before?}], params, expires_at, status: a change the visitor approves "
                     "or rejects with POST /v1/cards/{id}/approve|reject}, booking_window, handoff, followups, error, "
                     "and exactly one terminal done {truncated, status, conversation_id, language (of the answer), "
                     "usage, turn_id? (the recorded turn: rate it with POST /v1/conversations/"
                     "{conversation_id}/turns/{turn_id}/feedback), missing?}. status is answered, partial (the "
                     "material covers the topic, not the point asked: the text's first paragraph says what it does "
                     "not mention, named in missing; the rest is cited), abstained, handoff, clarify, card (a change "
                     "waits for the visitor's Approve; identified customers only) or error. A stream that ends "
                     "without done was cut.",
                     "content": {"text/event-stream": {"schema": {
                         "type": "object", "required": ["event", "data"], "properties": {
                             "event": {"type": "string", "enum": list(EVENTS)},
                             "data": {"type": "string", "contentMediaType": "application/json",
                                      "description": "the event's payload, a JSON object"}}}}}}}


@router.post("/v1/chat", response_class=EventSourceResponse, responses={**_STREAM_DOC, **_ERRORS},
             summary="Ask the agent; the answer streams as server-sent events")
def chat(body: ChatRequest, request: Request, ctx: TenantContext = Depends(visitor)) -> EventSourceResponse:
    state = request.app.state
    enforce(state.ip_limiter, client_address(request), "address", "questions")
    enforce(state.key_limiter, ctx.tenant_slug, "site", "questions")
    store = state.rt.store
    if body.conversation_id:  # ownership before admission: a foreign id answers like a missing one, always
        _own_conversation(ctx, store, body.conversation_id)
    try:
        admitted = state.rt.turns.admit(ctx, body.message, ctx.channel, body.conversation_id)
    except conversations.MessageTooLong as exc:
        raise ApiError(413, "message_too_long", str(exc)) from None
    except conversations.ConversationError as exc:
        raise ApiError(422, "empty_message", str(exc)) from None
    except tenant_settings.ChannelDisabled:
        raise ApiError(403, "channel_disabled", "This business has switched its website chat off for now.") from None
    message = admitted.message
    if body.conversation_id:
        convo = admitted.conversation
        if convo is None:  # deleted between the two reads: still the visitor's own answer for a missing one
            raise _not_found()
        _log_question(ctx, store, convo.id, message)
    else:
        with store.write():  # one transaction for both: every write waits for SQLite's single writer
            convo = conversations.start(ctx, store, ctx.channel)
            _log_question(ctx, store, convo.id, message)
        admitted.conversation = convo
    return EventSourceResponse(_stream(request, ctx, admitted), ping=PING_SECONDS,
                               headers={"Cache-Control": "no-store"})


def _not_found() -> ApiError:
    return ApiError(404, "conversation_not_found", "That conversation does not exist for this visitor; start a "
                    "new one (send no conversation_id).")


def _own_conversation(ctx: TenantContext, store, conversation_id: str) -> conversations.Conversation:
    """The visitor's own conversation, or the 404 of a missing one: another tenant's, another customer's and
    another channel's conversation all answer exactly so, before any setting of the tenant is consulted."""
    convo = conversations.get(ctx, store, conversation_id)
    if convo is None or convo.channel != ctx.channel or (convo.customer_id or None) != (ctx.customer_id or None):
        raise _not_found()
    return convo


def _log_question(ctx: TenantContext, store, conversation_id: str, message: str) -> None:
    try:  # best effort: losing a log row must never cost the visitor a turn
        conversations.log_question(ctx, store, conversation_id, ctx.channel, detect(message), message)
    except Exception:
        log.exception("question log write failed")


def _sse(name: str, data: dict) -> dict:
    return {"event": name, "data": json.dumps(data, ensure_ascii=False)}


async def _stream(request: Request, ctx: TenantContext, admitted: Admitted) -> AsyncIterator[dict]:
    state = request.app.state
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()
    cancel = CancelToken()

    def post(item) -> None:
        try:
            loop.call_soon_threadsafe(queue.put_nowait, item)
        except RuntimeError:  # the server is shutting down: nobody is listening any more
            pass

    def work() -> None:
        """The turn, in a worker thread: its progress, then its result (or its exception), through one queue."""
        try:
            agent = state.agent_for(ctx)
            post((_RESULT, state.rt.turns.run_admitted(ctx, agent, admitted, cancelled=cancel,
                                                        on_event=lambda name, data: post((name, data)))))
        except BaseException as exc:  # handed to the stream below
            post((_FAILED, exc))

    loop.run_in_executor(state.executor, work)
    try:
        while True:
            name, data = await queue.get()
            if name is _RESULT:
                for event in turn_events(data):
                    yield _sse(*event)
                return
            if name is _FAILED:
                if isinstance(data, Cancelled):
                    return
                log.error("turn failed", exc_info=data)
                yield _sse("error", {"code": "internal", "message": "Something went wrong on our side; try again.",
                                     "retryable": True})
                yield _sse("done", done_payload(None, admitted.conversation.id, truncated=True))
                return
            yield _sse(name, data)
    finally:
        cancel.cancel()  # the client left (or the turn is over): stop before the next provider round or tool call


@router.get("/v1/conversations/{conversation_id}/replies", response_model=Replies, responses=_ERRORS,
            summary="Staff replies in a handed-off conversation (the widget polls this)")
def replies(conversation_id: str, request: Request, after: int = Query(0, ge=0, le=10**9),
            ctx: TenantContext = Depends(visitor)) -> Replies:
    enforce(request.app.state.ip_limiter, "poll:" + client_address(request), "address", "questions")
    store = request.app.state.rt.store
    _own_conversation(ctx, store, conversation_id)
    try:
        found = handoff.replies_for(ctx, store, conversation_id, after)
    except handoff.HandoffError:
        raise _not_found() from None
    return Replies(replies=[Reply(**r) for r in found])
