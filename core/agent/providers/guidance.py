"""Guidance the offline responder gives around an answer: a person when the visitor asks for one (H1), and the
page section a question is about (H2). Pure functions over the question and the tenant's catalogs."""
from __future__ import annotations

import re

from core.agent.protocol import ToolSpec
from core.knowledge.keyword_index import terms

_PERSON = re.compile(
    # a request to be put in contact ("hablar con una persona", "pásame con un agente", "talk to a human"),
    # never a question that merely mentions someone ("enviar a otra persona", "persona física")
    r"\b(?:hablar|habla|contactar|conversar|chatear)\s+con\s+(?:(?:una?|algún|alguna|el|la)\s+)?"
    r"(?:persona|humano|humana|agente|operador|operadora|alguien|comercial|responsable)\b"
    r"|\b(?:p[áa]same|ponme|pasadme|ponedme|p[áa]sanos)\s+con\b"
    r"|\b(?:poner|pasar|ponerme|pasarme)\s+con\s+(?:(?:una?|el|la)\s+)?"
    r"(?:persona|humano|humana|agente|operador|operadora|alguien|comercial|responsable)\b"
    r"|\b(?:falar|conversar|contactar)\s+com\s+(?:(?:uma?|algum|alguma|o|a)\s+)?"
    r"(?:pessoa|humano|humana|atendente|agente|operador|algu[ée]m)\b"
    r"|\b(?:talk|speak|chat)\s+(?:to|with)\s+(?:(?:a|an|the|some|your)\s+)?"
    r"(?:person|human|agent|someone|somebody|representative|operator|real\s+person)\b"
    r"|\b(?:transfer|connect|put)\s+me\s+(?:to|with|through)\b"
    r"|\b(?:real person|human agent|live agent|agente humano|persona real|pessoa real)\b",
    re.IGNORECASE,
)
#: Share of the question's content words a section description must hold to be pointed at.
MIN_SECTION_OVERLAP = 0.34


def wants_person(question: str) -> bool:
    """The visitor asks to talk to a person of the team (es/pt/en phrasings)."""
    return bool(_PERSON.search(question))


def section_catalog(spec: ToolSpec) -> dict[str, str]:
    """The section catalog as the show_section tool lists it ("- id: description" lines)."""
    out = {}
    for line in spec.description.splitlines():
        if line.startswith("- ") and ": " in line:
            ident, description = line[2:].split(": ", 1)
            out[ident.strip()] = description.strip()
    return out


def best_section(question: str, lang: str, catalog: dict[str, str]) -> str | None:
    """The section whose id and description hold the largest share of the question's content words, when that
    share reaches MIN_SECTION_OVERLAP (ties: the first in the catalog)."""
    wanted = set(terms(lang, question))
    if not wanted:
        return None
    best, best_share = None, 0.0
    for ident, description in catalog.items():
        have = set(terms(lang, f"{ident.replace('_', ' ').replace('-', ' ')} {description}"))
        share = len(wanted & have) / len(wanted)
        if share > best_share:
            best, best_share = ident, share
    return best if best_share >= MIN_SECTION_OVERLAP else None
