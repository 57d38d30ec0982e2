"""The QA page of the admin app, driven through Streamlit's AppTest (no browser, no network).

The page runs on a runtime of a temporary data dir with the hashing embedder, as a signed-in member of
tenant ``acme``; the agent of a run is a scripted one (``make_agent`` is swapped), so every verdict is known.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.agent.loop import Agent
from core.knowledge import sources
from core.qa import suites as qa
from core.tenancy.context import authenticate, local_operator
from core.tenancy.tenants import create_tenant, create_user
from pages import common
from tests.apptest import settle
from tests.fakes import ScriptedProvider

PAGE = Path(__file__).resolve().parents[2] / "pages" / "qa.py"
RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."
PASSWORD = "a long test password"



@pytest.fixture
def acme(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    sources.save(ctx, runtime.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    runtime.index.train(ctx)
    return ctx


def _cited(messages) -> str:
    data = json.loads(next(m.content for m in reversed(messages) if m.role == "tool"))
    return f"Tienes 30 días naturales desde la entrega. [[cite:{data['results'][0]['id']}]]"


ANSWERS = [("search_knowledge", {"query": "plazo devolver producto"}), _cited]  # answered, citing the returns policy


@pytest.fixture
def agent(runtime, monkeypatch):
    """Every turn of a run answers from the returns policy."""
    provider = ScriptedProvider()
    monkeypatch.setattr("core.agent.factory.make_agent", lambda rt, *a, **kw: Agent(rt, provider))
    return provider


def page(store, role: str = "qa") -> AppTest:
    email = f"{role}@acme.test"
    create_user(store, "acme", email, PASSWORD, role)
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.session_state[common.SESSION_KEY] = authenticate(store, email, PASSWORD)
    at.session_state[common.TENANT_KEY] = "acme"
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in ("markdown", "caption", "info", "warning", "success", "error")
                     for e in getattr(at, kind))


def frame(at: AppTest, column: str):
    return next(d.value for d in at.dataframe if column in d.value.columns)


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def test_create_a_suite_add_cases_run_and_see_the_pass_rate_and_the_diff(runtime, acme, agent):
    at = page(runtime.store)
    assert "No QA suites yet" in texts(at)
    at.text_input(key="qa_new_suite_name").set_value("smoke")
    at.button(key="qa_create").click()
    rerun(at)
    suite = qa.require_suite(acme, runtime.store, "smoke")
    assert at.selectbox(key="qa_suite").value == suite.id and "Suite 'smoke' created" in texts(at)

    new = f"new_{suite.id}"
    at.text_area(key=f"qa_question_{new}").set_value("¿Cuántos días tengo para devolver algo?")
    at.selectbox(key=f"qa_expect_{new}").set_value("answered")
    at.text_input(key=f"qa_cite_{new}").set_value("politicas/devoluciones")
    at.button(key=f"qa_save_{new}").click()
    rerun(at)
    assert at.text_area(key=f"qa_question_{new}").value == "" and at.text_input(key=f"qa_cite_{new}").value == ""
    at.text_area(key=f"qa_question_{new}").set_value("   ")  # a bad case is an error and keeps the form
    at.text_input(key=f"qa_note_{new}").set_value("keep me")
    at.button(key=f"qa_save_{new}").click()
    rerun(at)
    assert [e.value for e in at.error] == ["'question' is missing or empty: write the customer's question."]
    assert at.text_input(key=f"qa_note_{new}").value == "keep me"
    at.text_area(key=f"qa_question_{new}").set_value("¿Vendéis patinetes?")
    at.text_input(key=f"qa_note_{new}").set_value("")
    at.selectbox(key=f"qa_expect_{new}").set_value("abstains")
    at.button(key=f"qa_save_{new}").click()
    rerun(at)
    cases = qa.list_cases(acme, runtime.store, suite.id)
    assert [(c.expect, c.cite) for c in cases] == [("answered", "politicas/devoluciones"), ("abstains", "")]
    assert list(frame(at, "Expectation")["Expectation"]) == ["answered citing politicas/devoluciones", "abstains"]

    agent.enqueue(*ANSWERS, *ANSWERS)
    at.button(key=f"qa_run_now_{suite.id}").click()
    settle(rerun(at))  # the run goes on in the background
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Pass rate"] == "50%" and metrics["Passed"] == "1/2" and metrics["Failed"] == "1"
    results = frame(at, "Why it failed")
    assert list(results["Result"]) == ["PASS", "FAIL"]
    assert "expected: abstains; got: answered citing politicas/devoluciones" in results["Why it failed"][1]
    assert "The first run of this suite" in texts(at)

    # the failing case becomes an expectation the agent meets: the next run shows the flip
    at.selectbox(key=f"qa_case_{suite.id}").set_value(cases[1].id)
    rerun(at)
    at.selectbox(key=f"qa_expect_{cases[1].id}").set_value("answered")
    at.button(key=f"qa_save_{cases[1].id}").click()
    rerun(at)
    assert qa.require_case(acme, runtime.store, cases[1].id).expect == "answered"
    agent.enqueue(*ANSWERS, *ANSWERS)
    at.button(key=f"qa_run_now_{suite.id}").click()
    settle(rerun(at))  # the run goes on in the background
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Pass rate"] == "100%" and metrics["Pass rate"] and "Every case passed." in texts(at)
    changed = frame(at, "Change")
    assert list(changed["Change"]) == ["FAIL → PASS"] and list(changed["#"]) == [cases[1].id]
    assert "Compared with run #" in texts(at)
    assert runtime.store.query("SELECT COUNT(*) AS n FROM turns")[0]["n"] == 0  # runs leave no conversation behind


def test_import_paste_export_and_a_bad_line_is_an_error_not_a_traceback(runtime, acme, agent):
    suite = qa.create_suite(acme, runtime.store, "imported")
    at = page(runtime.store)
    at.text_area(key=f"qa_paste_{suite.id}").set_value(
        '{"question": "¿Plazo?", "expect": "abstains"}\n{"question": "x"}\n')
    at.button(key=f"qa_import_{suite.id}").click()
    rerun(at)
    assert [e.value for e in at.error][0].startswith("Nothing was imported: 1 bad line(s).")
    assert "line 2: 'expect' is 'missing'" in at.error[0].value and qa.list_cases(acme, runtime.store, suite.id) == []
    at.text_area(key=f"qa_paste_{suite.id}").set_value('{"question": "¿Plazo?", "expect": "abstains"}\n')
    at.button(key=f"qa_import_{suite.id}").click()
    rerun(at)
    assert "Imported 1 case(s)." in texts(at) and len(qa.list_cases(acme, runtime.store, suite.id)) == 1
    assert [b.label for b in at.get("download_button")] == ["Export JSONL"]
    at.text_input(key=f"qa_rename_{suite.id}").set_value("renamed")
    at.button(key=f"qa_do_rename_{suite.id}").click()
    rerun(at)
    assert qa.get_suite(acme, runtime.store, suite.id).name == "renamed"


def test_an_editor_runs_suites_but_cannot_change_them(runtime, acme, agent):
    suite = qa.create_suite(acme, runtime.store, "theirs")
    qa.add_case(acme, runtime.store, suite.id, "¿Plazo?", expect="answered")
    at = page(runtime.store, "editor")
    assert "Your role (editor) can run suites" in texts(at)
    assert at.button(key="qa_create").disabled and at.button(key=f"qa_save_new_{suite.id}").disabled
    assert at.button(key=f"qa_import_{suite.id}").disabled and at.button(key=f"qa_delete_{suite.id}").disabled
    agent.enqueue(*ANSWERS)
    at.button(key=f"qa_run_now_{suite.id}").click()
    settle(rerun(at))  # the run goes on in the background
    assert {m.label: m.value for m in at.metric}["Pass rate"] == "100%"


def _partly(messages) -> str:
    data = json.loads(next(m.content for m in reversed(messages) if m.role == "tool"))
    return f"[[missing: Valencia]] Tienes 30 días naturales desde la entrega. [[cite:{data['results'][0]['id']}]]"


PARTLY = [("search_knowledge", {"query": "plazo devolver producto Valencia"}), _partly]  # partial: Valencia


def test_a_partial_case_is_added_with_its_citation_and_a_run_shows_what_is_missing(runtime, acme, agent):
    suite = qa.create_suite(acme, runtime.store, "partial")
    qa.add_case(acme, runtime.store, suite.id, "¿Y desde Valencia?", expect="answered")
    at = page(runtime.store)
    new = f"new_{suite.id}"
    assert at.selectbox(key=f"qa_expect_{new}").options[1].startswith("partial (says what")
    at.text_area(key=f"qa_question_{new}").set_value("¿Plazo de devolución desde Valencia?")
    at.selectbox(key=f"qa_expect_{new}").set_value("partial")
    at.text_input(key=f"qa_cite_{new}").set_value("politicas")
    at.button(key=f"qa_save_{new}").click()
    rerun(at)
    assert "added: partial citing politicas" in texts(at)
    assert list(frame(at, "Expectation")["Expectation"]) == ["answered", "partial citing politicas"]
    agent.enqueue(*PARTLY, *PARTLY)
    at.button(key=f"qa_run_now_{suite.id}").click()
    settle(rerun(at))  # the run goes on in the background
    results = frame(at, "Why it failed")
    assert list(results["Result"]) == ["FAIL", "PASS"] and list(results["Got"]) == ["partial", "partial"]
    assert ("expected: answered; got: partial: the material does not mention “Valencia” (the rest cites "
            "politicas/devoluciones)." == results["Why it failed"][0])
