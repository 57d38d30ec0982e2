"""The backlog end to end on the demo tenant, with the real embedder and the offline responder (CLI)."""
from __future__ import annotations

import json

import pytest

from core.__main__ import main


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


def run(capsys, *argv) -> dict | list:
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, err
    return json.loads(out)


def test_uncovered_variants_merge_then_the_article_closes_and_a_defeat_reopens(data_dir, capsys, tmp_path):
    run(capsys, "init")
    asked = [
        "¿Hacéis descuentos para estudiantes?",
        "¿Tenéis algún descuento de estudiante? Soy universitaria, mi email es ana.lopez@gmail.com",
        "Do you offer a student discount? Call me at +34 612 345 678",
    ]
    gap_ids = set()
    for question in asked:
        result = run(capsys, "ask", "demo", question)
        assert result["status"] == "abstained"
        gap_ids.add(result["gap_id"])
    assert len(gap_ids) == 1
    gap_id = gap_ids.pop()
    gaps = run(capsys, "gaps", "demo")
    assert [(g["id"], g["count"], g["languages"]) for g in gaps] == [(gap_id, 3, ["en", "es"])]
    shown = run(capsys, "gaps", "show", "demo", str(gap_id))
    samples = " ".join(s["sample"] for s in shown["samples"])
    assert "ana.lopez@gmail.com" not in samples and "612 345 678" not in samples
    assert "<EMAIL>" in samples and "<PHONE>" in samples

    article = tmp_path / "descuentos.md"
    article.write_text("# Descuentos para estudiantes\n\nLos estudiantes tienen un 10 % de descuento en bicicletas y "
                       "accesorios presentando el carné universitario en vigor, en tienda y en la web.\n",
                       encoding="utf-8")
    run(capsys, "ingest", "demo", str(article), "--prefix", "politicas")
    run(capsys, "train", "demo")
    closed = run(capsys, "gaps", "close", "demo", str(gap_id), "--article", "politicas/descuentos")
    assert closed["status"] == "closed" and closed["closed"]
    replay = {r["language"]: r for r in closed["replay"]}
    assert replay["es"]["answered"] and replay["es"]["cites_article"]  # the article answers the Spanish samples

    answered = run(capsys, "ask", "demo", "¿Tenéis descuento para estudiantes?")
    assert answered["status"] == "answered" and run(capsys, "gaps", "demo")[0]["status"] == "closed"
    defeat = run(capsys, "ask", "demo", "Is there a student discount on the maintenance plans?")
    assert defeat["status"] == "abstained" and defeat["gap_id"] == gap_id
    shown = run(capsys, "gaps", "show", "demo", str(gap_id))
    assert shown["status"] == "reopened" and shown["count"] == 4
    reopen = shown["history"][-1]
    assert reopen["event"] == "reopened" and reopen["article_path"] == "politicas/descuentos"
    assert reopen["sample"] == "Is there a student discount on the maintenance plans?"
