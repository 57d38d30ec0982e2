"""The booking window's calls (B4-B5): free times, a short hold on one, its release, its confirmation.

``GET /v1/booking/availability`` lists the free times (a day, a week, or the first free ones); the widget's
booking window places a hold on the time the visitor clicks (``POST /v1/booking/holds``: nobody else can take it
until it expires or is released), releases it on Cancel (``DELETE /v1/booking/holds/{id}``) and confirms it with
the visitor's name, e-mail and phone (``POST /v1/booking/holds/{id}/confirm``), which re-checks the time inside
the write. A time that is not free (any more) answers 409 with up to 5 free times of that day, so the window
offers them at once. The tenant comes only from the site key; a hold of another tenant answers exactly like one
that does not exist. The work (SQLite writes, maybe a CalDAV calendar over HTTP) runs in the turn thread pool.
"""
from __future__ import annotations

import asyncio
import re
from datetime import timedelta
from typing import Any, Literal

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from api.errors import ApiError, ErrorBody, ErrorEnvelope, envelope
from api.identity import client_address, visitor
from api.ratelimit import enforce
from core.base.clock import iso
from core.booking.model import (
    BookingError,
    CalendarUnavailable,
    HoldNotFound,
    NoSchedule,
    Slot,
    SlotTaken,
    booking_view,
    parse_utc,
    zone_label,
)
from core.channels import conversations
from core.tenancy import settings as tenant_settings
from core.tenancy.context import TenantContext

router = APIRouter()
HOLD_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
LANGS = ("es", "pt", "en")
#: who may use the booking window: website visitors, anonymous or identified
WINDOW_CHANNELS = ("web", "identified")
Lang = Literal["es", "pt", "en"]

#: a refused confirmation -> (HTTP status, error code), by the CreateResult's status
_REFUSED = {"missing": (422, "missing_fields"), "invalid": (422, "invalid_fields"), "past": (422, "past_date"),
            "not_a_slot": (422, "not_a_slot"), "not_offered": (422, "not_a_slot"), "taken": (409, "slot_taken"),
            "unavailable": (503, "calendar_unavailable"), "no_schedule": (404, "booking_off")}


class SlotView(BaseModel):
    start: str = Field(description="Local start with its UTC offset, in the business's zone: 2026-12-02T10:00+01:00")
    end: str
    start_utc: str
    end_utc: str
    date: str
    time: str = Field(description="Local start, HH:MM")
    label: str = Field(description="The day and time as people read them: miércoles 2 de diciembre, 10:00")
    timezone: str = Field(description="The business's IANA zone: Europe/Madrid")


class DayView(BaseModel):
    date: str
    label: str
    slots: list[SlotView]


class AvailabilityView(BaseModel):
    mode: Literal["day", "week", "first"]
    timezone: str
    zone_label: str = Field(description="hora de Madrid (Europe/Madrid): say it next to the times")
    today: str = Field(description="Today's date in the business's zone")
    days: list[DayView]
    slots: list[SlotView]
    note: str | None = Field(None, description="Said when the day asked for has passed: the times start today")


class HoldView(BaseModel):
    id: str
    status: Literal["held", "released"]
    start: str
    end: str
    start_utc: str
    end_utc: str
    label: str
    timezone: str
    zone_label: str
    expires_at: str = Field(description="UTC; confirm before it (expires_in seconds from now)")
    expires_in: int = Field(description="Seconds left to confirm, by the server's clock")


class HoldAnswer(BaseModel):
    hold: HoldView


class BookingAnswer(BaseModel):
    booking: dict[str, Any] = Field(description="code (what the customer quotes), start/end in the business's zone, "
                                    "label, timezone, zone_label, name, email, phone, status confirmed")
    message: str


class SlotTakenBody(BaseModel):
    """The error envelope, plus the free times of that day (nearest first)."""

    error: ErrorBody
    alternatives: list[SlotView]


class FieldsRefused(BaseModel):
    """The error envelope, plus the fields that are missing and what is wrong with the others."""

    error: ErrorBody
    missing: list[str] = Field(default_factory=list, description="Required fields not given: name, email")
    problems: list[str] = Field(default_factory=list, description="One sentence per refused value")


class HoldRequest(BaseModel):
    """The time the visitor clicked. Any other field (a tenant id) is ignored: the tenant comes from the site key."""

    model_config = ConfigDict(extra="ignore")
    start: str = Field(max_length=64, description="The slot's start as the window got it (start or start_utc)",
                       examples=["2026-12-02T10:00+01:00"])
    conversation_id: str | None = Field(None, max_length=64, pattern=r"^[A-Za-z0-9_-]+$",
                                        description="The chat conversation that offered the window")


class ConfirmRequest(BaseModel):
    """The visitor's details; a missing or empty one is named in the 422, never guessed."""

    model_config = ConfigDict(extra="ignore")
    name: str | None = Field(None, max_length=200)
    email: str | None = Field(None, max_length=320)
    phone: str | None = Field(None, max_length=64, description="Optional; read in the business's country")
    notes: str | None = Field(None, max_length=1000)


def _doc(*extra: tuple[int, Any, str]) -> dict:
    common = ((400, ErrorEnvelope, "The body is not valid JSON"),
              (401, ErrorEnvelope, "Missing or unknown site key, or an invalid token"),
              (403, ErrorEnvelope, "channel_disabled: the business has switched the website chat off; "
                                   "channel_not_allowed: a phone token (the phone channel books in the chat)"),
              (413, ErrorEnvelope, "The body is over 32 KB"),
              (422, FieldsRefused, "The request is not valid (the fields are named)"),
              (429, ErrorEnvelope, "Too many requests from this address or site key; see Retry-After"),
              (503, ErrorEnvelope, "calendar_unavailable: the business's calendar cannot be read now; no times are "
                                   "offered, nothing was booked"))
    out = {status: {"model": model, "description": text} for status, model, text in common}
    out[404] = {"model": ErrorEnvelope, "description": "booking_off: this business takes no bookings online"}
    for status, model, text in extra:
        out[status] = {"model": model, "description": text}
    return out


_GONE = (404, ErrorEnvelope, "hold_not_found: no such hold (also a released or used one, another business's, and "
         "for a release an expired one), or booking_off")
_TAKEN = (409, SlotTakenBody, "slot_taken: that time is not free (any more); alternatives are free times of that day")
_HOLD_PATH = Path(description="The hold's id, from POST /v1/booking/holds")
_LANG = Query(None, description="Language of the labels (es, pt, en); default the business's first language")


def _lang(ctx: TenantContext, store, asked: str | None) -> str:
    """The labels' language; refuses (403) a channel the tenant switched off, and the phone channel: on the phone
    the agent books in the conversation, only a time it offered there (the booking window is the website's)."""
    if ctx.channel not in WINDOW_CHANNELS:
        raise ApiError(403, "channel_not_allowed", "The booking window is for the website chat; on the phone the agent "
                       "books in the conversation itself.")
    settings = tenant_settings.get(ctx, store)
    try:
        tenant_settings.refuse_disabled(settings, ctx.channel)
    except tenant_settings.ChannelDisabled:
        raise ApiError(403, "channel_disabled", "This business has switched its website chat off for now.") from None
    if asked:
        return asked
    return next((code for code in settings.languages if code in LANGS), "es")


def _limit(request: Request, ctx: TenantContext) -> None:
    state = request.app.state
    enforce(state.ip_limiter, "booking:" + client_address(request), "address", "booking requests")
    enforce(state.key_limiter, "booking:" + ctx.tenant_slug, "site", "booking requests")


def _hold_not_found() -> ApiError:
    return ApiError(404, "hold_not_found", "That hold does not exist (it was released, it expired or it was already "
                    "confirmed): pick a time again in the booking window.")


async def _run(request: Request, fn, *args, **kwargs):
    """``fn(*args)`` in the turn pool, its booking errors mapped to the envelope."""
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(request.app.state.executor, lambda: fn(*args, **kwargs))
    except HoldNotFound:
        raise _hold_not_found() from None
    except NoSchedule:
        raise ApiError(404, "booking_off", "This business takes no bookings online right now.") from None
    except CalendarUnavailable:
        raise ApiError(503, "calendar_unavailable", "The business's calendar cannot be read right now, so no time is "
                       "offered and nothing was booked; try again in a few minutes.", True) from None


def _slots(slots, tz, lang: str) -> list[dict]:
    return [slot.to_dict(tz, lang) for slot in slots]


def _taken(message: str, alternatives: list[dict]) -> JSONResponse:
    body = {**envelope("slot_taken", message or "That time is no longer free."), "alternatives": alternatives}
    return JSONResponse(body, status_code=409, headers={"Cache-Control": "no-store"})


def _hold_view(hold: dict, schedule, lang: str, now) -> dict:
    tz = schedule.zone
    slot = Slot.stored(hold["start_utc"], hold["end_utc"]).to_dict(tz, lang)
    expires = parse_utc(hold["expires_at"])
    left = max(0, int((expires - now) / timedelta(seconds=1)))
    return {"id": hold["id"], "status": "released" if hold.get("status") == "released" else "held",
            "start": slot["start"], "end": slot["end"], "start_utc": slot["start_utc"], "end_utc": slot["end_utc"],
            "label": slot["label"], "timezone": tz.key, "zone_label": zone_label(tz.key, lang),
            "expires_at": iso(expires), "expires_in": left}


def _own_conversation(ctx: TenantContext, store, conversation_id: str | None) -> str:
    """The visitor's own conversation id ("" for none); another visitor's, channel's or tenant's answers 404 like a
    missing one."""
    if not conversation_id:
        return ""
    convo = conversations.get(ctx, store, conversation_id)
    if convo is None or convo.channel != ctx.channel or (convo.customer_id or None) != (ctx.customer_id or None):
        raise ApiError(404, "conversation_not_found", "That conversation does not exist for this visitor; send no "
                       "conversation_id, or the one of the chat that offered the times.")
    return convo.id


@router.get("/v1/booking/availability", response_model=AvailabilityView, responses=_doc(),
            summary="The free times: one day, a week, or the first free ones")
async def availability(request: Request, mode: Literal["day", "week", "first"] = Query("first"),
                       date: str | None = Query(None, pattern=r"^\d{4}-\d{2}-\d{2}$",
                                                description="YYYY-MM-DD in the business's zone; default today"),
                       lang: Lang | None = _LANG, ctx: TenantContext = Depends(visitor)) -> JSONResponse:
    _limit(request, ctx)
    rt = request.app.state.rt
    lang = _lang(ctx, rt.store, lang)
    try:
        found = await _run(request, rt.booking.availability, ctx, mode=mode, day=date, lang=lang)
    except BookingError as exc:  # a date outside the calendar, or before today: what to send instead
        raise ApiError(422, "invalid_date", str(exc)) from None
    return JSONResponse(found.to_dict(lang), headers={"Cache-Control": "no-store"})


@router.post("/v1/booking/holds", status_code=201, response_model=HoldAnswer, responses=_doc(_TAKEN),
             summary="Hold a free time for a few minutes while the visitor confirms it")
async def place_hold(body: HoldRequest, request: Request, lang: Lang | None = _LANG,
                     ctx: TenantContext = Depends(visitor)) -> JSONResponse:
    _limit(request, ctx)
    rt = request.app.state.rt
    lang = _lang(ctx, rt.store, lang)
    conversation = _own_conversation(ctx, rt.store, body.conversation_id)
    try:
        hold = await _run(request, rt.booking.place_hold, ctx, body.start, conversation_id=conversation)
    except SlotTaken as exc:
        schedule = rt.booking.schedule(ctx)
        return _taken(str(exc), _slots(exc.alternatives, schedule.zone, lang))
    except BookingError as exc:  # not a time of the schedule, in the past, too soon: the message says which
        raise ApiError(422, "invalid_start", str(exc)) from None
    schedule = rt.booking.schedule(ctx)
    return JSONResponse({"hold": _hold_view(hold, schedule, lang, rt.store.clock.now())}, status_code=201,
                        headers={"Cache-Control": "no-store"})


@router.delete("/v1/booking/holds/{hold_id}", response_model=HoldAnswer, responses=_doc(_GONE),
               summary="Release a hold: the time is free again at once")
async def release_hold(request: Request, hold_id: str = _HOLD_PATH, lang: Lang | None = _LANG,
                       ctx: TenantContext = Depends(visitor)) -> JSONResponse:
    _limit(request, ctx)
    rt = request.app.state.rt
    lang = _lang(ctx, rt.store, lang)
    if not HOLD_ID.match(hold_id):
        raise _hold_not_found()
    hold = await _run(request, rt.booking.release_hold, ctx, hold_id)
    schedule = rt.booking.schedule(ctx)
    return JSONResponse({"hold": _hold_view(hold, schedule, lang, rt.store.clock.now())},
                        headers={"Cache-Control": "no-store"})


@router.post("/v1/booking/holds/{hold_id}/confirm", status_code=201, response_model=BookingAnswer,
             responses=_doc(_GONE, _TAKEN), summary="Book the held time with the visitor's details")
async def confirm_hold(body: ConfirmRequest, request: Request, hold_id: str = _HOLD_PATH, lang: Lang | None = _LANG,
                       ctx: TenantContext = Depends(visitor)) -> JSONResponse:
    _limit(request, ctx)
    rt = request.app.state.rt
    lang = _lang(ctx, rt.store, lang)
    if not HOLD_ID.match(hold_id):
        raise _hold_not_found()
    details = {k: v for k, v in body.model_dump().items() if v is not None}
    try:
        result = await _run(request, rt.booking.confirm_hold, ctx, hold_id, details, channel=ctx.channel,
                            customer_id=ctx.customer_id, lang=lang)
    except SlotTaken as exc:  # a precondition the calendar refused, answered by the service as an exception
        return _taken(str(exc), _slots(exc.alternatives, rt.booking.schedule(ctx).zone, lang))
    tz = rt.booking.schedule(ctx).zone
    if result.ok:
        return JSONResponse({"booking": booking_view(result.booking, tz, lang), "message": result.message},
                            status_code=201, headers={"Cache-Control": "no-store"})
    status, code = _REFUSED.get(result.status, (422, "invalid_fields"))
    if code == "slot_taken":
        return _taken(result.message, _slots(result.alternatives, tz, lang))
    body = envelope(code, result.message, retryable=status == 503)
    if status == 422:
        body.update(missing=list(result.missing), problems=list(result.problems))
    return JSONResponse(body, status_code=status, headers={"Cache-Control": "no-store"})
