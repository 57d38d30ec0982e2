"""The private logs (P4): every question asked and every turn with its trace, for the operator only.

``Authorization: Bearer <COBERTURA_ADMIN_TOKEN>``; with the variable unset every request is refused (fail
closed), so a deployment that forgets it publishes nothing."""
from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from api.errors import ApiError, ErrorEnvelope
from core.channels import conversations
from core.tenancy.context import AuthError, TenantContext, log_reader

router = APIRouter()
#: every ``core.agent.outcome.Status`` (a test pins them equal); ``partial``: answered in part, still a gap
TurnStatus = Literal["answered", "partial", "abstained", "handoff", "clarify", "error"]


class Questions(BaseModel):
    questions: list[dict[str, Any]]


class Turns(BaseModel):
    turns: list[dict[str, Any]]


_ERRORS = {401: {"model": ErrorEnvelope, "description": "Missing or wrong admin token"},
           403: {"model": ErrorEnvelope, "description": "The logs are closed: COBERTURA_ADMIN_TOKEN is not set"},
           404: {"model": ErrorEnvelope, "description": "No such tenant"},
           422: {"model": ErrorEnvelope, "description": "Bad query parameters"}}


def _reader(request: Request, authorization: str | None, tenant: str) -> TenantContext:
    configured = request.app.state.settings.admin_token
    if not configured:
        raise ApiError(403, "logs_closed",
                       "The private logs are closed: set COBERTURA_ADMIN_TOKEN on the server to open them.")
    scheme, _, presented = (authorization or "").partition(" ")
    if scheme.lower() != "bearer" or not presented.strip():
        raise ApiError(401, "missing_admin_token", "Send Authorization: Bearer <COBERTURA_ADMIN_TOKEN>.",
                       headers={"WWW-Authenticate": "Bearer"})
    try:
        return log_reader(request.app.state.rt.store, configured, presented.strip(), tenant)
    except AuthError as exc:
        if "No tenant" in str(exc):
            raise ApiError(404, "tenant_not_found", f"No tenant '{tenant}'.") from None
        raise ApiError(401, "wrong_admin_token", str(exc), headers={"WWW-Authenticate": "Bearer"}) from None


_AUTH = Header(None, description="Bearer <COBERTURA_ADMIN_TOKEN>")
_TENANT = Query(..., min_length=1, max_length=40, description="the tenant's slug")


@router.get("/v1/admin/questions", response_model=Questions, responses=_ERRORS,
            summary="The private question log (admin token)")
def questions(request: Request, tenant: str = _TENANT, limit: int = Query(100, ge=1, le=1000),
              before: int | None = Query(None, ge=1, le=2**62, description="only ids below this, to page back"),
              authorization: str | None = _AUTH) -> JSONResponse:
    ctx = _reader(request, authorization, tenant)
    rows = conversations.question_log(ctx, request.app.state.rt.store, limit, before)
    return JSONResponse({"questions": rows}, headers={"Cache-Control": "no-store"})


@router.get("/v1/admin/turns", response_model=Turns, responses=_ERRORS,
            summary="The private turn log with traces (admin token)")
def turns(request: Request, tenant: str = _TENANT, limit: int = Query(50, ge=1, le=500),
          before: int | None = Query(None, ge=1, le=2**62),
          status: TurnStatus | None = Query(None, description="only turns with this status"),
          authorization: str | None = _AUTH) -> JSONResponse:
    ctx = _reader(request, authorization, tenant)
    rows = conversations.turn_log(ctx, request.app.state.rt.store, limit, before, status)
    return JSONResponse({"turns": rows}, headers={"Cache-Control": "no-store"})
