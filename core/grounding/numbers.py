"""Numbers as a claim writes them and as a source states them, for the citation gate's value check.

Decimals in either convention (19,90 / 19.90), percentages, times, units and currencies, and number
words of es/pt/en up to the hundreds, read at the precision written: "30" is not "31", "2" is not "25".
"""
from __future__ import annotations

import re
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from core.base.language import fold


class Number(NamedTuple):
    """A number as written (folded); ``values`` are its readings (Decimals; ``"t<minutes>"`` for a time)."""

    surface: str
    values: frozenset
    unit: str | None
    start: int


_NUMBER = re.compile(  # tried only where a run of digits starts that is not glued to a word
    r"(?P<h>\d{1,2})(?::|h)(?P<m>\d{2})(?!\d)(?:\s?(?P<ap1>[ap])\.?\s?m\b\.?)?"
    r"|(?P<hh>\d{1,2})\s?(?:h|hs|hrs)(?!\w)"
    r"|(?P<h2>\d{1,2})\s?(?P<ap2>[ap])\.?\s?m\b\.?"
    r"|(?P<n>\d{1,3}(?:[.,]\d{3})+(?:[.,]\d+)?(?!\d)|\d+(?:[.,]\d+)?)")
_DIGITS = re.compile(r"\d+")
_DECADE = re.compile(r"\s?['’]?s\b")
_PERCENT = re.compile(r"\s?(?:%|por\s?cient|por\s?cent|percent|per\s?cent)")
_UNITS = {"day": "dia dias day days", "hour": "hora horas hour hours hr hrs h", "week": "semana semanas week weeks",
          "minute": "minuto minutos minute minutes min mins", "month": "mes meses month months",
          "year": "ano anos year years", "eur": "€ eur euro euros", "brl": "r$ brl real reais",
          "usd": "$ usd dolar dolares dollar dollars", "gbp": "£ gbp libra libras pound pounds"}
_UNIT_OF = {w: unit for unit, words in _UNITS.items() for w in words.split()}
_UNIT_AFTER = re.compile(r"\s?([€$£]|[^\W\d_]+\$?)")
_UNIT_BEFORE = re.compile(r"(r\$|us\$|[€$£]|eur|usd|brl|gbp)\s?$")
_ONES = {"en": "one two three four five six seven eight nine", "es": "uno dos tres cuatro cinco seis siete ocho nueve",
         "pt": "um dois tres quatro cinco seis sete oito nove"}
_TEENS = {"en": "ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen",
          "es": "diez once doce trece catorce quince dieciseis diecisiete dieciocho diecinueve",
          "pt": "dez onze doze treze catorze quinze dezesseis dezessete dezoito dezenove"}
_TENS = {"en": "twenty thirty forty fifty sixty seventy eighty ninety",
         "es": "veinte treinta cuarenta cincuenta sesenta setenta ochenta noventa",
         "pt": "vinte trinta quarenta cinquenta sessenta setenta oitenta noventa"}
_EXTRA = {  # ordinals from the third on, hundreds, spelling variants
    "en": "third:3 fourth:4 fifth:5 sixth:6 seventh:7 eighth:8 ninth:9 tenth:10 hundred:100",
    "es": "tercer:3 tercero:3 tercera:3 quinto:5 quinta:5 sexto:6 septimo:7 octavo:8 noveno:9 decimo:10 cien:100 "
          "veintiun:21 veintiuno:21 veintiuna:21 veintidos:22 veintitres:23 veinticuatro:24 veinticinco:25 "
          "veintiseis:26 veintisiete:27 veintiocho:28 veintinueve:29",
    "pt": "duas:2 terceiro:3 terceira:3 quinto:5 sexto:6 setimo:7 oitavo:8 nono:9 decimo:10 cem:100 quatorze:14 "
          "dezasseis:16 dezassete:17 dezanove:19"}
_AMBIGUOUS = frozenset({"dos", "once", "ten", "doce"})  # numbers in one language, other words in another
_ONE = frozenset({"one", "uno", "um", "un", "una", "uma"})  # articles more often: numbers only in '31' compounds


def _word_table(lang: str | None, source: bool) -> tuple[re.Pattern, dict[str, int], dict[str, int]]:
    """The number words of ``lang`` (of every language for a source: sources are read generously)."""
    words, parts = {}, {w: 1 for w in _ONE}
    for code in [lang] if lang in _ONES and not source else list(_ONES):
        ones = {w: i + 1 for i, w in enumerate(_ONES[code].split())}
        tens = {w: 20 + 10 * i for i, w in enumerate(_TENS[code].split())}
        words |= ones | tens | {w: i + 10 for i, w in enumerate(_TEENS[code].split())}
        words |= {w: int(v) for w, v in (pair.split(":") for pair in _EXTRA[code].split())}
        parts |= ones | tens
    own = set(_ONES.get(lang or "", "").split()) | set(_TEENS.get(lang or "", "").split())
    words = {w: v for w, v in words.items() if w not in _ONE and (w not in _AMBIGUOUS or w in own)}

    def alternation(keys) -> str:
        return "|".join(sorted(keys, key=len, reverse=True))

    tens = [w for w, v in parts.items() if v >= 20]
    ones = [w for w, v in parts.items() if v < 10]
    pattern = re.compile(rf"\b(?:(?P<t>{alternation(tens)})(?:\s*-\s*|\s+(?:y|e|and)\s+|\s+)(?P<o>{alternation(ones)})"
                         rf"|(?P<w>{alternation(words)}))\b")
    return pattern, words, parts


_TABLES = {(code, source): _word_table(code, source) for code in (*_ONES, None) for source in (False, True)}
_ONE_IN_RANGE = re.compile(r"\b(?P<w>one|uno|una|um|uma)\s*(?:-|–|to|or|a|o|ou|y|e)\s*(?P<next>\d+|[^\W\d_]+)\b")
_ALL_TENS = frozenset(w for line in _TENS.values() for w in line.split())
_WORD = re.compile(r"[^\W\d_]+")


@lru_cache(maxsize=512)
def _whole_word(word: str) -> re.Pattern:
    return re.compile(rf"\b(?P<w>{word})\b")


@lru_cache(maxsize=8192)
def _decimals(raw: str, lang: str | None) -> frozenset[Decimal]:
    """Readings of digits: '19,90' -> 19.90; '1.500' -> 1500 in es/pt, 1.5 in en, both when unknown."""
    seps = [c for c in raw if c in ".,"]
    if not seps:
        return frozenset({Decimal(raw)})
    if len(set(seps)) == 2:  # '1.500,50' / '1,500.50': the last one is the decimal separator
        return frozenset({Decimal(raw.replace("," if seps[-1] == "." else ".", "").replace(seps[-1], "."))})
    if len(seps) > 1:
        return frozenset({Decimal(raw.replace(seps[0], ""))})
    head, tail = raw.split(seps[0])
    thousands = {"es": ".", "pt": ".", "en": ","}.get(lang or "")
    if len(tail) != 3 or thousands not in (None, seps[0]):
        return frozenset({Decimal(f"{head}.{tail}")})
    return frozenset({Decimal(head + tail)} | ({Decimal(f"{head}.{tail}")} if thousands is None else set()))


def _unit(text: str, start: int, end: int) -> str | None:
    before = _UNIT_BEFORE.search(text, max(0, start - 4), start)
    if before:
        return _UNIT_OF.get(before.group(1).replace("us$", "$"))
    after = _UNIT_AFTER.match(text, end)
    return _UNIT_OF.get(after.group(1)) if after else None


def numbers(text: str, lang: str | None = None, source: bool = False, folded: bool = False) -> list[Number]:
    """Every number written in ``text`` (digits, times, percentages, number words), in order.

    A claim is read strictly (its language's number words); a ``source`` generously (every language's,
    both readings of an ambiguous '1.500'). ``folded``: the text is already ``fold``-ed."""
    folded_text = text if folded else fold(text)
    out: list[Number] = []
    consumed = 0
    for digits in _DIGITS.finditer(folded_text):
        at = digits.start()
        if at < consumed or (at and (folded_text[at - 1].isalnum() or folded_text[at - 1] == "_")):
            continue
        m = _NUMBER.match(folded_text, at)
        consumed = m.end()
        if m.group("n") is not None:
            values = _decimals(m.group("n"), None if source else lang)
            percent = _PERCENT.match(folded_text, m.end())
            values = values | {v / 100 for v in values} if percent else values
            if len(m.group("n")) == 2 and _DECADE.match(folded_text, m.end()):  # "the 70's": the 1970s
                values = values | {Decimal(1900 + int(m.group("n")))}
            unit = "percent" if percent else _unit(folded_text, m.start(), m.end())
            out.append(Number(m.group(0), values, unit, at))
            continue
        hour, minute = int(m.group("h") or m.group("hh") or m.group("h2")), int(m.group("m") or 0)
        hour += 12 if (m.group("ap1") or m.group("ap2")) == "p" and hour < 12 else 0
        out.append(Number(m.group(0),
                          frozenset({f"t{hour * 60 + minute}"} | ({Decimal(hour)} if not minute else set())),
                          "time", at))
    pattern, words, parts = _TABLES[(lang if lang in _ONES else None, source)]
    present = words.keys() & set(_WORD.findall(folded_text))
    if present:  # the whole-vocabulary regex only when a compound ('treinta y un') may be there
        found = (pattern.finditer(folded_text) if not present.isdisjoint(_ALL_TENS) else
                 (m for word in sorted(present) for m in _whole_word(word).finditer(folded_text)))
        for m in found:
            value = words[m.group("w")] if m.group("w") else parts[m.group("t")] + parts[m.group("o")]
            out.append(Number(m.group(0), frozenset({Decimal(value)}), _unit(folded_text, m.start(), m.end()),
                              m.start()))
    for m in _ONE_IN_RANGE.finditer(folded_text):  # 'one to three minutes': here 'one' is a number
        if m.group("next").isdigit() or m.group("next") in words:
            out.append(Number(m.group("w"), frozenset({Decimal(1)}), None, m.start()))
    out.sort(key=lambda n: n.start)
    return out


# ---------------------------------------------------------------- words that carry no facts
