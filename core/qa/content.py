"""What a QA case says the answer must contain (its ``facts``) and must not (its ``forbidden`` texts), pure.

A status and a citation do not show that the answer answers: an answer that only repeats an FAQ heading is
``answered`` and cites the right source. A fact is a text the answer must say ("30 días", "4,95 €"); a
forbidden text one it must never say ("gratis", a competitor's name). Both are matched case- and
accent-insensitively, with whitespace collapsed, as whole words ("30 días" is not found in "130 días"), in the
answer without its citation marks ("[1]") and markdown emphasis ("**30 días**" says "30 días").
"""
from __future__ import annotations

import re
from typing import Iterable

from core.base.language import fold

CONTENT_FIELDS = ("facts", "forbidden")
MAX_TEXTS = 10  # per field and case
MAX_TEXT_CHARS = 200
SHOWN_ANSWER_CHARS = 160  # of the answer, in a failure's detail
_MARKS = re.compile(r"\[\[cite:[^\]]*\]\]|\[\d+(?:\s*,\s*\d+)*\]|[*`]")
_QUOTES = str.maketrans({"’": "'", "‘": "'", "´": "'", "“": '"', "”": '"', "«": '"', "»": '"', "\u00a0": " "})


def normalize(text: str) -> str:
    """The text as a fact is matched in it: no citation marks or emphasis, folded, one space between words."""
    return " ".join(fold(_MARKS.sub(" ", (text or "").translate(_QUOTES))).casefold().split())


def says(answer: str, text: str) -> bool:
    """Does the answer say ``text`` (as whole words, after :func:`normalize` on both)?"""
    wanted = normalize(text)
    start = r"(?<!\w)" if wanted[:1].isalnum() else ""
    end = r"(?!\w)" if wanted[-1:].isalnum() else ""
    return re.search(start + re.escape(wanted) + end, normalize(answer)) is not None


def _texts(value, key: str) -> tuple[str, ...]:
    """One field's texts: a string is one text, a list holds several; blanks and repeats are dropped."""
    if value is None or value == "":
        return ()
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)) or not all(isinstance(t, str) for t in items):
        raise ValueError(f"'{key}' must be a list of texts, e.g. [\"30 días\", \"etiqueta prepagada\"].")
    out: dict[str, str] = {}
    for raw in items:
        text = " ".join(raw.split())
        if not text:
            continue
        if len(text) > MAX_TEXT_CHARS:
            raise ValueError(f"'{key}': “{text[:40]}…” has {len(text)} characters; the limit is {MAX_TEXT_CHARS}. "
                             "Name the fact in a few words.")
        if not normalize(text):
            raise ValueError(f"'{key}': {text!r} has nothing to look for once marks are left out; write words.")
        out.setdefault(normalize(text), text)
    if len(out) > MAX_TEXTS:
        raise ValueError(f"'{key}' has {len(out)} texts; the limit is {MAX_TEXTS} per case.")
    return tuple(out.values())


def clean_content(data: dict) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(facts, forbidden) of a case's fields, checked; ValueError says what is wrong."""
    facts, forbidden = (_texts(data.get(key), key) for key in CONTENT_FIELDS)
    both = [t for t in facts if normalize(t) in {normalize(f) for f in forbidden}]
    if both:
        raise ValueError(f"“{both[0]}” is both a fact the answer must say and a text it must not say; keep one.")
    return facts, forbidden


def _quoted(texts: Iterable[str], joiner: str) -> str:
    return f" {joiner} ".join(f"“{t}”" for t in texts)


def check_content(answer: str, facts: Iterable[str], forbidden: Iterable[str]) -> str:
    """Why the answer fails its facts and forbidden texts ('' when it says every fact and none of the others):
    'the answer does not say “30 días” and says “gratis”, which this case forbids. The answer was: “…”'."""
    missing = [f for f in facts if not says(answer, f)]
    present = [t for t in forbidden if says(answer, t)]
    if not (missing or present):
        return ""
    parts = []
    if missing:
        parts.append(f"the answer does not say {_quoted(missing, 'or')}")
    if present:
        parts.append(f"{'it' if missing else 'the answer'} says {_quoted(present, 'and')}, which this case forbids")
    shown = " ".join((answer or "").split())
    shown = shown if len(shown) <= SHOWN_ANSWER_CHARS else shown[: SHOWN_ANSWER_CHARS - 1] + "…"
    return f"{'; '.join(parts)}. The answer was: “{shown or '(empty)'}”."
