"""The Gap backlog page of the admin app, driven through Streamlit's AppTest (no browser, no network).

The app opens its runtime through ``pages.common.runtime``; the tests hand it a runtime of a temporary
data dir with the hashing embedder (fast, deterministic) and a tenant prepared with core APIs.
"""
from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.knowledge import sources
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from pages import common
from tests.apptest import settle, signed_in
from tests.fakes import ScriptedProvider

APP = Path(__file__).resolve().parents[2] / "app.py"
PAGE = "pages/gaps.py"
NOW = datetime.now(timezone.utc)
DISCOUNT = ("Descuento para estudiantes", "Los estudiantes tienen un 10 % de descuento en bicicletas y accesorios "
            "presentando el carné de estudiante vigente en la tienda o en la web.")


def record(rt, ctx, question, language="es", channel="web", days_ago=0.0):
    at = NOW - timedelta(days=days_ago)
    rt.backlog.clock = lambda: at
    try:
        return rt.backlog.record(ctx, question, language, channel, "conv-1")
    finally:
        rt.backlog.clock = lambda: datetime.now(timezone.utc)




@pytest.fixture
def acme(runtime):
    """A tenant with an article on student discounts and four gaps (one with PII, one purged)."""
    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    sources.save(ctx, runtime.store, "faq/descuentos", title=DISCOUNT[0], content=DISCOUNT[1], language="es")
    sources.save(ctx, runtime.store, "faq/horarios", title="Horarios",
                 content="Abrimos de lunes a sábado de 10:00 a 20:00.", language="es")
    runtime.index.train(ctx)
    discount = record(runtime, ctx, "¿Hacéis descuentos para estudiantes?", days_ago=3)
    assert record(runtime, ctx, "¿Hacéis descuentos para estudiantes?", channel="whatsapp", days_ago=1) == discount
    pii = record(runtime, ctx, "Soy ana.lopez@example.com, ¿hacéis descuentos para estudiantes?", days_ago=0.5)
    if pii != discount:
        runtime.backlog.merge(ctx, discount, [pii])
    scooters_es = record(runtime, ctx, "¿Vendéis patinetes eléctricos?", days_ago=2)
    scooters_en = record(runtime, ctx, "Do you sell electric scooters?", language="en", channel="whatsapp",
                         days_ago=0.2)
    bitcoin = record(runtime, ctx, "¿Puedo pagar con bitcoin?", days_ago=40)
    runtime.backlog.purge(ctx)
    ids = {"discount": discount, "scooters_es": scooters_es, "scooters_en": scooters_en, "bitcoin": bitcoin}
    assert len(set(ids.values())) == 4
    return ctx, ids


def open_page(slug: str = "acme") -> AppTest:
    at = signed_in(common.runtime().store, slug, "editor")
    at.run()
    at.switch_page(PAGE).run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def table(at: AppTest):
    return next(d.value for d in at.dataframe if "Question" in d.value.columns)


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value)
                     for kind in ("markdown", "caption", "info", "warning", "success", "error", "subheader")
                     for e in getattr(at, kind))


def choose_gap(at: AppTest, gap_id: int) -> None:
    at.selectbox(key="gap_id").set_value(gap_id).run()
    assert not at.exception, [e.value for e in at.exception]


def test_renders_metrics_trend_table_and_export(acme):
    ctx, ids = acme
    at = open_page()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Open"] == "4" and metrics["Closed"] == "0" and metrics["Reopened"] == "0"
    assert metrics["Uncovered, 7 days"] == "5" and metrics["Uncovered, 30 days"] == "5"  # the 40-day-old one is out
    assert at.get("plotly_chart"), "the trend chart is drawn"
    frame = table(at)
    assert list(frame["#"])[0] == ids["discount"] and list(frame["Asked"])[0] == 3  # most asked first
    assert set(frame["#"]) == set(ids.values())
    assert {"Question", "Asked", "Status", "Languages", "Channels", "Last seen", "Article"} <= set(frame.columns)
    assert [b.label for b in at.download_button] == ["Export CSV"]


def test_filters_and_ordering(acme):
    _, ids = acme
    at = open_page()
    at.multiselect(key="gaps_language").set_value(["en"]).run()
    assert list(table(at)["#"]) == [ids["scooters_en"]]
    at.multiselect(key="gaps_language").set_value([]).run()
    at.multiselect(key="gaps_channel").set_value(["whatsapp"]).run()
    assert set(table(at)["#"]) == {ids["discount"], ids["scooters_en"]}
    at.multiselect(key="gaps_channel").set_value([]).run()
    at.segmented_control(key="gaps_order").set_value("Most recent").run()
    assert list(table(at)["#"])[0] == ids["scooters_en"]  # asked 5 hours ago
    at.selectbox(key="gaps_status").set_value("Closed").run()
    assert not at.exception
    assert "No gap matches these filters." in texts(at)


def test_detail_shows_masked_samples_purged_samples_and_history(acme):
    _, ids = acme
    at = open_page()
    choose_gap(at, ids["discount"])
    samples = next(d.value for d in at.dataframe if "Question (masked)" in d.value.columns)
    assert len(samples) == 3 and set(samples["Channel"]) == {"web", "whatsapp"}
    assert any("<EMAIL>" in s for s in samples["Question (masked)"])
    assert "ana.lopez@example.com" not in texts(at) + samples.to_string()
    assert "Opened" in texts(at)
    choose_gap(at, ids["bitcoin"])
    samples = next(d.value for d in at.dataframe if "Question (masked)" in d.value.columns)
    assert list(samples["Question (masked)"]) == ["sample purged by retention (30 days)"]
    assert "(sample purged by retention)" in texts(at)  # the history keeps no sample either


def test_rename_and_a_user_error_is_a_message_not_a_traceback(runtime, acme):
    ctx, ids = acme
    at = open_page()
    choose_gap(at, ids["bitcoin"])
    at.text_input(key=f"label_{ids['bitcoin']}").set_value("Pago con criptomonedas").run()
    at.button(key=f"rename_{ids['bitcoin']}").click().run()
    assert runtime.backlog.get(ctx, ids["bitcoin"]).label == "Pago con criptomonedas"
    assert "renamed to “Pago con criptomonedas”" in texts(at)
    at.text_input(key=f"label_{ids['bitcoin']}").set_value("   ").run()
    at.button(key=f"rename_{ids['bitcoin']}").click().run()
    assert not at.exception
    assert [e.value for e in at.error] == ["A gap label cannot be empty; write a few words that name the question."]


def test_close_with_an_existing_article_replays_the_samples_then_closes(runtime, acme):
    ctx, ids = acme
    gap = ids["discount"]
    at = open_page()
    choose_gap(at, gap)
    at.selectbox(key=f"existing_{gap}").set_value("faq/descuentos").run()
    at.button(key=f"check_existing_{gap}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    settle(at)  # trained and replayed in the background
    check = next(d.value for d in at.dataframe if "Answered" in d.value.columns)
    # the two distinct samples (a repeat is replayed once)
    assert len(check) == 2 and set(check["Answered"]) <= {"✓", "✗"}
    assert "Check of `faq/descuentos`" in texts(at)
    assert runtime.backlog.get(ctx, gap).status == "open"  # nothing closes before the confirm
    at.button(key=f"close_{gap}_existing").click().run()
    closed = runtime.backlog.get(ctx, gap)
    assert closed.status == "closed" and closed.article_path == "faq/descuentos"
    event = runtime.backlog.history(ctx, gap)[-1]
    assert event["event"] == "closed" and event["detail"]["replayed"] == 2
    assert f"Gap #{gap} closed with `faq/descuentos`" in texts(at)
    assert table(at)["#"].tolist().count(gap) == 0  # left the to-do list
    at.selectbox(key="gaps_status").set_value("Closed").run()
    assert table(at)["#"].tolist() == [gap]
    at.button(key=f"reopen_{gap}").click().run()  # and an editor can change their mind
    assert runtime.backlog.get(ctx, gap).status == "reopened"


def test_write_publish_train_check_and_close(runtime, acme):
    ctx, ids = acme
    gap = ids["scooters_es"]
    at = open_page()
    choose_gap(at, gap)
    assert at.text_area(key=f"article_content_{gap}").value.startswith("Preguntas de clientes")  # the template
    at.button(key=f"publish_{gap}").click().run()
    assert "the article has no answer yet" in texts(at) and sources.get(ctx, runtime.store, "faq/patinetes") is None
    at.text_input(key=f"article_path_{gap}").set_value("faq/patinetes").run()
    at.text_input(key=f"article_title_{gap}").set_value("Patinetes eléctricos")
    at.text_area(key=f"article_content_{gap}").set_value(
        "No vendemos patinetes eléctricos: solo [[FALTA: marcas]].").run()
    at.button(key=f"publish_{gap}").click().run()
    assert "placeholders" in texts(at) and sources.get(ctx, runtime.store, "faq/patinetes") is None
    choose_gap(at, ids["bitcoin"])  # edits are kept with the gap: leaving it loses nothing
    choose_gap(at, gap)
    assert "[[FALTA: marcas]]" in at.text_area(key=f"article_content_{gap}").value
    assert runtime.backlog.draft(ctx, gap)["path"] == "faq/patinetes"
    at.text_area(key=f"article_content_{gap}").set_value(
        "No vendemos patinetes eléctricos; solo bicicletas, bicicletas eléctricas y accesorios.").run()
    at.button(key=f"publish_{gap}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    settle(at)  # trained and replayed in the background
    article = sources.get(ctx, runtime.store, "faq/patinetes")
    assert article is not None and not article.changed  # published and trained
    assert runtime.backlog.draft(ctx, gap)["path"] == "faq/patinetes"
    assert next(d.value for d in at.dataframe if "Answered" in d.value.columns).shape[0] == 1
    at.button(key=f"close_{gap}_write").click().run()
    assert runtime.backlog.get(ctx, gap).article_path == "faq/patinetes"


def test_merge_and_split(runtime, acme):
    ctx, ids = acme
    at = open_page()
    choose_gap(at, ids["scooters_es"])
    at.multiselect(key=f"merge_{ids['scooters_es']}").set_value([ids["scooters_en"]]).run()
    at.button(key=f"do_merge_{ids['scooters_es']}").click().run()
    merged = runtime.backlog.get(ctx, ids["scooters_es"])
    assert (merged.count == 2 and merged.languages == ("en", "es")
            and runtime.backlog.get(ctx, ids["scooters_en"]) is None)
    assert f"Merged #{ids['scooters_en']} into #{ids['scooters_es']}" in texts(at)
    english = [s["id"] for s in runtime.backlog.samples(ctx, merged.id) if s["language"] == "en"]
    at.multiselect(key=f"split_{merged.id}").set_value(english).run()
    at.text_input(key=f"split_label_{merged.id}").set_value("Electric scooters (English)").run()
    at.button(key=f"do_split_{merged.id}").click().run()
    assert not at.exception
    split = [g for g in runtime.backlog.gaps(ctx) if g.label == "Electric scooters (English)"]
    assert len(split) == 1 and split[0].count == 1 and runtime.backlog.get(ctx, merged.id).count == 1


def test_empty_state_explains_how_gaps_arrive(runtime):
    create_tenant(runtime.store, "quiet", "Quiet")
    at = open_page("quiet")
    assert "No gaps yet" in texts(at)
    assert not at.dataframe and not at.metric


def test_an_llm_draft_when_a_provider_is_configured(environ, monkeypatch, request):
    environ.update({"COBERTURA_PROVIDER": "openai", "COBERTURA_OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
                    "COBERTURA_OPENAI_MODEL": "tiny"})
    provider = ScriptedProvider("Patinetes eléctricos\nNo vendemos patinetes: [[FALTA: ¿los vendéis?]]")
    monkeypatch.setattr("core.agent.providers.chain.build_provider", lambda settings: provider)
    request.getfixturevalue("runtime")
    ctx, ids = request.getfixturevalue("acme")
    gap = ids["scooters_es"]
    at = open_page()
    choose_gap(at, gap)
    at.button(key=f"llm_{gap}").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert at.text_input(key=f"article_title_{gap}").value == "Patinetes eléctricos"
    assert "[[FALTA" in at.text_area(key=f"article_content_{gap}").value
    assert "Drafted by **scripted" in texts(at) and "placeholders" in texts(at)
    assert "¿Vendéis patinetes eléctricos?" in provider.calls[0]["messages"][0].content


def test_a_gap_shows_the_handoffs_it_caused_and_a_merge_carries_them(runtime, acme):
    from core.channels import conversations, handoff

    ctx, ids = acme
    convo = conversations.start(ctx, runtime.store, "identified").id
    handoff.create(ctx, runtime.store, convo, "not_covered_twice", ids["scooters_en"])
    at = open_page()
    choose_gap(at, ids["scooters_en"])
    assert "handed to a person **1×** (1 open in the Inbox)" in texts(at)
    runtime.backlog.merge(ctx, ids["scooters_es"], [ids["scooters_en"]])
    assert handoff.by_gap(ctx, runtime.store) == {ids["scooters_es"]: {"total": 1, "open": 1}}
    choose_gap(at.run(), ids["discount"])
    assert "handed to a person" not in texts(at)
