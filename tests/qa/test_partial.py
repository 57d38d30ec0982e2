"""The ``partial`` expectation (Q2): a case passes when the agent answers in part (the material covers the topic,
not the point asked). ``abstains`` does not accept a partial answer, and an ``answered`` case that comes back
partial says what the material does not mention."""
from __future__ import annotations

import json

import pytest

from core.qa import cases as qa_cases, runs as qa_runs, suites as qa
from tests.qa.test_suites import NOTHING, counts, covered, jsonl, returns_answer, scripted, uncovered

PARTIAL_TRACE = {"abstained": "partial", "missing": ["Valencia"]}
ENVIOS = [{"id": "c1", "path": "politicas/envios"}]


def partial_shipping() -> list:
    """Search, then the closest cited fact under the mark that says what is missing: a partial answer."""
    return covered("envios", "[[missing: Valencia]] Los envíos a Canarias tardan de 5 a 8 días laborables.",
                   "envíos Valencia")


@pytest.mark.parametrize("line, status, citations, trace, passed, fragment", [
    ({"expect": "partial"}, "partial", ENVIOS, PARTIAL_TRACE, True, ""),
    ({"expect": "partial", "cite": "politicas"}, "partial", ENVIOS, PARTIAL_TRACE, True, ""),
    ({"expect": "partial", "cite": "faq"}, "partial", ENVIOS, PARTIAL_TRACE, False,
     "partial, but cited politicas/envios; expected a citation of faq."),
    ({"expect": "partial"}, "answered", ENVIOS, {}, False, "expected: partial; got: answered citing politicas/envios."),
    ({"expect": "partial"}, "abstained", [], {"abstained": "not_covered"}, False, "expected: partial; got: abstained."),
    ({"expect": "answered", "cite": "politicas/envios"}, "partial", ENVIOS, PARTIAL_TRACE, False,
     "expected: answered citing politicas/envios; got: partial: the material does not mention “Valencia” "
     "(the rest cites politicas/envios)."),
    ({"expect": "abstains"}, "partial", ENVIOS, PARTIAL_TRACE, False,
     "got: partial: the material does not mention “Valencia” (the rest cites politicas/envios); a partial answer "
     "is not an abstention: expect 'partial' when the material covers the topic but not this point."),
    ({"expect": "handoff", "channel": "identified"}, "partial", ENVIOS, PARTIAL_TRACE, False,
     "a handoff needs a second uncovered question"),
    ({"expect": "answered"}, "partial", [], {"abstained": "partial"}, False,
     "got: partial: the material does not mention the point asked."),
])
def test_how_each_expectation_judges_a_partial_turn(line, status, citations, trace, passed, fragment):
    got = qa_cases.evaluate({"question": "¿Envíos a Valencia?", **line}, status, citations, trace)
    assert got[0] is passed and fragment in got[1], got


def test_a_partial_case_is_valid_jsonl_and_may_cite():
    parsed = qa_cases.parse_jsonl(jsonl([{"question": "¿Envíos a Valencia?", "expect": "partial",
                                          "cite": "politicas/envios"}]))
    assert parsed[0]["expect"] == "partial" and parsed[0]["cite"] == "politicas/envios"
    assert qa_cases.describe(qa_cases.case_line(parsed[0])) == "partial citing politicas/envios"
    assert qa_cases.describe({"expect": "partial"}) == "partial"
    with pytest.raises(qa_cases.QaError, match="'cite' goes with expect 'answered' or 'partial' only"):
        qa_cases.validate_case({"question": "¿Plazo?", "expect": "abstains", "cite": "politicas"})


@pytest.fixture
def storable(rt):
    """The qa_cases table accepts ``partial`` (its CHECK constraint lists the expectations; migration 011)."""
    assert "'partial'" in rt.store.query("SELECT sql FROM sqlite_master WHERE name = 'qa_cases'")[0]["sql"]


def test_a_run_passes_partial_cases_and_fails_the_others_with_what_is_missing(kb, rt, storable):
    suite = qa.import_jsonl(kb, rt.store, "partial", jsonl([
        {"question": "¿Cuánto tardan los envíos a Valencia?", "expect": "partial", "cite": "politicas/envios"},
        {"question": "¿Cuánto tardan los envíos a Valencia?", "expect": "answered", "cite": "politicas/envios"},
        {"question": "¿Cuánto tardan los envíos a Valencia?", "expect": "abstains"},
        {"question": "¿Plazo de devolución?", "expect": "partial"},
        {"question": "¿Y a Valencia?", "prefix": ["¿Vendéis patinetes?"], "channel": "identified",
         "expect": "handoff"},
    ])).suite
    bot = scripted(rt, partial_shipping(), partial_shipping(), partial_shipping(), returns_answer(), uncovered(),
                   partial_shipping())
    run = qa_runs.run_suite(kb, rt, suite.id, agent=bot)
    assert [r.passed for r in run.results] == [True, False, False, False, True]
    assert [r.status for r in run.results] == ["partial", "partial", "partial", "answered", "handoff"]
    detail = [r.detail for r in run.results]
    assert "got: partial: the material does not mention “Valencia” (the rest cites politicas/envios)" in detail[1]
    assert "a partial answer is not an abstention" in detail[2]
    assert "expected: partial; got: answered citing politicas/devoluciones" in detail[3]
    assert run.results[0].answer.startswith("Nuestro material no menciona “Valencia”.")
    assert run.results[4].steps == [{"question": "¿Vendéis patinetes?", "status": "abstained"}]
    assert counts(rt) == NOTHING  # a rehearsal's partial answer is no gap
    exported = [json.loads(line)["expect"] for line in qa.export_jsonl(kb, rt.store, suite.id).splitlines()]
    assert exported == ["partial", "answered", "abstains", "partial", "handoff"]
