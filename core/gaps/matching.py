"""Is this uncovered question the same as one already on the backlog? (G1) — pure functions.

A new (masked) question joins the gap of its nearest stored variant when three things hold:

1. **Similar enough.** The cosine of the two multilingual query embeddings reaches
   ``min_similarity`` in the same language, ``min_similarity_across`` across languages: a question and
   its translation sit further apart in the embedding space than two paraphrases in one language.
2. **Closer than the tenant's background.** Questions to one business all talk about the same few
   things, so in a narrow domain every pair of questions looks similar. Once the tenant has
   ``density_after`` gaps, the bar rises to the ``density_percentile`` of the new question's
   similarities to the gaps (each by its closest variant), plus ``density_margin``, capped at
   ``density_cap`` so a near-repeat always merges: a gap must stand out from the crowd.
3. **Not a word swap.** "de mensual a anual" is not "de anual a mensual". When both questions are in
   the same language, the words they share must appear in the same order (Kendall distance at most
   ``max_order_distance``); cosine alone cannot see the difference (PAWS-X).

Placeholders are not words. A masked question is compared by what it asks, not by the personal values
it carried (#16: "Hola, soy <PERSON>, mi teléfono es <PHONE>" made surfboards, skis and IBAN refunds one
gap): :func:`comparable` drops the clauses that hold a placeholder ("mi teléfono es <PHONE>") or only a
greeting ("Hola,") when enough of the question is left, and the placeholders themselves always; the
embedding and the order guard's words are taken from that text, and a question with no content word
left beyond its personal values (:func:`has_content`) opens a gap of its own instead of joining one.

Thresholds were chosen on the dev splits (``python -m bench gaps --split dev``); see bench/README.md.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import numpy as np

from core.gaps.pii_names import GREETING_CUES, SIGNOFF_CUES
from core.knowledge.keyword_index import terms


@dataclass(frozen=True)
class GapTuning:
    min_similarity: float = 0.91
    min_similarity_across: float = 0.86
    density_after: int = 20
    density_percentile: float = 95.0
    density_margin: float = 0.04
    density_cap: float = 0.97
    max_order_distance: float = 0.01
    candidates: int = 5


@dataclass(frozen=True)
class Candidate:
    """A stored variant the new question could join."""

    variant_id: int
    gap_id: int
    similarity: float


PLACEHOLDER_RE = re.compile(r"<(?:EMAIL|PHONE|CARD|IBAN|ID|URL|IP|PERSON)>")
# clause boundaries: punctuation, and "and" / "but" between clauses ("me llamo <PERSON> y quiero saber...")
CLAUSE_RE = re.compile(r"[,.;:!?¡¿()\n]+|\s(?:y|e|and|but|pero|mas|mais)\s", re.IGNORECASE)
MIN_KEPT_WORDS = 2  # dropping the clauses with placeholders must leave at least this many content words


COURTESY_RE = re.compile(  # a clause that only greets or thanks: "Hola", "Buenas tardes", "Gracias de antemano"
    rf"(?i)(?:\s*(?:{GREETING_CUES}|{SIGNOFF_CUES}|tardes|noches|d[ií]as|a todos|a todas|everyone|team|equipo"
    rf"|de antemano|in advance|desde j[aá])\b)+\s*")


def comparable(masked: str, language: str) -> str:
    """What a masked question asks, without its personal values: the clauses that hold neither a placeholder
    nor only a greeting or a thanks, when they hold MIN_KEPT_WORDS content words, else the whole text;
    placeholders removed in either case."""
    clauses = [c.strip() for c in CLAUSE_RE.split(masked) if c.strip()]
    kept = [c for c in clauses if not PLACEHOLDER_RE.search(c) and not COURTESY_RE.fullmatch(c)]
    if len(kept) == len(clauses):
        return masked  # nothing to drop: the question as it was written
    text = " ".join(kept) if len(words(" ".join(kept), language)) >= MIN_KEPT_WORDS else masked
    return " ".join(PLACEHOLDER_RE.sub(" ", text).split())


def has_content(comparable_words: list[str], masked: str) -> bool:
    """May this question join a gap? Not when nothing but its personal values and their cues is left."""
    return bool(comparable_words) or not PLACEHOLDER_RE.search(masked)


def words(text: str, language: str) -> list[str]:
    """The order-guard tokens: the keyword index's terms (no stop words, accents folded, stemmed), in
    order; stems make "último/última" one word, and without stop words "my"/"I" moving is no swap."""
    return terms(language, text)


def order_distance(a: list[str], b: list[str]) -> float:
    """Share of discordant pairs among the words both texts share (0 = same order, 1 = reversed)."""
    first_a: dict[str, int] = {}
    first_b: dict[str, int] = {}
    for i, w in enumerate(a):
        first_a.setdefault(w, i)
    for i, w in enumerate(b):
        first_b.setdefault(w, i)
    shared = sorted((w for w in first_a if w in first_b), key=first_a.__getitem__)
    seq = [first_b[w] for w in shared]
    n = len(seq)
    if n < 2:
        return 0.0
    discordant = sum(1 for i in range(n) for j in range(i + 1, n) if seq[i] > seq[j])
    return discordant / (n * (n - 1) / 2)


def required_similarity(similarities: np.ndarray, gap_ids: list[int], tuning: GapTuning) -> float:
    """The density bar for this question: its similarity to the tenant's gaps (each gap once, by its
    closest variant, so a much-asked gap does not raise the bar against itself) at a percentile, plus
    a margin, capped so a near-repeat always merges; no bar before ``density_after`` gaps exist."""
    labels, index = np.unique(np.asarray(gap_ids), return_inverse=True)
    if len(labels) < tuning.density_after:
        return -1.0
    per_gap = np.full(len(labels), -1.0)
    np.maximum.at(per_gap, index, similarities)
    return min(float(np.percentile(per_gap, tuning.density_percentile)) + tuning.density_margin, tuning.density_cap)


def best_match(vector: np.ndarray, question_words: list[str], language: str, matrix: np.ndarray,
               variant_ids: list[int], gap_ids: list[int], variant_words: list[list[str] | None],
               variant_languages: list[str], tuning: GapTuning = GapTuning()) -> Candidate | None:
    """The variant whose gap the question joins, or None for a new gap.

    ``matrix`` holds the stored variants' unit vectors as rows, aligned with the lists. A variant whose
    sample was purged (words None) is judged by similarity alone.
    """
    if not len(variant_ids):
        return None
    similarities = matrix @ vector
    density = required_similarity(similarities, gap_ids, tuning)
    for row in np.argsort(-similarities)[: tuning.candidates]:
        similarity = float(similarities[row])
        floor = tuning.min_similarity if variant_languages[row] == language else tuning.min_similarity_across
        if similarity < max(density, min(tuning.min_similarity, tuning.min_similarity_across)):
            break
        if similarity < floor:
            continue
        stored = variant_words[row]
        if stored is not None and variant_languages[row] == language and \
                order_distance(question_words, stored) > tuning.max_order_distance:
            continue
        return Candidate(int(variant_ids[row]), int(gap_ids[row]), similarity)
    return None


@dataclass
class StoredVariants:
    """One tenant's stored variants, in memory, valid while the tenant's backlog version is unchanged."""

    version: int
    ids: list[int] = field(default_factory=list)
    gap_ids: list[int] = field(default_factory=list)
    words: list[list[str] | None] = field(default_factory=list)
    languages: list[str] = field(default_factory=list)
    matrix: np.ndarray | None = None

    def append(self, variant_id: int, gap_id: int, vector: np.ndarray, ws: list[str], language: str) -> None:
        self.ids.append(variant_id)
        self.gap_ids.append(gap_id)
        self.words.append(ws)
        self.languages.append(language)
        row = vector[None, :].astype(np.float32)
        self.matrix = row if self.matrix is None else np.vstack([self.matrix, row])
