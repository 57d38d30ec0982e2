"""Answer feedback: one rating per turn (replaced by a second one), the reason masked, a 👎 on an answer as a
gap of kind "answered but not helpful" (merged with its kind only, closed only when the replay gives another
answer), the QA case made from it, the per-source counts that outlive the turns, tenant isolation."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from core.agent.loop import Agent
from core.agent.providers.offline import OfflineResponder, OfflineTuning
from core.channels import conversations, ratings
from core.curation import relocation
from core.gaps import feedback, pii, source_counts
from core.gaps.backlog import GapError
from core.gaps.model import NOT_HELPFUL, UNCHANGED, UNCOVERED
from core.gaps.replay import changed, replay_gap, same_text
from core.knowledge import sources
from core.qa import suites
from core.qa.cases import QaError, evaluate
from core.qa.from_feedback import DEFAULT_SUITE, case_from_gap, unhelpful_text
from core.runtime import open_runtime
from core.tenancy.context import AuthError, login
from core.tenancy.tenants import create_tenant, create_user
from tests.conftest import SHIPPING, TEST_TUNING
from tests.fakes import MovableClock
from tests.schema import migrate, schema_before

T0 = datetime(2026, 5, 4, 10, 0, tzinfo=timezone.utc)
LENIENT = OfflineTuning(min_similarity=0.2, min_confidence=0.2)  # the hashing embedder's similarities are low
ASKED = "¿Cuánto tardan los envíos a Canarias?"
RAW_REASON = "No dice el precio. Soy Lucía Ferrándiz, escribidme a lucia.ferrandiz@correo.es o al 612 345 678"


@pytest.fixture
def clock():
    return MovableClock(T0)


@pytest.fixture
def rt(settings, embedder, clock):
    runtime = open_runtime(settings, embedder=embedder, tuning=TEST_TUNING, clock=clock)
    yield runtime
    runtime.close()


@pytest.fixture
def bot(rt):
    return Agent(rt, OfflineResponder(LENIENT))


def answered(rt, ctx, bot, question=ASKED, channel="web"):
    result = rt.turns.run(ctx, bot, question, channel=channel)
    assert result.status == "answered" and result.turn_id is not None, result.as_dict()
    return result


def rate(rt, ctx, result, rating, reason=None):
    return ratings.rate(ctx, rt.store, rt.backlog, result.conversation_id, result.turn_id, rating, reason)


# -- recording and replacing ---------------------------------------------------------------------------------
def test_a_thumbs_down_on_an_answer_lands_on_the_backlog_with_the_answer_and_its_citations(rt, kb, bot):
    result = answered(rt, kb, bot)
    done = rate(rt, kb, result, "down", "No dice cuánto cuesta.")
    assert done.as_dict() == {"recorded": True, "rating": "down", "gap_id": done.gap_id} and done.gap_id
    gap = rt.backlog.require(kb, done.gap_id)
    assert (gap.kind, gap.kind_label, gap.count, gap.status, gap.channels) == (
        NOT_HELPFUL, "answered but not helpful", 1, "open", ("web",))
    [sample] = rt.backlog.samples(kb, gap.id)
    assert sample["sample"] == ASKED and sample["reason"] == "not_helpful"
    [row] = feedback.for_variants(kb, rt.store, [sample["id"]])
    assert row["answer"] == result.answer and "5 a 8 días laborables" in row["answer"]
    assert [c["path"] for c in row["citations"]] == ["politicas/envios"] and row["reason"] == "No dice cuánto cuesta."
    assert rt.backlog.gaps(kb, kind=NOT_HELPFUL) == [gap] and rt.backlog.gaps(kb, kind=UNCOVERED) == []


def test_a_second_rating_replaces_the_first_and_the_backlog_count_follows(rt, kb, bot):
    first, second = answered(rt, kb, bot), answered(rt, kb, bot)
    gap_id = rate(rt, kb, first, "down").gap_id
    assert rate(rt, kb, second, "down", "sigue sin decir el precio").gap_id == gap_id  # the same question: merged
    assert rt.backlog.require(kb, gap_id).count == 2
    again = rate(rt, kb, second, "down", "otra razón")  # a new reason, still one variant
    assert again.gap_id == gap_id and again.reason == "otra razón" and rt.backlog.require(kb, gap_id).count == 2
    up = rate(rt, kb, second, "up")
    assert (up.rating, up.gap_id, up.reason) == ("up", None, None)
    assert rt.backlog.require(kb, gap_id).count == 1 and len(rt.backlog.samples(kb, gap_id)) == 1
    assert rt.backlog.history(kb, gap_id)[-1]["event"] == "withdrawn"
    rate(rt, kb, first, "up")  # the last 👎 of a gap no article closed: the gap goes with it
    assert rt.backlog.get(kb, gap_id) is None and rt.backlog.gaps(kb) == []
    back = rate(rt, kb, first, "down")
    assert back.gap_id is not None and rt.backlog.require(kb, back.gap_id).count == 1
    assert len(rt.store.query("SELECT id FROM answer_feedback WHERE tenant_id = ?", [kb.tenant_id])) == 2


def test_the_reason_is_masked_before_it_touches_disk(rt, kb, bot, settings):
    done = rate(rt, kb, answered(rt, kb, bot), "down", RAW_REASON)
    assert "<EMAIL>" in done.reason and "<PHONE>" in done.reason and "<PERSON>" in done.reason
    rt.store.db.execute("PRAGMA wal_checkpoint(FULL)")
    on_disk = b"".join(p.read_bytes() for p in settings.data_dir.glob("cobertura.db*"))
    for value in ("Lucía Ferrándiz", "lucia.ferrandiz@correo.es", "612 345 678"):
        assert value.encode() not in on_disk


def test_a_reason_whose_masking_fails_is_dropped_never_kept_raw(rt, kb, bot, monkeypatch, caplog):
    result = answered(rt, kb, bot)
    real = pii.mask

    def broken_for_reasons(text, language=None):
        if "Ferrándiz" in text:
            raise pii.MaskingError("PII masking failed (RuntimeError); nothing may be stored")
        return real(text, language)

    monkeypatch.setattr(pii, "mask", broken_for_reasons)
    done = rate(rt, kb, result, "down", RAW_REASON)
    assert done.reason is None and done.gap_id is not None  # the rating and the gap stay; the raw reason does not
    assert "Ferrándiz" not in caplog.text


@pytest.mark.parametrize("rating, reason, message", [
    ("meh", None, "send \"up\""), ("", None, "send \"up\""), ("down", "x" * 501, "the limit is 500"),
    ("down", 42, "must be text")])
def test_bad_ratings_and_reasons_are_refused_with_what_to_send(rt, kb, bot, rating, reason, message):
    result = answered(rt, kb, bot)
    with pytest.raises(feedback.FeedbackError, match=message):
        rate(rt, kb, result, rating, reason)
    assert feedback.get(kb, rt.store, result.turn_id) is None


def test_a_refused_answer_is_rated_but_not_recorded_twice(rt, kb, bot):
    for question, status in (("¿Vendéis patinetes?", "abstained"), ("¿Vendéis patinetes eléctricos para niños?",
                                                                     "partial")):
        refused = rt.turns.run(kb, bot, question, channel="web")
        assert refused.status == status and refused.gap_id is not None
        done = rate(rt, kb, refused, "down", "no me sirve")
        assert done.gap_id is None and rt.backlog.require(kb, refused.gap_id).count == 1
    assert {g.kind for g in rt.backlog.gaps(kb)} == {UNCOVERED}


# -- merging -------------------------------------------------------------------------------------------------
def test_not_helpful_merges_with_its_kind_only(rt, kb, bot):
    """A refusal needs an article that answers, an unhelpful answer one that changes it: never one entry."""
    refused = rt.backlog.record(kb, ASKED, "es", "web", "c-refused")
    unhelpful = rate(rt, kb, answered(rt, kb, bot), "down").gap_id
    again = rate(rt, kb, answered(rt, kb, bot, "cuánto tardan los envíos a Canarias"), "down").gap_id
    assert again == unhelpful != refused
    assert rt.backlog.record(kb, ASKED, "es", "web", "c-refused-2") == refused
    assert (rt.backlog.require(kb, refused).count, rt.backlog.require(kb, unhelpful).count) == (2, 2)
    with pytest.raises(GapError, match="different kinds are not merged"):
        rt.backlog.merge(kb, unhelpful, [refused])
    split = rt.backlog.split(kb, unhelpful, [rt.backlog.samples(kb, unhelpful)[0]["id"]])
    assert split.kind == NOT_HELPFUL  # a split keeps the kind


def test_a_merged_gap_carries_its_thumbs_down_along(rt, kb, bot):
    one = rate(rt, kb, answered(rt, kb, bot), "down").gap_id
    other_turn = answered(rt, kb, bot, "¿Cuántos días tengo para devolver un producto?")
    other = rate(rt, kb, other_turn, "down").gap_id
    assert other != one
    rt.backlog.merge(kb, one, [other])
    assert feedback.get(kb, rt.store, other_turn.turn_id, rt.backlog).gap_id == one
    assert rt.backlog.require(kb, one).count == 2


# -- closing with a replay that must give another answer -----------------------------------------------------
def test_closing_needs_a_changed_answer_not_only_an_answer(rt, kb, bot):
    gap_id = rate(rt, kb, answered(rt, kb, bot), "down", "no dice el precio").gap_id
    provider = OfflineResponder(LENIENT)
    [row] = replay_gap(kb, rt, gap_id, "politicas/envios", provider=provider)
    assert row["answered"] and row["cites_article"] and row["changed"] is False  # covered, but the same answer
    assert "5 a 8 días" in row["previous_answer"]
    with pytest.raises(GapError) as refused:
        rt.backlog.close(kb, gap_id, "politicas/envios", replay=[row])
    assert str(refused.value) == UNCHANGED.format(gap=gap_id)

    sources.save(kb, rt.store, "politicas/envios", title="Envíos", language="es",
                 content=SHIPPING + " El envío a Canarias cuesta 9,90 €.")
    rt.index.train(kb)  # new chunks, but the answer to this question is the same sentence: nothing changed for it
    [row] = replay_gap(kb, rt, gap_id, "politicas/envios", provider=provider)
    assert row["answered"] and row["changed"] is False

    sources.save(kb, rt.store, "politicas/envios", title="Envíos", language="es",
                 content="Los envíos a Canarias tardan de 3 a 5 días laborables y cuestan 9,90 €.")
    rt.index.train(kb)
    [row] = replay_gap(kb, rt, gap_id, "politicas/envios", provider=provider)
    assert row["answered"] and row["changed"] is True and "3 a 5 días" in row["answer"]
    gap = rt.backlog.close(kb, gap_id, "politicas/envios", replay=[row])
    assert gap.status == "closed" and rt.backlog.history(kb, gap_id)[-1]["detail"] == {
        "replayed": 1, "answered": 1, "changed": 1}
    assert rate(rt, kb, answered(rt, kb, bot), "down").gap_id == gap_id  # a new 👎 of it reopens it
    assert rt.backlog.require(kb, gap_id).status == "reopened"


def test_an_uncovered_gap_still_closes_on_answered_alone(rt, kb):
    gap_id = rt.backlog.record(kb, "¿Vendéis patinetes?", "es", "web", "c1")
    gap = rt.backlog.close(kb, gap_id, "politicas/envios", replay=[{"answered": False}])
    assert gap.status == "closed"


@pytest.mark.parametrize("before, now, expected", [
    ({"citations": [{"id": "a"}], "answer": "Tarda 5 días. [1]", "provider": "offline"},
     (True, "tarda 5 días.", ["a"], "offline"), False),  # same evidence, same words (markers and case aside)
    ({"citations": [{"id": "a"}], "answer": "Tarda 5 días.", "provider": "offline"},
     (True, "Tarda 5 días y cuesta 9 €.", ["a"], "offline"), True),  # same evidence, other words, same responder
    ({"citations": [{"id": "a"}], "answer": "Cinco días, creo.", "provider": "anthropic"},
     (True, "Tarda 5 días.", ["a"], "offline"), False),  # another responder: only the evidence can tell
    ({"citations": [{"id": "a"}], "answer": "Cinco días, creo.", "provider": "anthropic"},
     (True, "Tarda 5 días.", ["b"], "offline"), True),  # another responder, other chunks: an edited article
    ({"citations": [{"id": "a"}], "answer": "Tarda 5 días. [1]", "provider": "offline"},
     (True, "Tarda 5 días. [1]", ["b"], "offline"), False),  # other chunks, the same words: nothing changed
    ({"citations": [{"id": "a"}], "answer": None, "provider": "offline"},
     (True, "Tarda 5 días.", ["b"], "offline"), True),  # the text purged by retention: the evidence decides
    ({"citations": [{"id": "a"}], "answer": "Tarda 5 días.", "provider": "offline"},
     (False, "", [], "offline"), False),  # a refusal is no fix
])
def test_what_counts_as_a_changed_answer(before, now, expected):
    assert changed(before, *now) is expected


def test_same_text_ignores_markers_case_and_spacing():
    assert same_text("Tarda 5 días. [1]\n\n[2]", "tarda  5 DÍAS.") and not same_text("5 días", "6 días")


# -- a QA case in one click ----------------------------------------------------------------------------------
def test_a_not_helpful_gap_becomes_a_qa_case_that_forbids_the_unhelpful_answer(rt, kb, bot):
    turn = answered(rt, kb, bot)
    gap_id = rate(rt, kb, turn, "down", "No dice el precio").gap_id
    case = case_from_gap(kb, rt.store, rt.backlog, gap_id)
    suite = suites.require_suite(kb, rt.store, DEFAULT_SUITE)
    assert case.suite_id == suite.id and case.question == ASKED and case.expect == "answered" and case.cite == ""
    assert case.forbidden == ("Los envíos a Canarias tardan de 5 a 8 días laborables.",)  # no framing, no [1]
    assert f"gap #{gap_id}" in case.note and "No dice el precio" in case.note
    assert evaluate(case, "answered", turn.citations, answer=turn.answer) == (
        False, "answered citing politicas/envios, but the answer says “Los envíos a Canarias tardan de 5 a 8 días "
               f"laborables.”, which this case forbids. The answer was: “{' '.join(turn.answer.split())}”.")
    assert evaluate(case, "answered", turn.citations, answer="Tardan de 3 a 5 días y cuestan 9,90 €. [1]")[0]
    with pytest.raises(QaError, match="already has this question"):
        case_from_gap(kb, rt.store, rt.backlog, gap_id)
    sources.save(kb, rt.store, "faq/precio-canarias", title="Precio a Canarias", language="es",
                 content="El envío a Canarias cuesta 9,90 €.")
    rt.index.train(kb)
    rt.backlog.close(kb, gap_id, "faq/precio-canarias")
    closed = case_from_gap(kb, rt.store, rt.backlog, gap_id, suite="regresiones")
    assert closed.cite == "faq/precio-canarias" and suites.require_suite(kb, rt.store, "regresiones").cases == 1


@pytest.mark.parametrize("answer, forbidden", [
    ("Según nuestra documentación:\n\nTarda 5 días. [1] Cuesta 9 €. [2]", "Tarda 5 días. Cuesta 9 €."),
    ("Tarda 5 días [1, 2].", "Tarda 5 días ."),  # a model's answer: no framing paragraph to leave out
    ("Intro:\n\n" + "Una frase larga de verdad. " * 10, "Una frase larga de verdad."),  # too long: its first sentence
    ("x" * 150 + " " + "y" * 100, "x" * 150),  # one sentence too long: cut at a word
    ("[1]", ""), ("", ""),
])
def test_the_text_a_case_forbids_is_the_unhelpful_answers_body(answer, forbidden):
    assert unhelpful_text(answer) == forbidden


def test_only_a_not_helpful_gap_with_a_question_left_becomes_a_case(rt, kb, bot, clock):
    refused = rt.backlog.record(kb, "¿Vendéis patinetes?", "es", "web", "c1")
    with pytest.raises(QaError, match="not an answer marked unhelpful"):
        case_from_gap(kb, rt.store, rt.backlog, refused)
    gap_id = rate(rt, kb, answered(rt, kb, bot), "down").gap_id
    clock.moment = T0 + timedelta(days=31)
    rt.backlog.purge(kb)
    with pytest.raises(QaError, match="purged by retention"):
        case_from_gap(kb, rt.store, rt.backlog, gap_id)


def test_making_a_case_needs_the_qa_role(rt, kb, bot):
    gap_id = rate(rt, kb, answered(rt, kb, bot), "down").gap_id
    create_user(rt.store, "acme", "ed@acme.test", "editor-pass-1", "editor")
    editor = login(rt.store, "ed@acme.test", "editor-pass-1", "acme")
    with pytest.raises(AuthError):
        case_from_gap(editor, rt.store, rt.backlog, gap_id)


# -- counts per source ---------------------------------------------------------------------------------------
def test_counts_per_source_outlive_the_turns_purge_and_skip_sandbox_rehearsals(rt, kb, bot, clock):
    turns = [answered(rt, kb, bot) for _ in range(3)]
    answered(rt, kb, bot, "¿Cuántos días tengo para devolver un producto?")
    rate(rt, kb, turns[0], "down")
    rate(rt, kb, turns[1], "down")
    rate(rt, kb, turns[1], "up")  # replaced: one 👍, not a 👎 too
    sandbox = answered(rt, kb, bot, channel="sandbox")
    rate(rt, kb, sandbox, "down")  # on the backlog, but a rehearsal: not in the source's counts
    before = source_counts.counts(kb, rt.store)
    assert before["politicas/envios"] == source_counts.SourceCounts(answers=3, helpful=1, unhelpful=1)
    assert before["politicas/envios"].describe() == "cited by 3 answers, 1 marked unhelpful, 1 marked helpful"
    assert before["politicas/devoluciones"].describe() == "cited by 1 answer"
    assert source_counts.below(before, "politicas") == source_counts.SourceCounts(4, 1, 1)

    clock.moment = T0 + timedelta(days=91)
    purged = rt.backlog.purge_tenant(kb)
    assert purged["turns"] == 5 and purged["feedback"] == 2  # the 👎 texts (the 👍 kept none)
    assert conversations.turn_log(kb, rt.store) == []
    assert source_counts.counts(kb, rt.store) == before
    assert all(r["answer"] is None and r["reason"] is None
               for r in rt.store.query("SELECT answer, reason FROM answer_feedback WHERE tenant_id = ?",
                                       [kb.tenant_id]))


def test_counts_follow_a_moved_source(rt, kb, bot):
    rate(rt, kb, answered(rt, kb, bot), "down")
    answered(rt, kb, bot)
    relocation.move(kb, rt, "politicas", "ayuda")
    counts = source_counts.counts(kb, rt.store)
    assert "politicas/envios" not in counts
    assert counts["ayuda/envios"] == source_counts.SourceCounts(answers=2, helpful=0, unhelpful=1)


# -- isolation -----------------------------------------------------------------------------------------------
def test_another_tenants_or_conversations_turn_answers_exactly_like_a_missing_one(rt, kb, bot):
    create_tenant(rt.store, "globex", "Globex")
    from core.tenancy.context import local_operator

    globex = local_operator(rt.store, "globex")
    mine = answered(rt, kb, bot)
    other_conversation = answered(rt, kb, bot)

    def refusal(conversation_id, turn_id, ctx=kb):
        with pytest.raises(ratings.TurnNotFound) as caught:
            ratings.rate(ctx, rt.store, rt.backlog, conversation_id, turn_id, "down", "x")
        return str(caught.value).replace(conversation_id, "C").replace(str(turn_id), "T")

    missing = refusal(mine.conversation_id, 999_999)
    assert refusal(mine.conversation_id, other_conversation.turn_id) == missing  # a turn of another conversation
    assert refusal("0123456789abcdef", mine.turn_id) == missing  # no such conversation
    assert refusal(mine.conversation_id, mine.turn_id, ctx=globex) == missing  # another tenant's
    assert rt.backlog.gaps(kb) == [] and rt.backlog.gaps(globex) == []
    assert rt.store.query("SELECT COUNT(*) AS n FROM answer_feedback")[0]["n"] == 0


def test_the_cli_close_says_which_answers_changed_and_refuses_when_none_did(rt, kb, bot, capsys):
    import argparse

    from core.gaps.cli import _close

    gap_id = rate(rt, kb, answered(rt, kb, bot), "down").gap_id
    args = argparse.Namespace(article="politicas/envios", json=False, dry_run=False)
    with pytest.raises(GapError, match="no stored question gets another answer"):
        _close(args, rt, kb, gap_id)
    assert "SAME answer" in capsys.readouterr().out and rt.backlog.require(kb, gap_id).status == "open"
    sources.save(kb, rt.store, "faq/envios-canarias", title=ASKED, type="qa", language="es",
                 content="De 3 a 5 días laborables; el envío cuesta 9,90 €.")
    rt.index.train(kb)
    assert _close(argparse.Namespace(article="faq/envios-canarias", json=False, dry_run=False), rt, kb, gap_id) == 0
    out = capsys.readouterr().out
    assert "changed" in out and "1 differently from the answer marked unhelpful" in out
    assert rt.backlog.require(kb, gap_id).status == "closed"


def test_ratings_count_per_cited_source_when_answers_cite_several(rt, kb, bot):
    for question in (ASKED, "¿Cuántos días tengo para devolver un producto?"):
        rate(rt, kb, answered(rt, kb, bot, question), "down")
    rate(rt, kb, answered(rt, kb, bot), "up")
    counts = source_counts.counts(kb, rt.store)
    assert counts["politicas/envios"] == source_counts.SourceCounts(answers=2, helpful=1, unhelpful=1)
    assert counts["politicas/devoluciones"] == source_counts.SourceCounts(answers=1, helpful=0, unhelpful=1)


def test_the_migration_counts_the_answers_of_the_turns_still_kept():
    """Counting starts with migration 014: it fills the per-source answers from the turns the log still has."""
    import json

    db = schema_before("014_answer_feedback")
    db.execute("INSERT INTO tenants (id, slug, name, created_at) VALUES (1, 'acme', 'Acme', '2026-01-01')")
    for convo, channel in (("c-web", "web"), ("c-sbx", "sandbox")):
        db.execute("INSERT INTO conversations (tenant_id, id, channel, created_at, updated_at) "
                   "VALUES (1, ?, ?, '', '')", [convo, channel])
    cited = {"c-web": [["a/x", "a/y"], ["a/x", "a/x"], []], "c-sbx": [["a/x"]]}
    for convo, turns in cited.items():
        for paths in turns:
            db.execute("INSERT INTO turns (tenant_id, conversation_id, at, question, status, answer, citations, "
                       "evidence_ids, trace) VALUES (1, ?, '', '?', 'answered', '', ?, '[]', '{}')",
                       [convo, json.dumps([{"id": p, "path": p} for p in paths])])
    migrate(db, "014_answer_feedback")
    assert {r["path"]: r["answers"] for r in db.query("SELECT path, answers FROM source_answers")} == {
        "a/x": 2, "a/y": 1}  # once per answer, Sandbox rehearsals aside
