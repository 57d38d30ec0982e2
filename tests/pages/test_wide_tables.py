"""Wide tables readable at 1,400 px (#17 item 6): the Sources tree's status, the Sandbox trace's "Found by" and the
QA results' "Why it failed" are inside the visible width (about 940 px beside the sidebar, 850 px in a chat
message), with rows tall enough for a long text to wrap. AppTest reads the column widths and order each table
is sent with; tests/pages/test_qa_browser.py looks at the QA page in Chromium."""
from __future__ import annotations

import json

from core.qa import suites as qa
from tests.apptest import settle
from tests.pages import test_qa, test_sources

MAIN_PX, CHAT_PX = 940, 850
SELECT_PX = 33  # the row-selection checkbox of a selectable table


def layout(table) -> tuple[list[str], dict[str, int]]:
    """(the columns in the order shown, each one's width) of a dataframe element as the page sent it."""
    config = json.loads(table.proto.columns)
    order = list(table.proto.column_order) or list(table.value.columns)
    return order, {name: config.get(name, {}).get("width", 0) for name in order}


def visible(order: list[str], widths: dict[str, int], room: int) -> list[str]:
    """The columns that are wholly inside ``room`` pixels, from the left."""
    shown, used = [], 0
    for name in order:
        used += widths[name]
        if used > room:
            break
        shown.append(name)
    return shown


def test_the_sources_tree_shows_the_status_within_the_page(runtime, monkeypatch):
    from core.knowledge import sources
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant

    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    sources.save(ctx, runtime.store, "politicas/devoluciones", title="Devoluciones", content=test_sources.RETURNS,
                 language="es")
    at = test_sources.open_page(runtime, monkeypatch)
    table = next(d for d in at.dataframe if "Status" in d.value.columns)
    assert "never trained" in list(table.value["Status"])
    order, widths = layout(table)
    assert all(widths[name] for name in order)  # every width is fixed: nothing sizes itself to a long title
    shown = visible(order, widths, MAIN_PX - SELECT_PX)
    assert {"Tree", "Status", "Type", "Lang", "Chars"} <= set(shown)
    assert widths["Status"] >= 165  # "changed since training" in full
    assert sum(widths.values()) + SELECT_PX <= MAIN_PX


acme, agent = test_qa.acme, test_qa.agent  # the QA page tests' fixtures: tenant acme, a scripted agent


def test_the_qa_results_show_why_a_case_failed_within_the_page(runtime, acme, agent):
    suite = qa.create_suite(acme, runtime.store, "wide")
    qa.add_case(acme, runtime.store, suite.id, "¿Cuántos días tengo para devolver algo?", cite="politicas/devoluciones",
                facts=["15 días hábiles"])
    qa.add_case(acme, runtime.store, suite.id, "¿Vendéis patinetes?", expect="abstains")
    at = test_qa.page(runtime.store)
    agent.enqueue(*test_qa.ANSWERS, *test_qa.ANSWERS)
    at.button(key=f"qa_run_now_{suite.id}").click()
    settle(test_qa.rerun(at))
    table = next(d for d in at.dataframe if "Why it failed" in d.value.columns)
    order, widths = layout(table)
    assert {"Result", "#", "Question", "Expected", "Got", "Why it failed"} <= set(visible(order, widths, MAIN_PX))
    why = list(table.value["Why it failed"])
    assert all(why) and len(why[0]) > 100  # a long reason, so the rows are tall enough to wrap it
    assert table.proto.row_height >= 24 + 20 * 3 and widths["Why it failed"] >= 280  # three lines or more
    shown = test_qa.texts(at)
    assert "##### Why they failed" in shown and shown.count("**Why it failed:**") == 2
