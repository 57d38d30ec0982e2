"""Units: what a chunk is made of (FAQ entries, a command with its sentence, headings with their text)."""
from __future__ import annotations

from core.knowledge.chunking import chunk_text
from core.knowledge.units import blocks, units

FAQ = ("# Procps FAQ\n\nWhy does ps complain about a bogus '-'?\n\nBecause of the POSIX rules for options.\n\n"
       "Where do I send bug reports?\n\nTo the Debian bug tracking system.\n\nTo build a dictionary:\n\n"
       "```\nzstd --train samples/* -o dict\n```\n\nThat is all.")


def test_blocks_and_their_kinds():
    assert [b.kind for b in blocks(FAQ)] == ["heading", "question", "paragraph", "question", "paragraph",
                                             "paragraph", "code", "paragraph"]


def test_an_faq_entry_is_a_question_with_its_answer_and_a_command_travels_with_its_sentence():
    found = units(FAQ)
    assert [(u.kind, u.question) for u in found] == [
        ("faq", "Why does ps complain about a bogus '-'?"), ("faq", "Where do I send bug reports?")]
    entry = found[0]
    assert FAQ[entry.start:entry.end].startswith("# Procps FAQ\n\nWhy does ps")  # the heading travels with it
    last = FAQ[found[1].start:found[1].end]
    assert last.endswith("That is all.") and "zstd --train" in last  # up to the next question or heading


def test_each_faq_entry_is_a_chunk_of_its_own():
    text = "\n\n".join(f"Question number {n}?\n\nAnswer number {n} is short." for n in range(5))
    assert [c.text for c in chunk_text(text)] == [f"Question number {n}?\n\nAnswer number {n} is short."
                                                  for n in range(5)]


def test_a_command_block_is_never_cut_from_the_sentence_that_introduces_it():
    filler = " ".join(f"Sentence {n} fills the paragraph with words." for n in range(30))
    text = f"{filler}\n\nCreate the dictionary:\n\n```\nzstd --train samples/* -o dict\n```\n\n{filler}"
    chunks = chunk_text(text)
    assert any("Create the dictionary:\n\n```\nzstd --train samples/* -o dict\n```" in c.text for c in chunks)
    assert not any(c.text.startswith(("```", "zstd")) for c in chunks)
