"""Moving knowledge: closed gaps and QA cases follow their article, in the same transaction, per tenant."""
from __future__ import annotations

import pytest

from core.curation.relocation import move
from core.knowledge import sources
from core.knowledge.sources import SourceError
from core.qa import suites as qa


def test_a_move_repoints_closed_gaps_and_qa_cases(rt, ctx, other_ctx):
    sources.save(ctx, rt.store, "faq/patinetes", title="Patinetes", content="No vendemos patinetes eléctricos.")
    sources.save(other_ctx, rt.store, "faq/patinetes", title="Patinetes", content="Sí vendemos patinetes.")
    gap = rt.backlog.record(ctx, "¿Vendéis patinetes eléctricos?", "es", "web", "c1")
    rt.backlog.close(ctx, gap, "faq/patinetes")
    theirs = rt.backlog.record(other_ctx, "¿Vendéis patinetes eléctricos?", "es", "web", "c2")
    rt.backlog.close(other_ctx, theirs, "faq/patinetes")
    suite = qa.create_suite(ctx, rt.store, "regresion")
    case = qa.add_case(ctx, rt.store, suite.id, "¿Vendéis patinetes?", expect="answered", cite="faq")
    exact = qa.add_case(ctx, rt.store, suite.id, "¿Patinetes?", expect="answered", cite="faq/patinetes")
    moved = move(ctx, rt, "faq", "ayuda/faq")
    assert [s.path for s in moved.sources] == ["ayuda/faq/patinetes"] and (moved.gaps, moved.qa_cases) == (1, 2)
    assert rt.backlog.require(ctx, gap).article_path == "ayuda/faq/patinetes"
    assert qa.require_case(ctx, rt.store, case.id).cite == "ayuda/faq"
    assert qa.require_case(ctx, rt.store, exact.id).cite == "ayuda/faq/patinetes"
    assert rt.backlog.require(other_ctx, theirs).article_path == "faq/patinetes"  # another tenant's stay put


def test_a_refused_move_changes_nothing(rt, ctx):
    sources.save(ctx, rt.store, "faq/a", title="A", content="Texto A.")
    sources.save(ctx, rt.store, "ayuda/a", title="A", content="Otro texto.")
    gap = rt.backlog.record(ctx, "¿Qué es A?", "es", "web", "c1")
    rt.backlog.close(ctx, gap, "faq/a")
    with pytest.raises(SourceError, match="already exists"):
        move(ctx, rt, "faq/a", "ayuda/a")
    assert rt.backlog.require(ctx, gap).article_path == "faq/a"
