"""How the pages name a turn: every status and every gap reason of the core has its label."""
from __future__ import annotations

import pytest

from core.agent.outcome import Abstention, Status
from core.gaps.backlog import UNCOVERED_REASONS
from pages import turn_status


def test_every_status_and_every_uncovered_reason_has_a_label():
    assert set(turn_status.STATUS) == {str(s) for s in Status}
    assert set(turn_status.REASONS) == set(turn_status.REASON_LABELS) == set(UNCOVERED_REASONS)
    assert {str(a) for a in Abstention} <= set(turn_status.REASONS)


@pytest.mark.parametrize("status, trace, label, colour", [
    ("answered", {}, "Answered", "green"),
    ("partial", {"abstained": "partial", "missing": ["Valencia"]}, "Partial: point not covered", "yellow"),
    ("abstained", {"abstained": "not_covered"}, "Refused: not covered", "orange"),
    ("abstained", {"abstained": "withheld_unsupported"}, "Refused: answer withheld", "orange"),
    ("handoff", {"abstained": "partial"}, "Partial, then handed off to a person", "violet"),
    ("handoff", None, "Handed off to a person", "violet"),
    ("something_new", {}, "something_new", "gray"),
])
def test_the_badge_of_a_turn(status, trace, label, colour):
    assert turn_status.badge(status, trace) == (label, colour)


def test_what_a_partial_answer_left_out_is_shown_literally():
    assert turn_status.missing({"missing": ["Valencia", "Express*"]}) == "“Valencia”, “Express\\*”"
    assert turn_status.missing({"abstained": "not_covered"}) == "" and turn_status.missing(None) == ""
    assert turn_status.trace_title({"abstained": "partial"}) == "Partial answer trace"
    assert turn_status.trace_title({"abstained": "not_covered"}) == "Refusal trace"
    assert turn_status.trace_title({}) == "Trace" and turn_status.uncovered({"abstained": "partial"})
