"""What a turn's trace says about retrieval (A8, Q1): why each candidate was selected or dropped, the
rewritten query and the floor, kept in the search call's trace entry and never shown to the model."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from core.agent.builtin_tools import MAX_TRACED_DROPPED, builtin_tools, search_trace
from core.agent.protocol import ToolCall
from core.agent.registry import ToolEnv, ToolRegistry, TurnEvidence
from core.knowledge import sources
from core.knowledge.retrieval import Hit, SearchResult, Tuning, select, weak_reason


def hit(cid, score, source_id=1, text="x" * 100, reason=""):
    return Hit(chunk_id=cid, source_id=source_id, path=f"p/{cid}", title=cid, type="text", starred=False, language="es",
               url="", trained_at="2026-01-01", text=text, similarity=score, bm25=0.0, score=score, found_by="dense",
               reason=reason)


# -- retrieval: the reason a candidate was dropped -------------------------------------------------------
def test_weak_reason_names_the_floor_or_the_relative_margin_and_a_missing_keyword():
    tuning = Tuning(min_similarity=0.74, relative_margin=0.10)
    assert weak_reason(0.70, 0.74, False, tuning) == "below the similarity floor (0.700 < 0.74)"
    assert weak_reason(0.78, 0.82, False, tuning) == "below the relative margin (0.780 < 0.820: best − 0.10)"
    assert weak_reason(0.70, 0.74, True, tuning).endswith("; keyword match without every relevant word")


def test_selection_says_which_limit_held_a_chunk_back_and_selects_the_same_chunks():
    tuning = Tuning(max_chunks=4, per_source_first_pass=2, max_chars=1_000)
    ranked = [hit("a1", 0.9, 1), hit("a2", 0.89, 1),
              hit("a3", 0.88, 1, reason="keyword match with every relevant word"),
              hit("big", 0.87, 2, text="y" * 900), hit("b1", 0.86, 3), hit("b2", 0.85, 3), hit("b3", 0.84, 3)]
    chosen, left = select(ranked, tuning)
    assert [h.chunk_id for h in chosen] == ["a1", "a2", "b1", "b2"]
    assert [h.reason for h in chosen] == ["rank 1", "rank 2", "rank 3", "rank 4"]
    why = {h.chunk_id: h.reason for h in left}
    assert why == {
        "a3": "per-source cap (2 in the first pass); no room left in the second pass",  # not its keyword note
        "big": "over the character budget (1,000 chars)",
        "b3": "over the chunk limit (4)",
    }


def test_second_pass_still_fills_room_the_per_source_cap_left():
    chosen, left = select([hit(f"s{i}", 0.9 - i / 100, 1) for i in range(4)] + [hit("o", 0.5, 2)], Tuning())
    assert [h.reason for h in chosen] == ["rank 1", "rank 2", "rank 3", "rank 4", "second pass"] and left == []


@pytest.fixture
def kb(ctx, rt):
    sources.save(ctx, rt.store, "policies/returns", title="Devoluciones",
                 content="El plazo de devolución es de 30 días naturales desde la entrega.", language="es")
    sources.save(ctx, rt.store, "policies/shipping", title="Envíos",
                 content="Los envíos a Canarias tardan de 5 a 8 días laborables.", language="es")
    rt.index.train(ctx)
    return ctx


def test_search_reports_its_floor_and_a_precise_reason_for_every_dropped_candidate(kb, rt):
    result = rt.retriever.search(kb, "¿Cuál es el plazo de devolución?")
    assert result.hits[0].path == "policies/returns"
    best = max(h.similarity for h in result.hits)
    assert result.floor == pytest.approx(max(rt.retriever.tuning.min_similarity,
                                             best - rt.retriever.tuning.relative_margin))
    assert result.as_dict()["floor"] == round(result.floor, 4)
    assert result.dropped and all(h.reason.startswith(("below the similarity floor", "below the relative margin"))
                                  for h in result.dropped)
    rt.retriever.tuning = replace(rt.retriever.tuning, min_similarity=0.0, relative_margin=0.01)
    margin = rt.retriever.search(kb, "¿Cuál es el plazo de devolución?")
    assert [h.path for h in margin.hits] == ["policies/returns"]
    assert all(h.reason.startswith("below the relative margin") for h in margin.dropped)


# -- tools: the search call's trace entry -------------------------------------------------------------------
def test_a_search_call_traces_rewritten_query_and_every_candidate_but_the_model_sees_none_of_it(kb, rt):
    evidence = TurnEvidence()
    env = ToolEnv(kb, rt, [("user", "¿Cuál es el plazo de devolución?"), ("assistant", "30 días.")], evidence)
    message = ToolRegistry(builtin_tools()).run(env, ToolCall("c1", "search_knowledge", {"query": "¿y eso?"}))
    entry = evidence.calls[-1]
    assert entry["rewritten"].startswith("¿y eso?") and "plazo" in entry["rewritten"] and entry["language"] == "es"
    assert entry["floor"] > 0 and entry["ms"] >= 0
    selected = [c for c in entry["candidates"] if c["selected"]]
    dropped = [c for c in entry["candidates"] if not c["selected"]]
    assert [c["id"] for c in selected] == entry["ids"] and selected[0]["path"] == "policies/returns"
    assert (selected[0]["reason"] == "rank 1"
            and {"score", "similarity", "bm25", "found_by", "type", "title"} <= set(selected[0]))
    assert dropped and all(c["reason"] for c in dropped) and entry["dropped_total"] == len(dropped)
    assert evidence.hits == selected  # the hits of the turn are the selected candidates
    sent = json.loads(message.content)
    assert "candidates" not in sent and "_trace" not in sent and "floor" not in sent
    assert [r["id"] for r in sent["results"]] == entry["ids"]


def test_an_empty_search_still_traces_what_it_dropped(kb, rt):
    evidence = TurnEvidence()
    rt.retriever.tuning = replace(rt.retriever.tuning, min_similarity=0.999)
    ToolRegistry(builtin_tools()).run(ToolEnv(kb, rt, [], evidence),
                                      ToolCall("c1", "search_knowledge",
                                               {"query": "plazo de devolución de bicicletas"}))
    entry = evidence.calls[-1]
    assert entry["status"] == "empty" and entry["ids"] == [] and evidence.hits == []
    assert entry["candidates"] and not any(c["selected"] for c in entry["candidates"])


def test_the_trace_keeps_only_the_best_dropped_candidates():
    found = SearchResult("q", "q", "es", hits=[hit("s", 0.9)],
                         dropped=[hit(f"d{i}", 0.5 - i / 1000, reason="weak") for i in range(MAX_TRACED_DROPPED + 5)])
    trace = search_trace(found)
    assert len(trace["candidates"]) == 1 + MAX_TRACED_DROPPED and trace["dropped_total"] == MAX_TRACED_DROPPED + 5
    assert trace["candidates"][-1]["id"] == f"d{MAX_TRACED_DROPPED - 1}"
