"""Retention of the private logs (#16 item 9): turns, the question log and handoff transcripts keep raw
personal data only for the tenant's log retention (default 90 days); the same purge as the gap samples
deletes them, the purged bytes leave every file of the data dir, and the backlog's entries and counts stay."""
from __future__ import annotations

import argparse
import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.agent.loop import Agent
from core.agent.providers.offline import OfflineResponder
from core.channels import conversations, handoff
from core.gaps.cli import cmd_purge
from core.runtime import open_runtime
from core.tenancy import retention, settings as tenant_settings
from core.tenancy.settings import TenantSettingsError
from tests.conftest import TEST_TUNING
from tests.fakes import MovableClock

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=timezone.utc)
# what customers wrote: names (also lowercase), e-mails (also obfuscated), phones, a token URL, an IBAN
RAW = ["Lucas Martín", "lucas martín", "lucas.martin@correo.es", "pedro [at] correo [dot] com",
       "612 345 678", "a8f3kd93ls0qp2", "ES91 2100 0418 4502 0005 1332", "Quintanilla"]
QUESTIONS = [
    "Hola, me llamo Lucas Martín, mi correo es lucas.martin@correo.es: ¿vendéis patinetes eléctricos?",
    "hola me llamo lucas martín, llamadme al 612 345 678, ¿tenéis cascos para moto?",
    "El enlace https://shop.example/reset?token=a8f3kd93ls0qp2 no funciona, escribid a pedro [at] correo [dot] com",
    "Devolvedme el dinero al IBAN ES91 2100 0418 4502 0005 1332, soy Ana Quintanilla",
]
RECENT = "Me llamo Rosalía Ibarguren y quiero saber si hacéis envíos a Ceuta"


@pytest.fixture
def clock():
    return MovableClock(T0)


@pytest.fixture
def rt(settings, embedder, clock):
    runtime = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING, clock=clock)
    yield runtime
    runtime.close()


def spellings(value: str) -> list[bytes]:
    """The bytes a value may take in a file: UTF-8, JSON with ASCII escapes, UTF-16 (chromadb, whoosh)."""
    return sorted({value.encode(), json.dumps(value).strip('"').encode(), value.encode("utf-16-le")})


def hits(data_dir: Path, values: list[str]) -> dict[str, list[str]]:
    """Which files of the data dir (database, -wal, -shm, chroma, whoosh, caches) hold which raw value."""
    found: dict[str, list[str]] = {}
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file()):
        content = path.read_bytes()
        for value in values:
            if any(s in content for s in spellings(value)):
                found.setdefault(value, []).append(str(path.relative_to(data_dir)))
    return found


def backlog_state(rt, ctx) -> dict:
    gaps = rt.backlog.gaps(ctx)
    return {"gaps": [(g.id, g.label, g.status, g.count, g.first_seen, g.last_seen, g.languages, g.channels)
                     for g in gaps],
            "trend": rt.backlog.trend(ctx, days=200), "handoffs_by_gap": handoff.by_gap(ctx, rt.store),
            "handoffs": [(h["id"], h["reason"], h["status"], h["gap_id"])
                         for h in handoff.handoffs(ctx, rt.store, None)]}


def converse(rt, ctx) -> None:
    """Two uncovered questions per identified conversation (gap + handoff with transcript), the question log,
    a staff reply that repeats the customer's details."""
    bot = Agent(rt, OfflineResponder())
    for first, second in (QUESTIONS[:2], QUESTIONS[2:]):
        one = rt.turns.run(ctx, bot, first, channel="identified")
        two = rt.turns.run(ctx, bot, second, conversation_id=one.conversation_id)
        assert two.status == "handoff" and two.handoff_id is not None
        for question in (first, second):
            conversations.log_question(ctx, rt.store, one.conversation_id, "identified", "es", question)
        handoff.reply(ctx, rt.store, two.handoff_id, "Lucas, te llamamos al 612 345 678 hoy mismo.")


def run_purge(rt, capsys) -> dict:
    assert cmd_purge(argparse.Namespace(json=True), lambda: rt, None) == 0  # `python -m core purge --json`
    return json.loads(capsys.readouterr().out)


def test_purge_91_days_later_leaves_no_raw_value_in_the_data_dir(kb, rt, clock, settings, capsys):
    converse(rt, kb)
    assert retention.registered() == ["core.channels.conversations", "core.channels.handoff", "core.gaps.feedback",
                                      "core.knowledge.browse"]
    rt.knowledge.read(kb, "politicas/envios")  # the read log names who read (an identified customer's id)
    assert set(hits(settings.data_dir, RAW)) == set(RAW)  # the logs hold them, as P4 requires
    before = backlog_state(rt, kb)
    assert sum(g[3] for g in before["gaps"]) == 4 and len(before["handoffs"]) == 2

    clock.moment = T0 + timedelta(days=91)
    recent = rt.turns.run(kb, Agent(rt, OfflineResponder()), RECENT, channel="identified")
    purged = run_purge(rt, capsys)

    assert purged["acme"] == {"samples": 4, "turns": 4, "questions": 4, "conversations": 2, "transcripts": 2,
                              "reads": 1, "feedback": 0}
    assert rt.knowledge.log(kb) == []
    assert hits(settings.data_dir, RAW) == {}
    after = backlog_state(rt, kb)
    old = {g[0] for g in before["gaps"]}
    assert [g for g in after["gaps"] if g[0] in old] == before["gaps"]  # entries and counts intact
    assert after["trend"][:len(before["trend"])] == before["trend"]  # so is the daily count
    assert (after["handoffs_by_gap"], after["handoffs"]) == (before["handoffs_by_gap"], before["handoffs"])
    assert [t["question"] for t in conversations.turns(kb, rt.store, recent.conversation_id)] == [RECENT]
    assert conversations.get(kb, rt.store, recent.conversation_id) is not None
    assert all(h["transcript"] == [] and [r["text"] for r in h["replies"]] == [""]
               for h in handoff.handoffs(kb, rt.store, None))
    assert run_purge(rt, capsys)["acme"] == {"samples": 0, "turns": 0, "questions": 0, "conversations": 0,
                                             "transcripts": 0, "reads": 0, "feedback": 0}


def test_within_the_retention_nothing_private_is_purged(kb, rt, clock, capsys):
    converse(rt, kb)
    clock.moment = T0 + timedelta(days=89)
    assert run_purge(rt, capsys)["acme"] == {"samples": 4, "turns": 0, "questions": 0, "conversations": 0,
                                             "transcripts": 0, "reads": 0, "feedback": 0}  # the samples' 30 days
    assert len(conversations.question_log(kb, rt.store)) == 4
    assert all(len(h["transcript"]) == 2 for h in handoff.handoffs(kb, rt.store, None))


def test_the_hourly_retention_of_the_backlog_purges_the_logs_too(kb, rt, clock):
    converse(rt, kb)
    clock.moment = T0 + timedelta(days=91)
    rt.backlog._purged_at.clear()  # an hour has passed since the last purge of this process
    rt.turns.run(kb, Agent(rt, OfflineResponder()), "¿Vendéis bicicletas de carretera?", channel="web")
    assert conversations.question_log(kb, rt.store) == []
    assert [t["question"] for t in conversations.turn_log(kb, rt.store)] == ["¿Vendéis bicicletas de carretera?"]


def test_the_log_retention_is_a_per_tenant_setting(kb, other_ctx, rt, clock, capsys):
    assert tenant_settings.get(kb, rt.store).log_retention_days == 90
    tenant_settings.update(kb, rt.store, log_retention_days=7)
    assert tenant_settings.get(other_ctx, rt.store).log_retention_days == 90
    converse(rt, kb)
    clock.moment = T0 + timedelta(days=8)
    assert run_purge(rt, capsys)["acme"]["turns"] == 4
    for wrong in (0, 3651, "many", True, 2.5, None):
        with pytest.raises(TenantSettingsError):
            tenant_settings.update(kb, rt.store, log_retention_days=wrong)


def test_every_connection_deletes_securely(rt):
    assert rt.store.db.execute("PRAGMA secure_delete").fetchone()[0] == 1


def test_compact_truncates_the_wal(rt, settings):
    rt.store.db.execute("CREATE TABLE scratch (x TEXT)")
    rt.store.db.execute("INSERT INTO scratch VALUES ('x')")
    assert Path(f"{settings.db_path}-wal").stat().st_size > 0
    assert retention.compact(rt.store) is True
    assert Path(f"{settings.db_path}-wal").stat().st_size == 0
