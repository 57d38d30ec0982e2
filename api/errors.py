"""The public API's one error envelope: ``{"error": {"code", "message", "retryable"}}``, for every failure,
including validation errors and crashes (a 500 says nothing about internals)."""
from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel
from starlette.exceptions import HTTPException as StarletteHTTPException

from core.base.errors import PermissionDenied, UserError

log = logging.getLogger("api")


class ErrorBody(BaseModel):
    code: str
    message: str
    retryable: bool = False


class ErrorEnvelope(BaseModel):
    error: ErrorBody


class ApiError(Exception):
    """An error the client gets as the envelope, with an HTTP status and optional headers."""

    def __init__(self, status: int, code: str, message: str, retryable: bool = False, headers: dict | None = None):
        super().__init__(message)
        self.status, self.code, self.message, self.retryable, self.headers = status, code, message, retryable, headers


def envelope(code: str, message: str, retryable: bool = False) -> dict:
    return {"error": {"code": code, "message": message, "retryable": retryable}}


def error_response(status: int, code: str, message: str, retryable: bool = False,
                   headers: dict | None = None) -> JSONResponse:
    return JSONResponse(envelope(code, message, retryable), status_code=status, headers=headers)


#: what a valid body looks like, for the 422 of a body that is not one
_BODY_EXAMPLES = {"chat": '{"message": "your question"}',
                  "feedback": '{"rating": "up" or "down", "reason": "optional, at most 500 characters"}',
                  "holds": '{"start": "2026-12-02T10:00+01:00", "conversation_id": "optional"}',
                  "confirm": '{"name": "Ana Pérez", "email": "ana@example.com", "phone": "optional", "notes": ""}'}
_HTTP_CODES = {400: "invalid_json", 404: "not_found", 405: "method_not_allowed", 413: "too_large",
               415: "unsupported_media_type"}


def _example(path: str) -> str:
    """What a valid body of the route at ``path`` looks like."""
    name = next((name for name in ("feedback", "holds", "confirm") if path.endswith("/" + name)), "chat")
    return _BODY_EXAMPLES[name]


def install(app: FastAPI) -> None:
    """Route every failure through the envelope."""

    @app.exception_handler(ApiError)
    async def api_error(request: Request, exc: ApiError) -> JSONResponse:
        return error_response(exc.status, exc.code, exc.message, exc.retryable, exc.headers)

    @app.exception_handler(UserError)
    async def user_error(request: Request, exc: UserError) -> JSONResponse:
        """A core refusal a route did not map: its message already says what was wrong and what to do."""
        if isinstance(exc, PermissionDenied):
            return error_response(403, "forbidden", str(exc))
        return error_response(400, "invalid_request", str(exc))

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        problems, in_body = [], False
        for err in exc.errors()[:5]:
            loc = [str(p) for p in err.get("loc", ())]
            in_body = in_body or (bool(loc) and loc[0] == "body")
            where = ".".join(loc[1:] if loc and loc[0] in ("body", "query", "header", "path") else loc) or "body"
            problems.append(f"{where} ({loc[0] if loc else 'body'}): {err.get('msg', 'invalid')}")
        example = _example(request.url.path)
        hint = f" Send JSON like {example}." if in_body else " See /openapi.json for the parameters."
        return error_response(422, "invalid_request", "The request is not valid: " + "; ".join(problems) + "." + hint)

    @app.exception_handler(StarletteHTTPException)
    async def http_error(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        code = _HTTP_CODES.get(exc.status_code, "http_error")
        if exc.status_code == 404:
            message = f"There is nothing at {request.url.path}. See /openapi.json for the API."
        elif exc.status_code == 400:  # FastAPI's answer to a body that is not JSON at all
            example = _example(request.url.path)
            message = f"The body is not valid JSON. Send UTF-8 JSON like {example}."
        else:
            message = exc.detail if isinstance(exc.detail, str) else "The request was refused."
        return error_response(exc.status_code, code, message, headers=getattr(exc, "headers", None))

    @app.exception_handler(Exception)
    async def crash(request: Request, exc: Exception) -> JSONResponse:
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "Something went wrong on our side; nothing was lost. Try again.", True)
