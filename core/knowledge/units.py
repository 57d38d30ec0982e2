"""The units a chunk is made of (K2): what a person reads as one piece. Pure and deterministic.

A text is read as blocks (``core.knowledge.normalize`` writes imports in this form): headings, paragraphs,
questions, lists, tables and fenced code. Blocks are then grouped into *units*:

- an FAQ entry: a question (a heading or a line of its own ending in '?') with the blocks that answer it,
  up to the next heading or question; chunked like a Q&A pair (alone, whole unless longer than a chunk);
- a command with its sentence: a paragraph or list that introduces code ('…create the dictionary:') and
  the code block(s) after it;
- a heading travels with what follows it (a chunk never ends on a heading);
- anything else is its own unit.

Every unit is a span of the text (``text[start:end]``), so chunk boundaries stay exact.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^#{1,6}\s+\S")
_LIST = re.compile(r"^\s*(?:[-*•+]|\d{1,3}[.)])\s+")
MAX_HEADING = 100  # a line of its own longer than this is a paragraph
MAX_QUESTION = 200


@dataclass(frozen=True)
class Block:
    kind: str  # heading | question | paragraph | list | table | code
    start: int
    end: int


@dataclass(frozen=True)
class Unit:
    kind: str  # faq | procedure | section | paragraph | list | table | code
    start: int
    end: int
    question: str = ""  # an FAQ entry's question

    @property
    def standalone(self) -> bool:
        """An FAQ entry is a chunk of its own, like a Q&A pair."""
        return self.kind == "faq"


def _lines(text: str) -> list[tuple[int, int]]:
    """(start, end) of every line, without its newline."""
    out, cursor = [], 0
    for line in text.split("\n"):
        out.append((cursor, cursor + len(line)))
        cursor += len(line) + 1
    return out


def _kind(lines: list[str]) -> str:
    first = lines[0].strip()
    if len(lines) == 1 and _HEADING.match(first):
        return "question" if first.rstrip("#").rstrip().endswith("?") else "heading"
    if all(line.startswith(("    ", "\t")) for line in lines):
        return "code"
    if all(line.lstrip().startswith("|") for line in lines):
        return "table"
    if _LIST.match(first):
        return "question" if len(lines) == 1 and len(first) <= MAX_QUESTION and first.endswith("?") else "list"
    if len(lines) == 1 and len(first) <= MAX_QUESTION and first.endswith("?"):
        return "question"
    if len(lines) == 1 and len(first) <= MAX_HEADING and not re.search(r"[.!;,:…]$", first) and not first[:1].islower():
        return "heading"
    return "paragraph"


def _block(text: str, spans: list[tuple[int, int]]) -> Block:
    lines = [text[a:b] for a, b in spans]
    start = spans[0][0] + len(lines[0]) - len(lines[0].lstrip())
    return Block(_kind(lines), start, spans[-1][1] - (len(lines[-1]) - len(lines[-1].rstrip())))


def blocks(text: str) -> list[Block]:
    """The blocks of a text: fenced code whole (blank lines included), other blocks between blank lines."""
    out, current, fence, fence_start = [], [], None, 0
    for a, b in _lines(text):
        line = text[a:b]
        if fence is not None:
            if line.strip().startswith(fence):
                out.append(Block("code", fence_start, b))
                fence = None
            continue
        opening = FENCE.match(line.strip())
        if opening:
            if current:
                out.append(_block(text, current))
                current = []
            fence, fence_start = opening.group(1), a + len(line) - len(line.lstrip())
            continue
        if line.strip():
            current.append((a, b))
        elif current:
            out.append(_block(text, current))
            current = []
    if fence is not None:  # an unclosed fence runs to the end
        out.append(Block("code", fence_start, len(text.rstrip())))
    if current:
        out.append(_block(text, current))
    return [blk for blk in out if text[blk.start:blk.end].strip()]


def _question_text(text: str, block: Block) -> str:
    return _LIST.sub("", text[block.start:block.end].lstrip("#").strip(), count=1).strip()


def _group(text: str, found: list[Block], i: int) -> tuple[Unit, int]:
    """The unit that starts at block ``i`` and the index of the block after it."""
    block = found[i]
    j = i + 1
    if block.kind == "question" and j < len(found) and found[j].kind not in ("question", "heading"):
        while j < len(found) and found[j].kind not in ("question", "heading"):
            j += 1
        return Unit("faq", block.start, found[j - 1].end, _question_text(text, block)), j
    if block.kind in ("paragraph", "list") and text[block.start:block.end].rstrip().endswith(":") and \
            j < len(found) and found[j].kind == "code":
        while j < len(found) and found[j].kind == "code":
            j += 1
        return Unit("procedure", block.start, found[j - 1].end), j
    kind = {"heading": "section", "question": "paragraph"}.get(block.kind, block.kind)
    return Unit(kind, block.start, block.end), j


def units(text: str) -> list[Unit]:
    """The units of a text, in order (see the module docstring)."""
    found = blocks(text)
    out: list[Unit] = []
    i, heading_start = 0, None
    while i < len(found):
        block = found[i]
        if block.kind == "heading" and i + 1 < len(found) and found[i + 1].kind != "heading":
            heading_start = block.start if heading_start is None else heading_start
            i += 1
            continue
        unit, i = _group(text, found, i)
        if heading_start is not None:  # a heading travels with the unit after it
            unit = Unit(unit.kind, heading_start, unit.end, unit.question)
            heading_start = None
        out.append(unit)
    return out
