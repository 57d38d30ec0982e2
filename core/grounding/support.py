"""Support scoring for the gate (A3): whether a claim's words and numbers are found together in a source.

Claim words are stemmed (Snowball, before folding: 'devolución' -> 'devolu'); source words are not:
a source word supports a stem when it starts with it, so a fresh 1,600-character source costs one
pass of string operations instead of a stemmer call per word. A claim word is also found as a word
of its group in ``core.grounding.lexicon`` ("called" ~ "nicknamed", "US" ~ "United States"; a name is
never found as a synonym), and the "born" or "died" of a dated claim in a life span ("(1935 – 1977)"); a
claim in the first person ("I'm from Ireland") is not supported by a source sentence that is not. Pure;
caches are only memoization.
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import Mapping, Sequence

from whoosh.lang import NoStemmer, stemmer_for_language

from core.base.language import fold, stopwords
from core.base.text import sentences
from core.grounding.claims import LIGHT, NEGATIONS, language_of, name_phrases, proper_nouns
from core.grounding.lexicon import life_event, related
from core.grounding.numbers import Number, numbers

#: share of a claim's words and numbers that must be found together in the cited text (tuned on dev)
MIN_SUPPORT = 0.8
#: a claim of at most this many words and numbers must be found whole: one missing word is a fifth of it
STRICT_UPTO = 6
#: a claim found across a sentence and the one continuing it counts a little less than in one sentence
PAIR_DISCOUNT = 0.9
#: a live result is a terse record (often JSON with English keys): a lower word bar, every number must match
LIVE_MIN_SUPPORT = 0.5
#: multiplier when claim and source sentence disagree on negation, or a name is not there as written
CONTRADICTION = 0.5

TOKEN = re.compile(r"(?<![^\W_])[^\W\d_]+")  # letters opening a word: not the "rd" of "23rd", nor the "neo" of "Q25neo"
NON_WORD = re.compile(r"[\W_]+")
S_TOKEN = re.compile(r" s(?= )")  # the possessive 's
_NOT = re.compile(r"n['’]t\b")
# not 'not-for-profit'
_NEGATION = re.compile(r"(?<![\w-])(?:%s)(?![\w-])" % "|".join(sorted(NEGATIONS)))  # noqa: UP031 - formatting-only pass
_NEG_SCOPE = 4  # words after a negation that it denies
#: a sentence opening with one of these continues the previous one ("It opens at 10:00.")
ANAPHORS = frozenset("he she it they his her its their this these those ella ellos ellas este esta estos estas ese "
                     "esa su sus ele ela eles elas seu sua seus suas isso isto esse essa".split())
#: the speaker's own words: a source never tells about whoever answers from it ("I'm from Ireland")
_FIRST_PERSON = {"en": frozenset("i me my mine myself".split()), "es": frozenset("yo conmigo".split()),
                 "pt": frozenset("eu meu minha meus minhas comigo".split())}
_ANY_FIRST_PERSON = frozenset().union(*_FIRST_PERSON.values())
#: "(January 8, 1935 – August 16, 1977)": when someone was born and died
_LIFE_SPAN = re.compile(r"\([^()]{0,60}?\b\d{3,4}\b[^()]{0,40}?(?:–|—|-|\bto\b)[^()]{0,40}?\b\d{3,4}\b[^()]{0,20}\)")
_CAPITAL_INSIDE = re.compile(r"(?<=[\w,;] )[A-ZÁÉÍÓÚÑÇÃÕÂÊÔÀÜ]")
_MAX_SUFFIX = 8  # 'intern' ~ 'international'; a stem of four letters or fewer takes three
_STEMS: dict[str, dict[str, str | None]] = {}


@lru_cache(maxsize=16)
def _stemmer(lang: str):
    try:
        return stemmer_for_language(lang)
    except NoStemmer:  # a language without a stemmer: words stay as written
        return lambda word: word


def _stem(lang: str, word: str) -> str | None:
    """The folded stem of a lower-case word; None for stop words, negations and framing words."""
    memo = _STEMS.setdefault(lang, {})
    if word not in memo:
        folded = fold(word)
        keep = len(folded) >= 2 and folded not in LIGHT and folded not in NEGATIONS and folded not in stopwords(lang)
        stem = (fold(_stemmer(lang)(word)) or folded) if keep else None
        if len(memo) >= 200_000:  # a bound far above a tenant's vocabulary
            memo.clear()
        memo[word] = stem
    return memo[word]


def _words(text: str) -> list[str]:
    return TOKEN.findall(_NOT.sub(" not", text.lower()))


def _matches(stem: str, word: str, lang: str, folded_stem: str | None = None) -> bool:
    """A (folded) source word supports a claim stem when it extends it by a short suffix ('plaz' ~ 'plazos'),
    by a long one when it stems alike ('sirv' ~ 'sirvieron', 'educ' ~ 'educacao'), or differs only in the
    stem's last letter ('devolu' ~ 'devolver', 'juli' ~ 'july')."""
    if word.startswith(stem):  # source words are folded: their stem is compared with the folded claim word's
        return len(word) - len(stem) <= (_MAX_SUFFIX if len(stem) > 4 else 3) or _stem(lang, word) in (
            stem, folded_stem)
    return (len(stem) >= 5 or stem.endswith("i")) and word[: len(stem) - 1] == stem[:-1]


# ---------------------------------------------------------------- sources and claims, read once
@dataclass(frozen=True)
class Source:
    sentences: tuple[str, ...]
    folded: tuple[str, ...]  # " word word ... " per sentence
    continues: tuple[bool, ...]  # readable with the previous sentence: opens with an anaphor, or adds no names
    flat: str  # every folded word: where names of several words are looked up
    negated: tuple[frozenset[str], ...]  # the words a negation of the sentence denies
    negative: tuple[bool, ...]
    personal: tuple[bool, ...]  # speaks in the first person singular
    life_span: frozenset[int]  # sentences giving someone's years of birth and death
    numbers: tuple[tuple[Number, int], ...]  # (number, sentence index)
    by_value: Mapping[object, tuple[tuple[str | None, int], ...]]  # reading -> (unit, sentence index)
    text: str  # the sentences joined by "\x00", as written (numbers' offsets point into it)
    lang: str


@lru_cache(maxsize=512)
def source_of(text: str, lang: str) -> Source:
    parts = sentences(text) or [""]
    folded = [_NOT.sub(" not", fold(p)) for p in parts]
    spaced = [f" {NON_WORD.sub(' ', f).strip()} " for f in folded]
    continues = [i > 0 and (w[1: w.find(" ", 1)] in ANAPHORS or not _CAPITAL_INSIDE.search(p))
                 for i, (p, w) in enumerate(zip(parts, spaced))]
    marks = [list(_NEGATION.finditer(f)) for f in folded]
    negated = [frozenset(w for m in ms for w in NON_WORD.sub(" ", f[m.end(): m.end() + 80]).split()[:_NEG_SCOPE])
               for f, ms in zip(folded, marks)]
    joined, starts = "\x00".join(folded), [0]  # "\x00": a unit of one sentence never reaches the next
    for f in folded[:-1]:
        starts.append(starts[-1] + len(f) + 1)
    nums = [(n, bisect_right(starts, n.start) - 1) for n in numbers(joined, lang, source=True, folded=True)]
    by_value: dict[object, list[tuple[str | None, int]]] = {}
    for n, i in nums:
        for value in n.values:
            by_value.setdefault(value, []).append((n.unit, i))
    original = "\x00".join(parts)
    return Source(tuple(parts), tuple(spaced), tuple(continues), S_TOKEN.sub("", "".join(spaced)), tuple(negated),
                   tuple(bool(m) for m in marks),
                   tuple(bool(_ANY_FIRST_PERSON.intersection(w.split())) for w in spaced),
                   frozenset(i for i, p in enumerate(parts) if _LIFE_SPAN.search(p)),
                   tuple(nums), {k: tuple(v) for k, v in by_value.items()},
                   original if len(original) == len(joined) else joined, lang)


@dataclass(frozen=True)
class Facts:
    terms: Mapping[str, str]  # stem -> the word as written
    folded_stems: Mapping[str, str | None]  # stem -> the stem of the word folded (as source words are)
    names: frozenset[str]  # stems of proper nouns
    alternatives: Mapping[str, tuple[str, ...]]  # stem -> stems that say the same (phrases have a space)
    phrases: tuple[tuple[str, ...], ...]  # names of several words, folded
    numbers: tuple[Number, ...]
    negative: bool
    personal: bool


@lru_cache(maxsize=1024)
def facts_of(text: str, lang: str) -> Facts:
    terms: dict[str, str] = {}
    for word in _words(text):
        stem = _stem(lang, word)
        if stem:
            terms.setdefault(stem, word)
    names = frozenset(s for n in proper_nouns(text) for w in _words(n) if (s := _stem(lang, w)))
    folded_stems = {t: _stem(lang, fold(w)) for t, w in terms.items()}
    alternatives = {t: alt for t, w in terms.items() if (alt := related(t, w, lang, _stem, t in names))}
    return Facts(terms, folded_stems, names & terms.keys(), alternatives, tuple(name_phrases(text)),
                  tuple(numbers(text, lang)),
                  bool(_NEGATION.search(_NOT.sub(" not", fold(text)))),
                  bool(_FIRST_PERSON.get(lang, _FIRST_PERSON["en"]).intersection(_words(text))))


def _sentences_with(stem: str, folded_stem: str | None, src: Source) -> frozenset[int]:
    key = " " + (stem[:-1] if len(stem) >= 5 or stem.endswith("i") else stem)
    found = []
    for i, words in enumerate(src.folded):
        at = words.find(key)
        while at >= 0 and not _matches(stem, words[at + 1: words.find(" ", at + 1)], src.lang, folded_stem):
            at = words.find(key, at + 1)
        if at >= 0:
            found.append(i)
    return frozenset(found)


def _found(term: str, facts: Facts, src: Source) -> frozenset[int]:
    """Sentences saying the claim's word, as written or as a word of its group (``core.grounding.lexicon``)."""
    found = _sentences_with(term, facts.folded_stems[term], src)
    if src.life_span and facts.numbers and life_event(term, src.lang, _stem):  # with its date: 'born in 1935'
        found |= src.life_span
    for alt in facts.alternatives.get(term, ()):
        found |= (frozenset(i for i, words in enumerate(src.folded) if f" {alt} " in words) if " " in alt else
                  _sentences_with(alt, None, src))
    return found


def _located(number: Number, src: Source) -> frozenset[int]:
    """Sentences holding the number with a compatible unit (none written on either side, or the same)."""
    return frozenset(i for value in number.values for unit, i in src.by_value.get(value, ())
                     if number.unit is None or unit is None or unit == number.unit)


def _distance(a: Number, b: Number) -> tuple[int, Decimal]:
    same = 0 if a.values & b.values else 1
    x = next((v for v in a.values if isinstance(v, Decimal)), None)
    y = next((v for v in b.values if isinstance(v, Decimal)), None)
    return same, abs(x - y) if x is not None and y is not None else Decimal("Infinity")


def number_problem(claim_numbers: Sequence[Number], sources: Sequence[Source]) -> str:
    """'' when every number is confirmed, else the first that is not and what the source says instead."""
    for number in claim_numbers:
        if any(_located(number, src) for src in sources):
            continue
        found = [(n, src) for src in sources for n, _i in src.numbers]
        pool = [(n, s) for n, s in found if number.unit and n.unit == number.unit] or found
        if not pool:
            return f"{number.surface}|the source has no numbers"
        near, src = min(pool, key=lambda p: _distance(number, p[0]))
        said = re.match(r"[^\s\x00]+(?:[ \t]?[€$£%])?(?:[ \t]+[^\W\d_]+)?", src.text[near.start:])
        return f"{number.surface}|the source says {said.group(0) if said else near.surface}"
    return ""


# ---------------------------------------------------------------- support
@dataclass(frozen=True)
class _Score:
    value: float
    missing: tuple[str, ...]  # claim words found nowhere in the cited texts
    contradiction: str  # why polarity or names disagree, or ""


def score_of(facts: Facts, sources: Sequence[Source]) -> _Score:
    items = [*facts.terms, *(f"#{k}" for k in range(len(facts.numbers)))]
    if not items:
        return _Score(1.0, (), "")
    best, best_matched, why = 0.0, frozenset(), ""
    anywhere: set[str] = set()
    union: set[str] = set()
    for src in sources:
        per: dict[int, set[str]] = {}
        for t in facts.terms:
            for i in _found(t, facts, src):
                per.setdefault(i, set()).add(t)
        for k, number in enumerate(facts.numbers):
            for i in _located(number, src):
                per.setdefault(i, set()).add(f"#{k}")
        anywhere.update(*per.values())
        windows = [((i,), 1.0, per[i]) for i in per] + [
            ((i - 1, i), PAIR_DISCOUNT, per.get(i - 1, set()) | per.get(i, set()))
            for i in range(1, len(src.sentences)) if src.continues[i] and (i in per or i - 1 in per)]
        windows.sort(key=lambda w: -w[1] * len(w[2]))
        src_best, src_matched = -1.0, frozenset()
        for window, factor, matched in windows:
            value = factor * len(matched) / len(items)
            if value <= src_best:
                break  # sorted, and a contradiction only lowers a value
            reason = _disagreement(facts, src, window, matched, per)
            value *= CONTRADICTION if reason else 1.0
            if value > src_best:
                src_best, src_matched = value, frozenset(matched)
                if value > best or not why and value == best:
                    best, best_matched, why = value, src_matched, reason
        union |= src_matched
    if len(union) > len(best_matched) and PAIR_DISCOUNT * len(union) / len(items) > best:
        best, why = PAIR_DISCOUNT * len(union) / len(items), ""  # each cited text says its part
    lost = [" ".join(p) for p in facts.phrases if not any(_phrase(p).search(src.flat) for src in sources)]
    if lost:
        best, why = best * CONTRADICTION, f"the name {lost[0]!r} is not written that way in the source"
    missing = tuple(facts.terms[t] for t in facts.terms if t not in anywhere)
    return _Score(round(best, 4), missing, why)


def needed(facts: Facts) -> float:
    """Short claims must be found whole (one sentence, or a continued pair); longer ones mostly."""
    if len(facts.terms) + len(facts.numbers) <= STRICT_UPTO:
        return max(MIN_SUPPORT, PAIR_DISCOUNT)
    return MIN_SUPPORT


@lru_cache(maxsize=2048)
def _phrase(words: tuple[str, ...]) -> re.Pattern:
    """A name as a source may write it: in order, one extra word allowed between two ('Peyton Williams
    Manning'), endings of long words free ('Southern Baptist' ~ 'Southern Baptists')."""
    parts = [re.escape(w[:-2]) + r"\w{0,4}" if len(w) >= 5 else re.escape(w) for w in words]
    return re.compile(" " + r" (?:\w+ )?".join(parts) + " ")


def _disagreement(facts: Facts, src: Source, window: tuple[int, ...], matched: set[str],
                  per: Mapping[int, set[str]]) -> str:
    absent = [facts.terms[n] for n in facts.names if n not in matched]
    if absent:
        return f"the name {absent[0]!r} is not in the sentence of the source that matches the claim"
    if len(window) == 2:  # a number from the neighbour sentence, while the main one states its own value
        said = {i: sum(not t.startswith("#") for t in per.get(i, ())) for i in window}
        main = max(window, key=lambda i: (said[i], i))
        stated = frozenset().union(*(n.values for n in facts.numbers))
        rival = {n.unit for n, i in src.numbers if i == main and not n.values & stated}
        stray = [n.surface for k, n in enumerate(facts.numbers)
                 if f"#{k}" in matched and f"#{k}" not in per.get(main, ()) and n.unit in rival]
        if stray:
            return f"{stray[0]} is in the source, but the sentence that says the rest gives another value"
    if facts.personal and not any(src.personal[i] for i in window):
        return "the claim speaks of the speaker ('I', 'my'); the source does not"
    if facts.negative and not any(src.negative[i] for i in window):
        return "the claim is negative but the matching source sentence is not"
    if not facts.negative and any(_matches(t, w, src.lang) for i in window for w in src.negated[i] for t in matched
                                  if not t.startswith("#")):
        return "the matching source sentence is negative but the claim is not"
    return ""


# ---------------------------------------------------------------- the gate
def support_score(claim_text: str, source_text: str, lang: str) -> float:
    """Best share of the claim's words and numbers found together in the source (0..1), discounted for
    two-sentence matches, negation disagreement and names not written as in the source."""
    return score_of(facts_of(claim_text, lang), [source_of(source_text, lang)]).value


def numbers_confirmed(claim_text: str, source_text: str, lang: str | None = None) -> tuple[bool, str]:
    """Whether every number of the claim is in the source at the precision written, and why not."""
    lang = lang or language_of(claim_text, language_of(source_text, ""))
    claim_numbers = numbers(claim_text, lang or None)
    problem = number_problem(claim_numbers, [source_of(source_text, lang)])
    if not problem:
        return True, f"{len(claim_numbers)} number(s) confirmed" if claim_numbers else "no numbers to confirm"
    value, said = problem.split("|", 1)
    return False, f"{value} is not in the source; {said}"
