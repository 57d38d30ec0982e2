"""Partial answers (A4): the material covers the topic but not the point asked. A provider marks such an answer
with ``[[missing: what is not in the material]]``; the loop takes the mark out before the gate judges the rest and,
once the rest is released, says first, in the visitor's language, what the material does not mention."""
from __future__ import annotations

import re

from core.agent import prompts

MARK = re.compile(r"\[\[missing:\s*([^\]]*)\]\]\s*")


def split(text: str) -> tuple[list[str], str]:
    """What the answer says is missing (empty when it is a full answer), and the answer without the mark."""
    missing: list[str] = []
    for match in MARK.finditer(text):
        missing += [w.strip() for w in re.split(r"[|,;]", match.group(1)) if w.strip() and w.strip() not in missing]
    return missing, MARK.sub("", text).strip()


def render(missing: list[str], released: str, language: str) -> str:
    """The partial answer as shown: what is missing, then the released facts."""
    return f"{prompts.partial_preface(missing, language)}\n\n{released}"
