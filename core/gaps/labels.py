"""A gap's label and the path proposed for its article, from a masked question (G1, G3) — pure functions.

A masked question carries placeholders (``<EMAIL>``, ``<PHONE>``, ``<PERSON>``… :mod:`core.gaps.pii`) and the words
that announced them ("my email is <EMAIL>", "tel. <PHONE>", "me llamo <PERSON>"). Neither is what the customer
asked, so neither may become a word of a label or of a path (#17: "email phone enterprise support plan cost"). A
label is made of the question's content words after :func:`core.gaps.matching.comparable` has dropped the clauses
that only hold a personal value or a greeting, without the placeholders, the cue words next to them and the
greetings and thanks around the question. A question that holds nothing else is labelled as such, in its language.

Labels stored before this are cleaned when read (:func:`clean_label`: placeholders out) and recomputed from their
oldest retained sample by ``python -m core gaps relabel SLUG`` (:func:`relabel`), which leaves a label an editor
gave alone.
"""
from __future__ import annotations

import re

from core.base.language import content_words, fold, stopwords
from core.gaps.matching import PLACEHOLDER_RE, comparable
from core.gaps.pii import MaskingError, mask
from core.knowledge.sources import slug

LABEL_WORDS = 8
#: a question that held only personal data (and the words announcing it), by language
ONLY_PERSONAL = {"es": "Pregunta solo con datos personales", "pt": "Pergunta só com dados pessoais",
                 "en": "Question with only personal data"}
#: folded words that name a personal value ("email", "teléfono", "nombre", "DNI"): dropped when they announce the
#: placeholder next to them, not when they are what the question is about ("change my email <EMAIL> to…")
CUES = frozenset("""
email e-mail mail correo electronico electronica endereco direccion
phone telephone tel tlf tlfn tfno telefono telefone movil mobile cell cellphone celular telemovel whatsapp fax
number numero num nr contact contacto contato
name nombre nome apellido apellidos sobrenome surname
dni nie nif cif cpf cnpj rg ssn passport pasaporte passaporte documento identidad
iban cuenta conta card tarjeta cartao
""".split())
#: folded words that always announce the value after them: introductions and titles ("me llamo", "soy", "Mr")
INTRODUCING = frozenset("llamo chamo soy sou am im called sr sra srta mr mrs ms dr dra senor senora senhor senhora"
                        " don dona call ring llamame llamadme llamar ligue liga ligar reach".split())
#: folded words after a phone number that say which one it is ("<PHONE> mobile")
AFTER = frozenset("office mobile cell fax movil fijo home casa work trabajo".split())
COPULAS = frozenset({"is", "es", "é", "are", "era", "será", ":", "=", "."})  # as written: "é" is not "e" (and)
_CLAUSE_END = frozenset(",;?!.")
#: folded greetings and thanks: dropped at the start and the end of a label
COURTESY = frozenset("""
hola buenas buenos dias tardes noches hi hello hey dear ola oi bom boa dia good morning afternoon evening
estimado estimada estimados prezado prezada querido querida
gracias muchas thanks thank you obrigado obrigada please por favor saludos regards cheers
""".split())
_TOKEN = re.compile(r"<[A-Z]+>|[^\W_]+(?:['’-][^\W_]+)*|[^\w\s]", re.UNICODE)
_GLUE = set(":=-–—/|'\"()[]")  # marks that may stand between a cue and its value


def _key(token: str) -> str:
    return fold(token).replace("-", "").replace("'", "").replace("’", "")


def _passable(token: str, stop: frozenset[str]) -> bool:
    """May a cue stand this far from its value? Stop words and glue marks only ("mi correo es", "tel.:")."""
    return _key(token) in stop or token in _GLUE or token.lower() in COPULAS


def _cues_before(tokens: list[str], i: int, stop: frozenset[str]) -> tuple[list[int], bool, int]:
    """The cue words before the placeholder at ``i`` (several: "número de teléfono"), whether a copula or a
    mark joins them to it ("es", ":"), and the index of the first token before them that is neither."""
    cues, joined, j = [], False, i - 1
    while j >= 0:
        key = _key(tokens[j])
        if key in CUES or key in INTRODUCING:
            cues.append(j)
        elif not cues and tokens[j].lower() in COPULAS:
            joined = True
        elif not _passable(tokens[j], stop):
            break
        j -= 1
    return cues, joined, j


def _listed_after(tokens: list[str], i: int, stop: frozenset[str]) -> bool:
    """Is the value at ``i`` followed by the end of its clause, another value, or the cue of one (a list of
    contact details: "email <EMAIL> phone <PHONE>")?"""
    j = i + 1
    while j < len(tokens) and _passable(tokens[j], stop) and tokens[j] not in _CLAUSE_END:
        j += 1
    return (j >= len(tokens) or tokens[j] in _CLAUSE_END or _key(tokens[j]) in CUES
            or PLACEHOLDER_RE.fullmatch(tokens[j]) is not None)


def _drop_cues(tokens: list[str], stop: frozenset[str]) -> set[int]:
    """Indexes of the words that only announce a placeholder: cue words joined to it ("my email is <EMAIL>"),
    introductions and titles ("me llamo <PERSON>"), cue words of a list of values, and "<PHONE> mobile"."""
    dropped: set[int] = set()
    for i, token in enumerate(tokens):
        if not PLACEHOLDER_RE.fullmatch(token):
            continue
        cues, joined, before = _cues_before(tokens, i, stop)
        chained = before >= 0 and PLACEHOLDER_RE.fullmatch(tokens[before]) is not None
        introduced = any(_key(tokens[c]) in INTRODUCING for c in cues)
        if cues and (joined or introduced or chained or _listed_after(tokens, i, stop)):
            dropped.update(cues)
        if i + 1 < len(tokens) and _key(tokens[i + 1]) in AFTER:
            dropped.add(i + 1)
    return dropped


def _drop_courtesy(words: list[str]) -> list[str]:
    """Greetings and thanks before the first and after the last word that is neither."""
    keys = [_key(w) in COURTESY for w in words]
    if all(keys):
        return []
    first, last = keys.index(False), len(keys) - keys[::-1].index(False)
    return words[first:last]


def topic_label(masked: str, language: str) -> str:
    """A short topic for the gap that outlives its samples: the question's content words, in their original case,
    never a placeholder or a word that only announced one."""
    stop = stopwords(language)
    tokens = _TOKEN.findall(masked)
    dropped = _drop_cues(tokens, stop)
    text = comparable(" ".join(t for i, t in enumerate(tokens) if i not in dropped), language)
    text = PLACEHOLDER_RE.sub(" ", text)
    keep = set(content_words(text, language))
    words: list[str] = []
    for token in _TOKEN.findall(text):
        bare = token.strip(".,;:!¡¿?()\"'")
        if bare and fold(bare).lower() in keep and bare not in words:
            words.append(bare)
    words = _drop_courtesy(words)[:LABEL_WORDS]
    if words:
        return " ".join(words)
    rest = " ".join(masked.split())
    return rest[:60] if rest and not PLACEHOLDER_RE.search(masked) else ONLY_PERSONAL.get(language, ONLY_PERSONAL["en"])


def clean_label(label: str, language: str = "en") -> str:
    """A stored or given label without placeholders (a label made before they were kept out, or typed so)."""
    cleaned = " ".join(PLACEHOLDER_RE.sub(" ", label or "").split())
    return cleaned or ONLY_PERSONAL.get(language, ONLY_PERSONAL["en"])


def article_path(title: str, gap_id: int) -> str:
    """The path proposed for a gap's article: ``faq/`` and the title's slug, never a placeholder."""
    words = " ".join(PLACEHOLDER_RE.sub(" ", title or "").split())
    return f"faq/{slug(words) if words and words not in ONLY_PERSONAL.values() else f'gap-{gap_id}'}"


def question_path(question: str, language: str) -> str:
    """The path proposed for a Q&A source written for one question (the Sandbox's fix): ``faq/`` and the masked
    question's topic, so an e-mail or a name typed into the question never becomes part of a path."""
    try:
        topic = topic_label(mask(question, language).text, language)
    except MaskingError:
        topic = ""
    words = " ".join(PLACEHOLDER_RE.sub(" ", topic).split())
    return f"faq/{slug(words)}" if words and words not in ONLY_PERSONAL.values() else "faq/question"
