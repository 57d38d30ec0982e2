"""The chunker (K2): pure and deterministic.

A chunk is a span of the source text of at most ``max_chars`` characters. Paragraphs stay whole when
they fit; a longer paragraph is cut between sentences (a sentence longer than a chunk is cut between
words, a word longer than a chunk is cut where it must). Neighbouring chunks overlap by about
``overlap`` characters, starting at a sentence boundary when one is near, else at a word boundary, so
a fact on a boundary is found from both sides. A Q&A pair stays one chunk unless it is too long.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

MAX_CHARS = 1600
OVERLAP = 200

_PARAGRAPH_BREAK = re.compile(r"\n[ \t\r\f\v]*\n\s*")
_SENTENCE_END = re.compile(r"(?<=[.!?…;:])[\"'»”)\]]*\s+|\n\s*")
_SPACE = re.compile(r"\s+")


@dataclass(frozen=True)
class ChunkSpan:
    """``text == source[start:end]``."""

    start: int
    end: int
    text: str


def _spans_between(text: str, start: int, end: int, separator: re.Pattern) -> list[tuple[int, int]]:
    """Non-blank pieces of text[start:end] between separator matches, trimmed of whitespace."""
    pieces, cursor = [], start
    for match in separator.finditer(text, start, end):
        pieces.append((cursor, match.start()))
        cursor = match.end()
    pieces.append((cursor, end))
    out = []
    for a, b in pieces:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out


def _cut_words(text: str, start: int, end: int, max_chars: int) -> list[tuple[int, int]]:
    """Cut an over-long sentence between words; a single over-long word is cut at max_chars."""
    out = []
    while end - start > max_chars:
        limit = start + max_chars
        cut = max((m.start() for m in _SPACE.finditer(text, start + 1, limit + 1)), default=None)
        if cut is None:
            cut = limit
        out.append((start, cut))
        start = cut
        while start < end and text[start].isspace():
            start += 1
    if start < end:
        out.append((start, end))
    return out


def _units(text: str, max_chars: int) -> list[tuple[int, int]]:
    """Paragraphs that fit; sentences (or word runs) of those that do not."""
    units: list[tuple[int, int]] = []
    for a, b in _spans_between(text, 0, len(text), _PARAGRAPH_BREAK):
        if b - a <= max_chars:
            units.append((a, b))
            continue
        for sa, sb in _spans_between(text, a, b, _SENTENCE_END):
            units.extend(_cut_words(text, sa, sb, max_chars) if sb - sa > max_chars else [(sa, sb)])
    return units


def _overlap_start(text: str, lower: int, chunk_end: int, overlap: int) -> int | None:
    """Where the next chunk starts so it repeats ~overlap chars: a sentence start near, else a word start."""
    if overlap <= 0:
        return None
    target = chunk_end - overlap
    window_lo, window_hi = max(lower + 1, chunk_end - overlap * 3 // 2), chunk_end - overlap // 2
    best = None
    for match in _SENTENCE_END.finditer(text, max(window_lo - 1, 0), max(window_hi, 0)):
        pos = match.end()
        if window_lo <= pos <= window_hi and (best is None or abs(pos - target) < abs(best - target)):
            best = pos
    if best is not None:
        return best
    pos = max(target, lower + 1)
    while pos < chunk_end and not (text[pos - 1].isspace() and not text[pos].isspace()):
        pos += 1
    return pos if pos < chunk_end else None


def chunk_text(text: str, max_chars: int = MAX_CHARS, overlap: int = OVERLAP) -> list[ChunkSpan]:
    """Split ``text`` into overlapping chunks of at most ``max_chars`` characters."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    overlap = max(0, min(overlap, max_chars // 2))
    units = _units(text, max_chars)
    chunks: list[ChunkSpan] = []
    i, carry = 0, None
    while i < len(units):
        start = units[i][0] if carry is None else carry
        if units[i][1] - start > max_chars:
            # the overlap does not fit in front of this unit: keep what fits, from a word start
            start = max(start, units[i][1] - max_chars)
            while start < units[i][0] and not (text[start - 1].isspace() and not text[start].isspace()):
                start += 1
        end, j = units[i][1], i + 1
        while j < len(units) and units[j][1] - start <= max_chars:
            end, j = units[j][1], j + 1
        chunks.append(ChunkSpan(start, end, text[start:end]))
        if j < len(units):
            carry = _overlap_start(text, start, end, overlap)
        i = j
    return chunks


def chunk_qa(question: str, answer: str, max_chars: int = MAX_CHARS, overlap: int = OVERLAP) -> list[ChunkSpan]:
    """A Q&A pair is one chunk (question, newline, answer) unless it is longer than a chunk."""
    text = f"{question.strip()}\n{answer.strip()}"
    if len(text) <= max_chars:
        return [ChunkSpan(0, len(text), text)]
    return chunk_text(text, max_chars, overlap)
