"""The citation gate (A3): judge a buffered answer claim by claim before anyone sees it.

A claim citing ``[[cite:ID]]`` must name a text-bearing tool result of the conversation; every number
it writes must be in the cited text at the precision written; and its content words (stemmed, accents
folded, stop words out) and numbers must be found *together* in one sentence of the cited text (or in
two when the second continues the first: "It opens at 10:00."), with the same polarity, its names
written as the source writes them. Co-occurrence is what plain token overlap misses: a hallucination
that reuses the source's own names in a wrong relation has its words scattered over sentences.
An uncited claim passes only when a live action result of this turn supports it; a claim citing only
live results (``[[cite:live-N]]``, ids valid for the turn that fetched them) is checked against their
data with the same live bar, its numbers strict, and the fixed "nothing found" sentence citing an empty
live result passes as what that result says. Greetings,
transitions, questions and labels are exempt (``core.grounding.claims``). Support is judged on what a
claim states, its conversational framing set aside ("Yeah, I know that ...": ``core.grounding.framing``;
"Did you know that ...?" states its clause) unless that leaves it next to nothing to check, with the
words of a source that say the same thing (``core.grounding.lexicon``); numbers and names stay strict.
Given the ``question``, an answer whose supported claims all leave what the question names unmentioned
is off-question (``core.grounding.relevance``). Pure and deterministic; caches are only memoization.

The scoring itself lives in ``core.grounding.support``.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from core.base.language import fold, stopwords
from core.grounding.claims import (
    CITE,
    LIGHT,
    MALFORMED,
    POLARITY,
    Claim,
    exemption,
    language_of,
    segments,
    split_claims,
)
from core.grounding.framing import stated
from core.grounding.relevance import asked_names, unaddressed
from core.grounding.support import (
    LIVE_MIN_SUPPORT,
    NON_WORD,
    S_TOKEN,
    TOKEN,
    Facts,
    facts_of,
    needed,
    number_problem,
    numbers_confirmed,
    score_of,
    source_of,
    support_score,
)

__all__ = ["CITE", "Claim", "ClaimVerdict", "Evidence", "GateVerdict", "check", "numbers_confirmed", "release",
           "split_claims", "support_score"]

PASSING = frozenset({"supported", "exempt", "live_data"})
LIVE_PREFIX = "live-"  # a live result's turn-local id: live-1, live-2 ... (core.agent.registry numbers them)
#: a claim whose framing leaves fewer words and numbers than this is judged as written (tuned on dev)
MIN_STATED = 2


@dataclass(frozen=True)
class Evidence:
    """What the tools of this conversation returned: texts by id, ids without text, live results of this turn."""

    texts: Mapping[str, str]
    other_ids: frozenset[str] = frozenset()
    live: tuple[str, ...] = ()
    #: what each text is about (its source's title and path): context for relevance, never support
    about: Mapping[str, str] = field(default_factory=dict)
    #: live results of this turn by their turn-local id (live-N -> the result as the model saw it), citable
    live_ids: Mapping[str, str] = field(default_factory=dict)
    #: the live ids whose result was empty: they support only a fixed message that says nothing was found
    live_empty: frozenset[str] = frozenset()


@dataclass(frozen=True)
class ClaimVerdict:
    claim: Claim
    verdict: str  # supported | exempt | live_data | invented_citation | value_mismatch | weak_support | uncited
    #             | off_question (supported, but the answer it belongs to does not address the question)
    detail: str
    support: float


@dataclass(frozen=True)
class GateVerdict:
    claims: tuple[ClaimVerdict, ...]

    @property
    def ok(self) -> bool:
        """Every claim passes and at least one states a supported fact (greetings alone are no answer)."""
        return all(c.verdict in PASSING for c in self.claims) and any(
            c.verdict in ("supported", "live_data") for c in self.claims)

    @property
    def unsupported(self) -> tuple[ClaimVerdict, ...]:
        return tuple(c for c in self.claims if c.verdict not in PASSING)

    def feedback(self) -> str:
        """What the model is told for its one revision round: which claims failed, why, and what to do."""
        failed = self.unsupported
        off = all(c.verdict == "off_question" for c in failed)
        lines = [("The answer was not released: its claims are in the sources but do not answer the question."
                  if off else f"The answer was not released: {len(failed)} of {len(self.claims)} claims are not "
                  "supported by the sources.") if failed else
                 "The answer was not released: it states no fact backed by a source."]
        lines += [f'{i}. "{c.claim.text}" - {c.verdict.replace("_", " ")}: {c.detail}' for i, c in enumerate(failed, 1)]
        lines.append("Rewrite the whole answer once. Cite only ids that tools returned with text in this conversation, "
                     "as [[cite:ID]] right after the sentence it supports; copy numbers, names and conditions exactly "
                     "as the source writes them; remove anything the sources do not say and add no new facts. "
                     "If the sources do not answer the question, say so" + (
                         ": start with [[missing: what they do not mention]], then give the closest cited fact."
                         if off and failed else "."))
        return "\n".join(lines)


# ---------------------------------------------------------------- words
def _norm(text: str) -> str:
    return " ".join(TOKEN.findall(fold(text)))


def _text(evidence: Evidence, cid: str) -> str:
    """The text a citation names: a knowledge text, or a live result of this turn."""
    return evidence.texts[cid] if cid in evidence.texts else evidence.live_ids[cid]


def _invented(claim: Claim, span: str, evidence: Evidence) -> str:
    bad = [c for c in dict.fromkeys(claim.citations) if c not in evidence.texts and c not in evidence.live_ids]
    if not bad and not MALFORMED.search(CITE.sub("", span)):
        return ""
    which = "; ".join(f"{c} was returned without text (a browse or index entry): read it first"
                      if c in evidence.other_ids else
                      f"{c} is not a live result of this turn (a live id is citable only in the turn that fetched it)"
                      if c.startswith(LIVE_PREFIX) else f"{c} was not returned by any tool" for c in bad)
    known = [*evidence.texts, *evidence.live_ids]
    hint = (f" (ids with text: {', '.join(known)})" if len(known) <= 6 else "") if known else (
        " (no tool returned any text in this conversation)")
    return (which or "a citation marker is malformed") + hint


def _live_cited(claim: Claim, facts: Facts, lang: str, evidence: Evidence) -> ClaimVerdict:
    """A claim citing only live results of this turn: their data must say it, with the live bar (numbers strict)."""
    ids = list(dict.fromkeys(claim.citations))
    sources = [source_of(evidence.live_ids[c], lang) for c in ids]
    where = f"live result {', '.join(ids)}"
    problem, score = number_problem(facts.numbers, sources), score_of(facts, sources)
    if problem:
        value, said = problem.split("|", 1)
        return ClaimVerdict(claim, "value_mismatch", f"{value} is not in {where}; {said}", score.value)
    if score.value >= LIVE_MIN_SUPPORT and not set(ids) & evidence.live_empty:
        return ClaimVerdict(claim, "live_data", f"built from {where} of this turn", score.value)
    detail = (f"{where} returned nothing: say only that it has nothing for these parameters"
              if set(ids) & evidence.live_empty else
              f"{where} does not say: {', '.join(repr(w) for w in score.missing[:6])}")
    return ClaimVerdict(claim, "weak_support", detail, score.value)


def _cited(claim: Claim, facts: Facts, lang: str, evidence: Evidence) -> ClaimVerdict:
    ids = list(dict.fromkeys(claim.citations))
    sources = [source_of(_text(evidence, c), lang) for c in ids]
    where = f"chunk {ids[0]}" if len(ids) == 1 else f"chunks {', '.join(ids)}"
    problem, score = number_problem(facts.numbers, sources), score_of(facts, sources)
    if problem:
        value, said = problem.split("|", 1)
        return ClaimVerdict(claim, "value_mismatch", f"{value} is not in {where}; {said}", score.value)
    if score.value >= needed(facts):
        return ClaimVerdict(claim, "supported", f"found in {where}", score.value)
    scattered = not score.missing and (not score.contradiction or "matches the claim" in score.contradiction)
    detail = (f"its words are in {where} but not together in one sentence: the source does not state this (one "
              "sentence per fact, each as the source says it)" if scattered else
              f"{score.contradiction} ({where})" if score.contradiction else
              f"{where} does not say: {', '.join(repr(w) for w in score.missing[:6])}")
    return ClaimVerdict(claim, "weak_support", detail, score.value)


def _uncited(claim: Claim, facts: Facts, lang: str, evidence: Evidence, hint: bool = True) -> ClaimVerdict:
    best = 0.0
    for text in evidence.live:
        src = source_of(text, lang)
        score = score_of(facts, [src]).value
        if not number_problem(facts.numbers, [src]) and score >= LIVE_MIN_SUPPORT:
            return ClaimVerdict(claim, "live_data", "built from a live action result of this turn", score)
        best = max(best, score)
    advice = " and no live result of this turn says it"
    for cid, text in list(evidence.texts.items())[:12] if hint else ():
        src = source_of(text, lang)
        if not number_problem(facts.numbers, [src]) and score_of(facts, [src]).value >= needed(facts):
            advice = f"; {cid} seems to say it: cite it as [[cite:{cid}]]"
            break
    return ClaimVerdict(claim, "uncited", f"a factual claim without a citation{advice}", best)


def _contentless(claim: Claim, lang: str, evidence: Evidence, personal: bool = False) -> ClaimVerdict:
    """A claim without content words or numbers: a bare yes/no, a short name ('R&B'), or filler."""
    if personal and claim.citations:  # "Yes, I do.": no source says what the speaker does
        return ClaimVerdict(claim, "weak_support", "it speaks of the speaker ('I ...'): no source says that", 0.0)
    words = [w for w in _norm(claim.text).split() if w in POLARITY or w not in stopwords(lang)]
    if claim.citations and words and all(w in POLARITY for w in words):
        return ClaimVerdict(claim, "supported", "a bare yes/no: only its citation can be checked", 1.0)
    if not claim.citations or all(w in LIGHT for w in words):
        return ClaimVerdict(claim, "exempt", "no content words or numbers", 0.0)
    quoted = S_TOKEN.sub("", f" {NON_WORD.sub(' ', fold(claim.text)).strip()} ")
    if any(quoted in source_of(_text(evidence, c), lang).flat for c in claim.citations):
        return ClaimVerdict(claim, "supported", "written as the cited source writes it", 1.0)
    return ClaimVerdict(claim, "weak_support", "it says nothing the cited source confirms", 0.0)


def _stated(text: str, lang: str) -> tuple[str, bool, Facts]:
    """What the claim states (``core.grounding.framing``), whether it was asked, and its facts; the claim
    as written when its framing leaves fewer than ``MIN_STATED`` words and numbers ('I heard that the highest')."""
    core, asked = stated(text)
    facts = facts_of(core, lang)
    if core != text.strip() and len(facts.terms) + len(facts.numbers) < MIN_STATED:
        return text, False, facts_of(text, lang)
    return core, asked, facts


def _relevant(verdicts: list[ClaimVerdict], question: str | None, evidence: Evidence) -> list[ClaimVerdict]:
    """The verdicts, its supported claims marked off-question when none of them addresses the question."""
    names = asked_names(question or "")
    supported = [v for v in verdicts if v.verdict == "supported"]
    if not names or not supported or any(v.verdict == "live_data" for v in verdicts):
        return verdicts
    asked_in, missing = language_of(question, ""), {}
    for v in supported:
        texts = [v.claim.text, *(_text(evidence, c) for c in v.claim.citations)]
        if asked_in not in {language_of(t[:600], "") for t in texts}:
            return verdicts  # names are translated across languages ('Luther', 'Lutero'): not judged
        missing[v] = unaddressed(names, texts + [evidence.about.get(c, "") for c in v.claim.citations])
        if not missing[v]:
            return verdicts
    return [ClaimVerdict(v.claim, "off_question", f"neither it nor its source (text, title) mentions "
                         f"{', '.join(repr(n) for n in missing[v][:3])}, which the question asks about",
                         v.support) if v in missing else v for v in verdicts]


def check(answer: str, evidence: Evidence, exempt_sentences: Sequence[str] = (),
          question: str | None = None) -> GateVerdict:
    """Judge every claim of ``answer`` against what the tools of the conversation returned; with the
    ``question``, an answer whose supported claims all leave what it names unmentioned is off-question."""
    exempt = ({_norm(c.text) for s in exempt_sentences for c in split_claims(s)} | {_norm(s) for s in exempt_sentences}
              ) - {""}
    answer_lang = language_of(CITE.sub(" ", answer), "")
    if not answer_lang:  # too short to tell: the language of what it cites
        answer_lang = language_of(next((evidence.texts[c] for c in CITE.findall(answer) if c in evidence.texts), ""),
                                  "")
    out, uncited = [], 0
    for seg in segments(answer):
        claim, label = seg.claim, seg.label
        lang = language_of(claim.text, answer_lang, detector=False)
        invented = _invented(claim, answer[claim.start: claim.end], evidence)
        if invented:
            out.append(ClaimVerdict(claim, "invented_citation", invented, 0.0))
            continue
        core, asked, facts = _stated(claim.text, lang)
        reason = ("label" if label and (claim.kind == "table_cell" or not facts.numbers) else
                  "fixed message" if _norm(claim.text) in exempt else
                  None if facts.numbers else exemption(core if asked else claim.text, lang))
        live = bool(claim.citations) and all(c in evidence.live_ids for c in claim.citations)
        if live and reason == "fixed message" and set(claim.citations) <= evidence.live_empty:
            out.append(ClaimVerdict(claim, "live_data", "the fixed sentence saying an empty live result of this turn "
                                    "has nothing", 0.0))
        elif reason:
            out.append(ClaimVerdict(claim, "exempt", reason, 0.0))
        elif not facts.terms and not facts.numbers:
            out.append(_contentless(claim, lang, evidence, facts_of(claim.text, lang).personal))
        elif live:
            out.append(_live_cited(claim, facts, lang, evidence))
        elif claim.citations:
            out.append(_cited(claim, facts, lang, evidence))
        else:  # looking for the id to suggest costs a scoring per text: only for the first few
            out.append(_uncited(claim, facts, lang, evidence, hint=uncited < 5))
            uncited += out[-1].verdict == "uncited"
    return GateVerdict(tuple(_relevant(out, question, evidence)))


def release(answer: str) -> tuple[str, list[str]]:
    """``[[cite:ID]]`` markers become [1], [2]... by first appearance (same id, same number); the ordered ids.
    A run of sentences on one line citing the same source shows the marker once, at the end of the run."""
    ids: dict[str, int] = {}

    def number(match: re.Match) -> str:
        return f"[{ids.setdefault(match.group(1), len(ids) + 1)}]"

    text = re.sub(r"(\[\d+\])(?:\1)+", r"\1", CITE.sub(number, answer))
    # sentences of one line that cite the same source show its marker once, after the last of them
    text = re.sub(r" ?\[(\d+)\](?=[^\[\]\n]*\[\1\])", "", text)
    while "[[cite:" in text:  # a malformed marker is dropped, never shown
        text = MALFORMED.sub("", text).replace("[[cite:", "")
    return text, list(ids)
