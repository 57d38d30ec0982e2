"""What an answer claims: its claims and their citations, the numbers they write, and which carry no facts.

Pure text analysis for the citation gate (A3, ``core.grounding``). An answer is cut into claims
(sentences, list items, table cells), each keeping the ``[[cite:ID]]`` markers that end it. Numbers
are read at the precision written (decimals in either convention, percentages, times, units, number
words of es/pt/en). A small per-language vocabulary says which sentences carry no facts (greetings,
thanks, closings, transitions, questions) and which words frame a fact without being one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from functools import lru_cache
from typing import NamedTuple

from whoosh.lang import stopwords_for_language

from core.language import ANALYZED, DETECTABLE, detect, fold, stopwords

CITE = re.compile(r"\[\[cite:([^\[\]\s]+)\]\]")  # '[' never in an id: matching stays linear on '[[cite:[[cite:...'
#: what looks like a marker but is not a valid one ("[[cite: a1]]", "[[cite:", "[[ Cite:x]]")
MALFORMED = re.compile(r"\[\[\s*cite\s*:[^\[\]]*(?:\]\]?)?", re.IGNORECASE)
_MARKER_SPACE = re.compile(r"[ \t]{0,8}\[\[\s*cite\s*:[^\[\]]*\]\]", re.IGNORECASE)  # malformed ones too


@dataclass(frozen=True)
class Claim:
    """One checkable unit of an answer; ``answer[start:end]`` is its span (its markers included)."""

    text: str
    citations: tuple[str, ...]
    kind: str  # "sentence" | "list_item" | "table_cell"
    start: int
    end: int


class Segment(NamedTuple):
    claim: Claim
    label: bool = False  # a table header cell or a markdown heading


# ---------------------------------------------------------------- claims
_LIST_ITEM = re.compile(r"[ \t]*(?:[-*•+]|\d{1,3}[.)])[ \t]+")
_HEADING = re.compile(r"[ \t]*#{1,6}[ \t]+")
_TABLE_SEPARATOR = re.compile(r"\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*")
# a terminator, closing quotes or brackets, the markers that end the sentence, then space or the end
_BOUNDARY = re.compile(r"(?<![.!?…])[.!?…]+[\"'»”’)\]]*(?:[ \t]*\[\[[^\[\]\n]*\]\])*(?=\s|$)")
_SOURCE_BREAK = re.compile(r"(?<![.!?…])[.!?…]+[\"'»”’)\]]*(?=\s)|\n|(?<=[a-z0-9)\]])[.!?](?=[A-Z¿¡][a-z])"
                           r"|(?<=[A-Z])[.!?](?=[A-Z][a-z])")  # 'century.First', 'IU.Lee': a lost space
_NEVER_END = frozenset("p ej e.g i.e p.ej sr sra sres dr dra lic ing aprox approx num nº n.º art pag pág vs cf "
                       "fig tel av avda ud uds vd vds prof mr mrs ms st máx max mín min ref obs".split())
_ABBREVIATION = re.compile(r"[^\W\d_]+(?:\.[^\W\d_]+)+")  # 'e.g', 'ph.d', 'u.s'
_MARKUP = re.compile(r"\*\*|__|`")


def _clean(text: str) -> str:
    """Claim text: markers (and the space before them) out, inline markup out, spacing tidied."""
    return re.sub(r"\s+", " ", _MARKUP.sub("", _MARKER_SPACE.sub("", text))).strip()


def _is_boundary(text: str, start: int, end: int, lower_may_start: bool = False) -> bool:
    """Whether the terminator text[start:end] ends a sentence ('p. ej.', 'J. K.', 'Ph.D.' do not).

    In an answer a lower-case next word means an abbreviation we do not know: cutting there would
    leave half a claim without its citation. Sources may be lower-cased text: there it cuts."""
    if any(c in text[start:end] for c in "!?…") or text.startswith("..", start):
        return True
    before = text[max(0, start - 24): start].rsplit(None, 1)
    word = fold(before[-1]).lstrip("(¿¡\"'") if before else ""
    if word in _NEVER_END or (len(word) == 1 and word.isalpha()) or _ABBREVIATION.fullmatch(word):
        return False
    return lower_may_start or not text[end: end + 40].lstrip()[:1].islower()


def sentences(text: str) -> list[str]:
    """The sentences of a source text (also where extraction lost the space: 'century.First')."""
    out, cursor = [], 0
    for m in _SOURCE_BREAK.finditer(text):
        if m.group(0) == "\n" or _is_boundary(text, m.start(), m.end(), lower_may_start=True):
            out.append(text[cursor: m.end()])
            cursor = m.end()
    out.append(text[cursor:])
    return [s.strip() for s in out if s.strip()]


def _claim(answer: str, a: int, b: int, kind: str) -> Claim:
    piece = answer[a:b]
    return Claim(_clean(piece), tuple(dict.fromkeys(CITE.findall(piece))), kind, a, b)


def _sentences(answer: str, start: int, end: int) -> list[Claim]:
    cuts, cursor = [], start
    for m in _BOUNDARY.finditer(answer, start, end):
        if _is_boundary(answer, m.start(), m.end()):
            cuts.append((cursor, m.end()))
            cursor = m.end()
    cuts.append((cursor, end))
    out = []
    for a, b in cuts:
        a += len(answer[a:b]) - len(answer[a:b].lstrip())
        if a < b:
            out.append(_claim(answer, a, b, "sentence"))
    return out


def _cells(answer: str, start: int, end: int, label: bool) -> list[Segment]:
    row = answer[start:end]
    bars = [i for i, c in enumerate(row) if c == "|" and (i == 0 or row[i - 1] != "\\")]
    if bars[-1] != len(row.rstrip()) - 1:
        bars.append(len(row))
    row_cites = tuple(dict.fromkeys(CITE.findall(row)))
    out = []
    for a, b in zip(bars, bars[1:]):
        piece = row[a + 1: b]
        if _clean(piece) or CITE.search(piece):
            lead, trail = len(piece) - len(piece.lstrip()), len(piece.rstrip())
            claim = _claim(answer, start + a + 1 + lead, start + a + 1 + trail, "table_cell")
            if not claim.citations:  # a cell without markers takes its row's
                claim = Claim(claim.text, row_cites, claim.kind, claim.start, claim.end)
            out.append(Segment(claim, label))
    return out


def _extend(out: list[Segment], end: int, cites: tuple[str, ...]) -> None:
    """Markers standing alone (on their own line, after the last period) end the previous claim."""
    prev = out[-1].claim
    out[-1] = Segment(Claim(prev.text, tuple(dict.fromkeys(prev.citations + cites)), prev.kind, prev.start, end),
                      out[-1].label)


def segments(answer: str) -> list[Segment]:
    """The claims of ``answer`` in order, table header cells and markdown headings marked as labels."""
    lines, pos = [], 0
    for raw in answer.splitlines(keepends=True):
        body = raw.rstrip("\r\n")
        lines.append((pos, pos + len(body), body))
        pos += len(raw)
    out: list[Segment] = []
    for i, (a, b, body) in enumerate(lines):
        if not body.strip():
            continue
        if body.lstrip().startswith("|"):
            nxt = lines[i + 1][2] if i + 1 < len(lines) else ""
            if not _TABLE_SEPARATOR.fullmatch(body):
                out.extend(_cells(answer, a, b, bool(_TABLE_SEPARATOR.fullmatch(nxt)) and "-" in nxt))
            continue
        heading, item = _HEADING.match(body), _LIST_ITEM.match(body)
        if item and not heading:
            if _clean(body[item.end():]):
                out.append(Segment(_claim(answer, a + item.end(), b, "list_item")))
            elif CITE.search(body) and out:
                _extend(out, b, tuple(CITE.findall(body)))
            continue
        for claim in _sentences(answer, a + (heading.end() if heading else 0), b):
            if not claim.text and out:
                _extend(out, claim.end, claim.citations)
            elif claim.text:
                out.append(Segment(claim, bool(heading)))
    return out


def split_claims(answer: str) -> list[Claim]:
    """Sentences, list items and table cells of ``answer``, each with the citation markers it ends with."""
    return [s.claim for s in segments(answer)]


# ---------------------------------------------------------------- language
_OWN_STOPS = {lang: frozenset(stopwords_for_language(lang)).difference(
    *(stopwords_for_language(o) for o in ANALYZED if o != lang)) for lang in ANALYZED}


def language_of(text: str, fallback: str, detector: bool = True) -> str:
    """es/pt/en when their own stop words clearly tell ('el'/'del' vs 'o'/'do' vs 'the'); else (with
    ``detector``) ``core.language.detect`` on a text of 4+ words; else ``fallback``."""
    words = set(re.findall(r"[^\W\d_]+", text.lower()))
    votes = sorted(((len(words & own), lang) for lang, own in _OWN_STOPS.items()), reverse=True)
    if votes[0][0] >= 2 and votes[0][0] >= 2 * votes[1][0]:
        return votes[0][1]
    found = _detect(text[:600]) if detector and len(words) >= 4 else ""
    return found if found in DETECTABLE else fallback


@lru_cache(maxsize=4096)
def _detect(text: str) -> str:
    return detect(text)


# ---------------------------------------------------------------- numbers
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
            unit = "percent" if percent else _unit(folded_text, m.start(), m.end())
            out.append(Number(m.group(0), values, unit, at))
            continue
        hour, minute = int(m.group("h") or m.group("hh") or m.group("h2")), int(m.group("m") or 0)
        hour += 12 if (m.group("ap1") or m.group("ap2")) == "p" and hour < 12 else 0
        out.append(Number(m.group(0), frozenset({f"t{hour * 60 + minute}"} | ({Decimal(hour)} if not minute else set())),
                          "time", at))
    pattern, words, parts = _TABLES[(lang if lang in _ONES else None, source)]
    present = words.keys() & set(_WORD.findall(folded_text))
    if present:  # the whole-vocabulary regex only when a compound ('treinta y un') may be there
        found = (pattern.finditer(folded_text) if not present.isdisjoint(_ALL_TENS) else
                 (m for word in sorted(present) for m in _whole_word(word).finditer(folded_text)))
        for m in found:
            value = words[m.group("w")] if m.group("w") else parts[m.group("t")] + parts[m.group("o")]
            out.append(Number(m.group(0), frozenset({Decimal(value)}), _unit(folded_text, m.start(), m.end()), m.start()))
        out.sort(key=lambda n: n.start)
    return out


# ---------------------------------------------------------------- words that carry no facts
def _words_of(*lines: str) -> frozenset[str]:
    return frozenset(fold(w) for line in lines for w in line.split())


#: claim words that frame a fact without being one: modal verbs, answer particles, discourse fillers
LIGHT = _words_of("sí si yes sim claro correct correcto correcta correto exactly exacto exactamente indeed both "
                  "ambos ambas puede puedes pueden podemos podrá podrás poder podría podrías pode podem podes posso "
                  "poderá could may might must should would also además asimismo actualmente currently however "
                  "simplemente simply just solo apenas então entonces therefore please recuerda lembre remember "
                  "note nota yeah yea yep yup ok okay oh wow well hmm ah vale pues actually really realmente "
                  "efectivamente certainly ciertamente certamente true right fact even incluso interesting "
                  "interesante interessante")
#: a claim made only of these is a bare answer to a question ("Sí.", "No.")
POLARITY = _words_of("yes no sí si sim não claro correct correcto correcta correto correta exacto exacta exato "
                     "exata exactly indeed right true false verdadero falso verdade")
NEGATIONS = _words_of("no not never nunca jamás jamais não nem ni nor none nobody nothing nadie ninguno ninguna "
                      "ningún nenhum nenhuma ninguém nada cannot")
GREETINGS = _words_of("hola buenas buenos buen bom boa hello hi hey greetings olá oi saludos dear estimado estimada "
                      "prezado prezada querido querida welcome bienvenido bienvenida good gracias thanks thank "
                      "obrigado obrigada agradezco agradecemos agradeço muchas muito many")  # what a greeting opens with
# word families (a trailing '*' is a prefix) that only carry courtesy: greetings, thanks, closings, offers
_SOCIAL = _words_of(
    "hola buen buena buenas buenos dia dias tarde tardes noche noches gracias muchas agradec* esper* ojala ayud* alegr* encant* "
    "gusto placer saludo* cordial* atentamente duda* dudes dudar pregunta* escrib* contact* disposicion quedo quedamos "
    "servir* algo mas otra otro claro supuesto entiend* mensaje tengas tenga excelente perfecto genial consulta* "
    "necesit* interes* avisame dime digame confianza confiar soporte atencion cliente clientes equipo pacien*",
    "ola oi bom boa muito obrigad* ajud* prazer cumpriment* atenciosamente duvida* pergunta* escrev* contat* disposicao "
    "fico ficamos outra outro entend* mensagem tenha perfeito precis* suporte atendimento",
    "hello hi hey there many thanks good morning afternoon evening day thank* hope* help* glad happy pleasure regards best "
    "sincerely cordially question* let know hesitate write contact* reach* further anything else great nice wonderful "
    "again nuevo novo "
    "perfect sure certainly course understand message support assist* welcome feel free ask need today team amazing "
    "awesome cool interesting incredible increible interesante interessante fantastic fantastico wow")
# word families of a transition that announces what follows ("Esto es lo que encontré:")
_TRANSITION = _words_of(
    "aqui aca encontr* detalle* informacion resumen siguiente* continuacion abajo opcion opciones paso pasos mira ver "
    "veamos vamos respecto respuesta documentacion fuente* segun acuerdo punto puntos clave explic* cuento datos "
    "relevante* importante* tienes tiene dejo comparto tema asunto articulo guia",
    "encontrei detalhe* informacao resumo seguinte* abaixo opcao opcoes passo passos resposta documentacao fonte* "
    "conto dados tem temos deixo compartilho assunto artigo",
    "here found find detail* information info summary following next below option* step* see look regarding answer "
    "documentation source* according point* key explain tell data relevant important share topic article guide")
SOCIAL = (frozenset(w for w in _SOCIAL if not w.endswith("*")), tuple(w[:-1] for w in _SOCIAL if w.endswith("*")))
TRANSITIONS = (frozenset(w for w in _TRANSITION if not w.endswith("*")),
               tuple(w[:-1] for w in _TRANSITION if w.endswith("*")))
_STOP = stopwords("en") | _words_of("si if you your você vocês im lets dont puedo puedes pode posso can could would "
                                    "please por favor ter")
# a capitalised word not glued to a word and not opening a clause (after ': ', '. ', '"', '(')
_NAME = re.compile(r"(?<![\w'’])(?<![:.!?\"«“(])(?<![:.!?\"«“(]\s)[A-ZÁÉÍÓÚÑÇÃÕÂÊÔÀÜ][\w'’-]*")
_LEAD = re.compile(r"[\s¿¡\"'«“(*_#>-]*\S+")
_CAPITALS = re.compile(r"[A-ZÁÉÍÓÚÑÇÃÕÂÊÔÀÜ]")
_TITLE_WORD = re.compile(r"[^\W_][\w'’&-]*")
_CONNECTORS = frozenset("of the de del la da do das dos von van der di du".split())


def _in(word: str, *families: tuple[frozenset[str], tuple[str, ...]]) -> bool:
    return any(word in exact or word.startswith(prefixes) for exact, prefixes in families)


def proper_nouns(text: str) -> list[str]:
    """Capitalised words other than the first word and words opening a clause ('Horario: Lunes')."""
    lead = _LEAD.match(text)
    return [w for w in _NAME.findall(text, lead.end() if lead else 0) if w != "I"]


def name_phrases(text: str) -> list[tuple[str, ...]]:
    """Names written as several capitalised words ('Panama City Air Force Base'), folded, possessive 's out."""
    if len(_CAPITALS.findall(text)) < 2:
        return []
    runs, run, last_end = [], [], -1
    for m in _TITLE_WORD.finditer(text):
        word, gap = m.group(0), text[last_end: m.start()]
        joined = bool(run) and (not gap.strip() or (gap.strip() == "." and len(run[-1]) == 1))
        if word[0].isupper() or (joined and fold(word) in _CONNECTORS):
            if not joined:
                runs.append(run)
                run = []
            run.append(word)
        else:
            runs.append(run)
            run = []
        last_end = m.end()
    out = []
    for run in runs + [run]:
        while run and not run[-1][0].isupper():
            run = run[:-1]
        while run and (fold(run[0]) in LIGHT or fold(run[0]) in _STOP):
            run = run[1:]
        if sum(w[0].isupper() for w in run) >= 2:
            out.append(tuple(w for w in re.findall(r"[^\W_]+", fold(" ".join(run))) if w != "s"))
    return out


def exemption(text: str, lang: str | None = None) -> str | None:
    """Why a sentence carries no facts ('greeting', 'question', 'closing', 'transition'), or None.

    A sentence with a number is never exempt; one with a proper noun only as a greeting ('Hola, María')
    or a question. The vocabularies are small word families per language, not whole sentences."""
    if not text or numbers(text, lang):
        return None
    words = _WORD.findall(fold(text))
    content = [w for w in words if len(w) > 1 and w not in _STOP]
    if not content:
        return None
    names = {fold(n) for n in proper_nouns(text)}
    if words[0] in GREETINGS and len(words) <= 14 and all(_in(w, SOCIAL) or w in names for w in content):
        return "greeting"
    if text.rstrip(" *_").endswith("?") and len(words) <= 25:
        return "question"
    if names:
        return None
    if all(_in(w, SOCIAL) for w in content) and len(words) <= 16:
        return "closing"
    if all(_in(w, TRANSITIONS, SOCIAL) for w in content) and len(words) <= 12:
        return "transition"
    if text.rstrip(" *_").endswith(":") and len(words) <= 8 and sum(
            not _in(w, TRANSITIONS, SOCIAL) for w in content) <= 1:
        return "transition"
    return None
