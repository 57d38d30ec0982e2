from core.knowledge import sources
from core.knowledge.training import chunk_id


def counts(rt, ctx):
    return rt.index.status(ctx)


def test_training_is_incremental_by_content_hash(ctx, rt, embedder):
    sources.save(ctx, rt.store, "a/one", title="One", content="The first document about refunds.")
    sources.save(ctx, rt.store, "a/two", title="Two", content="The second document about shipping.")
    first = rt.index.train(ctx)
    assert len(first.trained) == 2 and first.chunks == 2
    embedded = embedder.embedded
    again = rt.index.train(ctx)
    assert again.trained == [] and embedder.embedded == embedded  # nothing changed: nothing embedded
    sources.save(ctx, rt.store, "a/two", title="Two", content="The second document about shipping times.")
    third = rt.index.train(ctx)
    assert third.trained == ["a/two"]
    assert counts(rt, ctx) == {"sources": 2, "changed": 0, "chunks": 2, "vectors": 2, "keyword_docs": 2}


def test_unchanged_text_is_not_embedded_again_through_the_cache(settings, ctx):
    from core.knowledge.embeddings import CachedEmbedder
    from core.runtime import open_runtime
    from tests.fakes import HashEmbedder

    inner = HashEmbedder()
    runtime = open_runtime(settings, embedder=CachedEmbedder(inner, settings.embedding_cache_path))
    sources.save(ctx, runtime.store, "x/doc", title="Doc", content="Some stable text.")
    runtime.index.train(ctx)
    sources.move(ctx, runtime.store, "x", "y")  # path changed, text did not
    report = runtime.index.train(ctx)
    assert report.trained == ["y/doc"] and report.embedded == 0 and inner.embedded == 1


def test_deleted_sources_leave_both_indexes_on_training(ctx, rt):
    sources.save(ctx, rt.store, "a/one", title="One", content="Alpha text.")
    sources.save(ctx, rt.store, "a/two", title="Two", content="Beta text.")
    rt.index.train(ctx)
    sources.delete(ctx, rt.store, "a/one")
    report = rt.index.train(ctx)
    assert report.removed_sources == 1
    assert counts(rt, ctx)["vectors"] == 1 and counts(rt, ctx)["keyword_docs"] == 1 and counts(rt, ctx)["chunks"] == 1


def test_progress_interrupt_and_resume(ctx, rt):
    for i in range(5):
        sources.save(ctx, rt.store, f"docs/d{i}", title=f"Doc {i}",
                     content=f"Document number {i} talks about topic {i}.")
    rt.index.batch_sources = 2
    seen = []
    calls = {"n": 0}

    def stop_after_first_batch():
        calls["n"] += 1
        return calls["n"] > 1

    partial = rt.index.train(ctx, should_stop=stop_after_first_batch,
                             progress=lambda step: seen.append((step.sources_done, step.sources_total, step.phase)))
    assert partial.interrupted and len(partial.trained) == 2 and partial.pending == 3
    assert seen == [(0, 5, "embedding"), (2, 5, "embedding"), (2, 5, "finishing"), (2, 5, "done")]
    assert counts(rt, ctx)["changed"] == 3
    rest = rt.index.train(ctx)
    assert len(rest.trained) == 3 and not rest.interrupted
    assert counts(rt, ctx) == {"sources": 5, "changed": 0, "chunks": 5, "vectors": 5, "keyword_docs": 5}


def test_redoing_a_batch_is_idempotent(ctx, rt):
    """A crash after indexing but before marking trained: the redo leaves no duplicates."""
    source = sources.save(ctx, rt.store, "d/x", title="X", content="Some content here.")
    rt.index._train_batch(ctx, [source])
    rt.store.db.execute("UPDATE sources SET trained_hash = NULL WHERE id = ?", [source.id])  # as if the mark was lost
    rt.index.train(ctx)
    assert counts(rt, ctx) == {"sources": 1, "changed": 0, "chunks": 1, "vectors": 1, "keyword_docs": 1}


def test_edit_during_training_stays_changed(ctx, rt):
    source = sources.save(ctx, rt.store, "d/x", title="X", content="Version one.")
    sources.save(ctx, rt.store, "d/x", title="X", content="Version two.")
    rt.index._train_batch(ctx, [source])  # trains the stale read of version one
    assert sources.get(ctx, rt.store, "d/x").changed


def test_chunk_ids_are_stable_and_change_with_text():
    assert chunk_id(1, 0, "abc") == chunk_id(1, 0, "abc")
    assert chunk_id(1, 0, "abc") != chunk_id(1, 0, "abd") != chunk_id(2, 0, "abc")


def test_long_source_gets_several_chunks_with_title_indexed(ctx, rt):
    body = "\n\n".join(f"Paragraph {i}. " + "Lorem ipsum dolor sit amet. " * 40 for i in range(4))
    source = sources.save(ctx, rt.store, "long/doc", title="Pro plan", content=body)
    rt.index.train(ctx)
    chunks = rt.index.chunks_of(ctx, source.id)
    assert len(chunks) >= 4 and all(len(c.text) <= 1600 for c in chunks)
    hits = rt.index.keywords.search(ctx.tenant_id, "pro plan", 10)
    assert {h.chunk_id for h in hits} == {c.id for c in chunks}  # the title is indexed with every chunk


def test_full_retrain_rebuilds_both_indexes(ctx, rt, embedder):
    sources.save(ctx, rt.store, "a/one", title="One", content="Alpha text.")
    sources.save(ctx, rt.store, "a/two", title="Two", content="Beta text.")
    rt.index.train(ctx)
    before = embedder.embedded
    report = rt.index.train(ctx, full=True)
    assert len(report.trained) == 2 and embedder.embedded == before + 2
    assert counts(rt, ctx) == {"sources": 2, "changed": 0, "chunks": 2, "vectors": 2, "keyword_docs": 2}
    assert rt.retriever.search(ctx, "alpha text").hits[0].path == "a/one"
