"""Retrieval (R1-R4): query rewrite, hybrid search, fusion, weak-match drop, selection.

Codes are identity (core/knowledge/codes.py): a question naming a product or plan code gets the chunks carrying it
first and never one about another code; when none carries it, what was found comes back marked (``missing_codes``).

``Retriever.search(ctx, query)`` is the one entry point of knowledge search; its tenant comes only
from the authenticated context. Thresholds live in ``Tuning`` (tuned on the bench dev split).
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from typing import Sequence

from core.base.language import content_words, detect, fold
from core.knowledge import codes as codes_mod, sources as sources_mod
from core.knowledge.keyword_index import terms
from core.knowledge.training import Index
from core.knowledge.variants import SURE
from core.tenancy.context import TenantContext

TYPE_RANK = {"qa": 0, "starred": 1, "text": 2, "file": 3, "web": 4}
# product codes: LC-PRO, 48213-B, X200, long numbers (order ids)
_CODE = re.compile(r"\b[A-Z0-9]+(?:-[A-Za-z0-9]+)+\b|\b(?=\w*\d)(?=\w*[A-Za-z])\w{2,}\b|\b\d{4,}\b")
_FOLLOW_UP = re.compile(
    r"^\s*[¿¡]?\s*(y|e|and|also|what about|how about|y qu[eé]|e o|e a|tamb[ié]n|tamb[eé]m|"
    r"entonces|ent[aã]o|and what|so)\b",
    re.IGNORECASE,
)
#: question words carry no subject: "¿Cuánto cuesta?" is as elliptical as "¿Cuesta?"
_INTERROGATIVES = frozenset(
    "cuanto cuanta cuantos cuantas cual cuales que como donde cuando quien quanto quanta quantos quantas qual quais "
    "onde quando quem how what when where which who much many".split())
_BACK_REFERENCE = re.compile(
    r"\b(it|its|that|this|they|them|those|eso|esto|ese|esa|ello|lo|la|los|las|isso|isto|esse|essa|ele|ela)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Tuning:
    """Every retrieval threshold in one place (values chosen on the dev split; see bench/README)."""

    dense_candidates: int = 30
    keyword_candidates: int = 30
    keyword_weight_same_language: float = 0.04
    keyword_weight_other_language: float = 0.02
    # ranking similarity = (chunk similarity + w · best sentence's similarity) / (1 + w); floors stay on the chunk's
    sentence_weight: float = 1.0
    min_similarity: float = 0.74
    relative_margin: float = 0.10  # also weak: this far below the best similarity of the query
    tie_margin: float = 0.005
    qa_close_similarity: float = 0.90
    variant_sure: float = SURE  # a Q&A group this sure is a close match whatever its similarity
    max_chunks: int = 6
    max_chars: int = 12_000
    per_source_first_pass: int = 3


@dataclass(frozen=True)
class Hit:
    """A chunk found for a query, with everything needed to show, rank and cite it."""

    chunk_id: str
    source_id: int
    path: str
    title: str
    type: str
    starred: bool
    language: str
    url: str
    trained_at: str
    text: str
    similarity: float
    bm25: float
    score: float
    found_by: str  # dense | keyword | both
    sentence_similarity: float | None = None  # the chunk's best sentence (chunks of several sentences)
    # each sentence's similarity, in the order of core.base.text.sentences(text) (chunks of several sentences)
    sentence_scores: tuple[float, ...] | None = None
    reason: str = ""
    # a Q&A pair of a modelled answer group: its group's agreement (core/variants.py)
    variant_agreement: float | None = None
    # the question names a product/plan code: whether this chunk carries one of them (None: it names none)
    code_match: bool | None = None

    @property
    def priority(self) -> int:
        """Trust order: Q&A pair > starred source > text > file > web page."""
        if self.type == "qa":
            return TYPE_RANK["qa"]
        return TYPE_RANK["starred"] if self.starred else TYPE_RANK[self.type]

    def as_dict(self) -> dict:
        return {
            "chunk_id": self.chunk_id, "path": self.path, "title": self.title, "type": self.type,
            "starred": self.starred, "language": self.language, "url": self.url, "trained_at": self.trained_at,
            "score": round(self.score, 4), "similarity": round(self.similarity, 4), "bm25": round(self.bm25, 3),
            "found_by": self.found_by, "reason": self.reason, "text": self.text,
            **({} if self.sentence_similarity is None else {"sentence_similarity": round(self.sentence_similarity, 4)}),
            **({} if self.variant_agreement is None else {"variant_agreement": round(self.variant_agreement, 4)}),
            **({} if self.code_match is None else {"code_match": self.code_match}),
        }


@dataclass
class SearchResult:
    query: str
    rewritten: str
    language: str
    hits: list[Hit] = field(default_factory=list)
    dropped: list[Hit] = field(default_factory=list)
    seconds: float = 0.0
    floor: float = 0.0  # the similarity a candidate needed (absolute floor or best − relative margin)
    codes: list[str] = field(default_factory=list)  # the product/plan codes the question names, as written
    # of those, the ones no selected hit carries: the material does not mention them (the hits are about others)
    missing_codes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return {
            "query": self.query, "rewritten": self.rewritten, "language": self.language,
            "results": [h.as_dict() for h in self.hits], "dropped": [h.as_dict() for h in self.dropped],
            "seconds": round(self.seconds, 4), "floor": round(self.floor, 4),
            **({"codes": self.codes, "missing_codes": self.missing_codes} if self.codes else {}),
        }


# -- R1: query rewrite ------------------------------------------------------------------------------
def rewrite(query: str, history: Sequence[tuple[str, str]] = ()) -> str:
    """A follow-up becomes a standalone query: the visitor's words plus the names, codes, numbers and
    content words of their previous question, verbatim and in their language. Standalone questions
    pass unchanged."""
    query = query.strip()
    previous = [text for role, text in history if role == "user" and text.strip()]
    if not previous:
        return query
    lang = detect(query)
    own = content_words(query, lang)
    subject = [w for w in own if w not in _INTERROGATIVES]
    if not (_FOLLOW_UP.search(query) or len(subject) <= 1 or (_BACK_REFERENCE.search(query) and len(own) <= 4)):
        return query
    last = previous[-1]
    own_folded = set(own)
    own_has_entity = bool(_CODE.search(query)) or any(w[:1].isupper() for w in re.findall(r"\w+", query)[1:])
    carried = []
    for position, word in enumerate(re.findall(r"[\w-]+", last)):
        folded = content_words(word, lang)
        if not folded or folded[0] in own_folded or word in carried:
            continue
        # a capital that only starts the sentence is not a name
        is_entity = bool(_CODE.fullmatch(word)) or (word[:1].isupper() and position > 0)
        if is_entity and own_has_entity:
            continue  # the follow-up names its own entity ("¿y el Starter?"): do not drag the old one along
        carried.append(word)
    return f"{query} {' '.join(carried)}".strip() if carried else query


# -- R2/R3: pure ranking helpers ----------------------------------------------------------------------
def fuse(similarity: float, bm25: float, bm25_max: float, same_language: bool, tuning: Tuning,
         sentence_similarity: float | None = None) -> float:
    """Dense similarity (the chunk's, blended with its best sentence's when it has several) plus a
    language-aware share of the max-normalised BM25 score."""
    if sentence_similarity is not None:
        similarity = (similarity + tuning.sentence_weight * sentence_similarity) / (1 + tuning.sentence_weight)
    weight = tuning.keyword_weight_same_language if same_language else tuning.keyword_weight_other_language
    return similarity + (weight * bm25 / bm25_max if bm25_max > 0 else 0.0)


def covers_all_terms(query: str, hit_text: str, lang: str) -> bool:
    """A keyword-only match must contain every relevant word of the question, or every product code it cites."""
    asked = codes_mod.keys(query)
    if asked and codes_mod.carries(hit_text, asked) == asked:
        return True
    wanted = set(terms(lang, query))
    if not wanted:
        return False
    folded = fold(hit_text)
    if not all(term in folded for term in wanted):  # stems of folded words are their prefixes: a cheap reject
        return False
    return wanted <= set(terms(lang, hit_text))


def order_by_trust(hits: list[Hit], tuning: Tuning, promotable=lambda hit: True) -> list[Hit]:
    """Score order; near-ties go to the more trusted type; a close (``promotable``) Q&A match always first."""
    ranked = sorted(hits, key=lambda h: -h.score)
    out: list[Hit] = []
    i = 0
    while i < len(ranked):
        j = i + 1
        while j < len(ranked) and ranked[i].score - ranked[j].score <= tuning.tie_margin:
            j += 1
        out.extend(sorted(ranked[i:j], key=lambda h: (h.priority, -h.score)))
        i = j
    close_qa = [h for h in out if h.type == "qa" and h.similarity >= tuning.qa_close_similarity and promotable(h)]
    if close_qa:
        best = max(close_qa, key=lambda h: h.similarity)
        out.remove(best)
        out.insert(0, replace(best, reason="close Q&A match"))
    return out


def variant_first(ranked: list[Hit], tuning: Tuning, promotable=lambda hit: True) -> list[Hit]:
    """The best phrasing of a Q&A group the variant model is sure of goes first (over any similarity rule)."""
    sure = [h for h in ranked if (h.variant_agreement or 0.0) >= tuning.variant_sure and promotable(h)]
    if not sure:
        return ranked
    best = max(sure, key=lambda h: (h.variant_agreement, h.similarity))
    return [replace(best, reason=f"close Q&A match (its phrasings agree: {best.variant_agreement:.2f})"),
            *(h for h in ranked if h is not best)]


def _names_no_code(hit: Hit) -> bool:
    return not codes_mod.keys(f"{hit.title}\n{hit.text}")


def code_first(candidates: list[Hit], tuning: Tuning, query: str = "", lang: str = "") -> list[Hit]:
    """Trust order with codes as identity: the hits carrying a code the question names first, ranked among
    themselves, and among them a Q&A pair that asks something else about that code (another figure) after the
    texts; then the rest, where a pair about another code is never the close match."""
    if all(h.code_match is None for h in candidates):
        return variant_first(order_by_trust(candidates, tuning), tuning)
    carriers = [h for h in candidates if h.code_match]
    product = {h.title for h in carriers if h.type != "qa"}

    def asks_this(h: Hit) -> bool:
        return h.type != "qa" or (h.language == lang and codes_mod.same_question(query, h.title, lang, product))

    rest = [h for h in candidates if not h.code_match]
    return [*variant_first([*order_by_trust([h for h in carriers if asks_this(h)], tuning),
                            *order_by_trust([h for h in carriers if not asks_this(h)], tuning, lambda h: False)],
                           tuning),
            *variant_first(order_by_trust(rest, tuning, _names_no_code), tuning, _names_no_code)]


def select(ranked: list[Hit], tuning: Tuning) -> tuple[list[Hit], list[Hit]]:
    """At most max_chunks and max_chars; at most per_source_first_pass from one source in the first pass."""
    chosen: list[Hit] = []
    per_source: dict[int, int] = {}
    chars = 0
    deferred: list[Hit] = []
    for hit in ranked:  # a deferred hit's reason says what held it back (the reason it is dropped if it stays out)
        if len(chosen) >= tuning.max_chunks:
            deferred.append(replace(hit, reason=f"over the chunk limit ({tuning.max_chunks})"))
            continue
        if per_source.get(hit.source_id, 0) >= tuning.per_source_first_pass:
            deferred.append(replace(hit, reason=f"per-source cap ({tuning.per_source_first_pass} in the first pass)"))
            continue
        if chars + len(hit.text) > tuning.max_chars:
            deferred.append(replace(hit, reason=f"over the character budget ({tuning.max_chars:,} chars)"))
            continue
        chosen.append(hit if hit.reason else replace(hit, reason=f"rank {len(chosen) + 1}"))
        per_source[hit.source_id] = per_source.get(hit.source_id, 0) + 1
        chars += len(hit.text)
    left: list[Hit] = []
    for hit in deferred:  # second pass: room left goes to the best of what the per-source cap held back
        if len(chosen) < tuning.max_chunks and chars + len(hit.text) <= tuning.max_chars:
            chosen.append(replace(hit, reason="second pass"))
            chars += len(hit.text)
        elif hit.reason.startswith("per-source cap"):
            left.append(replace(hit, reason=f"{hit.reason}; no room left in the second pass"))
        else:
            left.append(hit if hit.reason else replace(hit, reason="not selected (limits)"))
    return chosen, left


def weak_reason(similarity: float, floor: float, keyword_found: bool, tuning: Tuning) -> str:
    """Why a candidate below the floor was dropped: under the absolute similarity floor, or too far below
    the query's best match (the relative margin); and, when keywords found it, that it lacked a word."""
    if similarity < tuning.min_similarity:
        why = f"below the similarity floor ({similarity:.3f} < {tuning.min_similarity:.2f})"
    else:
        why = f"below the relative margin ({similarity:.3f} < {floor:.3f}: best − {tuning.relative_margin:.2f})"
    if keyword_found:
        why += "; keyword match without every relevant word"
    return why


@dataclass
class _Found:
    """What both indexes found for one query, before any floor."""

    dense: dict[str, float]
    keyword: dict[str, float]
    by_code: set[str]  # found by a keyword search for the question's codes alone
    similarity: dict[str, float]
    kept: dict
    live: dict


class Retriever:
    """Knowledge search for one process; the tenant comes from each call's context."""

    def __init__(self, index: Index, tuning: Tuning | None = None, live_sources=None):
        self.index = index
        self.tuning = tuning or Tuning()
        # (ctx, store, ids) -> {id: Source}: stars and deletions are read live, at query time
        self.live_sources = live_sources or (
            lambda ctx, store, ids: sources_mod.get_by_ids(ctx, store, ids, with_content=False))

    def search(self, ctx: TenantContext, query: str, history: Sequence[tuple[str, str]] = (),
               k: int | None = None) -> SearchResult:
        """Ranked, selected chunks for a question (and the weak or surplus ones it dropped, with why)."""
        started = time.perf_counter()
        tuning = self.tuning if k is None else replace(self.tuning, max_chunks=k)
        rewritten = rewrite(query, history)
        lang = detect(rewritten)
        result = SearchResult(query=query, rewritten=rewritten, language=lang)
        if not rewritten.strip():
            return result
        vector = self.index.embedder.queries([rewritten])[0]
        found = self._gather(ctx, rewritten, vector, tuning)
        texts = {cid: f"{found.live[c.source_id].title}\n{c.text}" for cid, c in found.kept.items()}
        asked = codes_mod.asked(rewritten, texts.values())
        carried = {cid: codes_mod.carries(text, asked) for cid, text in texts.items()} if asked else {}
        barred = codes_mod.about_others(carried, texts)
        scored = [cid for cid in found.kept if cid not in barred]
        best = max((found.similarity.get(cid, 0.0) for cid in scored), default=0.0)
        result.floor = max(tuning.min_similarity, best - tuning.relative_margin)
        candidates = self._candidates(ctx, found, vector, tuning, result, carried if asked else None)
        for hit in [h for h in candidates if h.chunk_id in barred]:
            candidates.remove(hit)
            result.dropped.append(replace(hit, reason=f"names another code ({', '.join(barred[hit.chunk_id])}), "
                                                      f"not {', '.join(asked.values())}"))
        result.hits, surplus = select(code_first(candidates, tuning, rewritten, lang), tuning)
        result.dropped = surplus + sorted(result.dropped, key=lambda h: -h.score)
        if asked:
            present = frozenset().union(*(carried[h.chunk_id] for h in result.hits))
            result.codes, result.missing_codes = list(asked.values()), [t for k, t in asked.items() if k not in present]
        result.seconds = time.perf_counter() - started
        return result

    def _gather(self, ctx: TenantContext, rewritten: str, vector, tuning: Tuning) -> _Found:
        """Both indexes' candidates (and, when the question names codes, the chunks a search for the codes alone
        finds), their similarities, and the chunks whose sources still exist."""
        tenant = ctx.tenant_id
        dense = {h.chunk_id: h.similarity for h in self.index.vectors.search(tenant, vector, tuning.dense_candidates)}
        keyword = {h.chunk_id: h.bm25 for h in self.index.keywords.search(tenant, rewritten, tuning.keyword_candidates)}
        named = " ".join(c.text for c in codes_mod.find(rewritten))
        by_code = {h.chunk_id for h in self.index.keywords.search(tenant, named, tuning.keyword_candidates)} if named \
            else set()
        missing = [cid for cid in {**keyword, **dict.fromkeys(by_code)} if cid not in dense]
        similarity = {**self.index.vectors.similarities(tenant, vector, missing), **dense}
        chunks = self.index.chunks(ctx, list({**dense, **keyword, **dict.fromkeys(by_code)}))
        live = self.live_sources(ctx, self.index.store, sorted({c.source_id for c in chunks.values()}))
        # deleted since training: gone from answers at once (and scores come only from what is kept)
        kept = {cid: chunk for cid, chunk in chunks.items() if chunk.source_id in live}
        return _Found(dense, keyword, by_code, similarity, kept, live)

    def _candidates(self, ctx: TenantContext, found: _Found, vector, tuning: Tuning, result: SearchResult,
                    carried: dict[str, frozenset[str]] | None) -> list[Hit]:
        """A Hit per kept chunk: the candidates above the floor (or keyword matches with every relevant word or
        code); the weak ones go to ``result.dropped`` with why."""
        dense, keyword, kept, live, floor = found.dense, found.keyword, found.kept, found.live, result.floor
        bm25_max = max((keyword.get(cid, 0.0) for cid in kept), default=0.0)
        per_sentence = self.index.sentence_scores(ctx, vector, list(kept))
        by_sentence = {cid: max(scores) for cid, scores in per_sentence.items()} if tuning.sentence_weight else {}
        variants = self.index.variants.model(ctx)
        agreement = variants.by_source(vector, [c.source_id for c in kept.values()]) if variants else {}
        candidates: list[Hit] = []
        for cid, chunk in kept.items():
            source = live[chunk.source_id]
            sim, bm25 = found.similarity.get(cid, 0.0), keyword.get(cid, 0.0)
            by_keywords = cid in keyword or cid in found.by_code
            hit = Hit(
                chunk_id=cid, source_id=source.id, path=source.path, title=source.title, type=source.type,
                starred=source.starred, language=source.language, url=source.url, trained_at=chunk.trained_at,
                text=chunk.text, similarity=sim, bm25=bm25,
                score=fuse(sim, bm25, bm25_max, source.language == result.language, tuning, by_sentence.get(cid)),
                sentence_similarity=by_sentence.get(cid), sentence_scores=per_sentence.get(cid),
                found_by="both" if cid in dense and by_keywords else ("dense" if cid in dense else "keyword"),
                variant_agreement=agreement.get(source.id),
                code_match=None if carried is None else bool(carried.get(cid)),
            )
            if sim >= floor or (hit.variant_agreement or 0.0) >= tuning.variant_sure:
                candidates.append(hit)
            elif by_keywords and covers_all_terms(result.rewritten, f"{source.title}\n{chunk.text}", source.language):
                candidates.append(replace(hit, reason="keyword match with every relevant word"))
            else:
                result.dropped.append(replace(hit, reason=weak_reason(sim, floor, bm25 > 0, tuning)))
        return candidates
