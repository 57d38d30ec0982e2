"""QA suites (Q2): cases and expectations, rehearsal runs that record nothing, diffs, JSONL, isolation, the CLI."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.__main__ import main
from core.agent.loop import Agent
from core.agent.protocol import TransportError
from core.channels import handoff
from core.channels.turn import Rehearsal
from core.qa import cases as qa_cases, runs as qa_runs, suites as qa
from core.tenancy.context import AuthError, login
from core.tenancy.tenants import create_user
from tests.fakes import ScriptedProvider

DEMO_SUITE = Path(__file__).resolve().parents[2] / "data" / "sample" / "qa" / "demo.jsonl"


def role_ctx(rt, role: str):
    create_user(rt.store, "acme", f"{role}@acme.test", "a long password", role)
    return login(rt.store, f"{role}@acme.test", "a long password", "acme")


# -- what a scripted model says, turn by turn -------------------------------------------------------------------
def _id_of(messages, path_part):
    for message in reversed(messages):
        if message.role == "tool":
            data = json.loads(message.content)
            for item in data.get("results", []) + data.get("passages", []):
                if path_part in item["source"]:
                    return item["id"]
    raise AssertionError(f"no {path_part} result in the conversation")


def covered(path_part: str, text: str, query: str) -> list:
    """Search, then answer citing the passage of ``path_part``: the gate releases it."""
    return [("search_knowledge", {"query": query}), lambda messages: f"{text} [[cite:{_id_of(messages, path_part)}]]"]


def returns_answer() -> list:
    return covered("devoluciones", "Tienes un plazo de 30 días naturales desde la entrega.", "plazo devolver producto")


def shipping_answer() -> list:
    return covered("envios", "Los envíos a Canarias tardan de 5 a 8 días laborables.", "envíos Canarias")


def uncovered() -> list:
    """Search, then an uncited answer twice (the answer and the revision): the turn abstains."""
    return [("search_knowledge", {"query": "x"}), "No lo sé.", "No lo sé."]


def scripted(rt, *turns) -> Agent:
    return Agent(rt, ScriptedProvider(*[reply for turn in turns for reply in turn]))


def counts(rt) -> dict:
    return {t: rt.store.query(f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]
            for t in ("conversations", "turns", "gaps", "gap_variants", "handoffs")}


NOTHING = {"conversations": 0, "turns": 0, "gaps": 0, "gap_variants": 0, "handoffs": 0}


# -- the rehearsal (run mode of Agent.ask) --------------------------------------------------------------------------
def test_a_rehearsal_keeps_history_evidence_and_the_handoff_rule_in_memory(kb, rt):
    bot = scripted(rt, shipping_answer())
    rehearsal = Rehearsal(channel="identified")
    first = rt.turns.rehearse(kb, bot, rehearsal, "¿Cuánto tardan los envíos a Canarias?")
    assert first.status == "answered" and rehearsal.turns[0][0] == "¿Cuánto tardan los envíos a Canarias?"
    cited = first.citations[0]["id"]
    # a follow-up may cite what an earlier turn returned, without searching again: the evidence was kept
    bot.provider.enqueue(f"Tardan de 5 a 8 días laborables. [[cite:{cited}]]")
    follow = rt.turns.rehearse(kb, bot, rehearsal, "¿y cuánto tardan?")
    assert follow.status == "answered" and follow.citations[0]["id"] == cited
    sent = bot.provider.calls[-1]["messages"]
    assert [m.role for m in sent] == ["user", "assistant", "user"]  # the history reached the model
    bot.provider.enqueue(*uncovered(), *uncovered())
    assert rt.turns.rehearse(kb, bot, rehearsal, "¿Vendéis patinetes?").status == "abstained"
    second = rt.turns.rehearse(kb, bot, rehearsal, "¿Y monopatines?")
    assert second.status == "handoff" and second.handoff_id is None and second.gap_id is None
    assert second.trace.handoff == {"reason": "not_covered_twice", "recorded": False} and rehearsal.handed_off
    assert counts(rt) == NOTHING  # no conversation, turn, gap or handoff was written


@pytest.mark.parametrize("channel, handed_off", [("identified", True), ("email", True), ("sms", True), ("team", True),
                                                 ("web", False), ("phone", False), ("sandbox", False)])
def test_the_rehearsal_hands_off_exactly_where_a_stored_conversation_does(kb, rt, channel, handed_off):
    rehearsal = Rehearsal(channel=channel)
    bot = scripted(rt, uncovered(), uncovered())
    rt.turns.rehearse(kb, bot, rehearsal, "¿Vendéis patinetes?")
    assert (rt.turns.rehearse(kb, bot, rehearsal, "¿Y monopatines?").status == "handoff") is handed_off
    assert counts(rt) == NOTHING


# -- expectations, each way -----------------------------------------------------------------------------------------
def test_every_expectation_passes_and_fails_with_a_reason(kb, rt):
    suite = qa.create_suite(kb, rt.store, "each way")
    add = lambda question, **kw: qa.add_case(kb, rt.store, suite.id, question, **kw)  # noqa: E731
    cases = [
        add("¿Plazo de devolución?", expect="answered", cite="politicas/devoluciones"),  # pass
        add("¿Plazo de devolución?", expect="answered", cite="politicas"),  # pass: a folder accepts what is below it
        add("¿Plazo de devolución?", expect="answered", cite="politicas/envios"),  # fail: cites another source
        add("¿Plazo de devolución?", expect="answered"),  # fail: abstained
        add("¿Vendéis patinetes?", expect="abstains"),  # pass
        add("¿Vendéis patinetes?", expect="abstains"),  # fail: answered
        add("¿Y monopatines?", prefix=["¿Vendéis patinetes?"], channel="identified", expect="handoff"),  # pass
        add("¿Y monopatines?", prefix=["¿Vendéis patinetes?"], channel="web",
            expect="handoff"),  # fail: web refuses only
        add("¿Y monopatines?", channel="identified", expect="handoff"),  # fail: only one uncovered question
        add("¿Plazo de devolución?", expect="card", card="return_label"),  # fail: cards are not built
        add("¿Plazo de devolución?", expect="answered"),  # fail: provider down
    ]
    bot = scripted(rt, returns_answer(), returns_answer(), returns_answer(), uncovered(), uncovered(), returns_answer(),
                   uncovered(), uncovered(), uncovered(), uncovered(), uncovered(), returns_answer(),
                   [TransportError("upstream 503")])
    seen = []
    run = qa_runs.run_suite(kb, rt, suite.id, agent=bot, progress=lambda step: seen.append((step.done, step.total)))
    assert seen == [(n, len(cases)) for n in range(len(cases) + 1)]  # before each case, and once all are done
    results = {r.case_id: r for r in run.results}
    verdicts = [results[c.id].passed for c in cases]
    assert verdicts == [True, True, False, False, True, False, True, False, False, False, False]
    detail = [results[c.id].detail for c in cases]
    assert detail[0] == detail[1] == "" and results[cases[0].id].paths == ["politicas/devoluciones"]
    assert "cited politicas/devoluciones; expected a citation of politicas/envios" in detail[2]
    assert "expected: answered; got: abstained" in detail[3]
    assert "expected: abstains; got: answered citing politicas/devoluciones" in detail[5]
    assert "channel 'web' never hands off" in detail[7]
    assert "needs a second uncovered question" in detail[8]
    assert detail[9].startswith("cards are not built yet: the agent cannot propose card 'return_label'")
    assert "an error (provider unavailable: upstream 503)" in detail[10]
    handed = results[cases[6].id]
    assert handed.status == "handoff" and handed.steps == [{"question": "¿Vendéis patinetes?", "status": "abstained"}]
    assert run.passed == 4 and run.total == 11 and run.pass_rate == pytest.approx(4 / 11)
    assert results[cases[0].id].chunk_ids and results[cases[0].id].latency_ms >= 0
    assert counts(rt) == NOTHING  # QA traffic never reaches the conversation log, the backlog or the queue
    assert rt.backlog.gaps(kb) == [] and handoff.open_handoffs(kb, rt.store) == []
    stored = qa_runs.get_run(kb, rt.store, run.id)
    assert stored.as_dict() == run.as_dict() and stored.provider == "scripted"


def test_a_run_needs_cases_and_an_empty_suite_says_so(kb, rt):
    suite = qa.create_suite(kb, rt.store, "empty")
    with pytest.raises(qa_cases.QaError, match="has no cases yet"):
        qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt))


# -- diff -------------------------------------------------------------------------------------------------------------
def test_diff_names_flipped_cases_changed_citations_new_and_gone_cases(kb, rt):
    suite = qa.create_suite(kb, rt.store, "diff")
    stays = qa.add_case(kb, rt.store, suite.id, "¿Plazo de devolución?", expect="answered")
    breaks = qa.add_case(kb, rt.store, suite.id, "¿Vendéis patinetes?", expect="abstains")
    gone = qa.add_case(kb, rt.store, suite.id, "¿Envíos a Canarias?", expect="answered", cite="politicas/envios")
    first = qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt, returns_answer(), uncovered(), shipping_answer()))
    assert first.passed == 3 and qa_runs.diff_runs(kb, rt.store, first.id).previous_id is None
    qa.delete_case(kb, rt.store, gone.id)
    new = qa.add_case(kb, rt.store, suite.id, "¿Y monopatines?", expect="abstains")
    assert new.id > gone.id  # a deleted case's id is never given to a new one
    second = qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt, shipping_answer(), returns_answer(), uncovered()))
    diff = qa_runs.diff_runs(kb, rt.store, second.id)
    assert diff.previous_id == first.id and not diff.empty
    assert [(c["case_id"], c["before"], c["after"]) for c in diff.changed] == [(breaks.id, True, False)]
    assert "got: answered" in diff.changed[0]["detail"]
    cited = {c["case_id"]: c for c in diff.cited}
    assert set(cited) == {stays.id, breaks.id}  # one cites another source now; one cites where it cited nothing
    assert [x["path"] for x in cited[stays.id]["added"]] == ["politicas/envios"]
    assert [x["path"] for x in cited[stays.id]["removed"]] == ["politicas/devoluciones"]
    assert (cited[breaks.id]["before"] == []
            and [x["path"] for x in cited[breaks.id]["added"]] == ["politicas/devoluciones"])
    assert diff.new == [{"case_id": new.id, "number": 4, "question": "¿Y monopatines?", "passed": True}]
    assert [(c["case_id"], c["number"]) for c in diff.gone] == [(gone.id, 3)]  # a deleted case keeps its number
    third = qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt, shipping_answer(), returns_answer(), uncovered()))
    assert qa_runs.diff_runs(kb, rt.store, third.id).empty  # same results, same chunks
    assert [r.id for r in qa_runs.list_runs(kb, rt.store, suite.id)] == [third.id, second.id, first.id]
    assert qa_runs.diff_runs(kb, rt.store, third.id, previous_id=first.id).changed  # any earlier run can be compared
    assert qa.list_suites(kb, rt.store)[0].last_run["id"] == third.id


# -- suites, cases, roles ----------------------------------------------------------------------------------------------
def test_suites_and_cases_are_created_renamed_edited_and_deleted(kb, rt):
    suite = qa.create_suite(kb, rt.store, "  smoke   tests ")
    assert (suite.name == "smoke tests"
            and qa.get_suite(kb, rt.store, "smoke tests") == qa.get_suite(kb, rt.store, suite.id))
    with pytest.raises(qa_cases.QaError, match="already exists"):
        qa.create_suite(kb, rt.store, "smoke tests")
    for bad, message in (("", "needs a name"), ("12", "only digits"), ("x" * 81, "limit is 80")):
        with pytest.raises(qa_cases.QaError, match=message):
            qa.create_suite(kb, rt.store, bad)
    case = qa.add_case(kb, rt.store, suite.id, "¿Plazo de devolución?", expect="answered",
                       cite="/Politicas/Devoluciones/")
    assert case.cite == "politicas/devoluciones" and case.expectation == "answered citing politicas/devoluciones"
    edited = qa.edit_case(kb, rt.store, case.id, "¿Y monopatines?", prefix=["¿Vendéis patinetes?"], channel="email",
                          expect="handoff", note="second uncovered")
    assert ((edited.id, edited.position, edited.prefix, edited.channel, edited.cite)
            == (case.id, 1, ("¿Vendéis patinetes?",), "email", ""))
    with pytest.raises(qa_cases.QaError, match="Channel 'whatsapp' is not known"):
        qa.edit_case(kb, rt.store, case.id, "hola", expect="abstains", channel="whatsapp")
    assert qa.rename_suite(kb, rt.store, suite.id, "regression").name == "regression"
    qa.delete_case(kb, rt.store, case.id)
    assert qa.list_cases(kb, rt.store, suite.id) == []
    qa.add_case(kb, rt.store, suite.id, "¿Plazo?", expect="abstains")
    qa_runs.run_suite(kb, rt, suite.id, agent=scripted(rt, uncovered()))
    qa.delete_suite(kb, rt.store, suite.id)
    assert qa.list_suites(kb, rt.store) == []
    assert [rt.store.query(f"SELECT COUNT(*) AS n FROM {t}")[0]["n"]
            for t in ("qa_cases", "qa_runs", "qa_results")] == [0, 0, 0]


def test_changing_suites_needs_the_qa_role_running_needs_membership(kb, rt):
    tester, editor = role_ctx(rt, "qa"), role_ctx(rt, "editor")
    suite = qa.create_suite(tester, rt.store, "by qa")
    case = qa.add_case(tester, rt.store, suite.id, "¿Vendéis patinetes?", expect="abstains")
    for change in (lambda: qa.create_suite(editor, rt.store, "nope"),
                   lambda: qa.rename_suite(editor, rt.store, suite.id, "nope"),
                   lambda: qa.add_case(editor, rt.store, suite.id, "x", expect="abstains"),
                   lambda: qa.edit_case(editor, rt.store, case.id, "x", expect="abstains"),
                   lambda: qa.delete_case(editor, rt.store, case.id),
                   lambda: qa.import_jsonl(editor, rt.store, "by qa", '{"question": "x", "expect": "abstains"}'),
                   lambda: qa.delete_suite(editor, rt.store, suite.id)):
        with pytest.raises(AuthError, match="Only the qa role"):
            change()
    run = qa_runs.run_suite(editor, rt, suite.id, agent=scripted(rt, uncovered()))  # editors run and read
    assert run.passed == 1 and run.actor == "editor@acme.test"
    assert qa.export_jsonl(editor, rt.store, suite.id) == '{"question": "¿Vendéis patinetes?", "expect": "abstains"}\n'


def test_another_tenants_suite_answers_exactly_like_a_missing_one(kb, rt, other_ctx):
    def failure(call) -> str:
        with pytest.raises(qa_cases.QaError) as info:
            call()
        return str(info.value)

    missing_suite = failure(lambda: qa.require_suite(kb, rt.store, "theirs"))
    missing_case = failure(lambda: qa.require_case(kb, rt.store, 1))
    missing_run = failure(lambda: qa_runs.get_run(kb, rt.store, 1))
    theirs = qa.create_suite(other_ctx, rt.store, "theirs")
    case = qa.add_case(other_ctx, rt.store, theirs.id, "¿Secreto?", expect="abstains")
    run = qa_runs.run_suite(other_ctx, rt, theirs.id, agent=scripted(rt, uncovered()))
    assert (theirs.id, case.id, run.id) == (1, 1, 1)  # the very ids looked up above
    assert failure(lambda: qa.require_suite(kb, rt.store, "theirs")) == missing_suite
    assert failure(lambda: qa.require_case(kb, rt.store, case.id)) == missing_case
    assert failure(lambda: qa_runs.get_run(kb, rt.store, run.id)) == missing_run
    assert qa.get_suite(kb, rt.store, theirs.id) is None and qa.list_suites(kb, rt.store) == []
    for call in (lambda: qa.list_cases(kb, rt.store, theirs.id), lambda: qa.export_jsonl(kb, rt.store, theirs.id),
                 lambda: qa_runs.run_suite(kb, rt, theirs.id, agent=scripted(rt)),
                 lambda: qa_runs.list_runs(kb, rt.store, theirs.id),
                 lambda: qa.rename_suite(kb, rt.store, theirs.id, "mine"),
                 lambda: qa.delete_suite(kb, rt.store, theirs.id)):
        assert failure(call) == missing_suite.replace("'theirs'", f"'{theirs.id}'")
    assert failure(lambda: qa.edit_case(kb, rt.store, case.id, "x", expect="abstains")) == missing_case
    assert failure(lambda: qa.delete_case(kb, rt.store, case.id)) == missing_case
    qa.create_suite(kb, rt.store, "theirs")  # the same name is free in this tenant
    assert [c.question for c in qa.list_cases(other_ctx, rt.store, theirs.id)] == ["¿Secreto?"]


# -- JSONL ------------------------------------------------------------------------------------------------------------
LINES = [
    {"question": "¿Plazo de devolución?", "expect": "answered", "cite": "politicas/devoluciones", "note": "30 días"},
    {"question": "¿Y monopatines?", "prefix": ["¿Vendéis patinetes?"], "channel": "identified", "expect": "handoff"},
    {"question": "¿Vendéis patinetes?", "expect": "abstains"},
    {"question": "Quiero devolver mi pedido", "expect": "card", "card": "return_label"},
]


def jsonl(lines) -> str:
    return "".join((line if isinstance(line, str) else json.dumps(line, ensure_ascii=False)) + "\n" for line in lines)


def test_jsonl_round_trip_skips_duplicates_and_replaces(kb, rt):
    report = qa.import_jsonl(kb, rt.store, "imported", "\ufeff" + jsonl(LINES[:2]) + "\n\n" + jsonl(LINES[2:]))
    assert report.created and (report.added, report.skipped) == (4, 0) and report.suite.cases == 4
    exported = qa.export_jsonl(kb, rt.store, "imported")
    assert [json.loads(line) for line in exported.splitlines()] == LINES
    again = qa.import_jsonl(kb, rt.store, "imported", exported + jsonl(LINES[:1]))
    assert (again.created, again.added, again.skipped) == (False, 0, 5)  # importing twice adds nothing
    copy = qa.import_jsonl(kb, rt.store, "copy", exported)
    assert qa.export_jsonl(kb, rt.store, copy.suite.id) == exported
    replaced = qa.import_jsonl(kb, rt.store, "copy", jsonl(LINES[2:3]), replace=True)
    assert (replaced.removed, replaced.added) == (4, 1) and qa.export_jsonl(kb, rt.store, "copy") == jsonl(LINES[2:3])
    with pytest.raises(qa_cases.QaError, match="No QA suite 'nope'"):
        qa.import_jsonl(kb, rt.store, "nope", exported, create=False)


def test_a_bad_line_imports_nothing_and_every_bad_line_is_named(kb, rt):
    qa.import_jsonl(kb, rt.store, "kept", jsonl(LINES[:1]))
    bad = jsonl([
        LINES[0],
        '{"question": "¿Plazo?", "expect": "answered"',
        {"question": "¿Plazo?", "expect": "answerd"},
        {"question": "¿Plazo?", "expect": "abstains", "cite": "politicas"},
        {"question": "  ", "expect": "abstains"},
        {"question": "¿Plazo?", "expect": "card"},
        {"question": "¿Plazo?", "expect": "abstains", "cites": "politicas"},
        {"question": "¿Plazo?", "expect": "handoff", "prefix": "¿Vendéis patinetes?"},
        {"question": "¿Plazo?", "expect": "abstains", "channel": "fax"},
        {"question": "x" * 2001, "expect": "abstains"},
        '["not", "an", "object"]',
        LINES[2],
    ])
    with pytest.raises(qa_cases.QaImportError) as info:
        qa.import_jsonl(kb, rt.store, "kept", bad)
    errors = info.value.errors
    assert [e.split(":")[0] for e in errors] == [f"line {n}" for n in range(2, 12)]
    expected = ["not valid JSON", "'expect' is 'answerd'", "'cite' goes with expect 'answered' or 'partial' only",
                "'question' is missing or empty", "expect 'card' needs 'card'", "Unknown field(s) 'cites'",
                "'prefix' must be a list", "Channel 'fax' is not known", "the limit is 2000", "must be a JSON object"]
    for error, fragment in zip(errors, expected):
        assert fragment in error, (error, fragment)
    assert str(info.value).startswith("Nothing was imported: 10 bad line(s).")
    assert qa.export_jsonl(kb, rt.store, "kept") == jsonl(LINES[:1])  # untouched
    with pytest.raises(qa_cases.QaImportError, match="No QA suite|Nothing was imported"):
        qa.import_jsonl(kb, rt.store, "never made", bad)
    assert qa.get_suite(kb, rt.store, "never made") is None  # nothing half-imported, not even the suite
    with pytest.raises(qa_cases.QaImportError, match="the file has no cases"):
        qa.import_jsonl(kb, rt.store, "kept", "\n  \n")


def test_the_demo_suite_file_is_valid_and_covers_every_built_expectation():
    cases = qa_cases.parse_jsonl(DEMO_SUITE.read_text(encoding="utf-8"))
    assert 8 <= len(cases) <= 12
    assert {c["expect"] for c in cases} == {"answered", "partial", "abstains", "handoff"}  # every built expectation
    assert any(c["cite"] for c in cases) and any(c["prefix"] and c["channel"] == "identified" for c in cases)


# -- the CLI on the real demo (real embedder, offline responder) -------------------------------------------------------
def cli(capsys, *argv) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_passes_the_demo_suite_and_fails_a_broken_case(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("COBERTURA_DATA_DIR", str(tmp_path / "data"))
    assert cli(capsys, "init", "--json")[0] == 0
    assert cli(capsys, "init", "--json")[0] == 0  # idempotent: the suite is imported once
    code, out, _ = cli(capsys, "qa", "suites", "demo", "--json")
    suites = json.loads(out)
    assert (code == 0
            and [(s["name"], s["cases"]) for s in suites] == [("demo", len(DEMO_SUITE.read_text().splitlines()))])

    code, out, err = cli(capsys, "qa", "run", "demo", "demo")
    assert code == 0, out + err
    assert "FAIL" not in out and f"{suites[0]['cases']}/{suites[0]['cases']} passed" in out

    broken = tmp_path / "broken.jsonl"
    broken.write_text(jsonl([
        {"question": "¿Cuánto tarda un envío a Canarias?", "expect": "answered", "cite": "politicas/envios"},
        {"question": "¿Cuánto tarda un envío a Canarias?", "expect": "abstains", "note": "deliberately broken"},
    ]), encoding="utf-8")
    assert cli(capsys, "qa", "import", "demo", "broken", str(broken))[0] == 0
    code, out, _ = cli(capsys, "qa", "run", "demo", "broken")
    assert code == 1
    assert "1/2 passed" in out and "why: expected: abstains; got: answered citing politicas/envios." in out
    code, out, _ = cli(capsys, "qa", "run", "demo", "broken", "--json")
    data = json.loads(out)
    assert code == 1 and [r["passed"] for r in data["run"]["results"]] == [True, False]
    assert data["diff"]["previous_id"] == data["run"]["id"] - 1 and data["diff"]["changed"] == []
    assert data["run"]["results"][0]["paths"] == ["politicas/envios"] and data["run"]["results"][0]["chunk_ids"]

    code, out, _ = cli(capsys, "qa", "export", "demo", "demo")
    assert code == 0 and [json.loads(line) for line in out.splitlines()] == [
        json.loads(line) for line in DEMO_SUITE.read_text(encoding="utf-8").splitlines()]
    code, out, _ = cli(capsys, "gaps", "demo", "--json")
    assert json.loads(out) == []  # the runs (abstentions and a handoff included) left no gap behind

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "hola"}\n', encoding="utf-8")
    for argv, message in ((("qa", "run", "demo", "nope"), "No QA suite 'nope'"),
                          (("qa", "import", "demo", "x", str(bad)), "line 1: 'expect' is 'missing'"),
                          (("qa", "import", "demo", "x", str(tmp_path / "absent.jsonl")), "Cannot read"),
                          (("qa", "run", "demo"), "qa run takes 2 argument(s)"),
                          (("qa", "frobnicate", "demo"), "Unknown qa action"),
                          (("qa", "suites", "nobody"), "No tenant 'nobody'")):
        code, _, err = cli(capsys, *argv)
        assert code == 2 and message in err, (argv, err)


@pytest.mark.parametrize("wrote", ["Te paso con una persona del equipo.", ""])
def test_a_rehearsal_reports_a_handoff_the_model_asked_for_without_queuing_it(kb, rt, wrote):
    """A QA case "hands off" passes when the model calls the handoff tool, in any channel; nothing is queued."""
    bot = scripted(rt, [("handoff", {"reason": "customer_request"}), wrote or "Hola."])
    rehearsal = Rehearsal(channel="web")
    result = rt.turns.rehearse(kb, bot, rehearsal, "Quiero hablar con una persona")
    assert result.status == "handoff" and result.handoff_id is None and rehearsal.handed_off
    assert result.trace.handoff == {"reason": "customer_request", "recorded": False}
    assert counts(rt) == NOTHING
