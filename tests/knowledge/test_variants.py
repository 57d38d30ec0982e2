"""Question variants: Q&A pairs sharing an answer train a per-tenant model that judges which answer a
question asks for (core/variants.py), used by search and by the offline responder."""
from __future__ import annotations

import numpy as np
import pytest

from core.agent.loop import Agent
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.knowledge import sources, variants
from core.knowledge.variants import FitSettings, Variants, answer_groups, centroids, fit, worth_modelling
from tests.fakes import HashEmbedder

SHIPPING = "Los pedidos salen en 24 horas y llegan en 2 a 4 días laborables."
RETURNS = "Tienes 30 días naturales para devolver un producto sin usar."
SHIPPING_ASKED = ["¿Cuánto tarda el envío de mi pedido?", "¿En cuántos días llega el pedido?",
                  "¿Cuándo recibo mi pedido?", "¿Cuánto tarda en llegar un paquete?"]
RETURNS_ASKED = ["¿Puedo devolver un producto?", "¿Cuántos días tengo para devolver algo?",
                 "¿Cómo hago una devolución?", "¿Aceptáis devoluciones de productos?"]


def _save_groups(ctx, rt, groups: dict[str, tuple[str, list[str]]]) -> None:
    for name, (answer, asked) in groups.items():
        for n, question in enumerate(asked):
            sources.save(ctx, rt.store, f"faq/{name}/{n}", title=question, content=answer, type="qa", language="es")


@pytest.fixture
def faq(ctx, rt):
    _save_groups(ctx, rt, {"envios": (SHIPPING, SHIPPING_ASKED), "devoluciones": (RETURNS, RETURNS_ASKED)})
    report = rt.index.train(ctx)
    assert report.variant_groups == 2
    return ctx


def _toy(n_per: int = 20, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    centres = np.eye(3, 8, dtype=np.float32)
    x = np.vstack([c + 0.1 * rng.standard_normal((n_per, 8)) for c in centres]).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True), np.repeat(np.arange(3), n_per)


def test_fit_learns_separable_groups_and_is_deterministic():
    x, y = _toy()
    w1, b1 = fit(x, y, 3)
    w2, b2 = fit(x, y, 3)
    assert np.array_equal(w1, w2) and np.array_equal(b1, b2)
    model = variants.VariantModel(w1, b1, FitSettings().scale, ((0,), (1,), (2,)), "x", *centroids(x, y, 3))
    for k in range(3):
        probabilities = model.probabilities(np.eye(3, 8, dtype=np.float32)[k])
        assert probabilities.argmax() == k and probabilities[k] > 0.9
        assert probabilities.sum() == pytest.approx(1.0, abs=1e-5)


def test_groups_are_answers_spacing_and_case_aside(ctx, rt):
    sources.save(ctx, rt.store, "a/1", title="q1", content="Sí, en 24 horas.", type="qa")
    sources.save(ctx, rt.store, "a/2", title="q2", content="sí,  EN 24 horas.", type="qa")
    sources.save(ctx, rt.store, "a/3", title="q3", content="No.", type="qa")
    groups = answer_groups(sources.list_sources(ctx, rt.store))
    assert sorted(len(g) for g in groups) == [1, 2]
    assert not worth_modelling(groups)


def test_a_tenant_without_enough_phrasings_has_no_model(kb, rt):
    sources.save(kb, rt.store, "faq/uno", title="¿Hacéis envíos?", content="Sí.", type="qa")
    assert rt.index.train(kb).variant_groups == 0
    assert rt.index.variants.model(kb) is None
    assert all("variant_agreement" not in h.as_dict() for h in rt.retriever.search(kb, "¿Hacéis envíos?").hits)


def test_a_new_phrasing_finds_its_answer_first(faq, rt):
    found = rt.retriever.search(faq, "¿Cuántos días tarda en llegar mi pedido?")
    top = found.hits[0]
    assert top.path.startswith("faq/envios/")
    assert top.variant_agreement >= variants.SURE
    assert top.reason.startswith("close Q&A match (its phrasings agree")


def test_the_offline_agent_answers_a_new_phrasing_with_the_group_answer(faq, rt):
    # the hashing embedder's similarities are low: the similarity floor that fits it
    result = rt.turns.run(faq, Agent(rt, OfflineResponder(OfflineTuning(qa_min_similarity=0.3))),
                          "¿Cuántos días tengo para hacer una devolución?")
    assert result.status == "answered"
    assert [c["path"].split("/")[1] for c in result.citations] == ["devoluciones"]
    assert "30 días naturales" in result.answer


def test_an_unsure_variant_match_is_not_answered_however_similar():
    qa = {"id": "c1", "type": "qa", "similarity": 0.99, "phrasings_agree": variants.SURE - 0.01,
          "language": "es", "title": "¿Puedo devolver?", "text": f"¿Puedo devolver?\n{RETURNS}"}
    responder = OfflineResponder()
    assert responder.compose("¿Puedo devolver?", "es", [qa]) == responder.compose("", "es", [])
    sure = responder.compose("¿Puedo devolver?", "es", [{**qa, "phrasings_agree": variants.SURE}])
    assert "[[cite:c1]]" in sure
    # the model judges, not the similarity floor: a sure group is answered below the floor too
    low = {**qa, "phrasings_agree": 0.9, "similarity": responder.tuning.qa_min_similarity - 0.05}
    assert "[[cite:c1]]" in responder.compose("¿Puedo devolver?", "es", [low])


def test_retraining_unchanged_refits_nothing_and_a_changed_phrasing_refits(faq, rt):
    before = rt.store.query("SELECT fingerprint, built_at FROM variant_models")
    report = rt.index.train(faq)
    assert report.embedded == 0
    assert rt.store.query("SELECT fingerprint, built_at FROM variant_models") == before
    source = sources.get(faq, rt.store, "faq/envios/0")
    sources.save(faq, rt.store, source.path, title="¿Cuánto tarda mi envío?", content=SHIPPING, type="qa",
                 language="es")
    rt.index.train(faq)
    assert rt.store.query("SELECT fingerprint FROM variant_models")[0]["fingerprint"] != before[0]["fingerprint"]


def test_another_process_reads_the_refitted_model(faq, rt):
    other = Variants(rt.store, rt.index.embedder)  # what an API worker holds: its own cache, the same database
    first = other.model(faq)
    assert first is not None and len(first.groups) == 2
    _save_groups(faq, rt, {"horario": ("Abrimos de 9 a 18 h.",
                                       ["¿Qué horario tenéis?", "¿A qué hora abrís?", "¿Cuándo abre la tienda?"])})
    rt.index.train(faq)
    assert len(other.model(faq).groups) == 3


def test_removing_phrasings_under_the_minimum_drops_the_model(faq, rt):
    for n in range(2, 4):
        sources.delete(faq, rt.store, f"faq/devoluciones/{n}")
    assert rt.index.train(faq).variant_groups == 0
    assert rt.store.query("SELECT COUNT(*) AS n FROM variant_models")[0]["n"] == 0


def test_a_deleted_phrasing_is_gone_from_answers_before_retraining(faq, rt):
    for n in range(len(RETURNS_ASKED)):
        sources.delete(faq, rt.store, f"faq/devoluciones/{n}")
    found = rt.retriever.search(faq, "¿Puedo devolver un producto?")
    assert not any(h.path.startswith("faq/devoluciones/") for h in found.hits)


def test_another_tenants_model_answers_like_no_model(faq, rt, other_ctx):
    sources.save(other_ctx, rt.store, "faq/uno", title="¿Puedo devolver un producto?", content=RETURNS,
                 type="qa", language="es")
    rt.index.train(other_ctx)
    assert rt.index.variants.model(other_ctx) is None
    hits = rt.retriever.search(other_ctx, "¿Puedo devolver un producto?").hits
    assert [h.path for h in hits] == ["faq/uno"] and hits[0].variant_agreement is None


def test_known_questions_are_cached_even_when_visitors_questions_are_not(tmp_path):
    from core.knowledge.embeddings import CachedEmbedder

    inner = HashEmbedder()
    cached = CachedEmbedder(inner, tmp_path / "cache.db", cache_queries=False)
    cached.known_queries(["¿Puedo devolver?"])
    cached.known_queries(["¿Puedo devolver?"])
    cached.queries(["¿Puedo devolver?"])
    assert inner.embedded == 2  # once for the known question, once for the visitor's


def test_pairs_the_model_rules_out_do_not_stand_in_front_of_a_text_that_answers():
    returns = {"id": "t1", "type": "text", "language": "es", "similarity": 0.859, "best_sentence_similarity": 0.91,
               "title": "Devoluciones", "text": RETURNS}
    gift = {"id": "g1", "type": "qa", "language": "es", "similarity": 0.863, "phrasings_agree": 0.0,
            "title": "¿Vendéis cheques regalo?", "text": "¿Vendéis cheques regalo?\nSí, de 25, 50 y 100 €."}
    text = OfflineResponder().compose("¿Cuántos días tengo para devolver un producto?", "es", [returns, gift])
    assert "[[cite:t1]]" in text and "g1" not in text


def test_closeness_comes_from_phrasings_the_centroid_has_not_seen():
    x, y = _toy(n_per=5)
    means, typical, spread = centroids(x, y, 3)
    assert np.allclose(np.linalg.norm(means, axis=1), 1.0, atol=1e-5)
    held_out = [float(x[i] @ (lambda s: s / np.linalg.norm(s))(x[y == y[i]].sum(0) - x[i])) for i in range(len(x))]
    assert typical == pytest.approx(np.percentile(held_out, variants.TYPICAL_PERCENTILE), abs=1e-6)
    assert spread == pytest.approx(max(np.median(held_out) - typical, variants.MIN_SPREAD), abs=1e-6)
    # a group with a single phrasing has nothing held out; identical phrasings keep a minimum spread
    same = np.repeat(np.eye(2, 8, dtype=np.float32), 3, axis=0)
    _, typical, spread = centroids(np.vstack([same, np.eye(1, 8, 5, dtype=np.float32)]),
                                   np.array([0, 0, 0, 1, 1, 1, 2]), 3)
    assert typical == pytest.approx(1.0, abs=1e-6) and spread == variants.MIN_SPREAD


def test_a_question_far_from_every_group_is_not_sure_even_when_the_softmax_is():
    x, y = _toy()
    model = variants.VariantModel(*fit(x, y, 3), FitSettings().scale, ((0,), (1,), (2,)), "x", *centroids(x, y, 3))
    leaning = np.zeros(8, dtype=np.float32)
    leaning[0], leaning[7] = 0.35, 0.94  # mostly about something no group covers, a little like group 0
    leaning /= np.linalg.norm(leaning)
    assert model.probabilities(leaning).argmax() == 0 and model.probabilities(leaning).max() >= variants.SURE
    assert model.agreements(leaning).max() < 0.01  # the softmax picks a group anyway; the distance says no
    new_phrasing = x[0] + 0.05 * np.eye(1, 8, 4, dtype=np.float32)[0]
    new_phrasing /= np.linalg.norm(new_phrasing)
    assert model.agreements(new_phrasing).argmax() == 0 and model.agreements(new_phrasing).max() >= variants.SURE


def test_models_fitted_before_centroids_are_dropped_and_the_next_training_refits(settings, embedder):
    from core.base.store import Store
    from core.runtime import open_runtime
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant

    settings.data_dir.mkdir(parents=True, exist_ok=True)
    old = Store(settings.db_path)  # the database as the previous release left it: a model without centroids
    old.db.execute("DELETE FROM _migrations WHERE name = '010_variant_centroids'")
    old.db.executescript("DROP TABLE variant_models; CREATE TABLE variant_models (tenant_id INTEGER PRIMARY KEY, "
                         "fingerprint TEXT NOT NULL, built_at TEXT NOT NULL, scale REAL NOT NULL, "
                         "dim INTEGER NOT NULL, groups TEXT NOT NULL, weights BLOB NOT NULL, bias BLOB NOT NULL);")
    create_tenant(old, "acme", "Acme")
    old.db.execute("INSERT INTO variant_models VALUES (1, 'old', 'x', 20, 2, '[[1]]', x'00', x'00')")
    old.db.conn.commit()
    old.close()
    rt = open_runtime(settings, embedder=embedder)
    try:
        ctx = local_operator(rt.store, "acme")
        assert rt.store.query("SELECT COUNT(*) AS n FROM variant_models")[0]["n"] == 0
        assert rt.index.variants.model(ctx) is None  # until the next training: the similarity rules
        _save_groups(ctx, rt, {"envios": (SHIPPING, SHIPPING_ASKED), "devoluciones": (RETURNS, RETURNS_ASKED)})
        assert rt.index.train(ctx).variant_groups == 2
        model = rt.index.variants.model(ctx)
        assert model.centroids.shape == (2, embedder.dim) and 0 < model.spread
    finally:
        rt.close()
