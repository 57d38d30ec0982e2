"""Where sentences end: the one splitter of source text, and the terminator test the gate's claim splitter
shares ('p. ej.', 'J. K.', 'Ph.D.' do not end a sentence)."""
from __future__ import annotations

import re

from core.base.language import fold

_SOURCE_BREAK = re.compile(r"(?<![.!?…])[.!?…]+[\"'»”’)\]]*(?=\s)|\n|(?<=[a-z0-9)\]])[.!?](?=[A-Z¿¡][a-z])"
                           r"|(?<=[A-Z])[.!?](?=[A-Z][a-z])")  # 'century.First', 'IU.Lee': a lost space
NEVER_END = frozenset("p ej e.g i.e p.ej sr sra sres dr dra lic ing aprox approx num nº n.º art pag pág vs cf "
                       "fig tel av avda ud uds vd vds prof mr mrs ms st máx max mín min ref obs".split())
ABBREVIATION = re.compile(r"[^\W\d_]+(?:\.[^\W\d_]+)+")  # 'e.g', 'ph.d', 'u.s'

def is_boundary(text: str, start: int, end: int, lower_may_start: bool = False) -> bool:
    """Whether the terminator text[start:end] ends a sentence ('p. ej.', 'J. K.', 'Ph.D.' do not).

    In an answer a lower-case next word means an abbreviation we do not know: cutting there would
    leave half a claim without its citation. Sources may be lower-cased text: there it cuts."""
    if any(c in text[start:end] for c in "!?…") or text.startswith("..", start):
        return True
    before = text[max(0, start - 24): start].rsplit(None, 1)
    word = fold(before[-1]).lstrip("(¿¡\"'") if before else ""
    if word in NEVER_END or (len(word) == 1 and word.isalpha()) or ABBREVIATION.fullmatch(word):
        return False
    return lower_may_start or not text[end: end + 40].lstrip()[:1].islower()


def trimmed_spans(text: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The spans with their leading and trailing spacing cut off; blank ones dropped."""
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """(start, end) of the sentences of ``text[start:end]``, trimmed of spacing; the one place sentences end."""
    end = len(text) if end is None else end
    out, cursor = [], start
    for m in _SOURCE_BREAK.finditer(text, start, end):
        if m.group(0) == "\n" or is_boundary(text, m.start(), m.end(), lower_may_start=True):
            out.append((cursor, m.end()))
            cursor = m.end()
    out.append((cursor, end))
    return trimmed_spans(text, out)


def sentences(text: str) -> list[str]:
    """The sentences of a source text (also where extraction lost the space: 'century.First')."""
    return [text[a:b] for a, b in sentence_spans(text)]
