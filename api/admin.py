"""The private logs (P4): every question asked and every turn with its trace, for the operator only.

``Authorization: Bearer <COBERTURA_ADMIN_TOKEN>``; with the variable unset every request is refused (fail
closed), so a deployment that forgets it publishes nothing. The token is checked before anything else of a
request under ``/v1/admin``: its parameters, the tenant, even whether the path or the method exists. Without
it every such request answers 401 (403 while the logs are closed), never 404, 405 or 422."""
from __future__ import annotations

import hmac
from typing import Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel

from api.errors import ApiError, ErrorEnvelope
from core.channels import conversations
from core.tenancy.context import AuthError, TenantContext, log_reader

#: every ``core.agent.outcome.Status`` (a test pins them equal); ``partial``: answered in part, still a gap
TurnStatus = Literal["answered", "partial", "abstained", "handoff", "clarify", "card", "error"]
PREFIX = "/v1/admin"
_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS"]


class Questions(BaseModel):
    questions: list[dict[str, Any]]


class Turns(BaseModel):
    turns: list[dict[str, Any]]


_ERRORS = {401: {"model": ErrorEnvelope, "description": "Missing or wrong admin token"},
           403: {"model": ErrorEnvelope, "description": "The logs are closed: COBERTURA_ADMIN_TOKEN is not set"},
           404: {"model": ErrorEnvelope, "description": "No such tenant"},
           422: {"model": ErrorEnvelope, "description": "Bad query parameters (only once the token is right)"}}


def admin_token(request: Request, authorization: str | None = Header(
        None, description="Bearer <COBERTURA_ADMIN_TOKEN>")) -> str:
    """The request's admin token, checked before anything else of it (every admin route depends on it)."""
    configured = request.app.state.settings.admin_token
    if not configured:
        raise ApiError(403, "logs_closed",
                       "The private logs are closed: set COBERTURA_ADMIN_TOKEN on the server to open them.")
    scheme, _, presented = (authorization or "").partition(" ")
    presented = presented.strip()
    if scheme.lower() != "bearer" or not presented:
        raise ApiError(401, "missing_admin_token", "Send Authorization: Bearer <COBERTURA_ADMIN_TOKEN>.",
                       headers={"WWW-Authenticate": "Bearer"})
    if not hmac.compare_digest(presented.encode(), configured.encode()):
        raise ApiError(401, "wrong_admin_token", "Wrong admin token.", headers={"WWW-Authenticate": "Bearer"})
    return presented


# a router-level dependency is solved before the route's own parameters are validated, so a request without
# the token never learns which parameters a route takes (tests/api/test_admin_auth.py pins the order)
router = APIRouter(dependencies=[Depends(admin_token)])
_TENANT = Query(..., min_length=1, max_length=40, description="the tenant's slug")


def _reader(request: Request, tenant: str) -> TenantContext:
    token = admin_token(request, request.headers.get("authorization"))
    try:
        return log_reader(request.app.state.rt.store, request.app.state.settings.admin_token, token, tenant)
    except AuthError as exc:
        if "No tenant" in str(exc):
            raise ApiError(404, "tenant_not_found", f"No tenant '{tenant}'.") from None
        raise ApiError(401, "wrong_admin_token", str(exc), headers={"WWW-Authenticate": "Bearer"}) from None


@router.get(PREFIX + "/questions", response_model=Questions, responses=_ERRORS,
            summary="The private question log (admin token)")
def questions(request: Request, tenant: str = _TENANT, limit: int = Query(100, ge=1, le=1000),
              before: int | None = Query(None, ge=1, le=2**62, description="only ids below this, to page back"),
              ) -> JSONResponse:
    ctx = _reader(request, tenant)
    rows = conversations.question_log(ctx, request.app.state.rt.store, limit, before)
    return JSONResponse({"questions": rows}, headers={"Cache-Control": "no-store"})


@router.get(PREFIX + "/turns", response_model=Turns, responses=_ERRORS,
            summary="The private turn log with traces (admin token)")
def turns(request: Request, tenant: str = _TENANT, limit: int = Query(50, ge=1, le=500),
          before: int | None = Query(None, ge=1, le=2**62),
          status: TurnStatus | None = Query(None, description="only turns with this status"),
          ) -> JSONResponse:
    ctx = _reader(request, tenant)
    rows = conversations.turn_log(ctx, request.app.state.rt.store, limit, before, status)
    return JSONResponse({"turns": rows}, headers={"Cache-Control": "no-store"})


@router.api_route(PREFIX, methods=_METHODS, include_in_schema=False)
@router.api_route(PREFIX + "/{rest:path}", methods=_METHODS, include_in_schema=False)
def elsewhere(request: Request) -> JSONResponse:
    """Any other path or method under /v1/admin, answered only once the token is right."""
    if any(getattr(route, "path", None) == request.url.path and getattr(route, "include_in_schema", False)
           for route in router.routes):
        raise ApiError(405, "method_not_allowed", f"{request.method} is not allowed on {request.url.path}; use GET.",
                       headers={"Allow": "GET"})
    raise ApiError(404, "not_found", f"There is nothing at {request.url.path}. See /openapi.json for the API.")
