"""Partial answers through the loop and the turn pipeline: the mark is taken out before the gate, the rest is
released under the localized 'does not mention' sentence, and the turn is a gap that counts toward the handoff."""
from __future__ import annotations

import pytest

from core.agent import partial, prompts
from core.agent.loop import Agent
from core.channels import handoff
from core.knowledge import sources
from tests.agent.test_loop import answer_citing
from tests.fakes import ScriptedProvider

SHOPS = "Tienda de Madrid: calle de Embajadores 112. Abierta de lunes a viernes de 10:00 a 20:00."


@pytest.fixture
def shops(ctx, rt):
    sources.save(ctx, rt.store, "tienda/horarios", title="Tiendas", content=SHOPS, language="es")
    rt.index.train(ctx)
    return ctx


def partial_bot(rt, text="[[missing:Valencia]]\n\nTienda de Madrid: calle de Embajadores 112. [[cite:{id}]]"):
    reply = answer_citing(text, "tienda")
    return Agent(rt, ScriptedProvider(("search_knowledge", {"query": "Tienda de Madrid: calle de Embajadores"}),
                                      reply, reply))  # the second reply answers the revision request


def test_split_reads_the_mark_and_leaves_the_rest():
    assert partial.split("[[missing: Valencia | Premium]]\n\nHay dos planes. [[cite:a]]") == (
        ["Valencia", "Premium"], "Hay dos planes. [[cite:a]]")
    assert partial.split("Hay dos planes. [[cite:a]]") == ([], "Hay dos planes. [[cite:a]]")


@pytest.mark.parametrize("language, start", [
    ("es", "Nuestro material no menciona “Valencia”. Lo que sí dice:"),
    ("pt", "O nosso material não menciona “Valencia”. O que diz é:"),
    ("en", "Our material does not mention “Valencia”. What it does say:"),
])
def test_the_preface_is_in_the_visitors_language(language, start):
    assert partial.render(["Valencia"], "X [1]", language).startswith(start)


def test_a_missing_kind_of_figure_is_named_without_quotes():
    assert prompts.partial_preface([prompts.missing_kind("price", "es")], "es") == (
        "Nuestro material no menciona el precio. Lo que sí dice:")
    assert prompts.partial_preface(["a", "b"], "en") == "Our material does not mention “a” or “b”. What it does say:"


def test_a_partial_answer_is_released_with_its_citation_and_recorded_as_a_gap(shops, rt):
    result = rt.turns.run(shops, partial_bot(rt), "¿Tenéis tienda en Valencia?")
    assert result.status == "partial"
    assert result.answer.startswith("Nuestro material no menciona “Valencia”. Lo que sí dice:")
    assert "Tienda de Madrid: calle de Embajadores 112." in result.answer and result.citations
    assert result.trace.missing == ["Valencia"] and result.trace.abstained == "partial"
    assert result.gap_id is not None
    assert [g.count for g in rt.backlog.gaps(shops)] == [1]


def test_the_rest_of_a_partial_answer_still_faces_the_gate(shops, rt):
    bot = partial_bot(rt, "[[missing:Valencia]]\n\nTienda de Valencia: calle Colón 3. [[cite:{id}]]")
    result = rt.turns.run(shops, bot, "¿Tenéis tienda en Valencia?")
    assert result.status == "abstained" and "Colón" not in result.answer


def test_a_partial_answer_counts_toward_the_support_channel_handoff(shops, rt):
    first = rt.turns.run(shops, partial_bot(rt), "¿Tenéis tienda en Valencia?", channel="identified")
    assert first.status == "partial"
    second = rt.turns.run(shops, partial_bot(rt), "¿Y en Sevilla?", conversation_id=first.conversation_id)
    assert second.status == "handoff"
    assert [h["reason"] for h in handoff.open_handoffs(shops, rt.store)] == ["not_covered_twice"]
