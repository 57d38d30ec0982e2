"""Live results as citations (A3): [[cite:live-N]] is checked against that result's data with the live bar, its
numbers strict; it holds for the turn that fetched it only; the fixed 'nothing found' sentence passes citing an
empty result and nothing else does."""
from __future__ import annotations

import json

import pytest

from core.agent import prompts
from core.agent.loop import Agent
from core.agent.registry import Tool, ToolKind
from core.grounding.gate import Evidence, check, release
from tests.fakes import ScriptedProvider

FOUND = json.dumps({"status": "found", "operation": "order_status", "title": "Estado del pedido",
                    "params": {"order_id": "1001"}, "fetched_at": "2026-12-01T10:00:00Z",
                    "data": {"order_id": "1001", "estado": "enviado", "transportista": "SEUR",
                             "entrega_prevista": "2026-12-04", "total": "59,90 EUR", "unidades": 3}},
                   ensure_ascii=False)
EMPTY = json.dumps({"status": "empty", "operation": "order_status", "title": "Estado del pedido",
                    "params": {"order_id": "9999"}, "message": "The live source returned nothing."})
KNOWLEDGE = "Los pedidos enviados llegan en 2 a 3 días laborables."
EVIDENCE = Evidence({"a1b2c3d4e5f6": KNOWLEDGE}, live_ids={"live-1": FOUND, "live-2": EMPTY},
                    live_empty=frozenset({"live-2"}), live=(FOUND,))


def verdicts(answer: str, evidence: Evidence = EVIDENCE) -> list[str]:
    return [c.verdict for c in check(answer, evidence, prompts.exempt_sentences()).claims]


@pytest.mark.parametrize("answer", [
    "Tu pedido 1001 está enviado. [[cite:live-1]]",
    "El transportista es SEUR y la entrega prevista es el 04/12/2026. [[cite:live-1]]",
    "- total: 59,90 EUR [[cite:live-1]]\n- unidades: 3 [[cite:live-1]]",
    "Your order 1001 ships with SEUR. [[cite:live-1]]",  # the data's words, across languages: names and numbers
])
def test_a_claim_citing_a_live_result_that_says_it_is_live_data(answer):
    assert set(verdicts(answer)) == {"live_data"}
    assert check(answer, EVIDENCE, prompts.exempt_sentences()).ok


@pytest.mark.parametrize("answer, number", [
    ("Tu pedido 1002 está enviado. [[cite:live-1]]", "1002"),
    ("El total es 69,90 EUR. [[cite:live-1]]", "69,90"),
    ("La entrega prevista es el 05/12/2026. [[cite:live-1]]", "05"),  # the day that differs
    ("Son 7 unidades. [[cite:live-1]]", "7"),
])
def test_a_wrong_number_citing_a_live_result_is_a_value_mismatch(answer, number):
    [claim] = check(answer, EVIDENCE, prompts.exempt_sentences()).claims
    assert claim.verdict == "value_mismatch" and number in claim.detail and "live-1" in claim.detail


def test_a_claim_the_live_data_does_not_make_is_weak_support():
    [claim] = check("Tu pedido incluye un regalo de bienvenida. [[cite:live-1]]", EVIDENCE).claims
    assert claim.verdict == "weak_support"


@pytest.mark.parametrize("cited", ["live-3", "live-0", "live-12"])
def test_a_live_id_this_turn_did_not_fetch_is_an_invented_citation(cited):
    [claim] = check(f"Tu pedido 1001 está enviado. [[cite:{cited}]]", EVIDENCE).claims
    assert claim.verdict == "invented_citation" and "not a live result of this turn" in claim.detail


@pytest.mark.parametrize("lang", prompts.LANGUAGES)
def test_the_fixed_nothing_found_sentence_passes_citing_an_empty_result(lang):
    answer = f"{prompts.message('live_empty', lang)} [[cite:live-2]]"
    verdict = check(answer, EVIDENCE, prompts.exempt_sentences())
    assert verdict.ok and [c.verdict for c in verdict.claims] == ["live_data"]


def test_an_empty_result_supports_no_fact_and_the_nothing_sentence_needs_its_citation():
    for answer in ("Tu pedido 9999 fue entregado ayer. [[cite:live-2]]", "Tu pedido 9999 no existe. [[cite:live-2]]"):
        [claim] = check(answer, EVIDENCE, prompts.exempt_sentences()).claims
        assert claim.verdict == "weak_support" and "returned nothing" in claim.detail
    assert verdicts("Tu pedido 1234 fue entregado ayer. [[cite:live-2]]") == ["value_mismatch"]
    # said without the citation, or citing a found result, it is a fixed message and no answer at all
    assert not check(prompts.message("live_empty", "es"), EVIDENCE, prompts.exempt_sentences()).ok
    assert not check(f"{prompts.message('live_empty', 'es')} [[cite:live-1]]", EVIDENCE,
                     prompts.exempt_sentences()).ok


def test_knowledge_and_live_citations_together_are_judged_on_both():
    answer = "Tu pedido 1001 está enviado y llega en 2 a 3 días laborables. [[cite:live-1]][[cite:a1b2c3d4e5f6]]"
    assert verdicts(answer) == ["supported"]
    assert verdicts(answer.replace("2 a 3", "5 a 6")) == ["value_mismatch"]


def test_release_numbers_live_ids_like_any_other():
    text, ids = release("Tu pedido 1001 está enviado. [[cite:live-1]] Llega en 2 a 3 días. [[cite:a1b2c3d4e5f6]]")
    assert ids == ["live-1", "a1b2c3d4e5f6"] and "[1]" in text and "[2]" in text and "live-" not in text


def test_without_live_ids_the_gate_is_unchanged():
    plain = Evidence({"a1b2c3d4e5f6": KNOWLEDGE})
    assert verdicts("Llegan en 2 a 3 días laborables. [[cite:a1b2c3d4e5f6]]", plain) == ["supported"]
    assert verdicts("Llegan en 2 a 3 días laborables. [[cite:live-1]]", plain) == ["invented_citation"]


# ---------------------------------------------------------------- through the loop: this turn only
def order_tool():
    def handler(env, arguments):
        return {"status": "found", "operation": "order_status", "title": "Estado del pedido",
                "fetched_at": "2026-12-01T10:00:00Z", "data": {"order_id": arguments.get("order_id"),
                                                              "estado": "enviado", "transportista": "SEUR"}}
    return Tool("order_status", "Live status of an order", {"type": "object", "properties": {
        "order_id": {"type": "string"}}}, ToolKind.LIVE, handler)


def test_live_ids_are_cited_as_live_and_never_carried_to_the_next_turn(kb, rt):
    first = rt.turns.run(kb, Agent(rt, ScriptedProvider(("order_status", {"order_id": "1001"}),
                                                        "Tu pedido 1001 está enviado con SEUR. [[cite:live-1]]"),
                                   extra_tools=[order_tool()]), "¿Dónde está mi pedido 1001?")
    assert first.status == "answered" and "[1]" in first.answer and "live-" not in first.answer
    assert first.citations == [{"id": "live-1", "title": "Estado del pedido", "path": "live/order_status", "url": "",
                                "trained_at": "", "live": True, "fetched_at": "2026-12-01T10:00:00Z"}]
    assert [c["verdict"] for c in first.trace.gate[0]["claims"]] == ["live_data"]
    # the next turn of the same conversation cites live-1 without fetching it: not this turn's result
    again = "Sigue enviado con SEUR, el pedido 1001. [[cite:live-1]]"
    second = rt.turns.run(kb, Agent(rt, ScriptedProvider(again, again), extra_tools=[order_tool()]),
                          "¿Y ahora?", conversation_id=first.conversation_id)
    assert second.status != "answered" and "SEUR" not in second.answer
    assert {c["verdict"] for g in second.trace.gate for c in g["claims"]} == {"invented_citation"}
