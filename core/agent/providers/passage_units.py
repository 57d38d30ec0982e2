"""The candidate units of a passage, as the offline responder weighs them (A1): its prose sentences and pairs of
adjacent sentences, an FAQ entry's whole answer, a sentence with the command it introduces; and what a unit
stands under (the passage's title, headings and question lines). Headings and question lines are context, never
an answer. Pure.
"""
from __future__ import annotations

import itertools
import re

from core.agent.providers.qa_pairs import lang_of, qa_answer, sentences
from core.base.text import sentences as text_sentences
from core.knowledge.keyword_index import terms

_FENCE_LINE = re.compile(r"^(```|~~~)")
_ANSWER_MARK = re.compile(r"^(?:A|R|Answer|Respuesta|Resposta)\s*[:.]\s+", re.IGNORECASE)
MAX_QUESTION_LINE = 200  # a line of its own ending in '?' and no longer than this is a question, not an answer


def sentence_similarity(passage: dict, unit: str, default: float) -> float:
    """The unit's similarity to the question: the best of the search tool's per-sentence scores for the sentences
    the unit holds (the passage's own similarity when it has none)."""
    scores = passage.get("sentence_similarities")
    if not scores:
        return default
    first = unit.split("\n", 1)[0]
    held = [score for part, score in zip(text_sentences(passage["text"]), scores)
            if part.strip() and (part.strip() in first or first in part)]
    return max(held, default=default)


def passage_parts(body: str) -> list[tuple[str, bool]]:
    """(text, is_code) of a passage: its prose sentences, and each line of its fenced code. Headings, question
    lines (an FAQ entry's question) and questions inside a paragraph are context, never an answer: they are left
    out here."""
    out, in_code = [], False
    for line in body.split("\n"):
        stripped = line.strip()
        if _FENCE_LINE.match(stripped):
            in_code = not in_code
        elif stripped and in_code:
            out.append((stripped, True))
        elif stripped and not is_heading(stripped) and not is_question_line(stripped):
            out += [(sentence, False) for sentence in sentences(_ANSWER_MARK.sub("", stripped))
                    if not sentence.rstrip().endswith("?")]  # a question in a paragraph asks, it does not answer
    return out


def faq_answer(body: str) -> str:
    """An FAQ entry's answer paragraph (the first after its question line, with the code it introduces); ''
    when the passage does not start with a question."""
    lines = [line.strip() for line in body.split("\n") if line.strip() and not is_heading(line.strip())]
    if len(lines) < 2 or not is_question_line(lines[0]) or _FENCE_LINE.match(lines[1]):
        return ""
    parts = passage_parts("\n".join(lines[1:]))
    first = " ".join(sentence for sentence, _ in itertools.takewhile(lambda part: not part[1], parts)
                     if sentence in _ANSWER_MARK.sub("", lines[1]))
    return with_code(first, parts, len(sentences(_ANSWER_MARK.sub("", lines[1])))) if first else ""


def candidate_units(considered: list[dict]) -> list[tuple]:
    """(rank, position, text, passage, language) of each sentence of the passages, and of adjacent pairs; a
    sentence that introduces code ('…create the dictionary:') forms one unit with the code lines after it."""
    units = []
    for rank, passage in enumerate(considered):
        body = qa_answer(passage["text"]) if passage.get("type") == "qa" else passage["text"]
        parts = passage_parts(body)
        answer = faq_answer(body) if passage.get("type") != "qa" else ""
        if answer:  # an FAQ entry: its answer paragraph is one candidate, ahead of its single sentences
            units.append((rank, -1, answer, passage, lang_of(passage)))
        for position, (sentence, code) in enumerate(parts):
            units.append((rank, position, with_code(sentence, parts, position + 1), passage, lang_of(passage)))
            nxt = parts[position + 1] if position + 1 < len(parts) else None
            if nxt is not None and not code and not nxt[1] and not sentence.endswith(":"):
                pair = with_code(f"{sentence} {nxt[0]}", parts, position + 2)  # a fact often spans two sentences
                units.append((rank, position + 0.5, pair, passage, lang_of(passage)))
    return units


def with_code(text: str, parts: list[tuple[str, bool]], after: int) -> str:
    """A text that introduces code ('…create the dictionary:') with the code lines that follow it."""
    following = list(itertools.takewhile(lambda part: part[1], parts[after:]))
    return "\n".join([text, *(line for line, _ in following)]) if text.endswith(":") and following else text


def context_terms(passage: dict, lang: str) -> set[str]:
    """What a sentence of the passage stands under: its title, and its headings and question lines."""
    lines = [line.strip() for line in passage["text"].split("\n")]
    heads = [line.lstrip("#") for line in lines if is_heading(line) or is_question_line(line)]
    return set(terms(lang, " ".join([passage.get("title", ""), *heads])))


def context_text(passage: dict) -> str:
    """The passage's title, headings and question lines (an FAQ entry's question), as written."""
    lines = [line.strip() for line in passage["text"].split("\n")]
    heads = [line for line in lines if is_heading(line) or is_question_line(line)]
    return "\n".join([passage.get("title", ""), *heads])


def question_lines(passage: dict) -> str:
    """The passage's question lines (an FAQ entry's question), as written."""
    return "\n".join(line.strip() for line in passage["text"].split("\n") if is_question_line(line.strip()))


def is_question_line(line: str) -> bool:
    return len(line) <= MAX_QUESTION_LINE and line.rstrip("#").rstrip().endswith("?")


def is_heading(sentence: str) -> bool:
    return sentence.lstrip().startswith("#")
