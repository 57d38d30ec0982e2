"""Guidance around the answer: a person when asked for one, the page section the question is about (H2),
follow-up questions the knowledge base answers (P2), and the progress events of a turn."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.agent.builtin_tools import section_spec
from core.agent.followups import followups
from core.agent.loop import Agent
from core.agent.protocol import Reply, TransportError
from core.agent.providers.guidance import best_section, section_catalog, wants_person
from core.agent.providers.offline import OfflineResponder
from core.base.language import detect
from core.tenancy import settings as tenant_settings
from tests.fakes import ScriptedProvider

SECTIONS = json.loads((Path(__file__).parents[2] / "data" / "sample" / "sections.json").read_text(encoding="utf-8"))


@pytest.fixture
def sectioned(kb, rt):
    tenant_settings.update(kb, rt.store, process=rt.settings, sections=SECTIONS)
    return kb


def cite_first(messages, path_part):
    for message in reversed(messages):
        if message.role == "tool":
            for item in json.loads(message.content).get("results", []):
                if path_part in item["source"]:
                    return item["id"]
    raise AssertionError("no such result")


# -- wants_person ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("question", [
    "Quiero hablar con una persona",
    "¿Puedo hablar con un agente?",
    "Pásame con un humano, por favor",
    "Necesito hablar con alguien del equipo",
    "¿Me puedes poner con un operador?",
    "Quero falar com uma pessoa",
    "Posso falar com um atendente?",
    "Preciso conversar com um humano",
    "I want to talk to a person",
    "Can I speak to a human?",
    "Please connect me with a representative",
    "Let me chat with a live agent",
    "QUIERO HABLAR CON UNA PERSONA",
])
def test_wants_person_recognises_a_request_for_a_person(question):
    assert wants_person(question)


@pytest.mark.parametrize("question", [
    "¿Las personas mayores tienen descuento?",
    "¿Cuánto cuesta el envío?",
    "¿Para cuántas personas es la tienda de campaña?",
    "Quiero devolver un producto",
    "¿Tenéis agentes de seguros?",
    "A pessoa que recebe precisa assinar?",
    "Who is the person in charge of returns?",
    "The agent was rude",
    "",
])
def test_wants_person_ignores_other_questions(question):
    assert not wants_person(question)


@pytest.mark.parametrize("question", [
    "¿Puedo enviar el pedido a otra persona?",
    "¿Necesito ser una persona física para pedir factura?",
    "Quero enviar para outra pessoa",
    "Can I transfer my order to another person?",
])
def test_wants_person_ignores_questions_about_other_people(question):
    assert not wants_person(question)


# -- sections ----------------------------------------------------------------------------------------------
@pytest.mark.parametrize("question, section", [
    ("¿Cuánto tarda un envío a Canarias?", "envios"),
    ("¿Hacéis envíos a Portugal?", "envios"),
    ("¿Cuál es el plazo de devolución?", "devoluciones"),
    ("¿Cómo pido un reembolso?", "devoluciones"),
    ("¿Cuánto cuesta el plan Lumen Care?", "planes"),
    ("¿A qué hora abre la tienda?", "contacto"),
    ("¿Cuál es el teléfono de la tienda?", "contacto"),
    ("¿Vendéis patinetes?", None),
    ("¿?", None),
])
def test_best_section(question, section):
    assert best_section(question, detect(question), SECTIONS) == section


def test_best_section_on_an_empty_catalog_is_none():
    assert best_section("¿Cuánto tarda un envío a Canarias?", "es", {}) is None


def test_ties_go_to_the_first_section_of_the_catalog():
    catalog = {"uno": "envíos a Canarias", "dos": "envíos a Canarias"}
    assert best_section("envíos a Canarias", "es", catalog) == "uno"
    assert best_section("envíos a Canarias", "es", dict(reversed(catalog.items()))) == "dos"


def test_the_section_catalog_is_read_back_from_the_tool_description():
    assert section_catalog(section_spec(SECTIONS)) == SECTIONS


def test_the_offline_responder_points_at_the_matching_section(sectioned, rt):
    result = rt.turns.run(sectioned, Agent(rt, OfflineResponder()), "¿Cuánto tarda un envío a Canarias?")
    assert result.sections == [{"id": "envios", "description": SECTIONS["envios"]}]
    calls = [(c["tool"], c["status"]) for c in result.trace.tools]
    assert calls == [("search_knowledge", "found"), ("show_section", "found")]


def test_no_section_when_none_matches(sectioned, rt):
    result = rt.turns.run(sectioned, Agent(rt, OfflineResponder()), "¿Vendéis patinetes eléctricos?")
    assert result.sections == [] and "show_section" not in [c["tool"] for c in result.trace.tools]


def test_show_section_is_not_offered_without_a_catalog(kb, rt):
    provider = ScriptedProvider(("show_section", {"id": "envios"}), "No lo sé.", "No lo sé.")
    result = rt.turns.run(kb, Agent(rt, provider), "¿Cuánto tarda un envío a Canarias?")
    assert "show_section" not in provider.calls[0]["tools"]
    assert "There is no tool 'show_section'" in json.loads(provider.calls[1]["messages"][-1].content)["message"]
    assert result.sections == []


def test_an_unknown_section_id_is_an_error_result_listing_the_valid_ones(sectioned, rt):
    provider = ScriptedProvider(("show_section", {"id": "ofertas"}), "No lo sé.", "No lo sé.")
    result = rt.turns.run(sectioned, Agent(rt, provider), "¿Tenéis ofertas?")
    tool_message = provider.calls[1]["messages"][-1]
    data = json.loads(tool_message.content)
    assert tool_message.is_error and data["status"] == "error" and "'ofertas'" in data["message"]
    assert all(ident in data["message"] for ident in SECTIONS)
    assert result.sections == []
    assert result.trace.tools[0]["status"] == "error"


def test_a_section_asked_for_twice_is_kept_once(sectioned, rt):
    provider = ScriptedProvider(("show_section", {"id": "envios"}), ("show_section", {"id": "envios"}),
                                ("show_section", {"id": "contacto"}), "No lo sé.", "No lo sé.")
    result = rt.turns.run(sectioned, Agent(rt, provider), "¿Dónde veo los envíos?")
    assert [s["id"] for s in result.sections] == ["envios", "contacto"]


def test_a_faulted_turn_points_at_no_section(sectioned, rt):
    provider = ScriptedProvider(("show_section", {"id": "envios"}), TransportError("upstream 529"))
    result = rt.turns.run(sectioned, Agent(rt, provider), "¿Cuánto tarda un envío?")
    assert result.status == "error" and result.sections == []


def test_sections_come_with_a_released_answer(sectioned, rt):
    provider = ScriptedProvider(
        ("search_knowledge", {"query": "envíos a Canarias"}), ("show_section", {"id": "envios"}),
        lambda messages: "Los envíos a Canarias tardan de 5 a 8 días laborables. "
                         f"[[cite:{cite_first(messages, 'envios')}]]")
    result = rt.turns.run(sectioned, Agent(rt, provider), "¿Cuánto tarda un envío a Canarias?")
    assert result.status == "answered" and [s["id"] for s in result.sections] == ["envios"]


# -- followups ---------------------------------------------------------------------------------------------
def qa(ident, title, **extra):
    return {"id": ident, "title": title, "type": "qa", "selected": True, **extra}


FOLLOWUP_CASES = {
    "uncited qa hits, best first": (
        [qa("a", "¿Puedo pagar a plazos?"), qa("b", "¿Hacéis envíos a Canarias?")], [], "¿Cuánto cuesta?",
        ["¿Puedo pagar a plazos?", "¿Hacéis envíos a Canarias?"]),
    "cited ids are skipped": (
        [qa("a", "¿Puedo pagar a plazos?"), qa("b", "¿Hacéis envíos a Canarias?")], ["a"], "x",
        ["¿Hacéis envíos a Canarias?"]),
    "only qa hits": (
        [{"id": "t", "title": "Política de envíos", "type": "text", "selected": True}, qa("b", "¿Envío gratis?")],
        [], "x", ["¿Envío gratis?"]),
    "dropped hits are skipped": (
        [qa("a", "¿Puedo pagar a plazos?", selected=False), qa("b", "¿Envío gratis?")], [], "x", ["¿Envío gratis?"]),
    "duplicates by folded title": (
        [qa("a", "¿Envío gratis?"), qa("b", "Envio gratis"), qa("c", "  ¿ENVÍO GRATIS?  ")], [], "x",
        ["¿Envío gratis?"]),
    "the question itself": (
        [qa("a", "¿Puedo pagar a plazos?"), qa("b", "¿Envío gratis?")], [], "puedo pagar a plazos", ["¿Envío gratis?"]),
    "untitled hits": ([qa("a", ""), qa("b", None), qa("c", "¿Envío gratis?")], [], "x", ["¿Envío gratis?"]),
    "at most three": (
        [qa(str(n), f"Pregunta {n}") for n in range(6)], [], "x", ["Pregunta 0", "Pregunta 1", "Pregunta 2"]),
    "nothing": ([], [], "x", []),
    "closest first": (
        [qa("a", "Lejana", similarity=0.80), qa("b", "Cercana", similarity=0.82)], [], "x", ["Cercana", "Lejana"]),
    "pairs clearly below the best hit are left out": (
        [{"id": "t", "title": "Envíos", "type": "text", "similarity": 0.90},
         qa("a", "¿Envío gratis?", similarity=0.88), qa("b", "¿Puedo pagar a plazos?", similarity=0.80)], [], "x",
        ["¿Envío gratis?"]),
}


@pytest.mark.parametrize("hits, cited, question, expected", FOLLOWUP_CASES.values(), ids=FOLLOWUP_CASES.keys())
def test_followups(hits, cited, question, expected):
    assert followups(hits, cited, question) == expected


@pytest.mark.parametrize("language, expected", [("es", ["¿Envío gratis?"]), ("en", ["Free shipping?"]),
                                                ("", ["¿Envío gratis?", "Free shipping?"])])
def test_followups_keep_to_the_questions_language(language, expected):
    hits = [qa("a", "¿Envío gratis?", language="es"), qa("b", "Free shipping?", language="en")]
    assert followups(hits, [], "x", language) == expected


def test_followups_limit_is_a_parameter():
    hits = [qa(str(n), f"Pregunta {n}") for n in range(6)]
    assert followups(hits, [], "x", limit=1) == ["Pregunta 0"]


def test_followups_do_not_mutate_their_input():
    hits = [qa("a", "¿Envío gratis?")]
    snapshot = json.dumps(hits)
    followups(hits, ["z"], "x")
    assert json.dumps(hits) == snapshot


# -- on_event ----------------------------------------------------------------------------------------------
def test_on_event_hears_the_provider_first_then_one_event_per_tool_call(kb, rt):
    heard = []
    provider = ScriptedProvider(
        ("search_knowledge", {"query": "plazo de devolución"}), ("search_knowledge", {"query": "xyzzy plugh qwfp"}),
        lambda messages: "Tienes un plazo de 30 días naturales desde la entrega. "
                         f"[[cite:{cite_first(messages, 'devoluciones')}]]")
    result = rt.turns.run(kb, Agent(rt, provider), "¿Plazo de devolución?",
                          on_event=lambda name, data: heard.append((name, data)))
    assert result.status == "answered"
    assert heard == [
        ("provider", {"name": "scripted", "model": "script-1"}),
        ("tool", {"name": "search_knowledge", "status": "found", "found": True}),
        ("tool", {"name": "search_knowledge", "status": "empty", "found": False}),
    ]
    assert all(result.answer not in json.dumps(data) for _, data in heard)  # the answer never goes through events


def test_on_event_reports_an_error_result_as_not_found(sectioned, rt):
    heard = []
    provider = ScriptedProvider(("show_section", {"id": "nope"}), "No lo sé.", "No lo sé.")
    rt.turns.run(sectioned, Agent(rt, provider), "hola", on_event=lambda name, data: heard.append((name, data)))
    assert [(n, d.get("name"), d.get("found")) for n, d in heard] == [
        ("provider", "scripted", None), ("tool", "show_section", False)]


def test_on_event_hears_a_provider_change(kb, rt):
    heard = []
    provider = ScriptedProvider(("search_knowledge", {"query": "plazo de devolución"}),
                                Reply("No lo sé.", (), "backup", "backup-1"),
                                Reply("No lo sé.", (), "backup", "backup-1"))
    rt.turns.run(kb, Agent(rt, provider), "¿Plazo de devolución?",
                 on_event=lambda name, data: heard.append((name, data)))
    assert [(n, d["name"]) for n, d in heard if n == "provider"] == [("provider", "scripted"), ("provider", "backup")]
    assert [n for n, _ in heard] == ["provider", "tool", "provider"]


def test_offline_turn_events(sectioned, rt):
    heard = []
    rt.turns.run(sectioned, Agent(rt, OfflineResponder()), "¿Cuánto tarda un envío a Canarias?",
                                      on_event=lambda name, data: heard.append((name, data)))
    assert heard[0] == ("provider", {"name": "offline", "model": "extractive-1"})
    assert [(d["name"], d["found"]) for n, d in heard[1:]] == [("search_knowledge", True), ("show_section", True)]
