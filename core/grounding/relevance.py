"""Whether a supported claim addresses the question (A3, strict relevance), judged conservatively.

A cited sentence can be true to its source and still answer something else: the Madrid address for
"¿Tenéis tienda en Valencia?", the Plan Básico price for the Plan Premium. What the question names
(its proper nouns and product or plan codes) is what it asks about, and no word of an answer can stand
in for it: a claim addresses the question when each of those names is written in the claim or in the
text it cites (its immediate context). Nothing else is asked of it: many right answers share no other
word with the question (a figure for "how much", a Spanish source for an English question), so a
question without names is never judged off-topic here. Names are compared folded, with endings free
on long words ("Normandy" ~ "Normandía") and exact on short ones ("Pro", "NFL").
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import Iterable

from core.base.language import fold, stopwords
from core.grounding.claims import LIGHT, proper_nouns

_WORD = re.compile(r"[^\W_]+(?:[-/.][^\W_]+)*")
#: a product or plan code: letters and digits in one token ("Kripto-101", "A12", "X-200")
_CODE = re.compile(r"(?<![\w-])(?=[\w-]*\d)(?=[\w-]*[^\W\d_])[^\W_]+(?:-[^\W_]+)*(?![\w-])")
#: capitalised words a question may open a clause with, or write capitalised without naming anything
_NOT_NAMES = frozenset(fold(w) for w in (
    "what which who whom whose when where why how is are was were do does did can could should would will may "
    "i my me you your we our qué que cuál cuáles quién quiénes cuándo dónde cómo cuánto cuánta cuántos cuántas "
    "por para puedo puedes podéis tenéis hay quem quando onde como quanto quanta quantos quantas posso pode "
    "vocês vocé você eu plan plano tienda loja store shop").split())


_ROMAN = re.compile(r"[ivxlcdm]+")
#: a number with its unit or ordinal ('14th', '5pm', '30kg', '2x'): a figure the question states, not a code
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)?(?:st|nd|rd|th|º|ª|am|pm|h|hrs?|min|s|x|kg|g|km|m|cm|mm|gb|mb|tb|k|€|\$)",
                       re.IGNORECASE)


def _significant(word: str) -> bool:
    return (len(word) > 1 and word not in _NOT_NAMES and word not in stopwords("en") and word not in LIGHT
            and not word.isdigit() and not _ROMAN.fullmatch(word))


def asked_names(question: str) -> tuple[tuple[str, ...], ...]:
    """What the question names, folded: its proper nouns, those written side by side as one name
    ('Martín Lutero', 'Lumen Care': either word names it), and its codes."""
    if not question:
        return ()
    units: list[list[str]] = []
    cursor, last_end = 0, -1
    for name in proper_nouns(question):
        at = question.find(name, cursor)
        words = [fold(w) for w in _WORD.findall(name) if _significant(fold(w))]
        if at < 0 or not words:
            continue
        if units and last_end >= 0 and question[last_end:at].isspace():
            units[-1] += words
        else:
            units.append(words)
        cursor = last_end = at + len(name)
    units += [[fold(c)] for c in _CODE.findall(question) if not _QUANTITY.fullmatch(c)]
    return tuple(dict.fromkeys(tuple(u) for u in units))


@lru_cache(maxsize=512)
def _vocabulary(text: str) -> frozenset[str]:
    return frozenset(w for token in _WORD.findall(fold(text)) for w in {token, *re.split(r"[-/.]", token)})


def _near(name: str, word: str) -> bool:
    """One letter apart (a typo: 'Bedigo' ~ 'Bendigo')."""
    if abs(len(name) - len(word)) > 1 or name[0] != word[0]:
        return False
    short, long_ = sorted((name, word), key=len)
    skips = sum(1 for i in range(len(long_)) if long_[:i] + long_[i + 1:] == short) if len(short) < len(long_) else 0
    return bool(skips) or sum(a != b for a, b in zip(name, word)) == 1


def _named(name: str, words: frozenset[str]) -> bool:
    if name in words:
        return True
    if len(name) <= 4 or any(c.isdigit() for c in name):  # short names and codes: as written
        return False
    head = name[: max(5, len(name) - 2)]
    return any(w.startswith(head) and len(w) - len(name) <= 4 or len(name) >= 6 and name[:-1] in w
               or len(name) >= 5 and _near(name, w) for w in words)


def unaddressed(names: Iterable[tuple[str, ...]], texts: Iterable[str]) -> list[str]:
    """The names of the question that none of ``texts`` (a claim and what it cites) writes; a name of
    several words is written when one of them is. A question naming several things is still addressed
    when one of them is missing (a first name, an acronym the source spells out): [] then."""
    words = frozenset().union(*(_vocabulary(t) for t in texts))
    names = list(names)
    missing = [" ".join(n) for n in names if not any(_named(w, words) for w in n)]
    return missing if len(missing) > (len(names) >= 2) else []
