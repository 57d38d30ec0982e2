"""Tenant scope is a condition of every query: another tenant's data answers exactly like missing data."""
from __future__ import annotations

import pytest

from core.knowledge import sources
from core.knowledge.keyword_index import KeywordIndex
from core.knowledge.retrieval import Retriever
from core.knowledge.training import Index
from core.knowledge.vector_index import VectorIndex
from tests.conftest import TEST_TUNING

QUERY = "¿Cuál es el plazo para devolver un producto comprado?"


def seed(ctx, rt, n=8):
    for i in range(n):
        sources.save(ctx, rt.store, f"kb/doc{i}", title=f"Documento {i}",
                     content=f"Devolver producto comprado plazo {i}: condiciones número {i} de la tienda.",
                     language="es")
    rt.index.train(ctx)


def isolation_violations(retriever, ctx_a, ctx_b_paths, k=6) -> list[str]:
    """What a search by tenant A returned that belongs to tenant B (and whether A still got its full k)."""
    result = retriever.search(ctx_a, QUERY, k=k)
    leaked = [h.path for h in result.hits if h.path in ctx_b_paths]
    if len(result.hits) < k:
        leaked.append(f"only {len(result.hits)} of {k} results")
    return leaked


def test_search_never_returns_another_tenants_chunks(ctx, other_ctx, rt):
    seed(ctx, rt)
    # tenant B holds a document identical to A's query: the best possible match, if scope leaked
    sources.save(other_ctx, rt.store, "secret/exact", title=QUERY, content=QUERY, language="es")
    rt.index.train(other_ctx)
    assert isolation_violations(rt.retriever, ctx, {"secret/exact"}) == []
    assert rt.retriever.search(other_ctx, QUERY).hits[0].path == "secret/exact"


@pytest.mark.parametrize("verb", ["browse", "read"])
def test_foreign_path_answers_exactly_like_a_missing_one(ctx, other_ctx, rt, verb):
    seed(ctx, rt, 2)
    before = getattr(rt.knowledge, verb)(ctx, "secret/exact").as_dict()
    sources.save(other_ctx, rt.store, "secret/exact", title="Secret", content="Only for Globex.")
    rt.index.train(other_ctx)
    after = getattr(rt.knowledge, verb)(ctx, "secret/exact").as_dict()
    assert after == before and not after["found"]


def test_sources_and_chunks_of_another_tenant_are_invisible(ctx, other_ctx, rt):
    seed(ctx, rt, 1)
    foreign = sources.save(other_ctx, rt.store, "secret/x", title="X", content="Globex only.")
    rt.index.train(other_ctx)
    assert sources.get(ctx, rt.store, "secret/x") is None
    assert sources.get_by_ids(ctx, rt.store, [foreign.id]) == {}
    foreign_chunk = rt.index.chunks_of(other_ctx, foreign.id)[0].id
    assert rt.index.chunks(ctx, [foreign_chunk]) == {}
    assert rt.index.chunks_of(ctx, foreign.id) == []
    with pytest.raises(sources.SourceError, match="No source"):
        sources.set_starred(ctx, rt.store, "secret/x")
    with pytest.raises(sources.SourceError, match="No source or folder"):
        sources.delete(ctx, rt.store, "secret/x")
    assert sources.get(other_ctx, rt.store, "secret/x") is not None


class _SharedVectors(VectorIndex):
    """A broken vector index that drops the tenant condition (one collection for everybody)."""

    def _collection(self, client, tenant_id):
        return super()._collection(client, 0)


class _SharedKeywords(KeywordIndex):
    def _dir(self, tenant_id):
        return super()._dir(0)


class _LeakyIndex(Index):
    def chunks(self, ctx, chunk_ids):
        marks = ",".join("?" * len(chunk_ids))
        rows = self.store.query(
            f"SELECT id, source_id, ordinal, start, end, text, trained_at FROM chunks WHERE id IN ({marks})", chunk_ids)
        from core.knowledge.training import Chunk
        return {r["id"]: Chunk(**r) for r in rows}


def _leaky_sources(ctx, store, ids):
    marks = ",".join("?" * len(ids))
    rows = store.query(f"SELECT id FROM sources WHERE id IN ({marks})", ids)
    found = {}
    for row in rows:
        owner = store.query("SELECT t.slug FROM sources s JOIN tenants t ON t.id = s.tenant_id WHERE s.id = ?",
                            [row["id"]])[0]
        from core.tenancy.context import local_operator
        found.update(sources.get_by_ids(local_operator(store, owner["slug"]), store, [row["id"]]))
    return found


def test_negative_control_the_check_goes_red_when_the_tenant_condition_is_dropped(
        ctx, other_ctx, rt, settings, embedder):
    leaky_index = _LeakyIndex(settings, rt.store, embedder, vectors=_SharedVectors(settings, embedder),
                              keywords=_SharedKeywords(settings.whoosh_dir))
    leaky = Retriever(leaky_index, TEST_TUNING, live_sources=_leaky_sources)
    for path, context in [("kb/doc0", ctx), ("secret/exact", other_ctx)]:
        text = QUERY if path == "secret/exact" else "Devolver producto comprado plazo: condiciones de la tienda."
        sources.save(context, rt.store, path, title=text, content=text, language="es")
        leaky_index.train(context)
    # the same check as above now fails: tenant A is shown tenant B's document
    assert "secret/exact" in isolation_violations(leaky, ctx, {"secret/exact"}, k=2)
    # with any one layer still scoped, nothing leaks: the real retriever over the same shared indexes
    assert isolation_violations(Retriever(leaky_index, TEST_TUNING), ctx, {"secret/exact"}, k=1) == []
