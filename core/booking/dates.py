"""Days and times in a customer's words ("mañana", "el martes", "amanhã", "next Friday", "15 de diciembre", "3/12",
"a las 10", "15h", "3 pm"), read relative to today in the business's zone (pure, never raises).

ISO dates and day/month numbers are read here (day first, as in es/pt and most of the world: "3/12" is the 3rd of
December); words go to dateparser (es, pt, en) with ``RELATIVE_BASE`` = today and ``PREFER_DATES_FROM`` = future,
after the part of the day and the time are taken off ("el martes por la tarde a las 17:00" -> "el martes").
A date without its year is the one nearest to today (a tie goes to the future); a day of the month alone is the
next such day from today on.
"""
from __future__ import annotations

import re
from datetime import date, datetime, time, timedelta, timezone
from functools import lru_cache
from zoneinfo import ZoneInfo

from core.base.language import fold

LANGUAGES = ("es", "pt", "en")
MAX_CHARS = 80  # a customer's day is a few words; longer text is not a day and would only slow the parser

#: Articles and fillers dateparser would otherwise stumble on ("el martes", "na terça", "el día 15", "o sábado").
SKIP_TOKENS = ["t", "el", "la", "na", "no", "o", "a", "on", "the", "este", "esta", "this", "próximo", "próxima",
               "proximo", "proxima", "que", "viene", "vem", "día", "dia", "day", "of", "for", "para", "por", "pelo"]

_ISO_DAY = re.compile(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[t ].*)?")
_NUMERIC_DAY = re.compile(r"(?:\D{0,12}\s)?(\d{1,2})[/.-](\d{1,2})(?:[/.-](\d{4}|\d{2}))?")
_TIME = re.compile(r"(?:(?:a|sobre|hacia|desde)\s+las?|a\s+la|las?|[aà]s|at|around|por\s+volta\s+d[ae]s?)?\s*"
                   r"(\d{1,2})(?:\s*[:.h]\s*(\d{2}))?(?::(\d{2}))?\s*(h|hs|hrs|horas|am|a\.\s?m\.?|pm|p\.\s?m\.?)?")
TIME_INSIDE = re.compile(r"(?:\b(?:(?:a|sobre|hacia)\s+las?|a\s+la|[aà]s|at|around)\s+)?"
                          r"(?:\b\d{1,2}\s*[:.h]\s*\d{2}(?::\d{2})?\s*(?:h|hs|am|pm)?\b|\b\d{1,2}\s*(?:h|hs|hrs|horas|am|pm)\b"
                          r"|\b(?:(?:a|sobre|hacia)\s+las?|[aà]s|at)\s+\d{1,2}\b)")
_PART_OF_DAY = re.compile(r"\b(?:por|de|en|pela|pelo|na|da|de|à|a|in|during)\s+(?:la\s+|a\s+|the\s+)?"
                          r"(morning|afternoon|evening|night|manana|tarde|noche|manha|noite|mediodia)\b")
_PM_WORDS = re.compile(r"\b(tarde|noche|noite|afternoon|evening|night|pm|p\.\s?m)\b")
_AM_WORDS = re.compile(r"\b(manana|manha|morning|madrugada|am|a\.\s?m)\b")

#: Phrases dateparser 1.5.0 does not know, as days from today ("pasado mañana": 2).
_OWN_DAYS = {
    **dict.fromkeys(("pasado manana", "depois de amanha", "day after tomorrow", "the day after tomorrow",
                     "depois d'amanha"), 2),
    **dict.fromkeys(("esta manana", "esta tarde", "esta noche", "esta manha", "esta noite", "hoje a tarde",
                     "this morning", "this afternoon", "this evening", "tonight"), 0),
}
_NEXT_WEEK = frozenset(("la semana que viene", "semana que viene", "la proxima semana", "proxima semana",
                        "a proxima semana", "semana que vem", "na proxima semana", "na semana que vem",
                        "next week", "la semana proxima"))


def _yearless(month: int, day: int, today: date) -> date | None:
    """The ``day``/``month`` nearest to today (a tie goes to the future): "15 de enero" said in December is next
    January, "30/11" said on 1 December is yesterday (answered as a past date, never a booking a year ahead)."""
    found = []
    for year in range(today.year - 1, today.year + 5):  # 29 February: the nearest leap year
        try:
            found.append(date(year, month, day))
        except ValueError:
            continue
    return min(found, key=lambda d: (abs((d - today).days), d < today)) if found else None


def _numeric_day(text: str, today: date) -> date | None:
    iso = _ISO_DAY.fullmatch(text)
    if iso:
        try:
            return date(int(iso[1]), int(iso[2]), int(iso[3]))
        except ValueError:
            return None
    numeric = _NUMERIC_DAY.fullmatch(text)
    if not numeric:
        return None
    day, month = int(numeric[1]), int(numeric[2])
    if numeric[3] is None:
        return _yearless(month, day, today)
    year = int(numeric[3]) + (2000 if len(numeric[3]) == 2 else 0)
    try:
        return date(year, month, day)
    except ValueError:
        return None


@lru_cache(maxsize=16)
def _parser(today: date, lang: str):
    """One dateparser parser per (today, language first); its locale data is loaded once per process."""
    from dateparser.date import DateDataParser  # 70 ms to import, 110-170 ms for the first parse: only when needed

    order = [lang] + [other for other in LANGUAGES if other != lang]
    settings = {"RELATIVE_BASE": datetime(today.year, today.month, today.day), "PREFER_DATES_FROM": "future",
                "DATE_ORDER": "DMY", "PREFER_LOCALE_DATE_ORDER": False, "SKIP_TOKENS": SKIP_TOKENS,
                "RETURN_AS_TIMEZONE_AWARE": False}
    return DateDataParser(languages=order, settings=settings)


def _words_day(text: str, today: date, lang: str) -> date | None:
    try:
        data = _parser(today, lang if lang in LANGUAGES else "es").get_date_data(text)
    except Exception:  # dateparser on odd text (overflowing numbers, odd unicode): not a day, never a fault
        return None
    if data is None or data.date_obj is None:
        return None
    found, parts = data.date_obj.date(), tuple(data.parts or ())
    if data.period == "week":
        return max(today, found - timedelta(days=found.weekday()))
    if data.period != "day":
        return None  # "diciembre" is a month, not a day
    if "year" not in parts and "month" in parts:
        return _yearless(found.month, found.day, today)  # dateparser sends today's date to next year
    if parts == ("day",) and found < today:
        nxt = (found.replace(day=1) + timedelta(days=32)).replace(day=1)
        for _ in range(12):
            try:
                return nxt.replace(day=found.day)
            except ValueError:
                nxt = (nxt + timedelta(days=32)).replace(day=1)
    return found


def read_day(text: object, today: date, lang: str = "es") -> date | None:
    """The day ``text`` names, relative to ``today`` (the business's today); None when it names no day."""
    if not isinstance(text, str) or not isinstance(today, date):
        return None
    if isinstance(today, datetime):
        today = today.date()
    words = " ".join(fold(text).replace("\u00a0", " ").split())[:MAX_CHARS].strip(" .,;:!?¿¡")
    if not words:
        return None
    numeric = _numeric_day(words, today)
    if numeric is not None or _ISO_DAY.fullmatch(words) or _NUMERIC_DAY.fullmatch(words):
        return numeric
    if words in _OWN_DAYS:
        return today + timedelta(days=_OWN_DAYS[words])
    words = " ".join(TIME_INSIDE.sub(" ", _PART_OF_DAY.sub(" ", words)).split()).strip(" .,;:")
    if words in _OWN_DAYS:
        return today + timedelta(days=_OWN_DAYS[words])
    if words in _NEXT_WEEK:
        return today + timedelta(days=7 - today.weekday())
    if not words or not any(ch.isalnum() for ch in words):
        return None
    return _numeric_day(words, today) or _words_day(words, today, lang)


def read_time(text: object) -> time | None:
    """The time of day ``text`` names ("10:00", "10.30", "10h", "15h30", "3 pm", "a las 5 de la tarde"); or None."""
    if not isinstance(text, str):
        return None
    words = " ".join(fold(text).split())[:40]
    pm, am = bool(_PM_WORDS.search(words)), bool(_AM_WORDS.search(words))
    bare = _PART_OF_DAY.sub(" ", words).strip(" .,;:")
    match = _TIME.fullmatch(" ".join(bare.split()))
    if not match:
        return None
    hour, minute, second = int(match[1]), int(match[2] or 0), int(match[3] or 0)
    suffix = (match[4] or "").replace(" ", "").replace(".", "")
    pm, am = pm or suffix == "pm", am or suffix == "am"
    if (pm or am) and not 1 <= hour <= 12:
        return None
    if pm and hour < 12:
        hour += 12
    elif am and hour == 12:
        hour = 0
    if hour > 23 or minute > 59 or second > 59:
        return None
    return time(hour, minute, second)


def local_moment(day: date, at: time, zone: ZoneInfo) -> datetime | None:
    """``day`` at ``at`` on the business's clock, in UTC; None when that wall time does not exist (the spring gap).

    A time the autumn change repeats is its first occurrence (fold=0), as the slot grid reads it."""
    naive = datetime.combine(day, at)
    moment = naive.replace(tzinfo=zone, fold=0)
    utc = moment.astimezone(timezone.utc)
    if utc.astimezone(zone).replace(tzinfo=None) != naive:
        return None
    return utc
