"""The words of a booking request, for the offline responder (#19): the day a message names, whether it asks for a
day, a week or the first free times, a time of day, and the customer's details (name, e-mail, phone).

The day is found, not computed: the phrase as the customer wrote it ("mañana", "el martes", "15 de diciembre",
"next Friday", "amanhã") is what the responder passes to ``check_availability`` as its ``date``, and the booking
service reads it relative to today in the business's time zone. Matching runs on the folded text (accents and case
aside) with the same length as the message, so every span points at the words as written. A morning is no
tomorrow ("mañana por la mañana" names one day). Pure functions, es/pt/en.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.agent.providers.op_params import EMAIL
from core.base.language import fold, stopwords

_WEEKDAY = (r"lunes|martes|miercoles|jueves|viernes|sabado|domingo|segunda(?:[\s-]feira)?|terca(?:[\s-]feira)?|"
            r"quarta(?:[\s-]feira)?|quinta(?:[\s-]feira)?|sexta(?:[\s-]feira)?|monday|tuesday|wednesday|thursday|"
            r"friday|saturday|sunday")
_MONTH = (r"enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|setiembre|octubre|noviembre|diciembre|"
          r"janeiro|fevereiro|marco|maio|junho|julho|setembro|outubro|novembro|dezembro|january|february|march|"
          r"april|may|june|july|august|september|october|november|december")
_ORD = r"(?:st|nd|rd|th|º|o)?"
#: each month's names (es, pt, en; folded), by its number
MONTHS = {n: names for n, names in enumerate((
    ("enero", "janeiro", "january"), ("febrero", "fevereiro", "february"), ("marzo", "marco", "march"),
    ("abril", "april"), ("mayo", "maio", "may"), ("junio", "junho", "june"), ("julio", "julho", "july"),
    ("agosto", "august"), ("septiembre", "setiembre", "setembro", "september"), ("octubre", "outubro", "october"),
    ("noviembre", "novembro", "november"), ("diciembre", "dezembro", "december")), 1)}
_DAY_PATTERNS = [
    r"\b\d{4}-\d{2}-\d{2}\b",
    # day/month(/year) numbers, whole ("el 30/11", "3/12/2026", "15-01"): the service answers a past one as past
    r"\b(?:(?:el|o|the)\s+)?(?:(?:dia|day)\s+)?(?<![\d/.-])(?:0?[1-9]|[12]\d|3[01])[/-](?:0?[1-9]|1[0-2])"
    r"(?:[/-](?:\d{4}|\d{2}))?(?![\d/-])",
    rf"\b(?:(?:el|o|the)\s+)?(?:(?:dia|day)\s+)?\d{{1,2}}{_ORD}\s+(?:de\s+|of\s+)?(?:{_MONTH})\b"
    rf"(?:,?\s+(?:de\s+)?\d{{4}})?",
    rf"\b(?:{_MONTH})\s+\d{{1,2}}{_ORD}\b(?:,?\s+\d{{4}})?",
    r"\b(?:pasado\s+manana|depois\s+de\s+amanha|(?:the\s+)?day\s+after\s+tomorrow|manana|amanha|hoy|hoje|today|"
    r"tomorrow)\b",
    rf"\b(?:(?:el|este|esta|el\s+proximo|la\s+proxima|proximo|proxima|next|this|on|na|no|nesta|neste|esta|"
    rf"a\s+proxima|o\s+proximo)\s+)?(?:{_WEEKDAY})\b(?:\s+(?:que\s+viene|que\s+vem|proximo|proxima))?",
    r"\b(?:el|o)\s+dia\s+\d{1,2}\b|\bdia\s+\d{1,2}\b|\bel\s+\d{1,2}\b(?!\s*(?::|h\b|horas?\b|de\s+la\b))"
    r"|\bthe\s+\d{1,2}(?:st|nd|rd|th)\b",
]
_DAY = re.compile("|".join(f"(?:{p})" for p in _DAY_PATTERNS))
#: "mañana" after these is a morning, not tomorrow
_MORNING = re.compile(r"(?:\b(?:la|esta|de|por|en)\s+)$")
_WEEK = re.compile(r"\b(?:(?:la\s+)?semana\s+que\s+(?:viene|vem)|(?:la\s+|a\s+)?proxima\s+semana|next\s+week|"
                   r"esta\s+semana|this\s+week|nesta\s+semana|toda\s+la\s+semana|(?:la|a)\s+semana|the\s+week|"
                   r"semana|week)\b")
_FIRST = re.compile(r"\b(?:lo\s+primero|la\s+primera|el\s+primero|primer\s+hueco|primera\s+hora|cuanto\s+antes|"
                    r"lo\s+antes\s+posible|lo\s+mas\s+pronto|o\s+mais\s+cedo|quanto\s+antes|primeira\s+vaga|"
                    r"primeiro\s+horario|o\s+primeiro|a\s+primeira|first\s+(?:available|free|slot|one)|"
                    r"earliest|as\s+soon\s+as\s+possible|asap|soonest|next\s+(?:available|free))\b")
#: words that make a message about booking at all (a reservation, a free slot, to book)
ANCHOR = re.compile(r"\b(?:reserv\w*|cita|citas|hueco|huecos|disponib\w*|libre|libres|turno|agend\w*|marcar|marco|"
                    r"marcacao|marcacoes|vaga|vagas|livre|livres|disponivel|book|booking|bookings|appointment\w*|"
                    r"slot|slots|available|availability|free)\b")
_CLOCK = re.compile(r"\b([01]?\d|2[0-3])\s*(?::|\.|h)\s*([0-5]\d)\b")
_AT = re.compile(r"\b(?:a\s+las?|sobre\s+las?|hacia\s+las?|para\s+las?|as|a\s+partir\s+das|por\s+volta\s+das|"
                 r"at|around|about|by)\s+([01]?\d|2[0-3])(?:\s*(?:h|hs|horas?)\b)?(?!\s*[:./\d])")
_MERIDIEM = re.compile(r"\b([01]?\d)\s*(am|pm|a\.m\.|p\.m\.)(?!\w)")
_HOUR_H = re.compile(r"\b([01]?\d|2[0-3])\s*h\b(?!\s*\d)")
_LATER = re.compile(r"^\s*(?:y\s+media|e\s+meia|and\s+a\s+half)")
_QUARTER = re.compile(r"^\s*(?:y\s+cuarto|e\s+um\s+quarto|e\s+quinze)")
_AFTERNOON = re.compile(r"^[\s\w]{0,12}?\b(?:de\s+la\s+tarde|de\s+la\s+noche|da\s+tarde|da\s+noite|in\s+the\s+"
                        r"(?:afternoon|evening)|pm|p\.m\.)")
_PART_OF_DAY = re.compile(r"\b(?:(?:por|de|en|a|pela|da|a|in|the|this|esta|esta)\s+)*(?:la\s+)?(?:manana|tarde|noche|"
                          r"mediodia|manha|noite|morning|afternoon|evening|midday|noon)\b")
#: words of a free slot: they ask for the same as "cita" does ("¿tenéis hueco?", "tem vaga?", "any slots?")
_SLOT_WORDS = re.compile(r"\b(?:hueco|huecos|disponibilidad|disponibilidades|disponible|disponibles|vaga|vagas|"
                         r"disponivel|disponiveis|disponibilidade|slot|slots|available|availability|turno|turnos)\b")
PHONE = re.compile(r"(?<![\w@+/:-])\+?\d[\d \-.()]{5,18}\d(?![\w@/:])")
_NAME_CUE = re.compile(r"\b(?:me\s+llamo|mi\s+nombre\s+es|a\s+nombre\s+de|nombre\s*:|soy|chamo-me|me\s+chamo|"
                       r"o\s+meu\s+nome\s+e|meu\s+nome\s+e|em\s+nome\s+de|nome\s*:|sou\s+[oa]|sou|my\s+name\s+is|"
                       r"i\s+am|i'm|im|name\s*:|under\s+the\s+name(?:\s+of)?)\s+")
_NAME_WORD = re.compile(r"[^\W\d_][\w'’-]*")
_PARTICLES = frozenset("de del da das do dos la le van von y e di du".split())
_NOT_NAMES = frozenset(fold(w) for w in (
    "gracias obrigado obrigada thanks please vale ok perfecto perfeito genial great hola ola hello hi buenas "
    "bom dia buenos dias tardes noches good morning afternoon evening sí si yes no nao").split())


@dataclass(frozen=True)
class Day:
    """The day a message names: the words as written, where they are, and whether they name a week."""

    text: str
    span: tuple[int, int]
    week: bool = False


@dataclass(frozen=True)
class Details:
    """What the customer gave for the booking: name, e-mail, phone (each '' when not given)."""

    name: str = ""
    email: str = ""
    phone: str = ""

    def given(self) -> dict:
        return {k: v for k, v in (("name", self.name), ("email", self.email), ("phone", self.phone)) if v}


def folded(text: str) -> str:
    """``text`` folded character by character: the same length, so spans point at the words as written."""
    out = []
    for char in text:
        base = fold(char)
        out.append(base[0] if base else " ")
    return "".join(out)


def _blank(text: str, spans) -> str:
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def day_of(message: str) -> Day | None:
    """The first day the message names (or its week); None when it names none."""
    low = folded(message)
    for m in _DAY.finditer(low):
        if m.group() == "manana" and _MORNING.search(low[max(0, m.start() - 12): m.start()]):
            continue  # "por la mañana": a morning
        return Day(message[m.start(): m.end()].strip(), m.span())
    week = _WEEK.search(low)
    if week and not re.fullmatch(r"semana|week|(?:la|a|the)\s+(?:semana|week)", week.group()):
        return Day(message[week.start(): week.end()].strip(), week.span(), True)
    return None


def says_slot(line: str, day: str, at: str) -> bool:
    """Whether one line of an answer names this slot (``day`` YYYY-MM-DD, ``at`` HH:MM) in any language: its day of
    the month and month ("miércoles 2 de diciembre", "quarta-feira, 2 de dezembro") and its time."""
    try:
        month, mday = int(day[5:7]), int(day[8:10])
    except ValueError:
        return False
    low = folded(line)
    return (at in low and re.search(rf"(?<![\d:\[-]){mday}(?![\d:\]])", low) is not None
            and any(re.search(rf"\b{name}\b", low) for name in MONTHS.get(month, ())))


def asks_week(message: str) -> bool:
    return bool(_WEEK.search(folded(message)))


def asks_first(message: str) -> bool:
    return bool(_FIRST.search(folded(message)))


def anchored(message: str) -> bool:
    """The message speaks of booking: a reservation, an appointment, a free slot, to book."""
    return bool(ANCHOR.search(folded(message)))


def without_when(text: str) -> str:
    """``text`` without its day, week, first-free and time words (they say when, not what is asked)."""
    low = folded(text)
    return _blank(text, [m.span() for pattern in (_DAY, _WEEK, _FIRST, _CLOCK, _AT, _MERIDIEM, _HOUR_H,
                                                  _PART_OF_DAY) for m in pattern.finditer(low)])


def as_booking_words(text: str) -> str:
    """``text`` (folded) with its words of a free slot said as "cita": what the matcher compares."""
    return _SLOT_WORDS.sub("cita", folded(text))


def without_details(text: str) -> str:
    """``text`` without the name, e-mail and phone it gives."""
    found = details_of(text)
    for value in (found.name, found.email, found.phone):
        if value:
            text = text.replace(value, " " * len(value))
    return text


def _masked(message: str) -> str:
    """The folded message without its e-mail addresses, phone numbers and dates (their digits are no time)."""
    low = folded(message)
    low = _blank(low, [m.span() for m in EMAIL.finditer(low)])
    low = _blank(low, [m.span() for m in _DAY.finditer(low) if re.search(r"\d", m.group())])
    return _blank(low, [m.span() for m in PHONE.finditer(low) if len(re.sub(r"\D", "", m.group())) >= 7])


def times_of(message: str) -> list[str]:
    """Every time of day the message names, as "HH:MM" in the order written ("a las 10:30", "17h", "5 pm",
    "a las 5 de la tarde", "às 10h30", "at 9")."""
    low, found = _masked(message), []
    for m in _CLOCK.finditer(low):
        found.append((m.start(), int(m.group(1)), int(m.group(2)), m.end()))
    taken = _blank(low, [(s, e) for s, _, _, e in found])
    for m in _MERIDIEM.finditer(taken):
        hour = int(m.group(1)) % 12 + (12 if m.group(2).startswith("p") else 0)
        found.append((m.start(), hour, 0, len(taken)))
    taken = _blank(taken, [m.span() for m in _MERIDIEM.finditer(taken)])
    for pattern in (_AT, _HOUR_H):
        for m in pattern.finditer(taken):
            rest = taken[m.end():]
            minute = 30 if _LATER.match(rest) else 15 if _QUARTER.match(rest) else 0
            found.append((m.start(), int(m.group(1)), minute, m.end()))
        taken = _blank(taken, [m.span() for m in pattern.finditer(taken)])
    out = []
    for start, hour, minute, end in sorted(found):
        if hour < 12 and _AFTERNOON.match(low[end:]) and not _MERIDIEM.match(low[start:]):
            hour += 12
        out.append(f"{hour:02d}:{minute:02d}")
    return list(dict.fromkeys(out))


def _name_at(message: str, start: int) -> str:
    """The capitalised words of a name starting at ``start`` ("Ana García", "João da Silva"), or ''."""
    words, pos = [], start
    for m in _NAME_WORD.finditer(message, start):
        if message[pos:m.start()].strip() or len(words) >= 5:
            break
        word = m.group()
        if word[0].isupper() and fold(word) not in _NOT_NAMES:
            words.append(word)
        elif words and fold(word) in _PARTICLES:
            words.append(word)
        else:
            break
        pos = m.end()
    while words and fold(words[-1]) in _PARTICLES:
        words.pop()
    return " ".join(words)


def _bare_name(message: str, low: str, shortest: int = 2) -> str:
    """A part of the message (between commas, semicolons or lines) that is only a name of ``shortest`` words or more
    (one when the name was just asked for: "Ana")."""
    for part in re.finditer(r"[^,;.\n]+", low):
        text = message[part.start(): part.end()].strip()
        words = text.split()
        if shortest <= len(words) <= 5 and _name_at(text, 0) == text and not any(fold(w) in stopwords("es") and
                                                                             fold(w) not in _PARTICLES for w in words):
            return text
    return ""


def details_of(message: str, name_asked: bool = False) -> Details:
    """The name, e-mail and phone a message gives ("soy Ana García, ana@example.com, 600 123 123"); a name of one
    word alone ("Ana") only when it was just asked for."""
    low = folded(message)
    email = next((m.group() for m in EMAIL.finditer(message)), "")
    spans = [m.span() for m in EMAIL.finditer(low)] + [m.span() for m in _DAY.finditer(low)]
    rest = _blank(low, spans)
    phone = next((m.group().strip() for m in PHONE.finditer(rest) if len(re.sub(r"\D", "", m.group())) >= 7), "")
    name = ""
    for cue in _NAME_CUE.finditer(low):
        name = _name_at(message, cue.end())
        if name:
            break
    if not name:
        blanked = _blank(message, spans + [m.span() for m in PHONE.finditer(rest)])
        name = _bare_name(blanked, folded(blanked), 1 if name_asked else 2)
    return Details(name, email, phone)


def merged(*found: Details) -> Details:
    """The details of several messages, a later one's value over an earlier one's."""
    out: dict[str, str] = {}
    for details in found:
        out.update(details.given())
    return Details(**out)
