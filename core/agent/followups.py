"""Follow-up suggestions (P2 ``followups``): questions the knowledge base answers for sure, because they are
the Q&A pairs retrieval selected next to the answer but the answer did not use."""
from __future__ import annotations

from typing import Sequence

from core.language import fold

MAX_FOLLOWUPS = 3


def followups(hits: Sequence[dict], cited_ids: Sequence[str], question: str, limit: int = MAX_FOLLOWUPS) -> list[str]:
    """Titles of the selected Q&A hits that were not cited, best first, without repeats or the question itself."""
    cited, seen = set(cited_ids), {fold(question).strip(" ¿?¡!.")}
    out: list[str] = []
    for hit in hits:
        title = (hit.get("title") or "").strip()
        key = fold(title).strip(" ¿?¡!.")
        if hit.get("type") != "qa" or not hit.get("selected", True) or hit.get("id") in cited or not key or key in seen:
            continue
        seen.add(key)
        out.append(title)
        if len(out) == limit:
            break
    return out
