"""Whether a found sentence answers *this* question (A1, issue "answers that answer"): pure checks the offline
responder applies before it releases anything.

- **What the material never mentions.** A question word no trained chunk contains (the search tool reports them
  as ``unknown_words``) or a name, code or number of the question that the chosen passage does not carry is the
  point asked about; a sentence without it is at best a partial answer that says so.
- **The kind of answer asked for.** "¿Cuánto cuesta…?" wants a price, "¿a qué hora…?" a time of day, "¿cuánto
  tarda…?" a duration, "how many…?" a number: a sentence without one does not answer.
- **No restating.** A sentence whose words are all the question's ("compress() returns Z_BUF_ERROR.") adds
  nothing: it is the question said back.
"""
from __future__ import annotations

import re
from difflib import SequenceMatcher
from functools import lru_cache

from wordfreq import zipf_frequency

from core.base.language import fold
from core.knowledge.keyword_index import terms

#: Words that frame a question rather than name its point (folded): interrogatives, auxiliaries, courtesy.
FRAMING = frozenset(fold(w) for w in (
    "cuánto cuánta cuántos cuántas cuándo dónde cómo qué cuál cuáles quién quiénes por porqué hacéis hacen hace "
    "tenéis tienen tiene tengo puedo podéis pueden puede podría hay existe existen sabéis saber quiero quisiera "
    "necesito debo deberia usted ustedes vosotros hola gracias favor "
    "quanto quanta quantos quantas quando onde como qual quais quem porque fazem faz têm tem tenho posso podem "
    "pode poderia existe existem quero preciso devo vocês você olá obrigado obrigada "
    "how what when where which who whom whose why much many long does do did can could would should is are was "
    "were will shall may might there you your yours i me my we our us hi hello thanks thank please want need "
    "know tell").split())

_CODE_LIKE = re.compile(r"\d|[_./:@#]|\(\)|--")
_OPENING = re.compile(r"(?:^|[.!?¿¡:;]\s*)[\s\"'«“(]*([\w-]+)")
_WORD = re.compile(r"[^\W_][\w.+/@#-]*(?:\(\))?(?<![.-])|[^\W_]")
#: Zipf frequency (log10 per billion words, wordfreq) under which a word is not part of the common vocabulary
#: of its language: 'httpx', 'zstd', 'docx' are, 'worry', 'refresh', 'classification' are not
RARE_ZIPF = 3.0
#: an all-capitals word this common in lower case is a word written loud ('OK'), not an acronym
COMMON_ZIPF = 4.5


@lru_cache(maxsize=4096)
def _zipf(word: str, lang: str) -> float:
    return zipf_frequency(word, lang if lang in ("es", "pt", "en") else "en")


def name_like(word: str, question: str, lang: str = "en") -> bool:
    """A name, code, number or identifier of the question: capitalised other than where a sentence opens, an
    acronym, or written with digits or identifier marks ('Kripto-101', 'Z_BUF_ERROR', 'compress()', '--color')."""
    if _CODE_LIKE.search(word):
        return True
    if word.isupper() and len(word) >= 2:
        return _zipf(word.lower(), lang) < COMMON_ZIPF
    openings = {m.group(1) for m in _OPENING.finditer(question)}
    return word[:1].isupper() and word not in openings


#: across languages a name is often spelled a little otherwise ('Luther' / 'Lutero', 'Huguenots' / 'hugonotes')
CROSS_SPELLED_ALIKE = 0.6


def shares_name(question: str, lang: str, text: str) -> bool:
    """The text carries a name, code or number of the question, as written or (names of four letters or more)
    spelled alike: what crosses languages."""
    written = {fold(w) for w in _WORD.findall(text)}
    for word in _WORD.findall(question):
        if fold(word) in FRAMING or not (name_like(word, question, lang) or word[:1].isdigit()):
            continue
        folded = fold(word)
        if folded in written or len(folded) >= 4 and not is_code(word) and any(
                SequenceMatcher(None, folded, w).ratio() >= CROSS_SPELLED_ALIKE for w in written if len(w) >= 4):
            return True
    return False


def names_of(question: str, lang: str) -> list[str]:
    """The question's names, codes and identifiers ('Bizum', 'LC-PRO'), not the words that frame it nor figures."""
    framing = _framing_words(question)
    return [w for w in dict.fromkeys(_WORD.findall(question))
            if name_like(w, question, lang) and fold(w) not in framing and not _AMOUNT.fullmatch(w)
            and not _ROMAN.fullmatch(w)]


def carries(word: str, text: str) -> bool:
    """The text writes the name as the question does, or (a name, not a code) spelled alike."""
    written = {fold(w) for w in _WORD.findall(text)}
    return fold(word) in written or not is_code(word) and _spelled_alike(fold(word), written)


def is_code(word: str) -> bool:
    """Written with digits or identifier marks: a code is never said otherwise."""
    return bool(_CODE_LIKE.search(word))


def rare(word: str, lang: str) -> bool:
    """Not in the common vocabulary of the question's language (a product, a tool, a brand): rare, and not an
    inflected form ('propugnó', 'cerraría' are rare as written, their verbs are not); a plural may be."""
    if _zipf(word.lower(), lang) >= RARE_ZIPF:
        return False
    stems, folded = terms(lang, word), fold(word)
    return not stems or folded in (stems[0], stems[0] + "s", stems[0] + "es")


def _present(word: str, text: str) -> bool:
    folded = fold(text)
    return fold(word) in folded


def missing_words(question: str, lang: str, unknown: list[str], passage_text: str, same_language: bool,
                  rare_words: bool = True) -> list[str]:
    """The question's words the answer would have to speak of and the material does not: names and codes no chunk
    of the tenant contains (``unknown``), rare words too (not common in the question's language) when the passage is
    in the question's language (a common word missing is mostly a paraphrase; a Spanish word is naturally absent
    from English text; ``rare_words`` off: names and codes only), and codes or identifiers the chosen passage does
    not carry (a name may be paraphrased:
    'Alemania del Este' is 'República Democrática Alemana'; 'Kripto-101' is never 'Kripto-102')."""
    out: list[str] = []
    framing = _framing_words(question)
    written = None
    for word in unknown:
        if fold(word) in framing or word in out or _AMOUNT.fullmatch(word) or _ROMAN.fullmatch(word):
            continue
        # across languages a common name is translated ('Germany' is 'Alemania'): only codes and rare names count
        specific = (name_like(word, question, lang) and (same_language or _CODE_LIKE.search(word) or rare(word, lang))
                    or rare_words and same_language and rare(word, lang))
        if not specific:
            continue
        written = written if written is not None else {fold(w) for w in _WORD.findall(passage_text)}
        if _CODE_LIKE.search(word) or not _spelled_alike(fold(word), written):
            out.append(word)
    for word in _WORD.findall(question):  # codes and identifiers: written alike in every language and paraphrase
        if word in out or fold(word) in framing or _AMOUNT.fullmatch(word) or not _CODE_LIKE.search(word):
            continue
        if not _present(word, passage_text):
            out.append(word)
    return out


_ROMAN = re.compile(r"[IVXLCDM]{1,7}")  # 'siglo XV': a number
#: a name the passage writes this much alike is the same name spelled otherwise ('Vale' / 'Vail'); codes never are
SPELLED_ALIKE = 0.75


def _spelled_alike(word: str, written: set[str]) -> bool:
    return any(abs(len(w) - len(word)) <= 2 and SequenceMatcher(None, word, w).ratio() >= SPELLED_ALIKE
               for w in written)


# a figure the question states ('100 €', 'the 1970s') qualifies it; it is not its topic
_AMOUNT = re.compile(r"['’]?[\d.,:%€$]+(?:s|th|st|nd|rd|º|ª|ºs|h|am|pm|kg|km|g|cm|mm|m)?", re.IGNORECASE)


def _framing_words(question: str) -> frozenset[str]:
    """FRAMING plus the words of the phrase that asks for a kind of figure ('cuánto tarda', 'how long')."""
    spans = [m.group(0) for _, kind, _ in FIGURE_KINDS for m in kind.finditer(question)]
    return FRAMING | {fold(w) for span in spans for w in span.split()}


def restates(question: str, sentence: str, lang: str) -> bool:
    """The sentence's content words are all the question's: it repeats the question, it does not answer it."""
    said = set(terms(lang, re.sub(r"\[\[cite:[^\]]*\]\]", "", sentence)))
    return bool(said) and said <= set(terms(lang, question))


DIGIT = re.compile(r"\d")
_NUMBER_QUESTION = re.compile(
    r"\b(?:cu[áa]nto|cu[áa]nta|cu[áa]ntos|cu[áa]ntas|precio|cuesta|cuestan|a qu[ée] hora|qu[ée] horario"
    r"|en qu[ée] a[ñn]o"
    r"|quanto|quanta|quantos|quantas|pre[çc]o|custa|custam|a que horas|em que ano"
    r"|how much|how many|how long|what time|which year|what year|price|cost|costs)\b", re.IGNORECASE)

_DURATION_UNITS = (r"(?:d[íi]as?|horas?|semanas?|mes(?:es)?|a[ñn]os?|minutos?|segundos?|anos?|days?|hours?|weeks?"
                   r"|months?|years?|minutes?|seconds?|h|min)")
#: (what the question asks for, what a figure of that kind looks like): a time of day, a price, a duration
FIGURE_KINDS = (
    ("time", re.compile(r"\b(?:a qu[ée] hora|qu[ée] horarios?|cu[áa]l es el horario|a que horas|qual o hor[áa]rio"
                        r"|what time|opening hours|open hours)\b", re.IGNORECASE),
     re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:h|am|pm|a\.m\.|p\.m\.)(?!\w)", re.IGNORECASE)),
    ("price", re.compile(r"\b(?:cu[áa]nto cuesta|cu[áa]nto cuestan|cu[áa]nto vale|precio|quanto custa|quanto custam"
                         r"|pre[çc]o|how much (?:does|do|is|are|will|would|for)\b|price|cost)\b", re.IGNORECASE),
     re.compile(r"\d[\d.,]*\s*(?:€|\$|r\$|(?:euros?|usd|reais|eur)\b)|[€$]\s*\d|\bgratis\b|\bgratuit[oa]\b|\bfree\b",
                re.IGNORECASE)),
    ("duration", re.compile(r"\b(?:cu[áa]nto tarda\w*|cu[áa]nto tiempo|en cu[áa]nto tiempo|cu[áa]ntos d[íi]as"
                            r"|qu[ée] plazo|quanto tempo|quanto demora|quantos dias|qual o prazo|how long"
                            r"|how many days|how soon|within how)\b", re.IGNORECASE),
     re.compile(r"\d[\d.,]*(?:\s*(?:a|-|–|to|or|o|ou)\s*\d[\d.,]*)?(?:\s*-\s*|\s*)" + _DURATION_UNITS + r"\b",
                re.IGNORECASE)),
)


#: numbers written as words: "tres linajes", "mil millones de años", "two weeks"
NUMBER_WORD = re.compile(
    r"\b(?:un[oa]?|dos|tres|cuatro|cinco|seis|siete|ocho|nueve|diez|once|doce|veinte|treinta|cien|cientos?|mil|millones?"
    r"|millón|docenas?|medio|media|um|uma|duas|quatro|seis|sete|oito|nove|dez|vinte|trinta|cem|milh[ãõ]o(?:es)?"
    r"|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|hundreds?|thousands?|millions?"
    r"|billions?|dozens?|half|single|double)\b", re.IGNORECASE)


def has_figure(kind: str, pattern: re.Pattern, text: str) -> bool:
    """The text gives a figure of the kind asked: as the pattern writes it, or (counts and durations) in words."""
    return bool(pattern.search(text) or kind in ("figure", "duration") and NUMBER_WORD.search(text))


def asks_for_number(question: str) -> bool:
    """The question asks for a quantity, a price, a time, a duration or a year (its answer holds a figure)."""
    return bool(_NUMBER_QUESTION.search(question) or any(kind.search(question) for _, kind, _ in FIGURE_KINDS))


def asked_kind(question: str) -> tuple[str, re.Pattern] | None:
    """The kind of figure the question asks for ('time', 'price', 'duration', or 'figure' for any other number)
    and what such a figure looks like; None when it asks for no figure."""
    for name, kind, figure in FIGURE_KINDS:
        if kind.search(question):
            return name, figure
    return ("figure", DIGIT) if asks_for_number(question) else None


def asked_figure(question: str) -> re.Pattern | None:
    """What the answer's figure must look like: a time for "¿a qué hora…?", a price for "¿cuánto cuesta…?", a
    duration for "¿cuánto tarda…?", any number for other figure questions; None when it asks for no figure."""
    asked = asked_kind(question)
    return asked[1] if asked else None


#: "¿Puedo recoger…?", "¿Se puede aparcar…?", "Can I return…?": a yes/no question about doing something
_ACTION = re.compile(
    r"^\W*(?:puedo|podemos|puedes|puede|pueden|se puede|es posible|posso|podemos|pode|podem|é possível|dá para"
    r"|can i|can we|could i|may i|is it possible to)\s+(?:(?:me|te|se|lo|la|los|las|le|les|o|a|os|as)\s+)?"
    r"([^\W\d_]{3,})", re.IGNORECASE)


def asked_action(question: str) -> str | None:
    """The action a yes/no question asks whether one may do ('recoger' in '¿Puedo recoger mi pedido…?')."""
    found = _ACTION.match(question.strip())
    return found.group(1) if found else None


def mentions_action(verb: str, text: str) -> bool:
    """The text speaks of the action: a word sharing the verb's root (its first letters before the ending:
    'recoger' / 'recogida', 'devolver' / 'devoluciones', 'pay' / 'payment')."""
    folded = fold(verb).lower()
    root = folded[: max(3, min(5, len(folded) - 2))]
    return any(fold(w).lower().startswith(root) for w in _WORD.findall(text))


#: a question word: a question holding one asks for something other than a yes or a no
_QUESTION_WORD = re.compile(
    r"\b(?:qu[ée]|cu[áa]l(?:es)?|cu[áa]nt[oa]s?|c[óo]mo|d[óo]nde|ad[óo]nde|cu[áa]ndo|qui[ée]n(?:es)?|por ?qu[ée]"
    r"|qual|quais|quant[oa]s?|onde|aonde|quando|quem|porque|por que"
    r"|what|which|how|when|where|who|whom|whose|why)\b", re.IGNORECASE)


def asked_property(question: str, lang: str, context: str, asked_there: str = "") -> list[str]:
    """What a yes/no question asks whether a thing has or is ('visera' in '¿El casco Runa-308 incluye visera?',
    'waterproof' in 'Is the Q40air waterproof?'): its words that are not framing, not a name or code, and not
    already what the passage's title and headings (``context``) say, the thing itself. Empty for a question with a
    question word, one about doing something (``asked_action`` judges those), and when a question line of the
    passage (``asked_there``: an FAQ entry's question) says at least half of it: that entry asks it otherwise."""
    if _QUESTION_WORD.search(question) or asked_action(question):
        return []
    framing, said, there = _framing_words(question), set(terms(lang, context)), set(terms(lang, asked_there))
    content = [word for word in dict.fromkeys(_WORD.findall(question))
               if fold(word) not in framing and not name_like(word, question, lang) and not _AMOUNT.fullmatch(word)
               and terms(lang, word)]
    if 2 * sum(1 for word in content if set(terms(lang, word)) <= there) >= len(content):
        return []
    return [word for word in content if not set(terms(lang, word)) <= said]


def speaks_of(words: list[str], lang: str, text: str) -> bool:
    """The text holds at least one of the words (as the language's analysis reads them)."""
    present = set(terms(lang, text))
    return any(set(terms(lang, word)) & present for word in words)
