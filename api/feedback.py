"""``POST /v1/conversations/{conversation_id}/turns/{turn_id}/feedback``: the visitor's 👍/👎 on one answer.

The same identity and ownership rules as the staff replies (``api/chat.py``): the tenant from the site key, the
customer from a signed token, and a conversation that is not the visitor's own answers exactly like a missing
one, before anything else is looked at; a turn that is not in that conversation answers like a missing turn. The
channel settings and the kill switch are not consulted: they stop the agent, and rating an answer already given
calls no agent. Rate-limited per address and per site key, in buckets of its own (a rating spends no question).
"""
from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from api.chat import _ERRORS, _own_conversation
from api.errors import ApiError, ErrorEnvelope
from api.identity import client_address, visitor
from api.ratelimit import enforce
from core.channels import ratings
from core.gaps import feedback
from core.tenancy.context import TenantContext

router = APIRouter()


class FeedbackRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    rating: Literal["up", "down"] = Field(description="up: the answer helped; down: it did not (it goes to the "
                                          "business's gap backlog). A second rating of the same answer replaces "
                                          "the first.")
    reason: str | None = Field(None, max_length=feedback.MAX_REASON_CHARS,
                               description="Optional: what was missing or wrong, at most 500 characters. Personal "
                               "data in it is masked before it is stored.", examples=["No dice cuánto cuesta."])


class FeedbackRecorded(BaseModel):
    recorded: bool
    rating: Literal["up", "down"]
    gap_id: int | None = Field(description="The gap-backlog entry a 👎 of an answered question is on; null for a 👍 "
                               "and for a refused or partial answer (already on the backlog as uncovered).")


_FEEDBACK_ERRORS = {**{s: _ERRORS[s] for s in (400, 401, 429)},
                    413: {"model": ErrorEnvelope, "description": "The body is over 32 KB"},
                    404: {"model": ErrorEnvelope, "description": "No such conversation for this visitor, or no such "
                          "answer in it"},
                    422: {"model": ErrorEnvelope, "description": "A rating other than up or down, or a reason over "
                          "500 characters"}}


def _turn_not_found() -> ApiError:
    return ApiError(404, "turn_not_found", "That answer does not exist in this conversation; rate an answer by the "
                    "turn_id of its done event.")


@router.post("/v1/conversations/{conversation_id}/turns/{turn_id}/feedback", response_model=FeedbackRecorded,
             responses=_FEEDBACK_ERRORS, summary="Rate one answer: up (helpful) or down (not helpful, with a reason)")
def rate(body: FeedbackRequest, request: Request, conversation_id: str,
         turn_id: int = Path(ge=1, le=2**62, description="The turn_id of the answer's done event"),
         ctx: TenantContext = Depends(visitor)) -> FeedbackRecorded:
    state = request.app.state
    enforce(state.ip_limiter, "feedback:" + client_address(request), "address", "ratings")
    enforce(state.key_limiter, "feedback:" + ctx.tenant_slug, "site", "ratings")
    _own_conversation(ctx, state.rt.store, conversation_id)  # a foreign conversation answers like a missing one
    try:
        done = ratings.rate(ctx, state.rt.store, state.rt.backlog, conversation_id, turn_id, body.rating, body.reason)
    except ratings.TurnNotFound:
        raise _turn_not_found() from None
    except feedback.FeedbackError as exc:
        raise ApiError(422, "invalid_feedback", str(exc)) from None
    return FeedbackRecorded(**done.as_dict())
