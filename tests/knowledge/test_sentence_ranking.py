"""Sentence-level ranking: training keeps each chunk's sentence vectors; search blends the chunk's
similarity with its best sentence's (a question usually asks about one sentence of a paragraph)."""
from __future__ import annotations

import numpy as np
import pytest

from core.knowledge import sources
from core.knowledge.retrieval import Tuning, fuse
from core.knowledge.training import sentence_texts, unpack

PARAGRAPH = ("Nuestra tienda abrió en 2010 en Madrid. Vendemos bicicletas de carretera y de montaña. "
             "Los envíos a Canarias tardan de 5 a 8 días laborables. Aceptamos pago con tarjeta y Bizum.")


def _vectors(rt, ctx, path: str) -> np.ndarray | None:
    source = sources.get(ctx, rt.store, path)
    row = rt.store.query("SELECT sentence_vectors FROM chunks WHERE tenant_id = ? AND source_id = ?",
                         [ctx.tenant_id, source.id])[0]
    blob = row["sentence_vectors"]
    return None if blob is None else unpack(blob, rt.index.embedder.dim)


@pytest.fixture
def shop(ctx, rt):
    sources.save(ctx, rt.store, "tienda/sobre", title="Sobre nosotros", content=PARAGRAPH, language="es")
    sources.save(ctx, rt.store, "tienda/corto", title="Horario", content="Abrimos de 10 a 20 h.", language="es")
    sources.save(ctx, rt.store, "faq/bizum", title="¿Aceptáis Bizum?", content="Sí. También tarjeta.", type="qa",
                 language="es")
    rt.index.train(ctx)
    return ctx


def test_each_sentence_of_a_chunk_is_embedded_with_its_title(shop, rt):
    vectors = _vectors(rt, shop, "tienda/sobre")
    source = sources.get(shop, rt.store, "tienda/sobre")
    expected = rt.index.embedder.passages(sentence_texts(source.title, source.type, PARAGRAPH))
    assert vectors.shape == (4, rt.index.embedder.dim)
    assert np.allclose(vectors, expected, atol=1e-2)  # stored as float16
    assert (sentence_texts(source.title, source.type, PARAGRAPH)[2]
            == "Sobre nosotros\nLos envíos a Canarias tardan de 5 a 8 días laborables.")


def test_qa_pairs_and_one_sentence_chunks_keep_no_sentence_vectors(shop, rt):
    assert _vectors(rt, shop, "tienda/corto").shape[0] == 0
    assert _vectors(rt, shop, "faq/bizum").shape[0] == 0
    hits = {h.path: h for h in rt.retriever.search(shop, "¿Aceptáis Bizum?").hits}
    assert hits["faq/bizum"].sentence_similarity is None


def test_search_reports_the_best_sentence_and_ranks_with_it(shop, rt):
    question = "¿Cuánto tardan los envíos a Canarias?"
    hit = next(h for h in rt.retriever.search(shop, question).hits if h.path == "tienda/sobre")
    query = rt.index.embedder.queries([question])[0]
    best = float((_vectors(rt, shop, "tienda/sobre") @ query).max())
    assert hit.sentence_similarity == pytest.approx(best, abs=1e-5)
    assert hit.sentence_similarity > hit.similarity  # the one sentence says it better than the paragraph
    assert hit.score >= fuse(hit.similarity, 0.0, 0.0, True, rt.retriever.tuning, best) - 1e-6  # plus any keyword share


def test_fuse_blends_chunk_and_sentence_similarity():
    tuning = Tuning(sentence_weight=1.0, keyword_weight_same_language=0.0)
    assert fuse(0.70, 0.0, 0.0, True, tuning, 0.90) == pytest.approx(0.80)
    assert fuse(0.70, 0.0, 0.0, True, tuning) == pytest.approx(0.70)  # no sentence vectors: the chunk's own
    assert (fuse(0.70, 0.0, 0.0, True, Tuning(sentence_weight=0.0, keyword_weight_same_language=0.0), 0.90)
            == pytest.approx(0.70))


def test_chunks_trained_before_sentence_vectors_get_them_at_the_next_training(shop, rt):
    with rt.store.write() as db:
        db.execute("UPDATE chunks SET sentence_vectors = NULL WHERE tenant_id = ?", [shop.tenant_id])
    assert rt.retriever.search(shop, "¿Cuánto tardan los envíos a Canarias?").hits[0].sentence_similarity is None
    before = rt.index.embedder.embedded
    rt.index.train(shop)
    assert rt.index.embedder.embedded - before == 4  # the paragraph's four sentences; nothing else changed
    assert _vectors(rt, shop, "tienda/sobre").shape[0] == 4
    rt.index.train(shop)
    assert rt.index.embedder.embedded - before == 4


def test_another_tenants_chunks_have_no_sentence_similarity(shop, rt, other_ctx):
    ids = [c.id for c in rt.index.chunks_of(shop, sources.get(shop, rt.store, "tienda/sobre").id)]
    vector = rt.index.embedder.queries(["envíos a Canarias"])[0]
    assert rt.index.sentence_similarities(shop, vector, ids)
    assert rt.index.sentence_similarities(other_ctx, vector, ids) == {}
