"""Follow-up suggestions (P2 ``followups``): questions the knowledge base answers for sure, because they are
Q&A pairs that retrieval found about as close to the question as the best passage, and the answer did not
use. Pairs clearly further away (or in another language) are left out: no suggestion beats a stray one."""
from __future__ import annotations

from typing import Sequence

from core.base.language import fold

MAX_FOLLOWUPS = 3
#: A suggested pair must be at most this far (cosine similarity) below the best hit of the search.
MAX_GAP = 0.03


def followups(hits: Sequence[dict], cited_ids: Sequence[str], question: str, language: str = "",
              limit: int = MAX_FOLLOWUPS, max_gap: float = MAX_GAP) -> list[str]:
    """Titles of selected, uncited Q&A hits in the question's language and within ``max_gap`` of the best
    hit's similarity, closest first, without repeats or the question itself."""
    if not hits:
        return []
    cited, seen = set(cited_ids), {fold(question).strip(" ¿?¡!.")}
    floor = max(float(h.get("similarity", 0.0)) for h in hits) - max_gap
    out: list[str] = []
    for hit in sorted(hits, key=lambda h: -float(h.get("similarity", 0.0))):
        title = (hit.get("title") or "").strip()
        key = fold(title).strip(" ¿?¡!.")
        if (hit.get("type") != "qa" or not hit.get("selected", True) or hit.get("id") in cited or not key
                or key in seen or float(hit.get("similarity", 0.0)) < floor
                or (language and hit.get("language") and hit["language"] != language)):
            continue
        seen.add(key)
        out.append(title)
        if len(out) == limit:
            break
    return out
