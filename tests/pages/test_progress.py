"""Live progress of long work in the admin app (training, QA runs, uploads): a background job per tenant and kind,
a bar that moves while the work runs, a reload that shows the running job instead of starting another, and the
outcome (or the error) once it has ended. Driven through AppTest; the real browser: test_progress_browser.py."""
from __future__ import annotations

import io
import re
import threading
import time
import zipfile

import pytest
import streamlit as st

from core.agent.loop import Agent
from core.base.config import load_settings
from core.knowledge import sources
from core.qa import suites as qa
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from pages import common, jobs, uploads
from tests.apptest import settle, signed_in
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, ScriptedProvider

PARAGRAPH = ("Los envíos a la zona {n} tardan {n} días laborables. El coste depende del peso del paquete. "
             "Los pedidos de más de 50 € viajan gratis. Se entregan de lunes a viernes por la mañana.")


class GatedEmbedder(HashEmbedder):
    """The hashing embedder, one call at a time: each call to ``passages`` waits for the test to ``release`` it."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Semaphore(0)

    def passages(self, texts):
        if texts:
            assert self.gate.acquire(timeout=30), "the test never released this embedding call"
        return super().passages(texts)

    def release(self, calls: int = 1) -> None:
        self.gate.release(calls)


@pytest.fixture
def embedder():
    return GatedEmbedder()


@pytest.fixture
def runtime(tmp_path, monkeypatch, embedder):
    rt = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=embedder,
                      tuning=TEST_TUNING)
    monkeypatch.setattr(common, "open_runtime", lambda: rt)
    st.cache_resource.clear()
    create_tenant(rt.store, "acme", "Acme")
    yield rt
    embedder.release(1000)  # a job still embedding ends before the runtime closes
    st.cache_resource.clear()
    rt.close()


@pytest.fixture
def acme(runtime):
    ctx = local_operator(runtime.store, "acme")
    for n in range(1, 9):
        sources.save(ctx, runtime.store, f"envios/zona-{n}", title=f"Envíos a la zona {n}",
                     content=PARAGRAPH.format(n=n), language="es")
    return ctx


def bar(at) -> tuple[int, str]:
    progress = at.get("progress")
    assert len(progress) == 1, [p.proto.text for p in progress]
    return progress[0].proto.value, progress[0].proto.text


def advance(job: jobs.Job, embedder: GatedEmbedder) -> None:
    """Let one embedding call through and wait until the job has reported it."""
    before = job.fraction
    embedder.release()
    deadline = time.monotonic() + 10
    while job.fraction == before and job.running:
        assert time.monotonic() < deadline, "the training did not report the embedding call"
        time.sleep(0.01)


def test_the_training_bar_moves_per_embedding_batch_and_a_reload_shows_the_running_job(runtime, acme, embedder,
                                                                                         held_jobs):
    runtime.index.embed_batch = 8  # a chunk and its 4 sentences (5 texts): one source per call
    at = signed_in(runtime.store, "acme", "editor").run()
    at.button(key="src_train").click().run()
    assert not at.exception, [e.value for e in at.exception]
    assert bar(at) == (0, "Training…")  # the job is there at once (held by the test until now)
    job = held_jobs.running(acme, "training")
    held_jobs.hold.set()
    seen = []
    for _ in range(5):
        advance(job, embedder)
        at.run()
        seen.append(bar(at))
    values = [value for value, _ in seen]
    assert values == sorted(set(values)) and values[0] > 0 and values[-1] < 100  # it moved every time
    assert seen[2][1].startswith("Training 3/8 source(s) · 3/8 chunk(s) embedded · ")
    assert " left · envios/zona-4" in seen[2][1]  # the time left, then the source at hand
    assert at.button(key="src_train").disabled  # no second training from this page meanwhile
    assert "runs in the background" in " ".join(c.value for c in at.caption)
    # a reload (a new session of the same user) shows the running training, not a button that starts another
    reloaded = signed_in(runtime.store, "acme", "editor", email="editor@acme.test").run()
    assert bar(reloaded)[0] == values[-1] and reloaded.button(key="src_train").disabled
    embedder.release(1000)
    for session in (at, reloaded):
        settle(session)
        assert not session.get("progress")
        assert any("8 source(s) trained into 8 chunk(s)" in s.value for s in session.success)
    assert len(held_jobs._jobs) == 1 and not sources.list_sources(acme, runtime.store)[0].changed


def test_a_second_training_of_the_tenant_is_refused_while_one_runs(runtime, acme, held_jobs):
    from pages import training

    job = held_jobs.start(acme, "training", "Training", "cli", lambda report: None)
    with pytest.raises(jobs.JobBusy, match="Training is already running for 'acme' .*its progress is shown here"):
        held_jobs.start(acme, training.KIND, "Training", "sources", lambda report: None)
    other = local_operator(runtime.store, "acme")
    assert held_jobs.get(other, job.id) is job
    create_tenant(runtime.store, "globex", "Globex")
    globex = local_operator(runtime.store, "globex")
    assert held_jobs.get(globex, job.id) is None and held_jobs.running(globex, "training") is None  # per tenant
    held_jobs.start(globex, "training", "Training", "sources", lambda report: None)  # another tenant trains at once


def test_a_job_that_fails_shows_its_error_once(runtime, acme, held_jobs):
    at = signed_in(runtime.store, "acme", "editor").run()

    def broken(report):
        report(0.4, "Half way")
        raise RuntimeError("the disk is full")

    job = held_jobs.start(acme, "training", "Training", "sources", broken)
    at.session_state[jobs.WATCHED] = {job.id: {"sources"}}
    at.run()
    assert bar(at) == (0, "Training…")
    settle(at)
    assert [e.value for e in at.error] == ["Training failed: RuntimeError: the disk is full. The server log has the "
                                           "details; start it again, and report it if it fails the same way."]
    at.run()
    assert not at.error  # shown once
    assert job.fraction == 0.4 and isinstance(job.error, RuntimeError)


def test_a_qa_run_shows_each_case_as_it_is_asked(runtime, acme, embedder, held_jobs, monkeypatch):
    embedder.release(1000)
    runtime.index.train(acme)
    suite = qa.create_suite(acme, runtime.store, "smoke")
    for question in ("¿Vendéis patinetes?", "¿Vendéis coches?", "¿Vendéis barcos?"):
        qa.add_case(acme, runtime.store, suite.id, question, expect="abstains")
    asked = threading.Semaphore(0)

    def paced(messages):  # the model answers when the test lets it
        assert asked.acquire(timeout=30)
        return "No lo sé."

    provider = ScriptedProvider(*[("search_knowledge", {"query": "x"}), paced, "No lo sé."] * 3)
    monkeypatch.setattr("core.agent.factory.make_agent", lambda rt, *a, **kw: Agent(rt, provider))
    at = signed_in(runtime.store, "acme", "qa").run()
    at.switch_page("pages/qa.py").run()
    at.button(key=f"qa_run_now_{suite.id}").click().run()
    assert bar(at) == (0, "The run of suite 'smoke'…")
    job = held_jobs.running(acme, "qa-run")
    held_jobs.hold.set()
    while not job.text.startswith("Case 1/3"):  # asking the first case
        time.sleep(0.01)
    texts = []
    for _ in range(2):
        before = job.text
        asked.release()
        while job.text == before:
            time.sleep(0.01)
        at.run()
        texts.append(bar(at))
    assert texts[0][0] == 33 and texts[1][0] == 66  # the wall clock's pace: about N s, or less than a second
    assert re.fullmatch(r"Case 2/3 · 1 passed, 0 failed · (about \d+ s|less than a second) left · asking: "
                        r"¿Vendéis coches\?", texts[0][1])
    assert at.button(key=f"qa_run_now_{suite.id}").disabled
    asked.release()
    settle(at)
    assert {m.label: m.value for m in at.metric}["Passed"] == "3/3" and not at.get("progress")


def test_an_upload_reports_each_file_and_each_member_of_a_zip(runtime, acme):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        for n in range(3):
            z.writestr(f"catalogo/bici-{n}.md", f"# Bici {n}\n\nCuadro de aluminio número {n}.")
    files = [("guia.md", b"# Guia\n\nAprieta los tornillos."), ("catalogo.zip", archive.getvalue()),
             ("notas.txt", b"Notas del taller.")]
    seen: list[tuple[float, str]] = []
    report = uploads._import(runtime, acme, files, "manuales", lambda fraction, text: seen.append((fraction, text)))
    assert report.summary() == "5 saved, 0 unchanged, 0 refused, 0 skipped, 0 warning(s)"
    fractions = [f for f, _ in seen]
    assert fractions == sorted(fractions) and fractions[0] == 0 and fractions[-1] == 1.0
    assert seen[0][1] == "Importing file 1/3: guia.md"
    assert [t.split(" · ")[0] for _, t in seen[2:5]] == [
        f"Importing file 2/3: catalogo.zip, {n}/3 catalogo/bici-{n - 1}.md" for n in (1, 2, 3)]
    assert seen[-1] == (1.0, "Imported 3 file(s): 5 saved, 0 unchanged, 0 refused, 0 skipped, 0 warning(s)")
    assert sources.get(acme, runtime.store, "manuales/catalogo/bici-2").title == "Bici 2"


def test_an_upload_runs_in_the_background_and_leaves_its_report(runtime, acme, held_jobs):
    at = signed_in(runtime.store, "acme", "editor").run()
    at.file_uploader(key="upload_files_0").set_value([("guia.md", b"# Guia\n\nAprieta los tornillos.", "text/markdown"),
                                                     ("vacio.txt", b"", "text/plain")])
    at.button(key="upload_import").click().run()
    assert bar(at) == (0, "The upload of 2 file(s)…") and at.button(key="upload_import").disabled
    settle(at)
    assert any("Upload: 1 source(s) saved" in s.value for s in at.success)
    assert [e.value for e in at.error] == ["vacio.txt: the file is empty; nothing to import."]
    assert not at.get("progress") and not at.button(key="upload_import").disabled


def test_finished_jobs_are_kept_for_a_while_then_dropped(runtime, acme, held_jobs):
    held_jobs.hold.set()
    first = held_jobs.start(acme, "upload", "Upload", "sources:upload", lambda report: 1)
    for n in range(jobs.KEEP_FINISHED + 1):
        held_jobs.wait(10)
        held_jobs.start(acme, "upload", "Upload", "sources:upload", lambda report, n=n: n)
    held_jobs.wait(10)
    assert held_jobs.get(acme, first.id) is None  # the oldest finished job made room
    assert len(held_jobs._jobs) == jobs.KEEP_FINISHED + 1  # the rest, and the newest, are still there to be shown
