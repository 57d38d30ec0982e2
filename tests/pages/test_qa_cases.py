"""The QA page's cases (#17 item 5): adding a case stays on the Cases tab, the suite selector and the tab count the
same cases, cases are numbered per suite, a case checks facts the answer must say and texts it must not, and the
form's examples are neutral (never the Spanish demo's). AppTest, as a signed-in qa member of tenant ``acme``."""
from __future__ import annotations

from streamlit.testing.v1 import AppTest

from core.qa import suites as qa
from core.tenancy import settings as tenant_settings
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.apptest import settle
from tests.pages import test_qa as qa_page
from tests.pages.test_qa import ANSWERS, frame, page, rerun, texts

acme, agent = qa_page.acme, qa_page.agent  # the QA page tests' fixtures: tenant acme, a scripted agent

QUESTION = "¿Cuántos días tengo para devolver algo?"


def open_tab(at: AppTest) -> str:
    """The label of the tab the page opens on (the tab container's current tab)."""
    [container] = [node for node in _blocks(at._tree) if hasattr(getattr(node, "proto", None), "tab_container")
                   and node.proto.HasField("tab_container")]
    return [tab.label for tab in container.children.values()][container.proto.tab_container.default_tab_index]


def click_tab(at: AppTest, label: str) -> AppTest:
    """What a click on a tab does: the tabs' widget value becomes its label, and the page runs."""
    at.session_state["qa_tab"] = label
    return rerun(at)


def _blocks(node):
    for child in getattr(node, "children", {}).values():
        if hasattr(child, "children"):
            yield child
            yield from _blocks(child)


def add(at: AppTest, suite_id: int, question: str, **fields) -> AppTest:
    new = f"new_{suite_id}"
    at.text_area(key=f"qa_question_{new}").set_value(question)
    for name, value in fields.items():
        key = f"qa_{name}_{new}"
        if name == "expect":
            at.selectbox(key=key).set_value(value)
        elif name in ("facts", "forbidden"):
            at.text_area(key=key).set_value(value)
        else:
            at.text_input(key=key).set_value(value)
    at.button(key=f"qa_save_{new}").click()
    return rerun(at)


def test_adding_cases_stays_on_the_cases_tab_and_the_selector_counts_them(runtime, acme):
    suite = qa.create_suite(acme, runtime.store, "smoke")
    at = page(runtime.store)
    assert open_tab(at) == "Run and results"
    click_tab(at, "Cases (0)")
    assert open_tab(at) == "Cases (0)"
    add(at, suite.id, QUESTION)
    assert open_tab(at) == "Cases (1)" and "Case #1 added: answered." in texts(at)
    add(at, suite.id, "¿Vendéis patinetes?", expect="abstains")
    assert open_tab(at) == "Cases (2)"  # the label changed and a message appeared above the tabs: still there
    selector = at.selectbox(key="qa_suite")
    assert selector.options == ["smoke · 2 case(s)"] and selector.proto.set_value  # the browser is sent this label
    assert [t.label for t in at.tabs][1] == "Cases (2)"
    at.selectbox(key=f"qa_case_{suite.id}").set_value(qa.list_cases(acme, runtime.store, suite.id)[0].id)
    rerun(at)
    assert open_tab(at) == "Cases (2)" and at.selectbox(key=f"qa_case_{suite.id}").proto.set_value
    for label in ("Run and results", "Suite", "Cases (2)", "Run and results"):  # every click lands
        assert open_tab(click_tab(at, label)) == label


def test_cases_are_numbered_in_their_suite_not_by_global_id(runtime, acme, agent):
    create_tenant(runtime.store, "globex", "Globex")
    other = local_operator(runtime.store, "globex")
    theirs = qa.create_suite(other, runtime.store, "theirs")
    for n in range(10):  # the first case of acme used to be #11
        qa.add_case(other, runtime.store, theirs.id, f"¿Pregunta {n}?")
    first, second = qa.create_suite(acme, runtime.store, "first"), qa.create_suite(acme, runtime.store, "second")
    qa.add_case(acme, runtime.store, first.id, "¿Otra?")
    at = page(runtime.store)
    at.selectbox(key="qa_suite").set_value(second.id)
    rerun(at)
    add(at, second.id, QUESTION, cite="politicas/devoluciones")
    assert "Case #1 added: answered citing politicas/devoluciones." in texts(at)
    add(at, second.id, "¿Y en tienda?")
    [case_1, case_2] = qa.list_cases(acme, runtime.store, second.id)
    assert (case_1.id, case_2.id) == (12, 13) and list(frame(at, "Expectation")["#"]) == [1, 2]
    options = at.selectbox(key=f"qa_case_{second.id}")
    assert options.options == ["➕ New case", f"#1 · {QUESTION}", "#2 · ¿Y en tienda?"]
    agent.enqueue(*ANSWERS, *ANSWERS)
    at.button(key=f"qa_run_now_{second.id}").click()
    settle(rerun(at))
    assert list(frame(at, "Why it failed")["#"]) == [1, 2]


def test_a_case_with_a_fact_fails_when_the_answer_does_not_say_it(runtime, acme, agent):
    suite = qa.create_suite(acme, runtime.store, "facts")
    at = page(runtime.store)
    add(at, suite.id, QUESTION, cite="politicas/devoluciones", facts="30 días naturales\n\n", forbidden="gratis")
    add(at, suite.id, "¿Y el plazo exacto?", facts="15 días")
    first, second = qa.list_cases(acme, runtime.store, suite.id)
    assert (first.facts, first.forbidden, second.facts) == (("30 días naturales",), ("gratis",), ("15 días",))
    assert list(frame(at, "Expectation")["Expectation"]) == [
        "answered citing politicas/devoluciones, saying “30 días naturales”, never “gratis”",
        "answered, saying “15 días”"]
    agent.enqueue(*ANSWERS, *ANSWERS)  # both answered "Tienes 30 días naturales desde la entrega."
    at.button(key=f"qa_run_now_{suite.id}").click()
    settle(rerun(at))
    results = frame(at, "Why it failed")
    assert list(results["Result"]) == ["PASS", "FAIL"]
    assert results["Why it failed"][1] == ("answered citing politicas/devoluciones, but the answer does not say "
                                           "“15 días”. The answer was: “Tienes 30 días naturales desde la entrega. "
                                           "[1]”.")
    shown = texts(at)
    assert "##### Why they failed" in shown and "**#2** · ¿Y el plazo exacto" in shown.replace("\\", "")
    # editing the case keeps its number and refills the facts
    at.selectbox(key=f"qa_case_{suite.id}").set_value(second.id)
    rerun(at)
    assert at.text_area(key=f"qa_facts_{second.id}").value == "15 días"
    at.text_area(key=f"qa_facts_{second.id}").set_value("30 días")
    at.button(key=f"qa_save_{second.id}").click()
    rerun(at)
    assert "Case #2 saved." in texts(at) and qa.require_case(acme, runtime.store, second.id).facts == ("30 días",)


def test_a_bad_fact_is_a_message_and_keeps_the_form(runtime, acme):
    suite = qa.create_suite(acme, runtime.store, "bad")
    at = page(runtime.store)
    add(at, suite.id, QUESTION, facts="gratis", forbidden="GRATIS")
    assert [e.value for e in at.error] == ["“gratis” is both a fact the answer must say and a text it must not say; "
                                           "keep one."]
    assert at.text_area(key=f"qa_facts_new_{suite.id}").value == "gratis" and not qa.list_cases(acme, runtime.store,
                                                                                                 suite.id)


def test_the_forms_examples_are_neutral_or_in_the_tenants_language(runtime, acme):
    suite = qa.create_suite(acme, runtime.store, "examples")
    tenant_settings.update(acme, runtime.store, languages=["en"])
    at = page(runtime.store)
    new = f"new_{suite.id}"
    assert at.text_area(key=f"qa_question_{new}").placeholder == "The question, as a customer would write it"
    assert at.text_input(key=f"qa_cite_{new}").placeholder == "folder/document"
    tenant_settings.update(acme, runtime.store, languages=["pt", "es"])
    at = page(runtime.store)
    assert at.text_area(key=f"qa_question_{new}").placeholder == "A pergunta, tal como um cliente a escreveria"
    shown = " ".join(str(w.placeholder) for kind in ("text_input", "text_area") for w in getattr(at, kind))
    shown += texts(at)
    assert "politicas" not in shown and "Canarias" not in shown and "plazos" not in shown
