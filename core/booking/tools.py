"""The agent's booking tools (B4, seed 04): ``check_availability`` and ``create_booking``, live tools of the registry.

- ``check_availability`` (offered on the web, identified, phone, sandbox/admin, CLI and API channels) reads the free
  times of the one schedule (``mode`` day, week or first; ``date`` as YYYY-MM-DD or the customer's own words, read
  relative to today in the business's zone). Its ``found`` result is live data of the turn, cited as
  ``[[cite:live-N]]``; it carries ``how_to_book``, the sentence the answer ends with. On the web the same times go
  to the widget's booking window (``TurnEvidence.booking_window``: the visitor picks and confirms there, under a
  short hold); on the phone they are recorded as this conversation's offer, the only times it may book, and the
  result names (``booked``: date, label, time, code) the confirmed bookings this conversation already made, so a
  further time is not booked again. A day asked that has passed is named in ``day_passed`` (the times are from
  today on).
- ``create_booking`` (offered only on the phone channel, whose context comes from the gateway's signed token) books
  one of the offered times: ``service.create(..., channel="phone", offered_only=True)`` with the idempotency key
  ``conversation:start``, so a retried call returns the first booking. Every status answers the model in its
  words: booked (the read-back of date, time and zone, with the code, to say exactly, cited), missing or invalid
  details (the customer is asked for them by name: the turn ends on that question), a past date (today's date in
  the business's zone), a time taken meanwhile (the day's free times, offered in turn), a time never offered.
A calendar that cannot be read is a fault: the customer hears that it could not be checked, never a time.
"""
from __future__ import annotations

import json
from datetime import date, datetime, timedelta
from typing import Any

from core.agent import prompts
from core.agent.protocol import ToolSpec
from core.agent.registry import Tool, ToolEnv, ToolKind, record_live
from core.base.clock import iso
from core.booking.model import BookingError, CalendarUnavailable, CreateResult, NoSchedule, day_label, zone_label

AVAILABILITY, CREATE = "check_availability", "create_booking"
KIND = "booking"  # the ToolSpec kind: the offline responder's booking flow, not its operations matcher
PHONE = "phone"
#: where check_availability is offered (besides the phone): the visitor picks in the booking window
WINDOW_CHANNELS = ("web", "identified", "sandbox", "admin", "cli", "api")
LANGS = prompts.LANGUAGES
_FIELDS = ("start", "date", "time", "name", "email", "phone", "notes")  # what a create asks for by name

_TEXT = {
    "es": {"title": "Horas libres", "book": "Reservar una cita", "start": "fecha y hora", "date": "fecha",
           "time": "hora", "name": "nombre", "email": "e-mail", "phone": "teléfono", "notes": "notas",
           "web": "Las horas son en {zone}. Elige una en la ventana de reserva y confírmala allí con tu nombre, tu "
                  "e-mail y tu teléfono.",
           "by_phone": "Las horas son en {zone}. Dime cuál prefieres, con tu nombre, tu e-mail y tu teléfono, y la "
                       "reservo.",
           "ask": "Para reservar{when} necesito: {fields}. ¿Me lo dices?",
           "again": "Para reservar{when} necesito de nuevo: {fields} (no parece válido). ¿Me lo repites?",
           "when": " el {day} a las {time}",
           "booked": "Reserva confirmada: {day} a las {time}, {zone}. Código de reserva: {code}.",
           "taken": "Esa hora ya no está libre.", "free_then": "Horas libres el {day}: {times}.",
           "none_then": "Ese día no queda ninguna otra hora libre.", "which": "¿Cuál te viene bien?",
           "other_day": "¿Qué otro día te viene bien?"},
    "pt": {"title": "Horários livres", "book": "Marcar uma hora", "start": "data e hora", "date": "data",
           "time": "hora", "name": "nome", "email": "e-mail", "phone": "telefone", "notes": "notas",
           "web": "As horas são em {zone}. Escolha uma na janela de marcação e confirme-a aí com o seu nome, o seu "
                  "e-mail e o seu telefone.",
           "by_phone": "As horas são em {zone}. Diga-me qual prefere, com o seu nome, o seu e-mail e o seu telefone, "
                       "e eu marco-a.",
           "ask": "Para marcar{when} preciso de: {fields}. Pode indicar-mo?",
           "again": "Para marcar{when} preciso de novo de: {fields} (não parece válido). Pode repetir?",
           "when": " {day}, às {time}",
           "booked": "Marcação confirmada: {day}, às {time}, {zone}. Código da marcação: {code}.",
           "taken": "Essa hora já não está livre.", "free_then": "Horas livres em {day}: {times}.",
           "none_then": "Nesse dia não há outra hora livre.", "which": "Qual prefere?",
           "other_day": "Que outro dia lhe dá jeito?"},
    "en": {"title": "Free times", "book": "Book an appointment", "start": "date and time", "date": "date",
           "time": "time", "name": "name", "email": "e-mail", "phone": "phone", "notes": "notes",
           "web": "Times are in {zone}. Pick one in the booking window and confirm it there with your name, e-mail "
                  "and phone.",
           "by_phone": "Times are in {zone}. Tell me which one you would like, with your name, e-mail and phone, "
                       "and I will book it.",
           "ask": "To book{when} I need: {fields}. Could you give me that?",
           "again": "To book{when} I need again: {fields} (it does not look valid). Could you repeat it?",
           "when": " {day} at {time}",
           "booked": "Booking confirmed: {day} at {time}, {zone}. Booking code: {code}.",
           "taken": "That time is no longer free.", "free_then": "Free times on {day}: {times}.",
           "none_then": "There is no other free time that day.", "which": "Which one would you like?",
           "other_day": "Which other day would suit you?"},
}
AVAILABILITY_EXAMPLES = (
    "Quiero reservar una cita", "Quiero pedir cita para la revisión", "¿Tenéis hueco el martes?",
    "¿Hay disponibilidad mañana?", "¿Qué huecos libres tenéis?", "Dame cita para lo primero que tengas",
    "Necesito una cita esta semana", "Quero marcar uma revisão", "Quero agendar um horário", "Tem vaga amanhã?",
    "Quais horários livres têm?", "Can I book an appointment tomorrow?", "I'd like to book an appointment",
    "Do you have any free slots on Tuesday?", "What times are available?",
    "When is your first available appointment?")
CREATE_EXAMPLES = ("A las 10:30, soy Ana García, ana@example.com, 600 123 123", "Quero a das 16:00, João Silva",
                   "The 9:00 one please, my name is John Smith, john@example.com")
AVAILABILITY_NOTE = (
    "Free appointment times of this business's one schedule, read now (live data: cite the result's cite_as for "
    "this turn only). mode: 'day' (that date), 'week' (7 days from date), 'first' (the first free times from date, "
    "or from today). date: YYYY-MM-DD or the customer's own words ('mañana', 'el martes', 'next Friday', "
    "'amanhã'), read relative to today in the business's time zone. Call it whenever the customer wants an "
    "appointment or asks for a free time. List only the times it returns, say the time zone, and end with its "
    "how_to_book sentence; never offer a time it did not return. Questions ABOUT booking (prices, how to cancel, "
    "conditions) are for search_knowledge.")
CREATE_NOTE = (
    "Books one appointment (phone channel). Only a start that check_availability returned in this conversation, "
    "as the business's local time YYYY-MM-DDTHH:MM, once the customer chose it and gave their name and e-mail "
    "(phone optional). When it answers booked, say its say_exactly sentence: the date, the time, the time zone and "
    "the code. Any other answer says what to do next.")


def text(lang: str) -> dict[str, str]:
    return _TEXT.get(lang, _TEXT["en"])


def _lang(env: ToolEnv) -> str:
    return env.language if env.language in _TEXT else "en"


def availability_parameters(lang: str = "en") -> dict:
    words = text(lang)
    return {"type": "object", "properties": {
        "mode": {"type": "string", "enum": ["day", "week", "first"], "title": "mode",
                 "description": "day: that date; week: 7 days from date; first: the first free times"},
        "date": {"type": "string", "title": words["date"],
                 "description": "YYYY-MM-DD or the customer's words ('mañana', 'el martes', 'next Friday')"}},
        "additionalProperties": False}


def create_parameters(lang: str = "en") -> dict:
    words = text(lang)
    return {"type": "object", "properties": {
        "start": {"type": "string", "title": words["start"],
                  "description": "a start check_availability returned, local time YYYY-MM-DDTHH:MM"},
        "name": {"type": "string", "title": words["name"], "description": "the customer's name"},
        "email": {"type": "string", "title": words["email"], "description": "the customer's e-mail address"},
        "phone": {"type": "string", "title": words["phone"], "description": "the customer's phone (optional)"},
        "notes": {"type": "string", "title": words["notes"], "description": "what the appointment is for (optional)"}},
        "required": ["start", "name", "email"], "additionalProperties": False}


def _fault(env: ToolEnv, title: str, why: str) -> dict:
    """The booking could not be read or written: a fault in fixed words (no time offered), never a gap."""
    env.evidence.faults += 1
    env.evidence.notice = {"text": prompts.message("action_failed", _lang(env)).format(title=title), "fault": True}
    return {"status": "error", "message": f"{why} This is a fault, not an answer: the customer is told you could not "
            "check right now; your turn ends here."}


def _slim(data: dict) -> dict:
    """The availability as the model reads it: per day its label and slots (start, date, time), no flat copy."""
    days = [{"date": d["date"], "label": d["label"],
             "slots": [{"start": s["start"], "date": s["date"], "time": s["time"]} for s in d["slots"]]}
            for d in data["days"]]
    return {k: data[k] for k in ("mode", "timezone", "zone_label", "today", "start_day")} | {"days": days}


def _day_note(service, env: ToolEnv, wanted: date | None, today: date) -> str:
    """What the model must know about the day asked: it has passed (the times are from today), or it is past the
    horizon; '' otherwise."""
    if wanted is None:
        return ""
    schedule = service.schedule(env.ctx)
    if wanted < today:
        return (f"The day asked ({wanted.isoformat()}) has passed: today in {schedule.timezone} is "
                f"{today.isoformat()}, and these are the times from today on. Say so. ")
    last = today + timedelta(days=schedule.horizon_days)
    if wanted > last:
        return (f"The day asked ({wanted.isoformat()}) is past the booking horizon: bookings are taken up to "
                f"{schedule.horizon_days} days ahead (until {last.isoformat()}). Say so. ")
    return ""


def _read(service, env: ToolEnv, arguments: dict, lang: str):
    """(the availability, the day asked) for the call's mode and date; raises what the service raises."""
    mode = str(arguments.get("mode") or "first").strip().lower()
    day = arguments.get("date")
    wanted = service.read_day(env.ctx, str(day).strip(), lang) if day not in (None, "") else None
    return service.availability(env.ctx, mode=mode, day=wanted, lang=lang), wanted


def _booked_here(service, env: ToolEnv, lang: str) -> list[dict]:
    """The confirmed bookings this phone conversation made that are still ahead (date, its label, time, code)."""
    if not env.conversation_id:
        return []
    schedule, now = service.schedule(env.ctx), service.now()
    ahead = service.bookings(env.ctx, now, now + timedelta(days=schedule.horizon_days + 1), status="confirmed")
    out = []
    for row in ahead:
        if row.get("conversation_id") == env.conversation_id:
            local = datetime.fromisoformat(row["start_utc"]).astimezone(schedule.zone)
            out.append({"date": local.date().isoformat(), "label": day_label(local.date(), lang),
                        "time": f"{local:%H:%M}", "code": row["code"]})
    return out


def availability_handler(service):
    def handler(env: ToolEnv, arguments: dict) -> dict:
        lang, words = _lang(env), text(_lang(env))
        try:
            found, wanted = _read(service, env, arguments, lang)
        except CalendarUnavailable as exc:
            return _fault(env, words["title"], f"The business's calendar cannot be read ({exc}); no time can be "
                          "offered.")
        except NoSchedule as exc:
            return _fault(env, words["title"], str(exc))
        except BookingError as exc:
            return {"status": "error", "message": f"{exc} Call check_availability again with the date as YYYY-MM-DD, "
                    "or with mode 'first', or ask the customer which day."}
        data, note = found.to_dict(lang), _day_note(service, env, wanted, found.today)
        phone = env.ctx.channel == PHONE
        booked = _booked_here(service, env, lang) if phone else []
        if phone:
            service.record_offer(env.ctx, env.conversation_id, list(found.slots))
        elif found.slots:
            env.evidence.booking_window = {**data, "hold_minutes": service.hold_minutes}
        base = {"title": words["title"], "fetched_at": service.store.clock.stamp(), **_slim(data)}
        if wanted is not None and wanted < found.today:
            base["day_passed"] = wanted.isoformat()  # the times are from today on: the answer says so
        if booked:
            base["booked"] = booked
            note += ("This conversation already has a confirmed booking (booked): do not book another; say it, and "
                     "that it is changed by cancelling or rescheduling it. ")
        if not found.slots:
            return {"status": "empty", **base, "message": f"{note}No free time for these parameters. Say so, and "
                    "offer another day (mode 'first' from that date lists the next free times)."}
        how = words["by_phone" if phone else "web"].format(zone=data["zone_label"])
        said = ("Book only one of these, with create_booking, once the customer chose it and gave name and e-mail."
                if phone else "The customer picks one and confirms it in the booking window shown with your answer; "
                "you do not book on this channel.")
        return {"status": "found", **base, "how_to_book": how,
                "message": f"{note}List these times (they are in {data['timezone']}), then say how_to_book. {said}"}
    return handler


def _when(result: CreateResult, arguments: Any, service, env: ToolEnv, lang: str) -> str:
    """" el miércoles 2 de diciembre a las 10:00" for the start the call gave, when it reads as one; else ''."""
    from core.booking.normalize import normalize, validate

    schedule = service.schedule(env.ctx)
    if schedule is None or "start" in result.missing:
        return ""
    checked = validate(normalize(arguments), schedule, service.now())
    if checked.start is None:
        return ""
    local = checked.start.astimezone(schedule.zone)
    return text(lang)["when"].format(day=day_label(local.date(), lang), time=f"{local:%H:%M}")


def _ask(env: ToolEnv, result: CreateResult, arguments: Any, service) -> None:
    """The question for the missing or invalid details, by name; the turn ends on it."""
    lang = _lang(env)
    words = text(lang)
    wrong = [field for p in result.problems if (field := p.split(" ", 1)[0]) in _FIELDS]
    names = [words[n] for n in dict.fromkeys([*result.missing, *wrong]) if n in _FIELDS]
    if not names:  # nothing the customer can fix by name: the model reads the message
        return
    when = _when(result, arguments, service, env, lang)
    template = words["again"] if wrong and not result.missing else words["ask"]
    env.evidence.clarify = [{"question": template.format(when=when, fields=", ".join(names)), "options": []}]


def _said(env: ToolEnv, service, result: CreateResult, tz) -> dict:
    """The read-back of a booking, or the day's free times after a clash, in each language: filed as live data of
    this turn and returned as ``say_exactly`` (cited)."""
    said = {}
    for lang in LANGS:
        words = text(lang)
        if result.status == "booked":
            view = result.to_dict(tz, lang).get("booking") or {}
            said[lang] = words["booked"].format(day=day_label(date.fromisoformat(view["date"]), lang),
                                                time=view["time"], zone=zone_label(tz.key, lang), code=view["code"])
            continue
        rows = [slot.to_dict(tz, lang) for slot in result.alternatives]
        free = (words["free_then"].format(day=day_label(date.fromisoformat(rows[0]["date"]), lang),
                                          times=", ".join(r["time"] for r in rows)) if rows else words["none_then"])
        said[lang] = f"{words['taken']} {free}"
    title = text(_lang(env))["book"]
    live_id = record_live(env, CREATE, title, service.store.clock.stamp(),
                          json.dumps({"status": result.status, "say": said}, ensure_ascii=False))
    ask = "which" if result.status == "taken" and result.alternatives else "other_day"
    return {lang: f"{line} [[cite:{live_id}]]" + ("" if result.status == "booked" else f" {text(lang)[ask]}")
            for lang, line in said.items()}


def _start(service, env: ToolEnv, arguments: Any) -> str:
    """The start the call gives, as the UTC moment it reads as ('' when none): one key however it was written."""
    from core.booking.normalize import normalize, validate

    schedule = service.schedule(env.ctx)
    checked = validate(normalize(arguments), schedule, service.now()) if schedule else None
    return iso(checked.start) if checked and checked.start else ""


def create_handler(service):
    def handler(env: ToolEnv, arguments: dict) -> dict:
        lang = _lang(env)
        start = _start(service, env, arguments)
        key = f"{env.conversation_id}:{start}" if env.conversation_id and start else None
        result = service.create(env.ctx, arguments, channel=PHONE, conversation_id=env.conversation_id,
                                customer_id=env.ctx.customer_id, idempotency_key=key, offered_only=True, lang=lang)
        if result.status in ("unavailable", "no_schedule"):
            return _fault(env, text(lang)["book"], result.message)
        schedule = service.schedule(env.ctx)
        out = result.to_dict(schedule.zone, lang)
        if result.alternatives:  # what the model offers now is this conversation's offer too
            service.record_offer(env.ctx, env.conversation_id, list(result.alternatives))
        if result.status in ("missing", "invalid"):
            _ask(env, result, arguments, service)
            if env.evidence.clarify:
                out["message"] = f"{result.message} The customer is asked for them now; your turn ends here."
        elif result.status in ("booked", "taken"):
            out["say_exactly"] = _said(env, service, result, schedule.zone)
        return out
    return handler


def _offered_availability(env: ToolEnv) -> bool:
    return env.ctx.channel in WINDOW_CHANNELS or env.ctx.channel == PHONE


def _offered_create(env: ToolEnv) -> bool:
    return env.ctx.channel == PHONE


def booking_tools(service) -> list[Tool]:
    """check_availability and create_booking over ``service`` (``rt.booking``), each spec in the turn's language."""
    def availability_spec(env: ToolEnv) -> ToolSpec:
        return ToolSpec(AVAILABILITY, AVAILABILITY_NOTE, availability_parameters(_lang(env)), KIND,
                        AVAILABILITY_EXAMPLES)

    def create_spec(env: ToolEnv) -> ToolSpec:
        return ToolSpec(CREATE, CREATE_NOTE, create_parameters(_lang(env)), KIND, CREATE_EXAMPLES)

    return [Tool(AVAILABILITY, AVAILABILITY_NOTE, availability_parameters(), ToolKind.LIVE,
                 availability_handler(service), offered=_offered_availability, tailored=availability_spec),
            Tool(CREATE, CREATE_NOTE, create_parameters(), ToolKind.LIVE, create_handler(service),
                 offered=_offered_create, tailored=create_spec)]
