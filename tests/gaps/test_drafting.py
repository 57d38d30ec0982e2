"""The first draft of a gap's article: a template offline, an LLM draft with placeholders when configured."""
from __future__ import annotations

from core.agent.protocol import TransportError
from core.gaps.drafting import FACT, draft_article
from tests.fakes import ScriptedProvider


def gap_with_samples(rt, ctx):
    rt.backlog.record(ctx, "¿Vendéis patinetes eléctricos? mi correo es ana@example.com", "es", "web", "c1")
    return rt.backlog.gaps(ctx)[0]


def test_offline_draft_lists_the_masked_questions(rt, ctx):
    gap = gap_with_samples(rt, ctx)
    draft = draft_article(ctx, rt, gap.id)
    assert draft["drafted_by"] == "template" and draft["path"].startswith("faq/")
    assert "Preguntas de clientes" in draft["content"] and "<EMAIL>" in draft["content"]
    assert "ana@example.com" not in draft["content"]


def test_an_llm_draft_gets_masked_samples_and_keeps_placeholders(rt, ctx):
    gap = gap_with_samples(rt, ctx)
    provider = ScriptedProvider(f"# Patinetes eléctricos\nVendemos patinetes: {FACT}")
    draft = draft_article(ctx, rt, gap.id, provider)
    assert draft["title"] == "Patinetes eléctricos" and draft["path"] == "faq/patinetes-electricos"
    assert FACT in draft["content"] and draft["drafted_by"] != "template"
    sent = provider.calls[0]["messages"][0].content
    assert "<EMAIL>" in sent and "ana@example.com" not in sent


def test_a_provider_outage_falls_back_to_the_template(rt, ctx):
    gap = gap_with_samples(rt, ctx)
    assert draft_article(ctx, rt, gap.id, ScriptedProvider(TransportError("503")))["drafted_by"] == "template"
