"""The chunker (K2): pure and deterministic.

A chunk is a span of the source text of at most ``max_chars`` characters, made of the text's units
(``core.knowledge.units``: paragraphs, lists, tables, code, a command with its sentence, a heading with
what follows it). Units stay whole when they fit; a longer one is cut between sentences (code between
lines; a sentence longer than a chunk between words, a word longer than a chunk where it must). An FAQ
entry (a question and its answer) is a chunk of its own, like a Q&A pair. Neighbouring chunks of running
text overlap by about ``overlap`` characters, starting where a sentence or a unit starts (never inside
one), so a fact on a boundary is found from both sides. A Q&A pair stays one chunk unless it is too long.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from core.base.text import sentence_spans, trimmed_spans
from core.knowledge.units import units as text_units

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
    return trimmed_spans(text, pieces)


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


def _pieces(text: str, start: int, end: int, kind: str, max_chars: int) -> list[tuple[int, int]]:
    """A unit that fits; else its sentences (code: its lines), or word runs of those that do not fit."""
    if end - start <= max_chars:
        return [(start, end)]
    parts = (_spans_between(text, start, end, re.compile(r"\n")) if kind == "code"
             else sentence_spans(text, start, end))
    out: list[tuple[int, int]] = []
    for a, b in parts:
        out.extend(_cut_words(text, a, b, max_chars) if b - a > max_chars else [(a, b)])
    return out


def _starts(text: str, pieces: list[tuple[int, int]], code: set[int]) -> list[int]:
    """Where an overlap may start: every piece, and every sentence inside a piece that is not code."""
    out = []
    for n, (a, b) in enumerate(pieces):
        out.append(a)
        if n not in code:
            out.extend(s for s, _ in sentence_spans(text, a, b)[1:])
    return out


def _overlap_start(starts: list[int], lower: int, chunk_end: int, overlap: int) -> int | None:
    """Where the next chunk starts so it repeats ~overlap chars: the sentence or unit start nearest the target."""
    if overlap <= 0:
        return None
    target = chunk_end - overlap
    window_lo, window_hi = max(lower + 1, chunk_end - overlap * 3 // 2), chunk_end - overlap // 2
    inside = [pos for pos in starts if window_lo <= pos <= window_hi]
    return min(inside, key=lambda pos: (abs(pos - target), pos)) if inside else None


def _pack(text: str, pieces: list[tuple[int, int]], code: set[int], max_chars: int,
          overlap: int) -> list[ChunkSpan]:
    """Consecutive pieces packed into chunks of at most ``max_chars``, neighbours overlapping."""
    starts = _starts(text, pieces, code) if overlap > 0 else []
    chunks: list[ChunkSpan] = []
    i, carry = 0, None
    while i < len(pieces):
        start = pieces[i][0] if carry is None else carry
        if pieces[i][1] - start > max_chars:  # the overlap does not fit in front: the latest start that does
            start = min((pos for pos in starts if pieces[i][1] - max_chars <= pos <= pieces[i][0] and pos >= start),
                        default=pieces[i][0])
        end, j = pieces[i][1], i + 1
        while j < len(pieces) and pieces[j][1] - start <= max_chars:
            end, j = pieces[j][1], j + 1
        chunks.append(ChunkSpan(start, end, text[start:end]))
        carry = _overlap_start(starts, start, end, overlap) if j < len(pieces) else None
        i = j
    return chunks


def chunk_text(text: str, max_chars: int = MAX_CHARS, overlap: int = OVERLAP) -> list[ChunkSpan]:
    """Split ``text`` into overlapping chunks of at most ``max_chars`` characters."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    overlap = max(0, min(overlap, max_chars // 2))
    chunks: list[ChunkSpan] = []
    run: list[tuple[int, int]] = []
    code: set[int] = set()
    for unit in text_units(text):
        pieces = _pieces(text, unit.start, unit.end, unit.kind, max_chars)
        if unit.standalone:  # an FAQ entry: its own chunk(s), no overlap with its neighbours
            chunks += _pack(text, run, code, max_chars, overlap) + _pack(text, pieces, set(), max_chars, overlap)
            run, code = [], set()
            continue
        if unit.kind == "code":
            code.update(range(len(run), len(run) + len(pieces)))
        run += pieces
    return chunks + _pack(text, run, code, max_chars, overlap)


def chunk_qa(question: str, answer: str, max_chars: int = MAX_CHARS, overlap: int = OVERLAP) -> list[ChunkSpan]:
    """A Q&A pair is one chunk (question, newline, answer) unless it is longer than a chunk."""
    text = f"{question.strip()}\n{answer.strip()}"
    if len(text) <= max_chars:
        return [ChunkSpan(0, len(text), text)]
    return chunk_text(text, max_chars, overlap)
