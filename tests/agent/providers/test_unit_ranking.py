"""The release score of the offline responder's candidate units (core/agent/providers/unit_ranking.py)."""
from dataclasses import replace

from hypothesis import given, strategies as st

from core.agent.providers.unit_ranking import FEATURES, WEIGHTS, UnitEvidence, score

UNIT = UnitEvidence(similarity=0.86, sentence_similarity=0.86, coverage=0.5, own_coverage=0.4, passage_coverage=0.6,
                    shared_entities=0.0, same_language=True, long_pair=False, faq_answer=False, asked_figure=False,
                    other_figure=False, restating=False, passage_rank=0, chars=90, position=2)


def test_every_feature_has_a_weight_and_a_value():
    assert set(WEIGHTS) == set(FEATURES) and len(UNIT.vector()) == len(FEATURES)


@given(st.floats(0.5, 0.99), st.floats(0.001, 0.2))
def test_a_unit_closer_to_the_question_scores_higher_other_things_equal(similarity, more):
    unit = replace(UNIT, sentence_similarity=similarity)
    assert score(replace(unit, sentence_similarity=similarity + more)) > score(unit)
    assert score(replace(unit, same_language=False, sentence_similarity=similarity + more)) > score(
        replace(unit, same_language=False))


@given(st.floats(0.0, 0.9), st.floats(0.01, 0.1))
def test_covering_more_of_the_question_scores_higher(coverage, more):
    unit = replace(UNIT, coverage=coverage, own_coverage=coverage)
    assert score(replace(unit, coverage=coverage + more, own_coverage=coverage + more)) > score(unit)


def test_a_figure_of_the_kind_asked_and_an_faq_answer_count_for_a_unit():
    assert score(replace(UNIT, asked_figure=True, other_figure=True)) > score(replace(UNIT, other_figure=True))
    assert score(replace(UNIT, faq_answer=True, position=-1)) > score(UNIT)
