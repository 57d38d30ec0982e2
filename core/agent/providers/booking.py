"""The offline responder's booking flow (#19, seed 04): it offers free times, and on the phone books one of them.

The booking tools are ``check_availability`` and ``create_booking`` (ToolSpec kind ``booking``, registered by
``core.booking.tools``); this module sees only their specs and their JSON results.

- **A booking request** ("Quiero reservar una cita", "¿Tenéis hueco el martes?", "Quero marcar uma revisão",
  "Can I book an appointment tomorrow?") speaks of booking (``booking_words.anchored``), is no question about it
  (how, whether, what it costs: "¿Cómo cancelo una cita?", "¿Cuánto cuesta la revisión?" stay with the knowledge),
  is not negated, fits no offered operation (cancelling or rescheduling a booking are cards), and matches the
  tool's example phrasings by the operations' own matcher (``operations.score``, its day and time words left out).
  A short follow-up of one ("lo primero que tengas", "¿y el jueves?", "a las 10:30") counts too.
- **Availability**: called with the mode (``day`` when a day is named, ``week``, ``first`` otherwise) and the day as
  the customer wrote it. The answer lists the free times day by day, each line cited with the result's live id,
  then the result's own ``how_to_book`` sentence (on the web: pick one in the booking window; on the phone: say
  which and give name, e-mail and phone), cited too. Nothing free that day or week: the fixed "nothing found"
  sentence, then the first free times from that day on. A day the service cannot read: the first free times.
- **Booking (phone)**: a message naming a time of the offered list, in a booking conversation, re-checks the day
  and calls ``create_booking`` with that slot and the name, e-mail and phone the conversation gave; the answer is
  the tool's read-back (date, time and zone, cited). Only a time an EARLIER answer of this conversation read out
  (its day and time on one line) is booked: a message naming another day, or a first message with a time, hears
  that day's times and books nothing this turn. Missing or invalid details: the tool asks for them by name and the
  turn ends there; the reply with them books. A time that is not free that day: said first (fixed sentence), then
  the free times. Once the conversation has a confirmed booking (the availability result's ``booked``), a further
  time books nothing: the answer names that booking (day, time, code, cited) and says it is changed by cancelling
  or rescheduling it (the cards).
Pure functions over the transcript.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from core.agent import prompts
from core.agent.protocol import Message, ToolSpec
from core.agent.providers import booking_words as words
from core.agent.providers.op_words import features
from core.agent.providers.operations import (
    MIN_MATCH,
    Step,
    asks_how,
    asks_whether,
    match,
    negated,
    operations,
    says_want,
    score,
)
from core.agent.providers.transcript import results
from core.base.language import detect, fold

AVAILABILITY = "check_availability"
CREATE = "create_booking"
KIND = "booking"
#: how many of the customer's last messages a booking request stays the subject of the conversation
MAX_BACK = 4
#: a follow-up ("¿y el jueves?", "a las 10:30") has at most this many other content words, and only these concepts
FOLLOW_UP_WORDS = 3
_FOLLOW_CONCEPTS = frozenset({"@booking", "@time", "@date", "@name", "@email", "@phone", "@number"})
_HOW_WORD = re.compile(r"\b(?:como|how)\b")
#: asking whether one has to book ("¿Hay que reservar cita?", "Do I need an appointment?"): the knowledge says
_NEEDED = re.compile(r"\b(?:hay\s+que|es\s+necesario|hace\s+falta|tengo\s+que|tenemos\s+que|debo|do\s+(?:i|we)\s+"
                     r"(?:need|have)\s+to|do\s+(?:i|we)\s+need|is\s+it\s+necessary|must\s+i|tenho\s+que|temos\s+que|"
                     r"e\s+preciso|e\s+necessario|se\s+necesita|necesito\s+\w+\s+(?:para|antes))\b")
_THIS_WEEK = re.compile(r"\b(?:esta|this|nesta)\b")
_WORD = re.compile(r"[^\W\d_]{2,}")


@dataclass(frozen=True)
class Plan:
    """What the conversation asks of the booking tools this turn."""

    arguments: dict  # for check_availability
    time: str | None = None  # the time of day to book (phone)
    details: words.Details = words.Details()
    book: bool = False  # create_booking is offered: the time, when found among the free ones, is booked
    details_reply: bool = False  # the message answers a question for the booking's details
    context: tuple[str, ...] = ()  # the customer's messages of this booking before this one, the request first
    heard: tuple[str, ...] = ()  # the lines of the earlier answers of this conversation (the times read out)


def wants(question: str, lang: str, tools: Sequence[ToolSpec], spec: ToolSpec) -> bool:
    """Whether ``question`` asks for a booking (the availability tool's ``spec``) rather than about one."""
    if negated(question) or asks_whether(question):
        return False
    if words.asks_first(question) and not features(words.without_when(question), lang):
        return True  # "lo primero que tengas", "the first available": only the first free times
    if not words.anchored(question):
        return False
    if question.rstrip().endswith("?") and _NEEDED.search(fold(question)):
        return False  # whether one has to book: the knowledge says
    if asks_how(question) and (words.day_of(question) is None or _HOW_WORD.search(fold(question))):
        return False  # "¿Cómo reservo?", "¿Puedo reservar por teléfono?": the knowledge says how
    if match(question, lang, tools) is not None:
        return False  # an operation fits it (cancelling a booking is a card)
    asked = _compared(question)
    ours = replace(spec, kind="read", parameters={}, examples=tuple(_compared(e) for e in spec.examples))
    if score(asked, lang, ours, [*operations(tools), ours])[0] >= MIN_MATCH:  # weighted among the operations
        return True
    return says_want(question) and "@booking" in features(asked, lang)  # "Necesito cita para la ITV de la bici"


def _compared(text: str) -> str:
    """What the matcher compares of a message or an example: no day or time words, a free slot said as "cita"."""
    return words.as_booking_words(words.without_when(text))


def _context(earlier: Sequence[Message], lang: str, tools, spec: ToolSpec) -> list[str]:
    """The customer's messages from the latest booking request among their last ``MAX_BACK`` on ([] for none)."""
    said = [m.content for m in earlier if m.role == "user"][-MAX_BACK:]
    for i in range(len(said) - 1, -1, -1):
        if wants(said[i], detect(said[i]), tools, spec):
            return said[i:]
    return []


def _asked_details(earlier: Sequence[Message], create: ToolSpec | None) -> frozenset[str]:
    """The booking details the last answer asked for by their names (the create tool's property titles)."""
    if create is None or not earlier or earlier[-1].role != "assistant":
        return frozenset()
    asked = fold(earlier[-1].content)
    props = (create.parameters or {}).get("properties", {})
    return frozenset(n for n in ("start", "name", "email", "phone")
                     if (title := fold(str(props.get(n, {}).get("title") or n))) and title in asked)


def _plain(question: str, lang: str, tools: Sequence[ToolSpec]) -> bool:
    """Little but when and who: no concept of another matter ("¿Mi pedido llega el martes?", "cambiar mi e-mail"),
    at most ``FOLLOW_UP_WORDS`` other content words, and no operation it asks for."""
    rest = features(words.without_details(words.without_when(question)), lang)
    concepts = {f for f in rest if f.startswith("@")}
    return (concepts <= _FOLLOW_CONCEPTS and len(rest - concepts) <= FOLLOW_UP_WORDS
            and match(question, lang, tools) is None)


def _follows(question: str, lang: str, tools: Sequence[ToolSpec]) -> bool:
    """A message that says when ("¿y el jueves?", "lo primero que tengas", "a las 10:30"), and little else."""
    said = bool(words.day_of(question) or words.times_of(question) or words.asks_first(question)
                or words.asks_week(question))
    return said and _plain(question, lang, tools)


def _arguments(day: words.Day | None, question: str) -> dict:
    """check_availability's arguments: the mode, and the day as the customer wrote it."""
    week = (day is not None and day.week) or words.asks_week(question)
    mode = "first" if words.asks_first(question) or day is None else "week" if week else "day"
    if day is None or (day.week and _THIS_WEEK.search(fold(day.text))):
        return {"mode": mode}
    if mode == "first" and words.day_of(question) is None:
        return {"mode": mode}  # "lo primero que tengas" after "¿mañana?": the first free times from today
    return {"mode": mode, "date": day.text}  # "lo primero que tengas el martes": from that day on


def plan(question: str, lang: str, tools: Sequence[ToolSpec], earlier: Sequence[Message] = ()) -> Plan | None:
    """What to ask the booking tools for this message; None when it is no booking request nor a follow-up."""
    offered = {s.name: s for s in tools}
    spec, create = offered.get(AVAILABILITY), offered.get(CREATE)
    if spec is None:
        return None
    asks = wants(question, lang, tools, spec)
    context = [] if asks else _context(earlier, lang, tools, spec)
    asked = _asked_details(earlier, create) if context else frozenset()
    details_reply = bool(asked)
    if not asks and not context:
        return None
    given = words.details_of(question, "name" in asked)
    replies = details_reply and bool(given.given()) and _plain(question, lang, tools)
    if context and not _follows(question, lang, tools) and not replies:
        return None
    said = [*context, question]
    day = next((d for d in map(words.day_of, reversed(said)) if d), None)
    time = next((t for t in (words.times_of(m)[0] for m in reversed(said) if words.times_of(m))), None)
    if create is not None and not words.times_of(question) and not details_reply:
        time = None  # a time said earlier is booked only when this message goes on with it
    details = words.merged(*map(words.details_of, context), given) if create is not None else words.Details()
    heard = tuple(line for m in earlier if m.role == "assistant" for line in m.content.splitlines())
    return Plan(_arguments(day, question), time, details, create is not None, details_reply, tuple(context), heard)


def _language(question: str, lang: str, context: Sequence[str]) -> str:
    """A short reply ("A las 10:30", "ana@example.com, 600 123 123") is in the language of the booking request."""
    if context and len(_WORD.findall(words.without_details(question))) < 4:
        return detect(context[0])
    return lang


def step(question: str, lang: str, since: Sequence[Message], tools: Sequence[ToolSpec],
         earlier: Sequence[Message] = ()) -> Step | None:
    """What to do about booking at this point of the turn; None when the message is no booking matter."""
    called = [c.name for m in since if m.role == "assistant" for c in m.tool_calls]
    if any(name not in (AVAILABILITY, CREATE) for name in called):
        return None  # another path of the responder took the turn
    asked = plan(question, lang, tools, earlier)
    if asked is None:
        return None
    lang = _language(question, lang, asked.context)
    done = [(name, result) for name, result in results(since) if name in (AVAILABILITY, CREATE)]
    if not done:
        if asked.book and asked.details_reply and asked.time is None and asked.details.given():
            return Step(tool=CREATE, arguments=asked.details.given())  # the tool asks for the time by name
        return Step(tool=AVAILABILITY, arguments=dict(asked.arguments))
    name, result = done[-1]
    if name == CREATE:
        return _after_create(result, lang, done)
    return _after_availability(result, lang, asked, done)


def _after_availability(result: dict, lang: str, asked: Plan, done: list[tuple[str, dict]]) -> Step:
    checks = [r for n, r in done if n == AVAILABILITY]
    status = result.get("status")
    if status == "error":
        if len(checks) == 1 and asked.arguments.get("date"):
            return Step(tool=AVAILABILITY, arguments={"mode": "first"})  # a day it cannot read: the first free
        return Step(text="")
    if status == "empty":
        if len(checks) == 1 and asked.arguments.get("mode") != "first":
            return Step(tool=AVAILABILITY, arguments={"mode": "first", **_date(asked)})  # from that day on
        return Step(text=_said_empty(result, lang))
    before = "\n\n".join(_said_empty(r, lang) for r in checks[:-1]
                         if r.get("status") == "empty" and not r.get("day_passed"))  # a passed day: said below
    text = listing(result, lang)
    if result.get("day_passed") and text:  # "el 30/11" on 1 December: that day has passed, these are from today
        text = f"{prompts.message('booking_day_passed', lang)}\n\n{text}"
    if asked.book and asked.time:
        if result.get("booked"):  # this conversation booked already: no second booking
            return Step(text=already_booked(result, lang))
        fits = [s for s in slots(result) if s.get("time") == asked.time]
        heard = [s for s in fits if _heard(s, asked.heard)]
        if len(heard) == 1:
            return Step(tool=CREATE, arguments={"start": f"{heard[0]['date']}T{heard[0]['time']}",
                                                **asked.details.given()})
        if heard:  # that time on several days: which one
            return Step(text=listing(result, lang, heard))
        if not fits and text:  # not free that day: said first, then the free times
            text = f"{prompts.message('booking_not_free', lang)}\n\n{text}"
    return Step(text=f"{before}\n\n{text}" if before and text else text)


def _heard(slot: dict, heard: Sequence[str]) -> bool:
    """Whether an earlier answer of this conversation read this slot out: its day and time on one line."""
    return any(words.says_slot(line, str(slot.get("date")), str(slot.get("time"))) for line in heard)


def already_booked(result: dict, lang: str) -> str:
    """The booking this conversation made (day, time, code, cited), then how to change it (the cards)."""
    cite = str(result.get("cite_as", ""))
    lines = [f"- {b.get('label')}, {b.get('time')}: {b.get('code')} {cite}" for b in result.get("booked") or []]
    return "\n\n".join((prompts.message("booking_already", lang), "\n".join(lines),
                        prompts.message("booking_change", lang)))


def _date(asked: Plan) -> dict:
    return {"date": asked.arguments["date"]} if asked.arguments.get("date") else {}


def _after_create(result: dict, lang: str, done: list[tuple[str, dict]]) -> Step:
    """The read-back of a booking, or the alternatives to a time just taken; else the free times again."""
    said = result.get("say_exactly")
    if result.get("status") in ("booked", "taken") and isinstance(said, dict) and said:
        return Step(text=str(said.get(lang) or said.get("en") or next(iter(said.values()))))
    checks = [r for n, r in done if n == AVAILABILITY and r.get("status") == "found"]
    return Step(text=listing(checks[-1], lang) if checks else "")


def _said_empty(result: dict, lang: str) -> str:
    said = result.get("say_exactly")
    if isinstance(said, dict) and said.get(lang):
        return str(said[lang])
    return f"{prompts.message('live_empty', lang)} {result.get('cite_as', '')}".strip()


def slots(result: dict) -> list[dict]:
    """Every free slot of an availability result, in order."""
    days = result.get("days")
    if isinstance(days, list) and days:
        return [s for d in days if isinstance(d, dict) for s in d.get("slots") or [] if isinstance(s, dict)]
    return [s for s in result.get("slots") or [] if isinstance(s, dict)]


def listing(result: dict, lang: str, only: Sequence[dict] | None = None) -> str:
    """The free times of an availability result as the answer: the live framing, one cited line per day with its
    times, then the result's sentence on how to book, cited."""
    cite = str(result.get("cite_as", ""))
    by_day: dict[str, tuple[str, list[str]]] = {}
    for slot in (only if only is not None else slots(result)):
        label = _day_label(result, slot)
        by_day.setdefault(str(slot.get("date")), (label, []))[1].append(str(slot.get("time")))
    lines = [f"- {label}: {', '.join(times)} {cite}" for label, times in by_day.values()]
    if not lines:
        return ""
    how = f"\n\n{result['how_to_book']} {cite}" if result.get("how_to_book") else ""
    return f"{prompts.message('live_framing', lang)}\n\n" + "\n".join(lines) + how


def _day_label(result: dict, slot: dict) -> str:
    """The label of the slot's day as the result gives it ("miércoles 2 de diciembre")."""
    for day in result.get("days") or []:
        if isinstance(day, dict) and day.get("date") == slot.get("date") and day.get("label"):
            return str(day["label"])
    label = str(slot.get("label") or slot.get("date"))
    return label.rsplit(",", 1)[0] if "," in label else label
