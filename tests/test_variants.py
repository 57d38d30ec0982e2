"""Question variants: Q&A pairs sharing an answer train a per-tenant model that judges which answer a
question asks for (core/variants.py), used by search and by the offline responder."""
from __future__ import annotations

import numpy as np
import pytest

from core import sources, variants
from core.agent.loop import Agent
from core.agent.offline import OfflineResponder, OfflineTuning
from core.variants import FitSettings, Variants, answer_groups, fit, worth_modelling
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
    model = variants.VariantModel(w1, b1, FitSettings().scale, ((0,), (1,), (2,)), "x")
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
    assert all("variant_probability" not in h.as_dict() for h in rt.retriever.search(kb, "¿Hacéis envíos?").hits)


def test_a_new_phrasing_finds_its_answer_first(faq, rt):
    found = rt.retriever.search(faq, "¿Cuántos días tarda en llegar mi pedido?")
    top = found.hits[0]
    assert top.path.startswith("faq/envios/")
    assert top.variant_probability >= variants.SURE
    assert top.reason.startswith("close Q&A match (its phrasings agree")


def test_the_offline_agent_answers_a_new_phrasing_with_the_group_answer(faq, rt):
    # the hashing embedder's similarities are low: the similarity floor that fits it
    result = Agent(rt, OfflineResponder(OfflineTuning(qa_min_similarity=0.3))).ask(faq, "¿Cuántos días tengo para hacer una devolución?")
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
    sources.save(faq, rt.store, source.path, title="¿Cuánto tarda mi envío?", content=SHIPPING, type="qa", language="es")
    rt.index.train(faq)
    assert rt.store.query("SELECT fingerprint FROM variant_models")[0]["fingerprint"] != before[0]["fingerprint"]


def test_another_process_reads_the_refitted_model(faq, rt):
    other = Variants(rt.store, rt.index.embedder)  # what an API worker holds: its own cache, the same database
    first = other.model(faq)
    assert first is not None and len(first.groups) == 2
    _save_groups(faq, rt, {"horario": ("Abrimos de 9 a 18 h.", ["¿Qué horario tenéis?", "¿A qué hora abrís?", "¿Cuándo abre la tienda?"])})
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
    sources.save(other_ctx, rt.store, "faq/uno", title="¿Puedo devolver un producto?", content=RETURNS, type="qa", language="es")
    rt.index.train(other_ctx)
    assert rt.index.variants.model(other_ctx) is None
    hits = rt.retriever.search(other_ctx, "¿Puedo devolver un producto?").hits
    assert [h.path for h in hits] == ["faq/uno"] and hits[0].variant_probability is None


def test_known_questions_are_cached_even_when_visitors_questions_are_not(tmp_path):
    from core.embeddings import CachedEmbedder

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
