"""The per-tenant keyword index (whoosh-reloaded, BM25F), behind one module so an engine swap is local.

Each chunk's text (with its source title) is indexed in the body field of its language, analyzed
with that language's stop words and stemmer; accents are folded *before* stemming so 'facturacion'
matches 'facturación'. Queries are analyzed once per language field and OR-ed, so a question is
matched against each language's chunks with that language's rules.
"""
from __future__ import annotations

import shutil
import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from whoosh import index as whoosh_index, query as wq
from whoosh.analysis import CharsetFilter, LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
from whoosh.fields import ID, STORED, TEXT, Schema
from whoosh.scoring import BM25F
from whoosh.support.charset import accent_map

from core.base.language import ANALYZED

OTHER = "xx"
# A term in more than 1 % of a large index's chunks (and in more than 500) is left out of the keyword
# query, keeping the rarest few: this only ever applies above 50,000 chunks.
COMMON_TERM_SHARE = 0.01
COMMON_TERM_MIN_DOCS = 500
KEEP_RAREST = 3
LANG_FIELDS = {lang: f"body_{lang}" for lang in (*ANALYZED, OTHER)}


@cache
def analyzer(lang: str):
    """Tokenize, lower-case, drop stop words, fold accents, stem (per language)."""
    chain = RegexTokenizer() | LowercaseFilter()
    if lang in ANALYZED:
        return chain | StopFilter(lang=lang) | CharsetFilter(accent_map) | StemFilter(lang=lang)
    return chain | CharsetFilter(accent_map)


def terms(lang: str, text: str) -> list[str]:
    """The analyzed terms of ``text`` in a language's field (unique, in order)."""
    seen: dict[str, None] = {}
    for token in analyzer(lang if lang in ANALYZED else OTHER)(text):
        seen.setdefault(token.text, None)
    return list(seen)


def field_for(lang: str) -> str:
    return LANG_FIELDS.get(lang, LANG_FIELDS[OTHER])


def _schema() -> Schema:
    fields = {name: TEXT(analyzer=analyzer(lang)) for lang, name in LANG_FIELDS.items()}
    return Schema(
        chunk_id=ID(stored=True, unique=True),
        source_id=ID(stored=True),
        path=TEXT(analyzer=RegexTokenizer(r"[^/\s_.-]+") | LowercaseFilter() | CharsetFilter(accent_map)),
        lang=STORED,
        **fields,
    )


@dataclass(frozen=True)
class KeywordDoc:
    chunk_id: str
    source_id: int
    lang: str
    path: str
    text: str  # title + chunk text


@dataclass(frozen=True)
class KeywordHit:
    chunk_id: str
    bm25: float


class KeywordIndex:
    """All tenants' whoosh indexes under one directory, one sub-directory per tenant."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self._searchers: dict[int, object] = {}
        self._lock = threading.Lock()

    def _dir(self, tenant_id: int) -> Path:
        return self.root / f"t{int(tenant_id)}"

    def _open(self, tenant_id: int, create: bool):
        directory = self._dir(tenant_id)
        if whoosh_index.exists_in(str(directory)):
            return whoosh_index.open_dir(str(directory))
        if not create:
            return None
        directory.mkdir(parents=True, exist_ok=True)
        return whoosh_index.create_in(str(directory), _schema())

    def optimize(self, tenant_id: int) -> None:
        """Merge a tenant's segments into one (after a training run): fewer segments, faster queries."""
        ix = self._open(tenant_id, create=False)
        if ix is not None and len(ix._segments()) > 1:
            ix.optimize()

    def replace(self, tenant_id: int, source_ids: list[int], docs: list[KeywordDoc]) -> None:
        """Delete every chunk of ``source_ids`` and add ``docs`` in one commit (idempotent on redo)."""
        ix = self._open(tenant_id, create=True)
        writer = ix.writer(timeout=60)
        try:
            for source_id in source_ids:
                writer.delete_by_term("source_id", str(source_id))
            for doc in docs:
                writer.add_document(
                    chunk_id=doc.chunk_id, source_id=str(doc.source_id), path=doc.path, lang=doc.lang,
                    **{field_for(doc.lang): doc.text},
                )
        except BaseException:
            writer.cancel()
            raise
        writer.commit()

    def keep_only(self, tenant_id: int, chunk_ids: set[str]) -> int:
        """Delete every document of the tenant that is not one of ``chunk_ids``; how many were deleted."""
        ix = self._open(tenant_id, create=False)
        if ix is None:
            return 0
        with ix.searcher() as searcher:
            stale = sorted({f["chunk_id"] for f in searcher.all_stored_fields()} - chunk_ids)
        if stale:
            writer = ix.writer(timeout=60)
            for cid in stale:
                writer.delete_by_term("chunk_id", cid)
            writer.commit()
        return len(stale)

    def search(self, tenant_id: int, text: str, limit: int) -> list[KeywordHit]:
        """BM25F over every language field and the path, best first."""
        searcher = self._searcher(tenant_id)
        if searcher is None:
            return []
        pairs = [(field, t) for lang, field in LANG_FIELDS.items() for t in terms(lang, text)]
        pairs += [("path", t) for t in terms(OTHER, text)]
        with_df = sorted(((searcher.doc_frequency(f, t), f, t) for f, t in pairs), key=lambda x: x[0])
        with_df = [x for x in with_df if x[0] > 0]
        if not with_df:
            return []
        # Terms in a large share of the chunks add little to BM25 but cost a scan of their postings in
        # pure Python: past the cap they are left out, keeping at least the rarest few.
        cap = max(COMMON_TERM_MIN_DOCS, int(searcher.doc_count() * COMMON_TERM_SHARE))
        kept = [x for i, x in enumerate(with_df) if x[0] <= cap or i < KEEP_RAREST]
        clauses = [wq.Term(f, t) for _df, f, t in kept]
        query = wq.Or(clauses)
        # a union tree lets the top-k collector skip blocks that cannot make the top (block-max);
        # whoosh's automatic choice preloads and scores every match on small segments instead
        query.matcher_type = wq.Or.DEFAULT_MATCHER
        results = searcher.search(query, limit=limit)
        return [KeywordHit(hit["chunk_id"], float(hit.score)) for hit in results]

    def unknown_words(self, tenant_id: int, text: str) -> list[str]:
        """The words of ``text`` (as written) that no trained chunk of the tenant contains in any language's
        analysis, nor in a path: what the material never mentions. Stop words are never reported."""
        searcher = self._searcher(tenant_id)
        if searcher is None:
            return []
        out: list[str] = []
        for token in RegexTokenizer()(text):
            word = token.text
            if word in out or any(not terms(lang, word) for lang in ANALYZED):  # a stop word somewhere
                continue
            analyses = [(field, t) for lang, field in LANG_FIELDS.items() for t in terms(lang, word)]
            analyses += [("path", t) for t in terms(OTHER, word)]
            if all(searcher.doc_frequency(field, t) == 0 for field, t in analyses):
                out.append(word)
        return out

    def _searcher(self, tenant_id: int):
        with self._lock:
            current = self._searchers.get(tenant_id)
            if current is not None:
                fresh = current.refresh()
                self._searchers[tenant_id] = fresh
                return fresh
            ix = self._open(tenant_id, create=False)
            if ix is None:
                return None
            searcher = ix.searcher(weighting=BM25F())
            self._searchers[tenant_id] = searcher
            return searcher

    def count(self, tenant_id: int) -> int:
        ix = self._open(tenant_id, create=False)
        return 0 if ix is None else ix.doc_count()

    def drop(self, tenant_id: int) -> None:
        """Remove a tenant's whole keyword index."""
        with self._lock:
            searcher = self._searchers.pop(tenant_id, None)
            if searcher is not None:
                searcher.close()
        shutil.rmtree(self._dir(tenant_id), ignore_errors=True)

    def close(self) -> None:
        with self._lock:
            for searcher in self._searchers.values():
                searcher.close()
            self._searchers.clear()
