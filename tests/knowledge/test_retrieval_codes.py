"""Codes are identity (R2, R3): a question naming a product code is answered only from sources carrying it."""
from dataclasses import replace

import pytest

from core.knowledge import sources
from core.knowledge.retrieval import Hit, Tuning, code_first, covers_all_terms


def hit(cid, score, text, type_="text", title=None, similarity=None, code_match=None, language="es"):
    return Hit(chunk_id=cid, source_id=hash(cid) % 10_000, path=f"p/{cid}", title=title or cid, type=type_,
               starred=False, language=language, url="", trained_at="2026-01-01", text=text,
               similarity=score if similarity is None else similarity, bm25=0.0, score=score, found_by="dense",
               code_match=code_match)


# -- pure: ordering -------------------------------------------------------------------------------------
Q = "¿Cuánto pesa el casco Kripto-101?"


def test_without_codes_the_trust_order_is_unchanged():
    hits = [hit("text", 0.99, "x"), hit("qa", 0.80, "y", "qa", similarity=0.95)]
    ordered = code_first(hits, Tuning(qa_close_similarity=0.9), "¿Cuánto pesa?", "es")
    assert [h.chunk_id for h in ordered] == ["qa", "text"] and ordered[0].reason == "close Q&A match"


def test_carriers_go_first_whatever_their_score():
    hits = [hit("neutral", 0.95, "Envíos en 24 horas", code_match=False),
            hit("sheet", 0.80, "Casco Kripto-101: 312 g", code_match=True)]
    assert [h.chunk_id for h in code_first(hits, Tuning(), Q, "es")] == ["sheet", "neutral"]


def test_a_pair_for_the_same_question_about_the_code_is_the_close_match():
    pair = hit("pair", 0.90, "¿Qué peso tiene el casco Kripto-101?\n312 g.", "qa",
               title="¿Qué peso tiene el casco Kripto-101?", similarity=0.95, code_match=True)
    ordered = code_first([hit("sheet", 0.97, "Casco Kripto-101: 312 g", code_match=True), pair],
                         Tuning(qa_close_similarity=0.9), Q, "es")
    assert [h.chunk_id for h in ordered] == ["pair", "sheet"] and ordered[0].reason == "close Q&A match"


def test_a_pair_asking_something_else_about_the_code_goes_after_its_texts():
    pair = hit("tallas", 0.99, "¿En qué tallas está el casco Kripto-101?\nS y M.", "qa",
               title="¿En qué tallas está el casco Kripto-101?", similarity=0.96, code_match=True)
    ordered = code_first([pair, hit("sheet", 0.90, "Casco Kripto-101: 312 g", code_match=True)],
                         Tuning(qa_close_similarity=0.9), Q, "es")
    assert [h.chunk_id for h in ordered] == ["sheet", "tallas"] and ordered[1].reason != "close Q&A match"


def test_when_no_source_carries_the_code_a_pair_about_another_code_is_never_the_close_match():
    other = hit("k102", 0.90, "¿Cuánto pesa el casco Kripto-102?\n298 g.", "qa",
                title="¿Cuánto pesa el casco Kripto-102?", similarity=0.97, code_match=False)
    ordered = code_first([hit("sheet", 0.95, "Casco Kripto-102: 298 g", code_match=False), other],
                         Tuning(qa_close_similarity=0.9), "¿Cuánto pesa el casco Kripto-199?", "es")
    assert [h.chunk_id for h in ordered] == ["sheet", "k102"]
    assert all(h.reason != "close Q&A match" for h in ordered)


@pytest.mark.parametrize("query, text, expected", [
    ("precio del LC-PRO", "LC-PRO: 19,90 € al mes", True),
    ("precio del LC-PRO", "LC-PROX: 19,90 € al mes", False),       # a longer code is another code
    ("peso del Kripto-10", "El Kripto-101 pesa 312 g", False),      # so is one that starts the same
    ("peso del kripto-101", "El KRIPTO101 pesa 312 g", True),       # spelling aside
])
def test_keyword_rule_matches_codes_whole(query, text, expected):
    assert covers_all_terms(query, text, "es") is expected


# -- end to end ---------------------------------------------------------------------------------------
@pytest.fixture
def catalog(ctx, rt):
    for n, grams in ((101, 312), (102, 298), (103, 305)):
        sources.save(ctx, rt.store, f"cascos/kripto-{n}", title=f"Casco Kripto-{n}",
                     content=f"El casco Kripto-{n} pesa {grams} g. Garantía de 2 años.", language="es")
    sources.save(ctx, rt.store, "cascos/faq/peso-102", title="¿Cuánto pesa el casco Kripto-102?",
                 content="El casco Kripto-102 pesa 298 g.", type="qa", language="es")
    sources.save(ctx, rt.store, "envios", title="Envíos", content="Enviamos los cascos en 24 horas.", language="es")
    rt.index.train(ctx)
    return ctx


def test_a_question_naming_a_code_gets_only_sources_carrying_it(catalog, rt):
    result = rt.retriever.search(catalog, "¿Cuánto pesa el casco Kripto-101?")
    assert result.hits[0].path == "cascos/kripto-101" and result.hits[0].code_match is True
    assert all("Kripto-10" not in h.text or "Kripto-101" in h.text for h in result.hits)
    barred = [h for h in result.dropped if h.reason.startswith("names another code")]
    assert {h.path for h in barred} >= {"cascos/faq/peso-102"}
    assert result.codes == ["Kripto-101"] and result.missing_codes == []
    assert result.as_dict()["codes"] == ["Kripto-101"] and result.as_dict()["results"][0]["code_match"] is True


def test_a_code_spelled_with_a_blank_is_the_same_code(catalog, rt):
    result = rt.retriever.search(catalog, "¿cuánto pesa el casco kripto 103?")
    assert result.codes == ["Kripto-103"] and result.hits[0].path == "cascos/kripto-103"


def test_a_code_nobody_carries_is_reported_missing_with_what_was_found(catalog, rt):
    result = rt.retriever.search(catalog, "¿Cuánto pesa el casco Kripto-199?")
    assert result.hits, "what retrieval finds is still returned"
    assert result.missing_codes == ["Kripto-199"] and all(h.code_match is False for h in result.hits)
    assert all(not h.reason.startswith("close Q&A match") for h in result.hits)


def test_a_question_without_codes_is_not_marked(catalog, rt):
    result = rt.retriever.search(catalog, "¿Cuánto tardan los envíos?")
    assert result.codes == [] and "codes" not in result.as_dict()
    assert all(h.code_match is None and "code_match" not in h.as_dict() for h in result.hits)


def test_a_carrier_below_the_floor_is_kept_by_its_code(catalog, rt):
    rt.retriever.tuning = replace(rt.retriever.tuning, min_similarity=0.99)
    result = rt.retriever.search(catalog, "Kripto-102 garantía")
    assert {h.path for h in result.hits} >= {"cascos/kripto-102"}
    assert all(h.code_match for h in result.hits)
