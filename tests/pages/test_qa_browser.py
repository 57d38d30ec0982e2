"""The QA page in a real browser (#17 item 5): adding a case keeps you on the Cases tab, the suite selector and the
tab count the same cases, every tab click lands, and a case whose fact the answer does not say fails saying so.
`streamlit run app.py` on a free port over a prepared data dir (tenant acme, two trained articles, a suite of one
case; no demo tenant to train), driven by headless Chromium at 1,400 px, with the offline responder."""
from __future__ import annotations

import re

import pytest

from core.base.config import load_settings
from core.knowledge import sources
from core.qa import suites as qa
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.browser import admin_tab, create_first_admin, needs_chromium, shot
from tests.servers import admin_app

pytestmark = needs_chromium

RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la fecha de entrega."
SHIPPING = "Los envíos a Canarias tardan de 5 a 8 días laborables."


@pytest.fixture(scope="module")
def app_url(tmp_path_factory):
    data = tmp_path_factory.mktemp("qa") / "data"
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(data)}))
    create_tenant(rt.store, "acme", "Acme")
    ctx = local_operator(rt.store, "acme")
    sources.save(ctx, rt.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    sources.save(ctx, rt.store, "politicas/envios", title="Envíos", content=SHIPPING, language="es")
    rt.index.train(ctx)
    suite = qa.create_suite(ctx, rt.store, "smoke")
    qa.add_case(ctx, rt.store, suite.id, "¿Cuánto tarda un envío a Canarias?", cite="politicas/envios",
                facts=["5 a 8 días"])
    rt.close()
    with admin_app(data) as url:
        yield url


@pytest.fixture(scope="module")
def page(app_url):
    with admin_tab(timeout=120_000, height=900) as tab:
        yield tab


def open_tab(page) -> str:
    return page.get_by_role("tab", selected=True).inner_text().strip()


def test_cases_stay_on_their_tab_count_alike_and_a_missing_fact_fails(page, app_url):
    page.goto(app_url)
    create_first_admin(page)
    page.get_by_role("heading", name="Sources").wait_for()  # landed (see create_first_admin)
    page.get_by_role("link", name="QA suites", exact=True).click()
    page.get_by_role("heading", name="QA suites").wait_for()

    page.get_by_role("tab", name="Cases (1)").click()
    page.get_by_role("textbox", name="Question").wait_for()
    page.get_by_role("textbox", name="Question").fill("¿Cuántos días tengo para devolver un producto?")
    page.get_by_role("textbox", name="The answer must say (with").fill("15 días hábiles")
    page.get_by_role("button", name="Add case").click()
    page.get_by_text("Case #2 added").wait_for()
    shot(page, "qa-added-case.png")
    assert open_tab(page) == "Cases (2)"  # not sent back to "Run and results"
    assert page.get_by_role("combobox", name="Suite").input_value() == "smoke · 2 case(s)"  # not "1 case(s)"

    for label in ("Run and results", "Cases (2)", "Import / export", "Run and results"):
        page.get_by_role("tab", name=label).click()
        page.wait_for_timeout(1500)
        assert open_tab(page) == label  # every click lands, also right after the tab came back
    page.get_by_role("button", name="Run suite").click()
    page.get_by_text("Why they failed", exact=True).wait_for()
    shot(page, "qa-results.png")
    failed = page.get_by_text(re.compile("Why it failed: answered citing politicas/devoluciones, but the answer does "
                                         "not say “15 días hábiles”"))
    assert failed.count() == 1 and page.get_by_text("Traceback").count() == 0
    assert page.get_by_role("combobox", name="Suite").input_value() == "smoke · 2 case(s) · last run 1/2"
