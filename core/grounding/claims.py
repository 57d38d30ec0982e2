"""What an answer claims: its claims and their citations, the numbers they write, and which carry no facts.

Pure text analysis for the citation gate (A3, ``core.grounding``). An answer is cut into claims
(sentences, list items, table cells), each keeping the ``[[cite:ID]]`` markers that end it; numbers
are read by ``core.numbers``. A small per-language vocabulary says which sentences carry no facts (greetings,
thanks, closings, transitions, questions) and which words frame a fact without being one.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from whoosh.lang import stopwords_for_language

from core.base.language import ANALYZED, DETECTABLE, detect, fold, stopwords
from core.base.text import is_boundary
from core.grounding.numbers import numbers

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
_MARKUP = re.compile(r"\*\*|__|`")


def _clean(text: str) -> str:
    """Claim text: markers (and the space before them) out, inline markup out, spacing tidied."""
    return re.sub(r"\s+", " ", _MARKUP.sub("", _MARKER_SPACE.sub("", text))).strip()


def _claim(answer: str, a: int, b: int, kind: str) -> Claim:
    piece = answer[a:b]
    return Claim(_clean(piece), tuple(dict.fromkeys(CITE.findall(piece))), kind, a, b)


def _sentences(answer: str, start: int, end: int) -> list[Claim]:
    cuts, cursor = [], start
    for m in _BOUNDARY.finditer(answer, start, end):
        # a terminator that carries a citation ends its claim whatever case the next word has
        if is_boundary(answer, m.start(), m.end(), lower_may_start="[[" in m.group(0)):
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
_WORD = re.compile(r"[^\W\d_]+")


def _words_of(*lines: str) -> frozenset[str]:
    return frozenset(fold(w) for line in lines for w in line.split())


#: claim words that frame a fact without being one: modal verbs, answer particles, discourse fillers
LIGHT = _words_of("sí si yes sim claro correct correcto correcta correto exactly exacto exactamente indeed both "
                  "ambos ambas puede puedes pueden podemos podrá podrás poder podría podrías pode podem podes posso "
                  "poderá could may might must should would also además asimismo actualmente currently however "
                  "simplemente simply just solo apenas então entonces therefore please recuerda lembre remember "
                  "note nota yeah yea yep yup ok okay oh wow well hmm ah vale pues actually really realmente "
                  "efectivamente certainly ciertamente certamente true right fact even incluso interesting "
                  "interesante interessante",
                  # vague qualifiers and contractions' tails ("They 've")
                  "etc pretty quite usually sometimes especially generally typically basically definitely specific "
                  "particular certain kind sort type upon nope lol haha ve ll normalmente generalmente habitualmente "
                  "especialmente basicamente bastante geralmente")
#: a claim made only of these is a bare answer to a question ("Sí.", "No.")
POLARITY = _words_of("yes no sí si sim não claro correct correcto correcta correto correta exacto exacta exato "
                     "exata exactly indeed right true false verdadero falso verdade")
NEGATIONS = _words_of("no not never nunca jamás jamais não nem ni nor none nobody nothing nadie ninguno ninguna "
                      "ningún nenhum nenhuma ninguém nada cannot")
# what a greeting opens with
GREETINGS = _words_of("hola buenas buenos buen bom boa hello hi hey greetings olá oi saludos dear estimado estimada "
                      "prezado prezada querido querida welcome bienvenido bienvenida good gracias thanks thank "
                      "obrigado obrigada agradezco agradecemos agradeço muchas muito many")
# word families (a trailing '*' is a prefix) that only carry courtesy: greetings, thanks, closings, offers
_SOCIAL = _words_of(
    "hola buen buena buenas buenos dia dias tarde tardes noche noches gracias muchas agradec* esper* ojala ayud* "
    "alegr* encant* "
    "gusto placer saludo* cordial* atentamente duda* dudes dudar pregunta* escrib* contact* disposicion quedo quedamos "
    "servir* algo mas otra otro claro supuesto entiend* mensaje tengas tenga excelente perfecto genial consulta* "
    "necesit* interes* avisame dime digame confianza confiar soporte atencion cliente clientes equipo pacien*",
    "ola oi bom boa muito obrigad* ajud* prazer cumpriment* atenciosamente duvida* pergunta* escrev* contat* "
    "disposicao "
    "fico ficamos outra outro entend* mensagem tenha perfeito precis* suporte atendimento",
    "hello hi hey there many thanks good morning afternoon evening day thank* hope* help* glad happy pleasure regards "
    "best "
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
    for run in runs + [run]:  # noqa: B020 - the iterable is built once, before the loop rebinds `run`
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
