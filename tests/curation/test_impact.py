"""Impact preview (core/impact.py): the answers, closed gaps and QA cases an edit, move or delete touches."""
from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

import pytest

from core.agent.loop import Agent
from core.channels import conversations
from core.curation.impact import impact, proposed_chunk_ids
from core.knowledge import sources
from core.qa import suites as qa
from tests.fakes import ScriptedProvider

PARAGRAPHS = [
    f"Párrafo {n}: los envíos a la zona {n} tardan {n + 2} días laborables y cuestan {n * 3} euros. " * 6
    for n in range(1, 6)
]
SHIPPING = "\n\n".join(PARAGRAPHS)  # five ~550-character paragraphs: two or three chunks
RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."
HOURS = "Abrimos de lunes a sábado de 10:00 a 20:00."


def cite(rt, ctx, chunk_ids: list[str]) -> list[dict]:
    """Citations as the agent stores them on a turn (core/agent/loop.py: id, path, title, url, trained_at)."""
    chunks = rt.index.chunks(ctx, chunk_ids)
    owners = sources.get_by_ids(ctx, rt.store, sorted({c.source_id for c in chunks.values()}))
    return [{"id": cid, "path": owners[chunks[cid].source_id].path, "title": owners[chunks[cid].source_id].title,
             "url": "", "trained_at": chunks[cid].trained_at} for cid in chunk_ids]


def turn(rt, ctx, question: str, citations: list[dict], answer: str = "Una respuesta.",
         status: str = "answered") -> dict:
    convo = conversations.start(ctx, rt.store, "web")
    turn_id = conversations.record_turn(
        ctx, rt.store, convo.id, question=question, status=status, answer=answer, citations=citations,
        evidence=[c["id"] for c in citations], truncated=False, provider="test", model="test", latency_ms=1,
        input_tokens=0, output_tokens=0, trace={}, uncovered=False)
    return {"turn_id": turn_id, "conversation_id": convo.id}


def closed_gap(rt, ctx, question: str, article: str) -> int:
    gap_id = rt.backlog.record(ctx, question, "es", "web", "conv-x")
    rt.backlog.close(ctx, gap_id, article)
    return gap_id


@pytest.fixture
def kb(rt, ctx):
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    sources.save(ctx, rt.store, "tienda/horario", title="Horario", content=HOURS, language="es")
    rt.index.train(ctx)
    chunks = {path: [c.id for c in rt.index.chunks_of(ctx, sources.get(ctx, rt.store, path).id)]
              for path in ("politicas/envios", "politicas/devoluciones", "tienda/horario")}
    assert len(chunks["politicas/envios"]) >= 2
    return chunks


def test_an_edit_counts_only_the_answers_citing_the_chunks_it_replaces(rt, ctx, kb):
    first, last = kb["politicas/envios"][0], kb["politicas/envios"][-1]
    early = turn(rt, ctx, "¿Cuánto tarda la zona 1?", cite(rt, ctx, [first]), answer="Tarda 3 días. " * 40)
    late = turn(rt, ctx, "¿Cuánto cuesta la zona 5?", cite(rt, ctx, [last]))
    turn(rt, ctx, "¿Horario?", cite(rt, ctx, kb["tienda/horario"]))  # another source: never listed
    edited = SHIPPING.replace("cuestan 15 euros", "cuestan 16 euros")  # only the fifth paragraph changes
    report = impact(ctx, rt, "politicas/envios", proposed={"content": edited})
    assert report["kind"] == "source" and report["sources"] == ["politicas/envios"]
    assert report["chunk_ids"] == kb["politicas/envios"]
    assert report["changed_chunk_ids"] == [last]
    by_turn = {a["turn_id"]: a for a in report["answers"]}
    assert set(by_turn) == {early["turn_id"], late["turn_id"]}
    assert by_turn[late["turn_id"]]["affected"] and not by_turn[early["turn_id"]]["affected"]
    assert report["answers_affected"] == 1
    listed = by_turn[early["turn_id"]]
    assert listed["question"] == "¿Cuánto tarda la zona 1?" and listed["conversation_id"] == early["conversation_id"]
    assert listed["answer"].endswith("…") and len(listed["answer"]) <= 241  # an excerpt
    assert listed["cited"] == [{"id": first, "path": "politicas/envios", "title": "Envíos"}]
    assert report["answers"][0]["turn_id"] == late["turn_id"]  # newest first


def test_a_metadata_edit_changes_no_chunk_and_a_title_edit_of_a_qa_pair_changes_it(rt, ctx, kb):
    turn(rt, ctx, "¿Plazo?", cite(rt, ctx, kb["politicas/devoluciones"]))
    report = impact(ctx, rt, "politicas/devoluciones", proposed={"description": "Plazos", "language": "es"})
    assert report["changed_chunk_ids"] == [] and report["answers_affected"] == 0 and len(report["answers"]) == 1
    sources.save(ctx, rt.store, "faq/plazo", title="¿Plazo de devolución?", content="30 días.", type="qa",
                 language="es")
    rt.index.train(ctx)
    pair = sources.get(ctx, rt.store, "faq/plazo")
    assert proposed_chunk_ids(pair, {}) == {c.id for c in rt.index.chunks_of(ctx, pair.id)}
    assert impact(ctx, rt, "faq/plazo", proposed={"title": "¿Cuánto plazo tengo?"})["changed_chunk_ids"] != []


def test_a_folder_move_or_delete_touches_every_answer_below_it(rt, ctx, kb):
    a = turn(rt, ctx, "¿Plazo?", cite(rt, ctx, kb["politicas/devoluciones"]))
    b = turn(rt, ctx, "¿Zona 2?", cite(rt, ctx, kb["politicas/envios"][:1]))
    turn(rt, ctx, "¿Horario?", cite(rt, ctx, kb["tienda/horario"]))
    report = impact(ctx, (rt.store, rt.index), "politicas")
    assert report["kind"] == "folder" and report["sources"] == ["politicas/devoluciones", "politicas/envios"]
    assert set(report["chunk_ids"]) == set(kb["politicas/envios"] + kb["politicas/devoluciones"])
    assert {x["turn_id"] for x in report["answers"]} == {a["turn_id"], b["turn_id"]}
    assert report["answers_affected"] == 2
    assert impact(ctx, rt.store, "politi")["kind"] == "none"  # a prefix of a name is not a folder
    assert impact(ctx, rt.store, "politi")["answers"] == []


def test_an_answer_citing_an_earlier_version_is_found_by_its_path(rt, ctx, kb):
    old = turn(rt, ctx, "¿Horario?", cite(rt, ctx, kb["tienda/horario"]))
    sources.save(ctx, rt.store, "tienda/horario", title="Horario",
                 content="Abrimos de lunes a viernes de 9:00 a 21:00.")
    rt.index.train(ctx)  # the cited chunk is gone; the turn still names the path
    report = impact(ctx, rt, "tienda/horario", proposed={"content": "Abrimos todos los días."})
    assert [x["turn_id"] for x in report["answers"]] == [old["turn_id"]] and report["answers_affected"] == 1
    assert impact(ctx, rt, "tienda/horario", proposed={"description": "x"})["answers_affected"] == 0


def test_a_move_keeps_chunk_ids_so_answers_citing_the_old_path_are_still_found(rt, ctx, kb):
    old = turn(rt, ctx, "¿Plazo?", cite(rt, ctx, kb["politicas/devoluciones"]))
    sources.move(ctx, rt.store, "politicas/devoluciones", "ayuda/devoluciones")
    rt.index.train(ctx)
    report = impact(ctx, rt, "ayuda/devoluciones")
    assert [x["turn_id"] for x in report["answers"]] == [old["turn_id"]]


def test_only_recent_answers_and_at_most_limit(rt, ctx, kb):
    turns = [turn(rt, ctx, f"¿Plazo {n}?", cite(rt, ctx, kb["politicas/devoluciones"])) for n in range(3)]
    assert len(impact(ctx, rt, "politicas/devoluciones")["answers"]) == 3
    later = datetime.now(timezone.utc) + timedelta(days=31)
    assert impact(ctx, rt, "politicas/devoluciones", now=later)["answers"] == []
    assert len(impact(ctx, rt, "politicas/devoluciones", now=later, days=60)["answers"]) == 3
    newest = impact(ctx, rt, "politicas/devoluciones", limit=1)
    assert [x["turn_id"] for x in newest["answers"]] == [turns[-1]["turn_id"]] and newest["limit"] == 1


def test_gaps_closed_with_the_article_are_listed(rt, ctx, kb):
    shipping = closed_gap(rt, ctx, "¿Cuánto tarda un envío a la zona 3?", "politicas/envios")
    hours = closed_gap(rt, ctx, "¿Abrís los domingos por la mañana?", "tienda/horario")
    assert shipping != hours
    rt.backlog.record(ctx, "¿Vendéis patinetes eléctricos?", "es", "web", "conv-y")  # open, no article
    report = impact(ctx, rt, "politicas/envios", proposed={"content": SHIPPING + "\n\nNuevo."})
    assert ([(g["id"], g["status"], g["article_path"]) for g in report["gaps"]]
            == [(shipping, "closed", "politicas/envios")])
    assert report["closed_gaps"] == 1
    assert [g["id"] for g in impact(ctx, rt, "politicas")["gaps"]] == [shipping]
    rt.backlog.reopen(ctx, shipping)
    reopened = impact(ctx, rt, "politicas/envios")
    assert [g["status"] for g in reopened["gaps"]] == ["reopened"] and reopened["closed_gaps"] == 0


def test_qa_cases_citing_the_path_its_folder_or_inside_it_are_listed(rt, ctx, other_ctx, kb):
    envios = qa.create_suite(ctx, rt.store, "Envíos")
    otra = qa.create_suite(ctx, rt.store, "Otra")
    qa.add_case(ctx, rt.store, envios.id, "¿Zona 3?", expect="answered", cite="politicas/envios")
    qa.add_case(ctx, rt.store, envios.id, "¿Políticas?", expect="answered", cite="politicas")  # a folder holding it
    qa.add_case(ctx, rt.store, envios.id, "¿Horario?", expect="answered", cite="tienda/horario")
    qa.add_case(ctx, rt.store, envios.id, "¿Patinetes?", expect="abstains")
    gone = qa.add_case(ctx, rt.store, envios.id, "¿Borrada?", expect="answered", cite="politicas/envios")
    qa.delete_case(ctx, rt.store, gone.id)  # a deleted case no longer depends on anything
    qa.add_case(ctx, rt.store, otra.id, "¿Zona 2?", expect="answered", cite="politicas/envios")
    theirs = qa.create_suite(other_ctx, rt.store, "Envíos")
    qa.add_case(other_ctx, rt.store, theirs.id, "¿Zona 3? (globex)", expect="answered", cite="politicas/envios")
    report = impact(ctx, rt, "politicas/envios")
    assert [c["question"] for c in report["qa_cases"]] == ["¿Zona 3?", "¿Políticas?", "¿Zona 2?"]
    assert report["qa_cases"][0]["suite"] == "Envíos" and report["qa_cases"][0]["expect"] == "answered"
    assert report["qa_cases"][2]["suite"] == "Otra"
    folder = impact(ctx, rt, "politicas")  # a case citing a path inside the folder is touched by moving the folder
    assert {c["question"] for c in folder["qa_cases"]} == {"¿Zona 3?", "¿Políticas?", "¿Zona 2?"}
    assert [c["question"] for c in impact(other_ctx, rt, "politicas/envios")["qa_cases"]] == ["¿Zona 3? (globex)"]


def test_another_tenants_turns_gaps_and_chunks_never_appear(rt, ctx, other_ctx, kb):
    sources.save(other_ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    rt.index.train(other_ctx)
    theirs = [c.id for c in rt.index.chunks_of(other_ctx, sources.get(other_ctx, rt.store, "politicas/envios").id)]
    assert not set(theirs) & set(kb["politicas/envios"])  # chunk ids carry the source id
    turn(rt, other_ctx, "¿Zona 1 (globex)?", cite(rt, other_ctx, theirs))
    closed_gap(rt, other_ctx, "¿Cuánto tarda un envío a la zona 3?", "politicas/envios")
    # a foreign turn that even cites our chunk ids (forged) stays foreign
    turn(rt, other_ctx, "¿Forjada?", [{"id": cid, "path": "x/y", "title": "", "url": "", "trained_at": ""}
                                      for cid in kb["politicas/envios"]])
    mine = turn(rt, ctx, "¿Zona 1?", cite(rt, ctx, kb["politicas/envios"][:1]))
    report = impact(ctx, rt, "politicas/envios")
    assert [a["turn_id"] for a in report["answers"]] == [mine["turn_id"]]
    assert report["gaps"] == [] and report["chunk_ids"] == kb["politicas/envios"]
    other = impact(other_ctx, rt, "politicas/envios")
    assert {a["question"] for a in other["answers"]} == {"¿Zona 1 (globex)?"}
    assert len(other["gaps"]) == 1 and other["chunk_ids"] == theirs


def test_an_answer_of_the_agent_is_found(rt, ctx, kb):
    """The citations the real tool loop stores are what impact reads."""
    def answer(messages):
        for message in reversed(messages):
            if message.role == "tool":
                for item in json.loads(message.content).get("results", []):
                    if "devoluciones" in item["source"]:
                        return f"Tienes un plazo de 30 días naturales desde la entrega. [[cite:{item['id']}]]"
        raise AssertionError("no search result from the returns policy")

    bot = Agent(rt, ScriptedProvider(("search_knowledge", {"query": "plazo de devolución"}), answer))
    result = rt.turns.run(ctx, bot, "¿Cuánto tiempo tengo para devolver un producto?")
    assert result.status == "answered"
    report = impact(ctx, rt, "politicas/devoluciones", proposed={"content": RETURNS.replace("30", "45")})
    assert [a["conversation_id"] for a in report["answers"]] == [result.conversation_id]
    assert report["answers_affected"] == 1


def test_cases_made_by_core_qa_are_listed(rt, ctx, kb):
    suite = qa.create_suite(ctx, rt.store, "regresión")
    qa.add_case(ctx, rt.store, suite.id, "¿Cuánto tarda la zona 2?", expect="answered", cite="politicas/envios")
    qa.add_case(ctx, rt.store, suite.id, "¿Vendéis patinetes?", expect="abstains")
    report = impact(ctx, rt, "politicas/envios", proposed={"content": SHIPPING + "\n\nNuevo párrafo."})
    assert [(c["suite"], c["question"], c["cite"]) for c in report["qa_cases"]] == [
        ("regresión", "¿Cuánto tarda la zona 2?", "politicas/envios")]
