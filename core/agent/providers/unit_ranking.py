"""Which sentence of the chosen passage the offline responder releases (A1, issue "answers that answer").

The passage, and whether to answer at all, are decided by the responder's floors on the passage's best evidence.
Within that passage this module picks the unit (a sentence, a pair of sentences, an FAQ entry's answer, a sentence
with the command it introduces) most likely to hold the fact asked for: a linear score over what is known of each
unit, with weights fitted listwise (the softmax over a question's candidate units, maximising the chance of a unit
that holds the fact) by ``python -m bench.unit_ranker --split dev`` on the dev splits of the real-documents set,
the generated catalog, XQuAD-es and English questions over XQuAD-es. The test splits are only for reporting.

What the score weighs: the unit's own similarity to the question (its sentence vector, which crosses languages),
the question's rarity-weighted terms it covers with its title and headings, an FAQ entry's whole answer, a figure of
the kind asked for, and the unit's length (a fact rarely fits in three words). Pure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

#: the features, in the order of ``UnitEvidence.vector``
FEATURES = ("similarity", "sentence_similarity", "coverage", "own_coverage", "passage_coverage", "shared_entities",
            "same_language", "long_pair", "faq_answer", "asked_figure", "other_figure", "restating", "passage_rank",
            "length", "sentence_similarity_across", "position")

#: fitted by ``python -m bench.unit_ranker --split dev`` (its output's ``weights``)
WEIGHTS: dict[str, float] = {
    "similarity": 11.34, "sentence_similarity": 32.1, "coverage": 8.2, "own_coverage": 1.52,
    "passage_coverage": -0.37, "shared_entities": -3.03, "same_language": 0.0, "long_pair": 0.79, "faq_answer": 3.11,
    "asked_figure": 5.32, "other_figure": -2.03, "restating": 0.9, "passage_rank": 1.15, "length": 3.38,
    "sentence_similarity_across": 17.61, "position": 0.44,
}


@dataclass(frozen=True)
class UnitEvidence:
    """What the responder knows of one candidate unit."""

    similarity: float  # its passage's similarity to the question
    sentence_similarity: float  # its own (best sentence's) similarity; the passage's when it has none
    coverage: float  # the question's weighted terms it covers, with its passage's title and headings
    own_coverage: float  # the same, by its own words only
    passage_coverage: float  # the same, over the whole passage
    shared_entities: float  # share of the question's names and numbers it carries
    same_language: bool
    long_pair: bool  # two sentences whose first is not a stub
    faq_answer: bool  # an FAQ entry's whole answer paragraph
    asked_figure: bool  # holds a figure of the kind the question asks for
    other_figure: bool  # the question asks for a figure and the unit holds a digit
    restating: bool  # only says the question back
    passage_rank: int  # 0 for the best passage
    chars: int
    position: float  # the unit's place in its passage (an FAQ answer: -1)

    def vector(self) -> tuple[float, ...]:
        return (self.similarity, self.sentence_similarity, self.coverage, self.own_coverage, self.passage_coverage,
                self.shared_entities, float(self.same_language), float(self.long_pair), float(self.faq_answer),
                float(self.asked_figure), float(self.other_figure), float(self.restating), -float(self.passage_rank),
                math.log1p(self.chars) / 6, self.sentence_similarity * (not self.same_language),
                min(max(self.position, 0.0), 20.0) / 20)


def score(evidence: UnitEvidence, weights: dict[str, float] | None = None) -> float:
    """The unit's release score: higher is likelier to hold the fact asked for."""
    w = weights or WEIGHTS
    return sum(w[name] * value for name, value in zip(FEATURES, evidence.vector()))
