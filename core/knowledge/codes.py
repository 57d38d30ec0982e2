"""Product and plan codes in a text ("Kripto-101", "SKU 4411-B", "XR-7", "A320neo", "LC-PRO"), language-independent.

A code is identity: "Kripto-101" and "Kripto-102" are different products however alike their sheets read, so
retrieval keeps a question naming a code to the sources that carry it (R2, R3). Pure, no I/O.

What counts as a code: a token mixing letters and digits ("A320neo", "XR7"); a hyphenated compound with a digit
and a letter part ("Kripto-101", "4411-B", "XR-7"); an all-capitals hyphenated compound ("LC-PRO"); a number right
after a label such as "SKU" or "Ref." ("SKU 4411"). Not codes: ordinary words, years, prices, phone numbers, dates,
ranges ("5-8"), quantities with a unit ("30kg", "24h", "100ml"), ordinals ("1º", "3rd"), dimensions ("30x40"),
clothing sizes ("S-M") and short generic tags ("4K", "5G"). Two spellings are the same code when they have the
same ``key``: upper case without separators ("Kripto-101", "KRIPTO101", "kripto 101" when spelled next to a
known code).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable

from core.base.language import content_words
from core.knowledge.keyword_index import terms

# a run of letters/digits, possibly joined by hyphens (a hyphen between two alphanumerics, not a dash)
_COMPOUND = re.compile(r"(?<![\w-])[^\W_]+(?:-[^\W_]+)*(?![\w-])")
# the compounds that may be codes (a digit, a hyphen or two capitals in them): the rest never reach ``is_code``
_CANDIDATE = re.compile(r"(?<![\w-])(?:[^\W\d_]*\d[^\W_]*|[^\W_]+(?=-[^\W_]))(?:-[^\W_]+)*(?![\w-])")
_LABEL = re.compile(
    r"\b(?:sku|ref|refs|referencia|refer[eê]ncia|reference|c[oó]d|c[oó]digo|code|part|pieza|pe[cç]a|art|"
    r"art[ií]culo|artigo|item|modelo|model)\b\.?\s*[:#]?\s*(\d{3,}(?:-[^\W_]+)*)(?![\w-])|\bn[º°]\s*(\d{3,})\b",
    re.IGNORECASE)
_LABEL_BEFORE = re.compile(
    r"\b(?:sku|ref|refs|referencia|refer[eê]ncia|reference|c[oó]d|c[oó]digo|code|n[º°])\.?\s*[:#]?\s*$", re.IGNORECASE)
_YEAR = re.compile(r"^(?:19|20)\d\d$")
# addresses are not product codes ("info@tienda24.es", "www.kripto101.com")
_ADDRESS = re.compile(r"\S+@\S+|\bhttps?://\S+|\bwww\.\S+|\b[\w-]+\.(?:com|es|pt|net|org|io|eu|br|info)\b",
                      re.IGNORECASE)
_DOMAIN_END = re.compile(r"\.(?:com|es|pt|net|org|io|eu|br|info)\b", re.IGNORECASE)
_CLOCK = re.compile(r"^\d{1,2}[hH]\d{0,2}$")
_UNITS = frozenset(
    "mg g gr grs kg kgs t lb lbs oz mm cm dm m km mi in ft ml cl dl l lt ltr cc m2 m3 "
    "s seg sec min mins h hr hrs hs d dia dias w kw kwh wh mah ah v mv hz khz mhz ghz db kb mb gb tb "
    "mbps gbps fps rpm px p k x eur usd euros reais brl uds ud u pcs pzs pack "
    "o a os as er ers ro ra rd st nd th to ta do da mo ma vo va no na".split())
_SIZES = frozenset("XXS XS S M L XL XXL XXXL 2XL 3XL 4XL".split())
_QUANTITY = re.compile(r"^(\d+(?:[.,]\d+)?)([^\W\d_]+)$")
_DIMENSIONS = re.compile(r"^\d+(?:[.,]\d+)?[xX×]\d+(?:[.,]\d+)?(?:[xX×]\d+(?:[.,]\d+)?)?[^\W\d_]*$")
_SHORT_TAG = re.compile(r"^\d{1,2}[^\W\d_]{1,2}$")  # 4K, 5G, 3D, 2FA: generic features, not one product
_SEPARATORS = re.compile(r"[\s\-./]+")
_DIGITS = re.compile(r"\d+")
#: question words say what kind of answer is wanted, not which question: left out when two questions are compared
_QUESTION_WORDS = frozenset(
    "cuanto cuanta cuantos cuantas cual cuales que como donde cuando quien quanto quanta quantos quantas qual quais "
    "onde quando quem how what when where which who much many".split())


@dataclass(frozen=True)
class Code:
    """A code as written (``text``), where it starts, and its identity (``key``)."""

    text: str
    key: str
    start: int


def key(code: str) -> str:
    """The identity of a code: upper case, separators dropped ("Kripto-101" -> "KRIPTO101")."""
    return _SEPARATORS.sub("", code).upper()


def _has_letter(part: str) -> bool:
    return any(ch.isalpha() for ch in part)


def _has_digit(part: str) -> bool:
    return any(ch.isdigit() for ch in part)


def _single_is_code(token: str) -> bool:
    """One token without hyphens: a code when it mixes letters and digits and is not a quantity or a tag."""
    if not (_has_letter(token) and _has_digit(token)) or len(token) < 2:
        return False
    quantity = _QUANTITY.match(token)
    if quantity and quantity.group(2).lower() in _UNITS:
        return False
    return not (_DIMENSIONS.match(token) or _SHORT_TAG.match(token) or _CLOCK.match(token))


def _numeric(part: str, first: bool) -> bool:
    """A number, a quantity with its unit ("24h"), or (after a number) a unit: the parts of a range or a measure."""
    quantity = _QUANTITY.match(part)
    return (part.isdigit() or (not first and part.lower() in _UNITS)
            or bool(quantity and quantity.group(2).lower() in _UNITS))


def is_code(token: str) -> bool:
    """Whether one token (hyphens allowed, no spaces) is a product or plan code."""
    parts = token.split("-")
    if len(parts) == 1:
        return _single_is_code(token)
    if all(p.isdigit() for p in parts):
        return False  # dates, phone numbers, ranges, ISBN-like runs
    if any(_has_digit(p) for p in parts):
        # "Kripto-101", "4411-B", "XR-7" — but not "10-kg" or "24-h" style quantities or "2-3x"
        return any(_has_letter(p) and (len(p) > 1 or p.isupper()) for p in parts) and not all(
            _numeric(p, i == 0) for i, p in enumerate(parts))
    # letters only: an all-capitals compound ("LC-PRO", "USB-C"), not words ("Wi-Fi") nor sizes ("S-M")
    letters = "".join(parts)
    return (token.isupper() and len(letters) >= 4 and any(len(p) >= 2 for p in parts)
            and not all(p in _SIZES for p in parts))


def find(text: str) -> list[Code]:
    """The codes a text names, in order of appearance, each once (by key)."""
    return list(_find(text or ""))


@lru_cache(maxsize=8192)
def _find(text: str) -> tuple[Code, ...]:
    """Cached: retrieval asks for the codes of the same chunks query after query."""
    found: dict[str, Code] = {}
    if "@" in text or "www." in text or "://" in text or _DOMAIN_END.search(text):
        text = _ADDRESS.sub(lambda m: " " * len(m.group(0)), text)
    for match in _CANDIDATE.finditer(text):
        token = match.group(0)
        if is_code(token):
            found.setdefault(key(token), Code(token, key(token), match.start()))
    if _DIGITS.search(text):
        for match in _LABEL.finditer(text):  # "SKU 4411", "Ref. 20931": a number a label calls a code
            group = 1 if match.group(1) else 2
            token = match.group(group)
            if not _YEAR.match(token):
                found.setdefault(key(token), Code(token, key(token), match.start(group)))
    return tuple(sorted(found.values(), key=lambda c: c.start))


def keys(text: str) -> frozenset[str]:
    """The keys of the codes a text names."""
    return frozenset(c.key for c in find(text))


def spelled(text: str, known: Iterable[str], max_tokens: int = 3) -> frozenset[str]:
    """The ``known`` keys that ``text`` spells with other separators ("kripto 101" for KRIPTO101): runs of up to
    ``max_tokens`` consecutive words whose concatenation is a known key with a digit in it."""
    wanted = {k for k in known if _has_digit(k) and all(run in (text or "") for run in _DIGITS.findall(k))}
    if not wanted:  # a spelled code has all its numbers in the text: most texts are ruled out here
        return frozenset()
    words = list(_COMPOUND.finditer(text or ""))
    out = set()
    for i in range(len(words)):
        joined = ""
        for j in range(i, min(i + max_tokens, len(words))):
            if j > i and text[words[j - 1].end():words[j].start()].strip():
                break  # only blanks between the words of one spelled code ("kripto 101", not "kripto, 101")
            joined += key(words[j].group(0))
            if joined in wanted:
                out.add(joined)
    return frozenset(out)


def without(text: str) -> str:
    """The text with its codes (and the labels before them: "SKU") taken out: what else a question asks."""
    out = text or ""
    for code in sorted(find(out), key=lambda c: -c.start):
        out = _LABEL_BEFORE.sub("", out[:code.start]) + out[code.start + len(code.text):]
    return out


def carries(text: str, code_keys: Iterable[str]) -> frozenset[str]:
    """Which of ``code_keys`` a text carries (named as a code, or spelled with other separators)."""
    wanted = frozenset(code_keys)
    return (keys(text) & wanted) | spelled(text, wanted - keys(text))


def asked(query: str, texts: Iterable[str]) -> dict[str, str]:
    """The codes a question names (key -> as written), also those ``texts`` name that the question spells with
    other separators ("kripto 101" for "Kripto-101")."""
    out = {c.key: c.text for c in find(query)}
    if any(ch.isdigit() for ch in query):
        known = {c.key: c.text for text in texts for c in find(text) if c.key not in out}
        out.update({k: known[k] for k in spelled(query, known)})
    return out


def about_others(carried: dict[str, frozenset[str]], texts: dict[str, str]) -> dict[str, list[str]]:
    """Of ``texts`` (by id), those about another code (they name codes, none of them asked), with the codes they
    name — when some text carries an asked code (``carried``: id -> asked keys it carries). When none does there
    is nothing to prefer and nothing is barred: the caller reports the asked codes missing instead."""
    if not any(carried.values()):
        return {}
    return {tid: names for tid, text in texts.items() if not carried.get(tid)
            if (names := [c.text for c in find(text)])}


def same_question(query: str, question: str, lang: str, product: Iterable[str] = ()) -> bool:
    """Whether two questions ask the same thing once their codes, and the words naming the ``product`` (the
    titles of its texts: "Tienda de campaña QS-2"), are taken out: they share most of what is left (Jaccard >=
    1/2; nothing left on either side is the same question). An embedder finds two questions naming one code
    close whatever else they ask ("¿Cuánto pesa el X-1?" and "¿En qué tallas está el X-1?" score above a
    close-match threshold), so with a code the rest of the question decides."""
    def asks(text: str) -> set[str]:
        return {t for w in content_words(without(text), lang) if w not in _QUESTION_WORDS for t in terms(lang, w)}
    naming = set().union(*(asks(title) for title in product))
    one, two = asks(query) - naming, asks(question) - naming
    return not (one | two) or len(one & two) / len(one | two) >= 0.5
