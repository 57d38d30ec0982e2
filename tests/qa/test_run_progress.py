"""QA run progress (Q2): a report before each case and at the end, the tally so far, the time left on a clock."""
from __future__ import annotations

from core.agent.loop import Agent
from core.knowledge import sources
from core.qa import runs as qa_runs, suites as qa
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, ScriptedProvider
from tests.knowledge.test_training_progress import FakeClock


def test_a_run_reports_each_case_with_the_tally_and_the_time_left(settings):
    clock = FakeClock()
    rt = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING, clock=clock)
    try:
        create_tenant(rt.store, "acme", "Acme")
        ctx = local_operator(rt.store, "acme")
        sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content="Los envíos tardan 5 días.")
        rt.index.train(ctx)
        suite = qa.create_suite(ctx, rt.store, "pace")
        questions = ["¿Vendéis patinetes?", "¿Vendéis coches?", "¿Vendéis barcos?", "¿Vendéis aviones?"]
        for question in questions:
            qa.add_case(ctx, rt.store, suite.id, question, expect="abstains")

        def slow_refusal(messages):  # each case takes the model ten seconds, by the clock
            clock.advance(10)
            return "No lo sé."

        turn = [("search_knowledge", {"query": "x"}), slow_refusal, "No lo sé."]
        bot = Agent(rt, ScriptedProvider(*turn * 3, ("search_knowledge", {"query": "x"}), "Sí, claro.", "Sí."))
        seen: list[qa_runs.RunProgress] = []
        run = qa_runs.run_suite(ctx, rt, suite.id, agent=bot, progress=seen.append)
    finally:
        rt.close()
    assert [(s.done, s.passed, s.question, s.seconds_left) for s in seen] == [
        (0, 0, questions[0], None), (1, 1, questions[1], 30.0), (2, 2, questions[2], 20.0),
        (3, 3, questions[3], 10.0), (4, run.passed, "", 0.0)]
    assert [s.elapsed for s in seen] == [0.0, 10.0, 20.0, 30.0, 30.0]
    assert seen[0].last is None and seen[-1].last.case["question"] == questions[-1]
    assert seen[2].describe() == "Case 3/4 · 2 passed, 0 failed · about 20 s left · asking: ¿Vendéis barcos?"
    assert seen[-1].describe() == f"4/4 case(s) run · {run.passed} passed, {4 - run.passed} failed"
    assert [s.fraction for s in seen] == [0, 0.25, 0.5, 0.75, 1.0]
