"""The gap backlog: merging, masking, lifecycle, retention, editorial actions, isolation."""
from __future__ import annotations

import csv
import io
import logging
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from core.gaps import pii
from core.gaps.backlog import Backlog, GapError
from core.gaps.matching import GapTuning, best_match, order_distance, words
from core.knowledge import sources
from core.runtime import open_runtime
from core.tenancy.context import AuthError, login
from core.tenancy.tenants import create_user
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder

T0 = datetime(2026, 11, 1, 12, 0, tzinfo=timezone.utc)


class Clock:
    def __init__(self, now: datetime = T0):
        self.now = now

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock():
    return Clock()


@pytest.fixture
def backlog(rt, clock):
    rt.backlog = Backlog(rt.store, rt.index.embedder, clock=clock)
    return rt.backlog


def record(backlog, ctx, question, language="es", channel="web", conversation="c1", reason="not_covered"):
    return backlog.record(ctx, question, language, channel, conversation, reason)


def test_the_same_question_merges_into_one_gap_with_a_counter(backlog, ctx, clock):
    first = record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    clock.now += timedelta(hours=2)
    again = record(backlog, ctx, "vendéis patinetes eléctricos", channel="email")
    other = record(backlog, ctx, "¿Abrís los domingos por la tarde?")
    assert first == again != other
    gap = backlog.require(ctx, first)
    assert gap.count == 2 and gap.status == "open"
    assert gap.channels == ("email", "web") and gap.languages == ("es",)
    assert gap.first_seen < gap.last_seen
    assert [g.id for g in backlog.gaps(ctx)] == [first, other]  # most asked first
    assert "patinetes" in gap.label.lower()


def test_samples_are_masked_before_they_touch_disk(rt, backlog, ctx, settings):
    raw = ["ana.lopez@gmail.com", "+34 612 345 678", "ES91 2100 0418 4502 0005 1332", "12345678Z",
           "4111 1111 1111 1111"]
    gap_id = record(backlog, ctx, f"Soy Ana, escribidme a {raw[0]} o al {raw[1]}; mi IBAN {raw[2]}, DNI {raw[3]}, "
                                  f"tarjeta {raw[4]}: ¿cuándo llega mi reembolso?")
    sample = backlog.samples(ctx, gap_id)[0]["sample"]
    assert ("<EMAIL>" in sample and "<PHONE>" in sample and "<IBAN>" in sample and "<CARD>" in sample
            and "<ID>" in sample)
    rt.store.db.execute("PRAGMA wal_checkpoint(FULL)")
    on_disk = b"".join(p.read_bytes() for p in settings.data_dir.glob("cobertura.db*"))
    for value in raw:
        assert value.encode() not in on_disk and value.replace(" ", "").encode() not in on_disk


def test_masking_fails_closed_and_logs_no_text(backlog, ctx, monkeypatch, caplog):
    def broken(text, language=None):
        raise pii.MaskingError("PII masking failed (RuntimeError); nothing may be stored")

    monkeypatch.setattr(pii, "mask", broken)
    with caplog.at_level(logging.DEBUG):
        assert record(backlog, ctx, "Mi correo es ana@example.com, ¿y mi pedido?") is None
    assert backlog.gaps(ctx) == [] and "ana@example.com" not in caplog.text


@pytest.mark.parametrize("reason", ["transport_error", "tool_error", "truncated"])
def test_faults_never_open_gaps(backlog, ctx, reason):
    with pytest.raises(GapError, match="fault"):
        record(backlog, ctx, "¿Plazo de devolución?", reason=reason)
    assert backlog.gaps(ctx) == []


def test_a_word_swap_is_a_different_question():
    a, b = (words("¿Puedo cambiar del plan anual al mensual?", "es"),
            words("¿Puedo cambiar del plan mensual al anual?", "es"))
    assert order_distance(a, a) == 0 and order_distance(a, b) > 0
    vec = np.ones(4, dtype=np.float32) / 2
    matrix = vec[None, :]
    assert best_match(vec, b, "es", matrix, [1], [7], [a], ["es"]) is None  # same words, swapped: not merged
    assert best_match(vec, b, "en", matrix, [1], [7], [a], ["es"]).gap_id == 7  # across languages order is moot
    assert best_match(vec, a, "es", matrix, [1], [7], [None], ["es"]).gap_id == 7  # purged: similarity alone


def unit(*xs):
    v = np.array(xs, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_the_bar_rises_in_a_dense_backlog():
    tuning = GapTuning(min_similarity=0.5, density_after=3, density_percentile=50, density_margin=0.1)
    vec = unit(1.0, 0.0)
    near = unit(0.8, 0.6)  # cosine .8
    matrix = np.vstack([near, near, near, near])
    hit = best_match(vec, ["x"], "es", matrix[:2], [1, 2], [1, 2], [None, None], ["es", "es"], tuning)
    assert hit is not None  # few gaps: the absolute floor applies
    assert best_match(vec, ["x"], "es", matrix, [1, 2, 3, 4], [1, 2, 3, 4], [None] * 4, ["es"] * 4, tuning) is None


def test_a_much_asked_gap_does_not_raise_the_bar_against_itself():
    tuning = GapTuning(min_similarity=0.5, density_after=3, density_percentile=90, density_margin=0.06)
    vec = unit(1.0, 0.0)
    repeats = [unit(1.0, 0.01)] * 30  # thirty near-copies, all in gap 1
    others = [unit(0.2, 1.0), unit(-0.3, 1.0), unit(0.1, -1.0)]
    matrix = np.vstack(repeats + others)
    gap_ids = [1] * 30 + [2, 3, 4]
    hit = best_match(vec, ["x"], "es", matrix, list(range(33)), gap_ids, [None] * 33, ["es"] * 33, tuning)
    assert hit is not None and hit.gap_id == 1


def test_a_translation_needs_less_similarity_than_a_paraphrase():
    tuning = GapTuning(min_similarity=0.91, min_similarity_across=0.86)
    vec, stored = unit(1.0, 0.0), unit(0.88, (1 - 0.88 ** 2) ** 0.5)  # cosine .88
    assert best_match(vec, ["x"], "es", stored[None, :], [1], [7], [None], ["es"], tuning) is None
    assert best_match(vec, ["x"], "es", stored[None, :], [1], [7], [None], ["en"], tuning).gap_id == 7


def test_word_swapped_questions_open_two_gaps(backlog, ctx):
    first = record(backlog, ctx, "¿Puedo pasar del plan anual al mensual?")
    second = record(backlog, ctx, "¿Puedo pasar del plan mensual al anual?")
    assert first != second


def add_article(rt, ctx, path="faq/patinetes"):
    sources.save(ctx, rt.store, path, title="Patinetes", content="No vendemos patinetes eléctricos, solo bicicletas.")


def test_close_reopen_cycle_keeps_history(rt, backlog, ctx, clock):
    gap_id = record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    with pytest.raises(GapError, match="publish the article first"):
        backlog.close(ctx, gap_id, "faq/no-existe")
    add_article(rt, ctx)
    clock.now += timedelta(days=1)
    closed = backlog.close(ctx, gap_id, "faq/patinetes", replay=[{"answered": True}])
    assert closed.status == "closed" and closed.article_path == "faq/patinetes" and closed.closed_by == ctx.actor
    with pytest.raises(GapError, match="already closed"):
        backlog.close(ctx, gap_id, "faq/patinetes")
    clock.now += timedelta(days=1)
    assert record(backlog, ctx, "vendéis patinetes eléctricos?") == gap_id  # came back uncovered
    gap = backlog.require(ctx, gap_id)
    assert gap.status == "reopened" and gap.count == 2
    events = backlog.history(ctx, gap_id)
    assert [e["event"] for e in events] == ["opened", "closed", "reopened"]
    assert events[1]["detail"] == {"replayed": 1, "answered": 1}
    assert events[2]["article_path"] == "faq/patinetes" and "patinetes" in events[2]["sample"]


def test_purge_drops_samples_after_retention_and_keeps_entries(rt, backlog, ctx, clock):
    old = record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    record(backlog, ctx, "¿Abrís los domingos?")
    clock.now += timedelta(days=31)
    assert backlog.purge(ctx) == 2
    assert rt.store.query(
        "SELECT COUNT(*) AS n FROM gap_variants WHERE sample IS NOT NULL OR words IS NOT NULL")[0]["n"] == 0
    assert rt.store.query("SELECT COUNT(*) AS n FROM gap_history WHERE sample IS NOT NULL")[0]["n"] == 0
    gaps = backlog.gaps(ctx)
    assert len(gaps) == 2 and sum(g.count for g in gaps) == 2  # every entry, with its counts
    assert record(backlog, ctx, "¿Vendéis patinetes eléctricos?") == old  # still merges, by its kept vector
    assert backlog.purge_all()["acme"]["samples"] == 0


def test_retention_is_per_tenant_and_only_admins_change_it(rt, backlog, ctx, clock):
    backlog.set_retention_days(ctx, 7)
    record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    clock.now += timedelta(days=8)
    assert backlog.purge(ctx) == 1
    with pytest.raises(GapError, match="between 1 and 3650"):
        backlog.set_retention_days(ctx, 0)


def editor_and_qa(rt):
    create_user(rt.store, "acme", "ed@acme.test", "a long password", "editor")
    create_user(rt.store, "acme", "qa@acme.test", "a long password", "qa")
    return (login(rt.store, "ed@acme.test", "a long password", "acme"),
            login(rt.store, "qa@acme.test", "a long password", "acme"))


def test_only_editors_change_the_backlog(rt, backlog, ctx):
    editor, qa = editor_and_qa(rt)
    gap_id = record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    add_article(rt, ctx)
    with pytest.raises(AuthError):
        backlog.close(qa, gap_id, "faq/patinetes")
    with pytest.raises(AuthError):
        backlog.set_retention_days(editor, 10)
    assert backlog.close(editor, gap_id, "faq/patinetes").closed_by == "ed@acme.test"


def test_merge_and_split_move_variants_and_counts(backlog, ctx, clock):
    a = record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    clock.now += timedelta(hours=1)
    b = record(backlog, ctx, "¿Tenéis monociclos?", language="es", channel="email")
    merged = backlog.merge(ctx, a, [b])
    assert merged.count == 2 and merged.channels == ("email", "web") and backlog.get(ctx, b) is None
    assert [e["event"] for e in backlog.history(ctx, a)][-1] == "merged"
    monociclo = next(s["id"] for s in backlog.samples(ctx, a) if "monociclos" in s["sample"])
    new = backlog.split(ctx, a, [monociclo])
    assert new.count == 1 and backlog.require(ctx, a).count == 1 and backlog.require(ctx, a).channels == ("web",)
    assert "monociclos" in new.label
    with pytest.raises(GapError, match="at least one"):
        backlog.split(ctx, new.id, [s["id"] for s in backlog.samples(ctx, new.id)])
    assert record(backlog, ctx, "¿Tenéis monociclos?") == new.id  # later variants follow the split


def test_csv_export_has_one_row_per_gap(backlog, ctx):
    record(backlog, ctx, "¿Vendéis patinetes eléctricos?")
    record(backlog, ctx, "¿Abrís los domingos?")
    rows = list(csv.DictReader(io.StringIO(backlog.export_csv(ctx))))
    assert len(rows) == 2 and {"label", "count", "status", "latest_sample"} <= set(rows[0])


def test_another_tenants_gaps_answer_like_missing_ones(backlog, ctx, other_ctx):
    theirs = record(backlog, other_ctx, "¿Vendéis patinetes eléctricos?")
    mine = record(backlog, ctx, "¿Vendéis patinetes eléctricos?")  # identical text, still its own gap
    assert mine != theirs and [g.id for g in backlog.gaps(ctx)] == [mine]
    assert (backlog.get(ctx, theirs) is None and backlog.samples(ctx, theirs) == []
            and backlog.history(ctx, theirs) == [])
    with pytest.raises(GapError) as foreign:
        backlog.require(ctx, theirs)
    with pytest.raises(GapError) as missing:
        backlog.require(ctx, 999_999)
    assert str(foreign.value).replace(str(theirs), "N") == str(missing.value).replace("999999", "N")
    with pytest.raises(GapError):
        backlog.merge(ctx, mine, [theirs])
    assert backlog.require(other_ctx, theirs).count == 1


def test_two_processes_see_each_others_variants(rt, settings, ctx, clock):
    one = Backlog(rt.store, rt.index.embedder, clock=clock)
    two = Backlog(rt.store, rt.index.embedder, clock=clock)
    first = record(one, ctx, "¿Vendéis patinetes eléctricos?")
    assert record(two, ctx, "¿Abrís los domingos?") != first
    assert record(one, ctx, "¿Abrís los domingos?") == record(two, ctx, "abrís los domingos")


def test_raw_events_from_before_the_backlog_are_masked_and_moved(settings, ctx, rt):
    rt.store.db.execute(
        "INSERT INTO gap_events (tenant_id, at, question, language, channel, conversation_id, reason) "
        "VALUES (?,?,?,?,?,?,?)",
        [ctx.tenant_id, "2026-11-20T10:00:00+00:00", "Soy Ana (ana@example.com): ¿vendéis patinetes?", "es", "web",
         "c1", "not_covered"])
    rt.close()
    again = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING)
    try:
        assert again.store.query("SELECT COUNT(*) AS n FROM gap_events")[0]["n"] == 0
        gap = again.backlog.gaps(ctx)[0]
        sample = again.backlog.samples(ctx, gap.id)[0]
        assert "ana@example.com" not in sample["sample"] and sample["at"] == "2026-11-20T10:00:00+00:00"
    finally:
        again.close()


def test_an_unrecorded_abstention_does_not_claim_it_was_logged(rt, ctx, monkeypatch):
    from core.agent.loop import Agent
    from tests.fakes import ScriptedProvider

    def broken(text, language=None):
        raise pii.MaskingError("PII masking failed (RuntimeError); nothing may be stored")

    monkeypatch.setattr(pii, "mask", broken)
    bot = Agent(rt, ScriptedProvider(("search_knowledge", {"query": "x"}), "No lo sé.", "No lo sé."))
    result = rt.turns.run(ctx, bot, "¿Vendéis patinetes?")
    assert result.status == "abstained" and result.gap_id is None
    assert "no cubre" in result.answer and "anotado" not in result.answer
