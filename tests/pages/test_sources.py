"""The Sources page of the admin app, driven through Streamlit's AppTest (no browser, no network).

The page opens its runtime through ``pages.common.runtime``: the tests hand it a runtime of a temporary
data dir with the hashing embedder, and make ``common.context`` return the context of a user who logged
in with a role (an editor, or a qa user who must see no editing widget at all).
"""
from __future__ import annotations

import io
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from core.channels import conversations
from core.knowledge import sources
from core.knowledge.training import chunk_source
from core.tenancy.context import local_operator, login
from core.tenancy.tenants import create_tenant, create_user
from pages import common
from tests.apptest import frame, run, settle

PAGE = str(Path(__file__).resolve().parents[2] / "pages" / "sources.py")
PASSWORD = "a long test password"
RETURNS = "Puedes devolver cualquier producto en un plazo de 30 días naturales desde la entrega."
HOURS = "Abrimos de lunes a sábado de 10:00 a 20:00."
LONG = "\n\n".join(f"Sección {n}. " + f"El envío a la zona {n} tarda {n + 1} días y cuesta {n * 2} euros. " * 12
                   for n in range(1, 6)).strip()



@pytest.fixture
def acme(runtime):
    create_tenant(runtime.store, "acme", "Acme")
    ctx = local_operator(runtime.store, "acme")
    sources.save(ctx, runtime.store, "politicas/devoluciones", title="Devoluciones", content=RETURNS, language="es")
    sources.save(ctx, runtime.store, "politicas/envios", title="Envíos", content=LONG, language="es")
    sources.save(ctx, runtime.store, "tienda/horario", title="Horario", content=HOURS, language="es", starred=True)
    sources.set_folder_description(ctx, runtime.store, "politicas", "Devoluciones, envíos y garantías")
    runtime.index.train(ctx)
    sources.save(ctx, runtime.store, "tienda/horario", title="Horario", content=HOURS + " Domingos cerrado.",
                 language="es")
    return ctx


def as_role(runtime, monkeypatch, role: str, slug: str = "acme"):
    """A user of ``role`` who logged in; the page gets their context from ``common.context``."""
    email = f"{role}@{slug}.test"
    create_user(runtime.store, slug, email, PASSWORD, role)
    ctx = login(runtime.store, email, PASSWORD, slug)
    monkeypatch.setattr(common, "context", lambda rt: ctx)
    return ctx


def open_page(runtime, monkeypatch, role: str = "editor") -> AppTest:
    as_role(runtime, monkeypatch, role)
    return run(AppTest.from_file(PAGE, default_timeout=60))


def texts(at: AppTest) -> str:
    return "\n".join(str(e.value)
                     for kind in ("markdown", "caption", "info", "warning", "success", "error", "subheader")
                     for e in getattr(at, kind))


def choose(at: AppTest, path: str) -> AppTest:
    at.selectbox(key="src_selected").set_value(path)
    return run(at)


def test_the_tree_shows_folders_with_descriptions_and_sources_with_their_state(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    assert {m.label: m.value for m in at.metric}["Sources"] == "3"
    assert {m.label: m.value for m in at.metric}["Changed since training"] == "1"
    tree = frame(at, "Tree")
    assert [t.strip("\u2003") for t in tree["Tree"]] == [
        "📁 politicas", "📄 devoluciones", "📄 envios", "📁 tienda", "📄 horario"]
    rows = {t.strip("\u2003"): r for t, r in zip(tree["Tree"], tree.to_dict("records"))}
    assert rows["📁 politicas"]["Title / folder description"] == "Devoluciones, envíos y garantías"
    assert rows["📄 horario"]["★"] == "★" and rows["📄 horario"]["Status"] == "changed since training"
    assert rows["📄 devoluciones"]["Status"] == "trained" and rows["📄 devoluciones"]["Type"] == "text"
    assert rows["📄 devoluciones"]["Lang"] == "es"
    assert at.selectbox(key="src_selected").value == "politicas/devoluciones"  # the first source opens
    at.text_input(key="src_filter").set_value("horario")
    run(at)
    assert [t.strip("\u2003") for t in frame(at, "Tree")["Tree"]] == ["📁 tienda", "📄 horario"]
    assert at.selectbox(key="src_selected").value == "tienda/horario"
    at.text_input(key="src_filter").set_value("garantías")  # a folder's description matches: the folder and below
    run(at)
    assert [t.strip("\u2003") for t in frame(at, "Tree")["Tree"]] == ["📁 politicas", "📄 devoluciones", "📄 envios"]


def test_create_a_text_and_a_qa_pair_and_a_user_error_is_a_message(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    at.text_input(key="new_text_path").set_value("garantia/plazos")
    at.text_input(key="new_text_title").set_value("Garantía")
    at.text_area(key="new_text_content").set_value("Todos los productos tienen dos años de garantía.")
    at.button(key="create_text").click()
    run(at)
    created = sources.get(acme, runtime.store, "garantia/plazos")
    assert created is not None and created.type == "text" and created.language == "es" and created.changed
    assert "Created `garantia/plazos`" in texts(at) and at.selectbox(key="src_selected").value == "garantia/plazos"
    at.text_input(key="new_qa_path").set_value("faq/bizum")
    at.text_input(key="new_qa_title").set_value("¿Puedo pagar con Bizum?")
    at.text_area(key="new_qa_content").set_value("Sí, aceptamos Bizum en la tienda y en la web.")
    at.checkbox(key="new_qa_starred").check()
    at.button(key="create_qa").click()
    run(at)
    pair = sources.get(acme, runtime.store, "faq/bizum")
    assert pair.type == "qa" and pair.starred and pair.title == "¿Puedo pagar con Bizum?"
    at.text_input(key="new_text_path").set_value("garantia/plazos")  # taken
    at.text_input(key="new_text_title").set_value("Otra")
    at.text_area(key="new_text_content").set_value("Otro texto.")
    at.button(key="create_text").click()
    run(at)
    assert [e.value for e in at.error] == [
        "A source already exists at 'garantia/plazos'; edit it, or choose another path."]


def test_an_edit_shows_its_impact_before_it_is_saved(runtime, acme, monkeypatch):
    source = sources.get(acme, runtime.store, "politicas/envios")
    chunks = runtime.index.chunks_of(acme, source.id)
    assert len(chunks) >= 2
    convo = conversations.start(acme, runtime.store, "web")
    conversations.record_turn(
        acme, runtime.store, convo.id, question="¿Cuánto cuesta el envío a la zona 5?", status="answered",
        answer="Cuesta 10 euros.", citations=[{"id": chunks[-1].id, "path": source.path, "title": source.title,
                                                "url": "", "trained_at": chunks[-1].trained_at}],
        evidence=[chunks[-1].id], truncated=False, provider="t", model="t", latency_ms=1, input_tokens=0,
        output_tokens=0, trace={}, uncovered=False)
    gap = runtime.backlog.record(acme, "¿Hacéis envíos a la zona 9?", "es", "web", "c1")
    runtime.backlog.close(acme, gap, "politicas/envios")
    at = open_page(runtime, monkeypatch)
    choose(at, "politicas/envios")
    key = f"src_{source.id}_content"
    assert at.text_area(key=key).value == LONG and "No unsaved changes." in texts(at)
    at.text_input(key=f"src_{source.id}_description").set_value("Plazos y precios de envío")
    run(at)
    assert any("This edit changes no trained chunk" in i.value for i in at.info)  # metadata only
    at.button(key=f"discard_{source.id}").click()
    run(at)
    assert at.text_input(key=f"src_{source.id}_description").value == "" and "No unsaved changes." in texts(at)
    at.text_area(key=key).set_value(LONG.replace("cuesta 10 euros", "cuesta 12 euros"))
    run(at)
    warning = [w.value for w in at.warning]
    assert any("This edit changes chunks cited by 1 recent answer(s), 1 closed gap(s), 0 QA case(s)" in w
               for w in warning)
    answers = frame(at, "Answer (excerpt)")
    assert list(answers["Question"]) == ["¿Cuánto cuesta el envío a la zona 5?"]
    assert list(answers["Cites a changed chunk"]) == ["✓"] and list(answers["Conversation"]) == [convo.id]
    assert list(answers["Status"]) == ["Answered"]
    gaps = frame(at, "Gap")
    assert list(gaps["#"]) == [gap] and list(gaps["Status"]) == ["closed"]
    assert sources.get(acme, runtime.store, "politicas/envios").content == LONG  # nothing saved yet
    at.button(key=f"save_{source.id}").click()
    run(at)
    saved = sources.get(acme, runtime.store, "politicas/envios")
    assert "cuesta 12 euros" in saved.content and saved.changed
    assert "Saved `politicas/envios`. Train to make the new text answerable." in texts(at)
    assert "No unsaved changes." in texts(at)


def test_a_change_made_elsewhere_reloads_the_form_or_warns_before_overwriting(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    source = sources.get(acme, runtime.store, "politicas/devoluciones")
    key = f"src_{source.id}_content"
    sources.save(acme, runtime.store, source.path, title=source.title, content=RETURNS + " Sin ticket no.")
    run(at)  # nothing typed here: the form shows the stored version
    assert at.text_area(key=key).value == RETURNS + " Sin ticket no." and "No unsaved changes." in texts(at)
    at.text_area(key=key).set_value(RETURNS + " Con ticket regalo también.")
    run(at)
    sources.save(acme, runtime.store, source.path, title=source.title, content=RETURNS + " Plazo ampliado en Navidad.")
    run(at)
    assert any("changed elsewhere since you started editing" in w.value for w in at.warning)
    assert at.text_area(key=key).value == RETURNS + " Con ticket regalo también."  # what was typed is kept
    at.button(key=f"discard_{source.id}").click()
    run(at)
    assert at.text_area(key=key).value == RETURNS + " Plazo ampliado en Navidad."


def test_move_then_delete_with_confirmation(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    choose(at, "tienda/horario")
    at.text_input(key="move_to_tienda/horario").set_value("contacto/horario")
    at.button(key="move_tienda/horario").click()
    run(at)
    assert sources.get(acme, runtime.store, "tienda/horario") is None
    assert sources.get(acme, runtime.store, "contacto/horario") is not None
    assert at.selectbox(key="src_selected").value == "contacto/horario" and "Moved 1 source(s)" in texts(at)
    choose(at, "politicas")  # a folder: its description, and move/delete of everything below
    assert at.text_input(key="folder_description_politicas").value == "Devoluciones, envíos y garantías"
    at.text_input(key="folder_description_politicas").set_value("Políticas de la tienda")
    at.button(key="describe_politicas").click()
    run(at)
    assert sources.folder_descriptions(acme, runtime.store)["politicas"] == "Políticas de la tienda"
    assert at.button(key="delete_politicas").disabled  # not before the confirmation
    ids = [s.id for s in sources.list_sources(acme, runtime.store, "politicas")]
    at.checkbox(key="confirm_delete_politicas").check()
    run(at)
    at.button(key="delete_politicas").click()
    run(at)
    assert sources.list_sources(acme, runtime.store, "politicas") == []
    assert all(runtime.index.chunks_of(acme, i) == [] for i in ids)  # gone from the indexes too
    assert "Deleted `politicas` (2 source(s))" in texts(at)
    assert [t.strip("\u2003") for t in frame(at, "Tree")["Tree"]] == ["📁 contacto", "📄 horario"]


def test_star_and_unstar_take_effect_at_once(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    source = sources.get(acme, runtime.store, "politicas/devoluciones")
    at.toggle(key=f"star_{source.id}").set_value(True)
    run(at)
    assert sources.get(acme, runtime.store, "politicas/devoluciones").starred
    assert "effective on the next answer" in texts(at)
    assert not sources.get(acme, runtime.store, "politicas/devoluciones").changed  # no training needed
    at.toggle(key=f"star_{source.id}").set_value(False)
    run(at)
    assert not sources.get(acme, runtime.store, "politicas/devoluciones").starred


def test_train_with_a_progress_bar_and_a_summary(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    at.button(key="src_train").click()
    run(at)
    settle(at)  # the training runs in the background (its live progress: tests/pages/test_progress.py)
    assert any("1 source(s) trained into 1 chunk(s)" in s.value for s in at.success)
    assert {m.label: m.value for m in at.metric}["Changed since training"] == "0"
    assert not sources.get(acme, runtime.store, "tienda/horario").changed
    at.button(key="src_train").click()
    settle(run(at))
    assert "Nothing changed since the last training." in [i.value for i in at.info]


def test_the_chunk_preview_shows_boundaries_overlaps_and_sizes(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    choose(at, "politicas/envios")
    source = sources.get(acme, runtime.store, "politicas/envios")
    expected = chunk_source(source)
    table = frame(at, "Overlap with previous")
    assert list(table["Start"]) == [a for a, _, _ in expected] and list(table["End"]) == [b for _, b, _ in expected]
    assert list(table["Length"]) == [b - a for a, b, _ in expected] and max(table["Length"]) <= 1600
    overlaps = [0] + [max(0, expected[n - 1][1] - expected[n][0]) for n in range(1, len(expected))]
    assert list(table["Overlap with previous"]) == overlaps and all(o > 0 for o in overlaps[1:])
    assert list(table["Text"]) == [t for _, _, t in expected] and set(table["Trained"]) == {"✓"}
    shown = at.get("html")[0].proto.body
    assert "overlap of chunks 1 and 2" in shown and shown.count('title="chunk ') >= len(expected)
    choose(at, "tienda/horario")  # changed since training: the next training's chunks, marked pending
    assert list(frame(at, "Overlap with previous")["Trained"]) == ["pending"]
    assert "Changed since training" in texts(at)


def test_upload_files_a_folder_and_a_zip(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    at.text_input(key="upload_prefix").set_value("manuales")
    at.file_uploader(key="upload_files_0").set_value([
        ("guia.md", "# Guía de montaje\n\nAprieta los tornillos del manillar a 5 Nm.".encode(), "text/markdown"),
        ("vacio.txt", b"", "text/plain"),
    ])
    at.file_uploader(key="upload_dir_0").set_value([
        ("taller/frenos/ajuste.txt", b"Ajusta las pastillas de freno cada 500 km.", "text/plain"),
    ])
    at.button(key="upload_import").click()
    settle(run(at))  # imported in the background
    guide = sources.get(acme, runtime.store, "manuales/guia")
    assert guide is not None and guide.title == "Guía de montaje" and guide.type == "file"
    assert sources.get(acme, runtime.store, "manuales/taller/frenos/ajuste") is not None
    assert [e.value for e in at.error] == ["vacio.txt: the file is empty; nothing to import."]
    assert any("Upload: 2 source(s) saved" in s.value for s in at.success)
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("catalogo/bicis/urbana.md", "# Bici urbana\n\nCuadro de aluminio y cambio de 7 velocidades.")
        z.writestr("catalogo/notas.exe", b"MZ")
        z.writestr("../fuera.md", "# Fuera\n\nNo.")
    at.text_input(key="upload_prefix").set_value("")
    at.file_uploader(key="upload_files_1").set_value(("catalogo.zip", archive.getvalue(), "application/zip"))
    at.button(key="upload_import").click()
    settle(run(at))  # imported in the background
    assert sources.get(acme, runtime.store, "catalogo/bicis/urbana").title == "Bici urbana"
    errors = [e.value for e in at.error]
    assert any("unsafe path" in e for e in errors) and any("'.exe' is not supported" in e for e in errors)
    assert not any("/tmp" in e for e in errors)  # named by their place in the zip
    assert sources.get(acme, runtime.store, "fuera") is None


def test_paste_html_and_a_url_that_cannot_be_fetched(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    at.text_input(key="paste_path").set_value("web/garantia")
    at.text_input(key="paste_url").set_value("https://example.com/garantia")
    at.text_area(key="paste_html").set_value(
        "<html><head><title>Garantía</title></head><body><nav>Menú</nav><main><h1>Garantía</h1>"
        "<p>Todas las bicicletas tienen dos años de garantía contra defectos de fabricación.</p></main></body></html>")
    at.button(key="paste_import").click()
    run(at)
    page = sources.get(acme, runtime.store, "web/garantia")
    assert page.type == "web" and page.url == "https://example.com/garantia" and "dos años" in page.content
    at.text_input(key="fetch_url").set_value("http://127.0.0.1:9/envios")
    at.button(key="fetch_import").click()
    run(at)
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and errors[0].startswith("Could not fetch http://127.0.0.1:9/envios")
    assert "paste its HTML" in errors[0] and sources.get(acme, runtime.store, "web/envios") is None


def test_a_qa_user_sees_the_tree_and_the_previews_but_cannot_edit(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch, role="qa")
    assert [t.label for t in at.tabs] == ["Tree", "Try a search"]
    assert [t.strip("\u2003") for t in frame(at, "Tree")["Tree"]][0] == "📁 politicas"
    assert frame(at, "Overlap with previous") is not None  # the chunk preview is there
    assert [w.key for w in at.text_input] == ["src_filter", "src_search"]
    assert not at.text_area and not at.button and not at.file_uploader and not at.toggle and not at.checkbox
    assert "read only" in texts(at)
    choose(at, "politicas")
    assert not at.text_input(key="src_filter").value and not at.button
    assert "garantías" in texts(at)  # the folder's description, read only


def test_the_search_tab_shows_what_retrieval_selects(runtime, acme, monkeypatch):
    at = open_page(runtime, monkeypatch)
    at.text_input(key="src_search").set_value("¿Cuál es el plazo para devolver un producto?")
    run(at)
    assert any("politicas/devoluciones" in e.label for e in at.expander)


def test_train_while_another_process_trains_says_so_and_changes_nothing(runtime, acme, monkeypatch):
    from core.base.locks import FileLock

    at = open_page(runtime, monkeypatch)
    lock = FileLock(runtime.settings.data_dir / "locks" / f"training-{acme.tenant_id}.lock")
    with lock.exclusive(1, what="training acme"):
        at.button(key="src_train").click()
        settle(run(at))
    warning = " ".join(w.value for w in at.warning)
    assert "A training of 'acme' is already running (process " in warning and "train again when it is done" in warning
    assert sources.get(acme, runtime.store, "tienda/horario").changed
    assert not any("trained into" in s.value for s in at.success)
