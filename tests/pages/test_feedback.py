"""Answer feedback in the admin app, through Streamlit's AppTest: 👍/👎 and a reason on a Sandbox answer, the
not-helpful entries of the Gap backlog (the answer, its citations, the filter by kind, the QA case in one click,
the close check that wants a changed answer), and the Sources tree's counts."""
from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from core.agent.loop import Agent
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.channels import ratings
from core.gaps import feedback
from core.gaps.model import NOT_HELPFUL
from core.knowledge import sources
from core.qa import suites
from core.qa.from_feedback import DEFAULT_SUITE
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.apptest import frame, run, settle, signed_in
from tests.conftest import SHIPPING

INSTALMENTS = ("¿Puedo pagar a plazos?", "Sí, en tres cuotas sin intereses con tarjeta.")
ASKED = "¿Cuánto tardan los envíos a Canarias?"
FIXED = ("faq/envios-canarias", "De 3 a 5 días laborables; el envío cuesta 9,90 €.")
LENIENT = OfflineTuning(min_similarity=0.2, min_confidence=0.2)


@pytest.fixture
def acme(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    sources.save(ctx, runtime.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    sources.save(ctx, runtime.store, "faq/plazos", title=INSTALMENTS[0], content=INSTALMENTS[1], type="qa",
                 language="es")
    runtime.index.train(ctx)
    return ctx


def unhelpful(runtime, ctx, channel="web", reason="No dice cuánto cuesta."):
    """An answered question a visitor marked 👎: (its turn, its gap id)."""
    turn = runtime.turns.run(ctx, Agent(runtime, OfflineResponder(LENIENT)), ASKED, channel=channel)
    assert turn.status == "answered"
    return turn, ratings.rate(ctx, runtime.store, runtime.backlog, turn.conversation_id, turn.turn_id, "down",
                              reason).gap_id


def open_page(runtime, page: str, role: str = "editor") -> AppTest:
    at = signed_in(runtime.store, "acme", role)
    at.run()
    return run(at.switch_page(page))


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value).replace("\\", "")
                     for kind in ("markdown", "caption", "info", "warning", "success", "error", "subheader", "text")
                     for e in getattr(at, kind))


# -- the Sandbox -----------------------------------------------------------------------------------------------
def test_a_sandbox_answer_gets_thumbs_and_a_reason_and_a_thumbs_down_reaches_the_backlog(runtime, acme):
    at = open_page(runtime, "pages/sandbox.py")
    at.chat_input[0].set_value(INSTALMENTS[0])
    run(at)
    assert len(at.feedback) == 1 and at.feedback[0].value is None
    turn_id = runtime.store.query("SELECT id FROM turns WHERE tenant_id = ?", [acme.tenant_id])[0]["id"]
    at.feedback[0].set_value(0)
    run(at)
    [gap] = runtime.backlog.gaps(acme)
    assert (gap.kind, gap.channels, gap.count) == (NOT_HELPFUL, ("sandbox",), 1)
    assert f"on the Gap backlog as gap #{gap.id} (answered but not helpful)" in texts(at)
    assert [e.label for e in at.expander][0] == "Why was it not helpful? (optional)"
    at.text_area(key=f"fb_reason_{turn_id}").set_value("Soy Ana López, ana.lopez@correo.es: no dice el interés")
    at.button(key=f"fb_send_{turn_id}").click()
    run(at)
    stored = feedback.get(acme, runtime.store, turn_id)
    assert stored.rating == "down" and "<EMAIL>" in stored.reason and "ana.lopez" not in stored.reason
    assert runtime.backlog.require(acme, gap.id).count == 1  # the reason replaced the rating, one question still
    at.feedback[0].set_value(1)
    run(at)
    assert feedback.get(acme, runtime.store, turn_id).rating == "up" and runtime.backlog.gaps(acme) == []
    assert "Marked helpful." in texts(at)


def test_a_refused_sandbox_answer_is_rated_without_a_second_entry(runtime, acme):
    at = open_page(runtime, "pages/sandbox.py")
    at.chat_input[0].set_value("¿Vendéis patinetes eléctricos?")
    run(at)
    [refused] = runtime.backlog.gaps(acme)
    at.feedback[0].set_value(0)
    run(at)
    assert runtime.backlog.gaps(acme) == [refused] and refused.kind != NOT_HELPFUL
    assert "already on the Gap backlog as one the agent did not answer" in texts(at)


# -- the Gap backlog -------------------------------------------------------------------------------------------
def test_the_backlog_shows_the_unhelpful_answer_its_citations_and_filters_by_kind(runtime, acme):
    turn, gap_id = unhelpful(runtime, acme)
    refused = runtime.backlog.record(acme, "¿Vendéis patinetes eléctricos?", "es", "web", "c-2")
    at = open_page(runtime, "pages/gaps.py")
    table = frame(at, "Kind")
    assert dict(zip(table["#"], table["Kind"])) == {gap_id: "answered but not helpful", refused: "not answered"}
    at.segmented_control(key="gaps_kind").set_value(NOT_HELPFUL)
    run(at)
    assert list(frame(at, "Kind")["#"]) == [gap_id]
    at.selectbox(key="gap_id").set_value(gap_id)
    run(at)
    shown = texts(at)
    assert "answered but not helpful" in shown and "The answer marked unhelpful" in shown
    assert "5 a 8 días laborables" in shown and "[1] `politicas/envios` — Envíos" in shown
    assert "**Reason given:** “No dice cuánto cuesta.”" in shown and f"**Question (masked):** {ASKED}" in shown
    assert [t.label for t in at.tabs][:2] == ["Answer marked unhelpful", "Samples"]


def test_turn_into_a_qa_case_in_one_click_and_only_with_the_qa_role(runtime, acme):
    _, gap_id = unhelpful(runtime, acme)
    editor = open_page(runtime, "pages/gaps.py")
    assert editor.button(key=f"qa_case_{gap_id}").disabled
    at = open_page(runtime, "pages/gaps.py", role="admin")
    at.button(key=f"qa_case_{gap_id}").click()
    run(at)
    suite = suites.require_suite(acme, runtime.store, DEFAULT_SUITE)
    [case] = suites.list_cases(acme, runtime.store, suite.id)
    assert case.question == ASKED and case.expect == "answered" and f"gap #{gap_id}" in case.note
    assert case.forbidden == ("Los envíos a Canarias tardan de 5 a 8 días laborables.",)
    assert f"QA case #{case.number} added to suite “{DEFAULT_SUITE}”" in texts(at)
    at.button(key=f"qa_case_{gap_id}").click()
    run(at)
    assert f"Suite '{DEFAULT_SUITE}' already has this question as case #{case.number}." in texts(at)


def test_closing_a_not_helpful_gap_wants_the_answer_changed(runtime, acme):
    _, gap_id = unhelpful(runtime, acme)
    at = open_page(runtime, "pages/gaps.py")
    at.selectbox(key=f"existing_{gap_id}").set_value("politicas/envios")
    run(at)
    at.button(key=f"check_existing_{gap_id}").click()
    run(at)
    settle(at)
    check = frame(at, "Changed")
    assert list(check["Changed"]) == ["✗"] and "5 a 8 días" in check["Answer marked unhelpful"][0]
    assert "No stored question gets another answer yet" in texts(at)
    assert at.button(key=f"close_{gap_id}_existing").disabled

    sources.save(acme, runtime.store, FIXED[0], title=ASKED, content=FIXED[1], type="qa", language="es")
    run(at)  # the new Q&A pair is in the list of articles now
    at.selectbox(key=f"existing_{gap_id}").set_value(FIXED[0])
    run(at)
    at.button(key=f"check_existing_{gap_id}").click()
    run(at)
    settle(at)  # trains the new Q&A pair, then replays
    check = frame(at, "Changed")
    assert list(check["Changed"]) == ["✓"] and "3 a 5 días" in check["Answer now"][0]
    assert "Every stored question now gets another answer." in texts(at)
    at.button(key=f"close_{gap_id}_existing").click()
    run(at)
    gap = runtime.backlog.require(acme, gap_id)
    assert gap.status == "closed" and gap.article_path == FIXED[0]
    assert runtime.backlog.history(acme, gap_id)[-1]["detail"]["changed"] == 1


# -- the Sources tree ------------------------------------------------------------------------------------------
def test_the_sources_tree_counts_answers_and_thumbs_down_per_source(runtime, acme):
    unhelpful(runtime, acme)
    runtime.turns.run(acme, Agent(runtime, OfflineResponder(LENIENT)), ASKED, channel="web")
    unhelpful(runtime, acme, channel="sandbox")  # a rehearsal: on the backlog, not in the counts
    at = open_page(runtime, "pages/sources.py")
    tree = frame(at, "Answers")
    answers = dict(zip(tree["Tree"].str.strip(" \u2003📁📄"), tree["Answers"]))
    assert answers["envios"] == "2 · 1 unhelpful" and answers["politicas"] == "2 · 1 unhelpful"
    assert answers["plazos"] == ""
    at.selectbox(key="src_selected").set_value("politicas/envios")
    run(at)
    assert "cited by 2 answers, 1 marked unhelpful" in texts(at)
