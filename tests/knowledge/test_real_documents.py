"""The real documents of `python -m bench docs` (bench/docs/): every chunk starts and ends where a unit or a
sentence does, never inside a sentence, a command or a word."""
from __future__ import annotations

from pathlib import Path

import pytest

from core.base.text import sentence_spans
from core.knowledge.chunking import chunk_text
from core.knowledge.extract import extract_file
from core.knowledge.units import units

DOCS = Path(__file__).resolve().parents[2] / "bench" / "docs"
FILES = sorted(p for p in DOCS.iterdir() if p.suffix in (".txt", ".md", ".html", ".pdf")) if DOCS.exists() else []


def boundaries(text: str) -> tuple[set[int], set[int]]:
    """Where a chunk may start and end: units, their sentences (prose) and their lines (code)."""
    starts, ends = set(), set()
    for unit in units(text):
        starts.add(unit.start)
        ends.add(unit.end)
        for a, b in sentence_spans(text, unit.start, unit.end):
            starts.add(a)
            ends.add(b)
    return starts, ends


def test_the_benchmark_documents_are_there():
    assert len(FILES) >= 15


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_no_chunk_starts_or_ends_inside_a_sentence_a_command_or_a_word(path):
    [doc] = extract_file(path.name, path.read_bytes())
    text = doc.content
    starts, ends = boundaries(text)
    for chunk in chunk_text(text):
        assert chunk.start in starts, (path.name, text[max(0, chunk.start - 40):chunk.start + 40])
        assert chunk.end in ends, (path.name, text[max(0, chunk.end - 40):chunk.end + 40])
        assert chunk.start == 0 or not (text[chunk.start - 1].isalnum() and text[chunk.start].isalnum())
        assert chunk.end == len(text) or not (text[chunk.end - 1].isalnum() and text[chunk.end].isalnum())
