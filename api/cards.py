"""``POST /v1/cards/{card_id}/approve`` and ``/reject``: the identified customer's click on a card (C3).

The same identity as the chat (``api/identity.py``): the tenant only from the site key, the customer only from a
token signed with that tenant's secret. A card belongs to one customer of one tenant: an anonymous visitor, another
customer and another tenant all get exactly the 404 of a card that does not exist, before anything else is looked
at. The decision itself (``rt.actions.decide``: expiry, kill switch, one winner under a unique key, the state
re-check, the execution of the frozen parameters) runs in the turn thread pool, since it may call the business's
HTTP or MCP action. A repeated click answers with the stored decision: the same status code and the same bytes.
"""
from __future__ import annotations

import asyncio
import re
from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, Field

from api.errors import ApiError, ErrorBody, ErrorEnvelope, envelope
from api.identity import client_address, visitor
from api.ratelimit import enforce
from core.actions.cards import CardNotFound
from core.tenancy.context import TenantContext

router = APIRouter()
CARD_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

CardStatus = Literal["proposed", "executing", "executed", "failed", "rejected", "expired", "refused"]


class CardState(BaseModel):
    id: str
    status: CardStatus = Field(description="executed or rejected (the decision was taken); failed (it ran and the "
                               "action answered an error, in result); expired, refused (reason says why; nothing "
                               "ran); executing (another click is running it)")
    result: Any = Field(None, description="What the executed action returned (or its error); null before it ran")
    reason: str = Field("", description="Why the card ended as it did, in English (the widget says it in the "
                        "visitor's language by status)")


class CardAnswer(BaseModel):
    card: CardState


class CardRefusal(BaseModel):
    """The error envelope, plus the card as it now stands."""

    error: ErrorBody
    card: CardState


#: the decision's outcome -> (HTTP status, error code); executed and rejected are the 200s
_REFUSALS = {"expired": (409, "card_expired"), "refused": (409, "card_refused"), "consumed": (409, "card_consumed"),
             "failed": (409, "card_failed"), "in_progress": (202, "card_in_progress")}
_MESSAGES = {
    "card_expired": "This card expired before it was approved; nothing was changed. Ask again for a new one.",
    "card_refused": "This change was refused when it was approved, and nothing was changed.",
    "card_consumed": "This card was already decided the other way; its decision stands.",
    "card_failed": "The change was approved, but the business's system answered with an error (in result).",
    "card_in_progress": "This card is being carried out right now; ask again in a few seconds for its result."}
_DOC = {200: {"description": "Decided: executed or rejected (also for a repeated click, with the same body)"},
        202: {"model": CardRefusal, "description": "card_in_progress: another click is carrying it out"},
        401: {"model": ErrorEnvelope, "description": "Missing or unknown site key, or an invalid customer token"},
        404: {"model": ErrorEnvelope, "description": "card_not_found: no such card for this customer (also for an "
              "anonymous visitor, another customer's and another tenant's card)"},
        409: {"model": CardRefusal, "description": "card_expired, card_refused (reason says why), card_consumed (the "
              "other decision was taken), card_failed (it ran; the action's error is in result)"},
        429: {"model": ErrorEnvelope, "description": "Too many clicks from this address or site key; see Retry-After"}}
_PATH = Path(description="The card's id, from the card event of the chat stream")


def _not_found() -> ApiError:
    return ApiError(404, "card_not_found", "That card does not exist for this customer; a change is approved on "
                    "the card the chat showed, by the customer it was offered to.")


def answer(decision) -> JSONResponse:
    """The response of a decision: 200 with the card, or the refusal's status with the envelope and the card."""
    body = decision.as_dict()
    refusal = _REFUSALS.get(decision.outcome)
    status = 200
    if refusal:
        status, code = refusal
        why = decision.reason.strip().rstrip(".") if code in ("card_refused", "card_failed") else ""
        message = _MESSAGES[code] + (f" Why: {why}." if why else "")  # the card's own reason, once
        body = {**envelope(code, message, retryable=code == "card_in_progress"), **body}
    headers = {"Cache-Control": "no-store", **({"Retry-After": "2"} if status == 202 else {})}
    return JSONResponse(body, status_code=status, headers=headers)


async def _decide(request: Request, ctx: TenantContext, card_id: str, approve: bool) -> JSONResponse:
    state = request.app.state
    enforce(state.ip_limiter, "card:" + client_address(request), "address", "clicks")
    enforce(state.key_limiter, "card:" + ctx.tenant_slug, "site", "clicks")
    if not ctx.customer_id or not CARD_ID.match(card_id):  # anonymous: no card is ever theirs
        raise _not_found()
    loop = asyncio.get_running_loop()
    try:
        decision = await loop.run_in_executor(state.executor, state.rt.actions.decide, ctx, card_id, approve)
    except CardNotFound:
        raise _not_found() from None
    return answer(decision)


@router.post("/v1/cards/{card_id}/approve", response_model=CardAnswer, responses=_DOC,
             summary="Approve a card: the change it shows is carried out, exactly once")
async def approve(request: Request, card_id: str = _PATH, ctx: TenantContext = Depends(visitor)) -> JSONResponse:
    return await _decide(request, ctx, card_id, True)


@router.post("/v1/cards/{card_id}/reject", response_model=CardAnswer, responses=_DOC,
             summary="Reject a card: nothing is changed")
async def reject(request: Request, card_id: str = _PATH, ctx: TenantContext = Depends(visitor)) -> JSONResponse:
    return await _decide(request, ctx, card_id, False)
