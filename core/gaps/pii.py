"""PII masking for text that is about to be stored (gap-backlog sample questions), fully offline.

``mask(text)`` returns a :class:`Masked` whose ``text`` has every detected personal value replaced by
a fixed placeholder, and whose ``entities`` name the kind of each replaced span in text order:

    EMAIL <EMAIL>  e-mail addresses (anything e-mail-shaped, also "ana@ x.es" / "ana@host"; no
                   public-suffix lookup, which could reach the network), also written out to dodge
                   filters: "ana [at] x [dot] es", "ana(at)x.es", "ana arroba x punto es", "ana at x dot es"
    PHONE <PHONE>  libphonenumber (ES PT BR US GB MX national formats, any +country code); a
                   formatted-number shape (+cc, (area), (0), 2+ groups, extensions, 0221/123456);
                   bare trunk-prefixed numbers (0430830401, 0034…); digits after "tel./teléfono/
                   phone (number is)/fax/whatsapp…" or after "call/reach me at/messages to/llama al…",
                   or before "office/fax/mobile" or "is my number". Dates, postcodes, ranges and
                   amounts are left alone
    CARD   <CARD>  12–19 digit card numbers that pass Luhn (plain or grouped by spaces/dashes)
    IBAN   <IBAN>  IBANs with a valid mod-97 checksum and country format, spaced or not, any case
    ID     <ID>    ES DNI/NIF and NIE (control letter), BR CPF and CNPJ (check digits), US SSN, and
                   any number written after an id keyword (DNI, NIE, CPF, passport, NHC…), even with
                   a wrong check digit: a mistyped id is still personal; and any bare run of 8–15
                   digits that is neither an amount nor named an order/reference/invoice number (a
                   phone or account number written without separators or cue: 80027874, 13812345678;
                   round numbers such as 10000000 are quantities)
    URL    <URL>   URLs (with a scheme, "www." or a host and a path, whatever their domain ending)
                   whose path or query carries a query value, an e-mail, a 6+ digit number, a
                   random-looking token or a reset/verify/unsubscribe-style action; plain URLs such
                   as https://example.com/help are kept (they say what the question is about)
    IP     <IP>    IPv4 / IPv6 addresses
    PERSON <PERSON> names announced by a cue: self-introductions ("me llamo", "soy", "meu nome é",
                   "my name is", "I'm", "this is"…), relatives ("mi hijo Pablo"), a greeting's or a
                   sign-off's closing name ("Hola Ana,", "Saludos,\nAna"), titles ("Sra.", "Mr.")
                   and form labels ("Nombre:"); 1–3 capitalised words (4 after a label), with a stop
                   list so "Soy Cliente" / "I'm Unable" / "this is URGENT" stay; after "me llamo",
                   "mi nombre es", "me chamo", "meu nome é", "my name is" also lowercase words
                   ("me llamo lucas martín"), but not "my name is wrong" / "mi nombre es incorrecto"

Design: presidio-analyzer's pattern recognizers (e-mail, phone, card, IBAN, URL, IP, ES NIF/NIE,
US SSN) are called directly with ``nlp_artifacts=None`` — no spaCy model, no AnalyzerEngine — next to
this module's own recognizers (CPF/CNPJ checksums, phone shapes, keyword ids, name cues). Every value
found is also masked wherever else it recurs (a name introduced once is masked in the whole text).
Overlapping spans are merged into one span typed by its longest (then highest-scoring) member, so
nothing detected is ever partly left, and presidio-anonymizer's ``replace`` operator writes the
placeholders. The engines are built once per process, lazily (presidio imports spaCy, ~2 s) and
under a lock. ``language`` ('es'|'pt'|'en'|None) is accepted as a hint only: every rule runs on every
text, because customers mix languages.

Fail closed: any internal failure raises :class:`MaskingError`, whose message names only the
exception type and which carries no chained exception, so the input never reaches a log or a trace.
presidio's own loggers are silenced for the same reason (one logs the text of a rejected IBAN).
"""
from __future__ import annotations

import logging
import re
import threading
from dataclasses import dataclass

from core.gaps.pii_names import NOT_NAMES, PARTICLES, WORD_RE, person_spans

PLACEHOLDER_OF = {"EMAIL": "<EMAIL>", "PHONE": "<PHONE>", "CARD": "<CARD>", "IBAN": "<IBAN>", "ID": "<ID>",
                  "URL": "<URL>", "IP": "<IP>", "PERSON": "<PERSON>"}
KIND_OF = {"EMAIL_ADDRESS": "EMAIL", "PHONE_NUMBER": "PHONE", "CREDIT_CARD": "CARD", "IBAN_CODE": "IBAN",
           "ES_NIF": "ID", "ES_NIE": "ID", "BR_CPF": "ID", "BR_CNPJ": "ID", "US_SSN": "ID", "ID": "ID",
           "LONG_NUMBER": "ID",
           "URL": "URL", "IP_ADDRESS": "IP", "PERSON": "PERSON"}
PHONE_REGIONS = ("ES", "PT", "BR", "US", "GB", "MX")
MIN_SCORE = 0.3  # below this a pattern hit is too weak to mask on its own (presidio's "very weak" SSN shapes)


class MaskingError(Exception):
    """Masking failed; nothing derived from the input may be stored. The message never holds the input."""


@dataclass(frozen=True)
class Masked:
    text: str
    entities: tuple[str, ...]


# ---------- checksums ----------

def luhn_ok(digits: str) -> bool:
    doubled = (int(c) * (1 + i % 2) for i, c in enumerate(reversed(digits)))
    return sum(d - 9 if d > 9 else d for d in doubled) % 10 == 0


def cpf_ok(digits: str) -> bool:
    """BR CPF: two mod-11 check digits (weights 10..2, then 11..2)."""
    return len(digits) == 11 and len(set(digits)) > 1 and all(
        sum(int(d) * w for d, w in zip(digits, range(n + 1, 1, -1))) * 10 % 11 % 10 == int(digits[n]) for n in (9, 10))


def cnpj_ok(digits: str) -> bool:
    """BR CNPJ: two mod-11 check digits (weights 5..2 9..2, then 6..2 9..2)."""
    def check(n):
        rest = sum(int(d) * w for d, w in zip(digits, [*range(n - 7, 1, -1), *range(9, 1, -1)])) % 11
        return 0 if rest < 2 else 11 - rest
    return len(digits) == 14 and len(set(digits)) > 1 and all(check(n) == int(digits[n]) for n in (12, 13))


# ---------- this module's own patterns ----------

CARD_RX = r"(?<![\d+-])(?:\d{12,19}|\d{4}(?:[ -]\d{4}){2}[ -]\d{1,7}|\d{4}[ -]\d{6}[ -]\d{4,5})(?![\d-])"
DNI_RX = r"(?<![\w.])\d{1,2}\.?\d{3}\.?\d{3}[ -]?[A-Z](?!\w)"
NIE_RX = r"(?<!\w)[XYZ][ -]?\d{7}[ -]?[A-Z](?!\w)"
CPF_RE = re.compile(r"(?<![\d./-])\d{3}(?:\.\d{3}\.\d{3}-|\d{6}-?)\d{2}(?![\d/-]|\.\d)")
CNPJ_RE = re.compile(r"(?<![\d./-])\d{2}(?:\.\d{3}\.\d{3}/|\d{6}/?)\d{4}-?\d{2}(?![\d/-]|\.\d)")
PHONE_SHAPE_RE = re.compile(
    r"(?<![\w+/.,-])(?:(?P<plus>\(?\+\s?(?:\d{1,3}|\(\d{1,3}\))\)?(?:\s?\(\d{1,4}\))?[\s.-]{0,2}\d)"
    r"|(?P<paren>\(\d{1,5}\)[\s./-]?\d)|\d)"
    r"\d*(?:(?:[ .-]|[ -]?/[ -]?)\d+){0,6}(?:\s?(?:x|ext\.?|ramal)\s?\d{1,5})?(?![\w/]|[.,-]\d)")
LONG_NUMBER_RE = re.compile(r"(?<![\w+/.,-])\d{8,15}(?<!0000)(?![\w/]|[.,-]\d)")  # 25000000 is a quantity
ORDER_CUE_RE = re.compile(r"(?i)\b(?:pedidos?|encomendas?|orders?|ref(?:erencias?|erences?)?|factura|fatura|invoice|"
                          r"ticket|tracking|seguimiento|rastreio|albar[aá]n|nota fiscal|n[ºo°])\.?(?: (?:n[ºo°]|number|"
                          r"n[uú]mero|no\.?))?\W{0,3}$")  # "pedido 12345678" names an order, not a person
TRUNK_PHONE_RE = re.compile(r"(?<![\w+/.,-])(?:0[1-9]\d{7,9}|00[1-9]\d{8,12})(?![\w/]|[.,-]\d)")  # 0430830401
NOT_PHONE_RE = re.compile(r"\d{1,2}([./-])\d{1,2}\1\d{2,4}|\d{4}([./-])\d{1,2}\2\d{1,2}|\d{4,5}-\d{3}|[0-8]\d{4}-\d{4}"
                          r"|(?:1\d|20)\d\d ?- ?(?:1\d|20)\d\d"  # dates, postcodes, year ranges, number ranges
                          r"|\d{1,3}(?: \d{3})+ ?- ?\d{1,3}(?: \d{3})+")
MONEY_BEFORE_RE = re.compile(r"(?:[$€£]|R\$|US\$)\s?$")
MONEY_AFTER_RE = re.compile(
    r"\s?(?:[$€£%]|(?:eur|euros?|usd|d[oó]lar(?:es)?|dollars?|reais|real|brl|gbp|libras?|pesos?)\b)", re.I)
PHONE_NUMBER_RX = r"\+?\s?\(?\d[\d ().-]{4,22}\d"
PHONE_CUE_RE = re.compile(r"(?i)\b(?:tel[eé]fonos?|telefone|tel[fé]?|tfno|tlfno?|m[oó]vil|celular|telem[oó]vel"
                          r"|phone|mobile|cell|fax|whats\s?app|ll[aá]m[ae]me al|call me (?:at|on))\b"
                          r"(?: (?:number|n[uú]mero|no\.|nr\.)| is| es| é){0,2}\W{0,4}"
                          rf"(?P<v>{PHONE_NUMBER_RX})")
WEAK_PHONE_CUE_RE = re.compile(  # verbs and labels around a number: "call 80027874", "80027874 office"
    rf"(?i)(?:\b(?:(?:call|ring|text|dial)(?:ed|ing|s)?(?: (?:me|us|him|her|them))?(?: (?:at|on|to))?|my number(?: is)?"
    rf"|(?:reach|contact|contacto|contato)(?:ed|ing)?(?: (?:me|us|him|her|them) (?:at|on)|:| number| no\.)"
    rf"|(?:messages?|sms|texts?) to|ll[aá]m(?:a|e|en|ad|ar)(?:me|nos)? al|lig(?:ue|a|uem|ar)(?:-me)? (?:para|no))"
    rf"\W{{0,4}}(?P<v>{PHONE_NUMBER_RX})(?![\w/]|[.,-]\d)"
    rf"|(?<![\w+/.,-])(?P<w>{PHONE_NUMBER_RX})[ \t]+(?:(?:office|fax|mobile|cell|phone)[ \t]*(?:$|[\n.,;:)])"
    rf"|is (?:my|the|our|his|her|their) (?:phone |mobile |cell |contact )?number(?! of)))", re.M)
ID_CUE_RE = re.compile(
    r"(?i)\b(?:dni|nie|nif|cif|cpf|cnpj|rg|ssn|nhc|n?nass|nuss|cipa|pasaporte|passaporte|passport|n[ºo°]\s?col"
    r"|colegiado|seguridad social|social security|seguran[çc]a social|cart[aã]o de cidad[aã]o|tarjeta sanitaria"
    r"|historia cl[ií]nica|documento(?: de identidad)?|identity card|national id)\b\W{0,4}"
    r"(?:(?:es|is|é|el|the|o|my|mi|meu|number|n[úu]mero|n[ºo°]\.?)\W{1,3}){0,3}"
    r"(?P<v>(?:[A-Za-z]{1,4}-?)?\d[\d./ -]{2,20}[\dA-Za-z](?!\w))")
URL_RE = re.compile(r"(?i)(?<![\w@.+-])(?:(?:https?|ftp)://|www\.|(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+"
                    r"[a-z]{2,24}(?=/))[^\s<>\"'`]+")  # any domain ending: presidio's list misses .example
_AT = r"(?:\s*[\[({<]\s*(?:at|arroba)\s*[\])}>]\s*|\s+arroba\s+)"
_DOT = r"(?:\s*[\[({<]\s*(?:dot|punto|ponto)\s*[\])}>]\s*|\s+(?:dot|punto|ponto)\s+|\.)"
OBFUSCATED_EMAIL_RE = re.compile(  # "ana [at] x [dot] es", "ana(at)x.es", "ana arroba x punto es", "ana at x dot es"
    rf"(?i)(?<![\w.+-])[\w.+-]*\w(?:{_AT}\w[\w-]*(?:{_DOT}[\w-]*\w)+|\s+at\s+\w[\w-]*(?:\s+dot\s+[\w-]*\w)+)")
URL_TOKEN_RE = re.compile(r"[?#&;][^=\s]*=|@|/(?:reset|verify|verif|confirm|activate|unsubscribe|invite|token|auth|"
                          r"login|magic|share|track|password)\w*[/?=]|\d{6}", re.I)


def _url_is_personal(url: str) -> bool:
    """A query/fragment value, an e-mail, an action link, a long number or a random-looking token in the path."""
    path = re.sub(r"^(?:\w+://)?[^/?#]*", "", url)
    random_looking = (len(re.findall(r"[a-z]+|[A-Z]+|\d+", seg)) >= 6 for seg in re.findall(r"[A-Za-z0-9]{12,}", path))
    return bool(URL_TOKEN_RE.search(path)) or any(random_looking)


LOOSE_EMAIL_RE = re.compile(r"(?<![\w.+-])[\w.+-]*\w@ ?\w[\w-]*(?:\.[\w-]+)*\w")  # "ana@ x.es", "ana@host"
def _phone_shape_ok(text: str, m: re.Match) -> bool:
    value = re.split(r"\s?(?:x|ext\.?|ramal)\s?(?=\d+$)", m.group())[0]  # the extension is not counted
    groups, separators = re.findall(r"\d+", value), set(re.findall(r"[ ./-]", value))
    if m["plus"] or m["paren"]:
        return 7 <= sum(map(len, groups)) <= 15
    if len(groups) < 2 or not 7 <= sum(map(len, groups)) <= (15 if value.startswith("00") else 13):
        return False
    if ("." in separators and len(separators) > 1) or max(map(len, groups[1:])) > 8 or (
            max(map(len, groups[1:])) > 4 and len(groups[0]) < 2):
        return False  # 9.00-14.00 (times), 1 2345678
    return not _thousands(value) and _not_a_number_of_other_kind(text, m.start(), m.end())


def _thousands(value: str) -> bool:
    """1.500.000 / 1 500 000 (but not 1-700-278-752 or 0 800 123 456)."""
    groups, separators = re.findall(r"\d+", value), set(re.findall(r"[ ./-]", value))
    return all(len(g) == 3 for g in groups[1:]) and value[0] != "0" and (
        separators == {"."} or (len(groups[0]) == 1 and "-" not in separators))


def _cued_phone_ok(text: str, m: re.Match) -> bool:
    """A number next to a weak cue ("call", "reach me at", "… office"): phone-length, and no amount or date."""
    value = m[m.lastgroup]  # "v" (cue before) or "w" (cue after)
    return (7 <= sum(c.isdigit() for c in value) <= 15 and not _thousands(value)
            and _not_a_number_of_other_kind(text, *m.span(m.lastgroup)))


def _not_a_number_of_other_kind(text: str, start: int, end: int) -> bool:
    value = text[start:end]
    return not (NOT_PHONE_RE.fullmatch(value) or re.fullmatch(r"(?!\d\d?/\d{3} \d{4}$)[1-9][\d ]*/[\d /]*", value)
                or MONEY_BEFORE_RE.search(text[:start]) or MONEY_AFTER_RE.match(text, end))


def _personal_urls(text: str) -> list[tuple[int, int]]:
    """URLs of any domain that carry a token (presidio's recognizer knows only listed domain endings)."""
    spans = [(m.start(), m.start() + len(m.group().rstrip(".,;:!?)]}'\""))) for m in URL_RE.finditer(text)]
    return [(start, end) for start, end in spans if _url_is_personal(text[start:end])]


def _regex_spans(rx: re.Pattern, text: str, check=None, group: str | int = 0) -> list[tuple[int, int]]:
    return [m.span(group) for m in rx.finditer(text) if check is None or check(m)]


OWN_FINDERS = {  # entity -> (score, text -> spans)
    "BR_CPF": (1.0, lambda t: _regex_spans(CPF_RE, t, lambda m: cpf_ok(re.sub(r"\D", "", m.group())))),
    "BR_CNPJ": (1.0, lambda t: _regex_spans(CNPJ_RE, t, lambda m: cnpj_ok(re.sub(r"\D", "", m.group())))),
    "PHONE_NUMBER": (0.45, lambda t: _regex_spans(PHONE_SHAPE_RE, t, lambda m: _phone_shape_ok(t, m))
                     + _regex_spans(TRUNK_PHONE_RE, t)
                     + _regex_spans(PHONE_CUE_RE, t, lambda m: 6 <= sum(c.isdigit() for c in m["v"]) <= 15, "v")
                     + [m.span(m.lastgroup) for m in WEAK_PHONE_CUE_RE.finditer(t) if _cued_phone_ok(t, m)]),
    "EMAIL_ADDRESS": (0.4, lambda t: _regex_spans(LOOSE_EMAIL_RE, t) + _regex_spans(OBFUSCATED_EMAIL_RE, t)),
    "URL": (0.5, _personal_urls),
    "ID": (0.55, lambda t: _regex_spans(ID_CUE_RE, t, lambda m: sum(c.isdigit() for c in m["v"]) >= 4, "v")),
    # weakest: a phone, card or keyword id found on the same digits names them
    "LONG_NUMBER": (0.35, lambda t: _regex_spans(LONG_NUMBER_RE, t, lambda m: _not_a_number_of_other_kind(t, *m.span())
                                                 and not ORDER_CUE_RE.search(t, max(0, m.start() - 30), m.start()))),
    "PERSON": (0.6, person_spans),
}


def _drop_record(record: logging.LogRecord) -> bool:
    return False


def _quiet_presidio() -> None:
    for name in ("presidio-analyzer", "presidio-anonymizer"):  # they may log matched text
        if _drop_record not in logging.getLogger(name).filters:
            logging.getLogger(name).addFilter(_drop_record)


def _operators(operator_config) -> dict:
    """Each entity replaced by its kind's placeholder."""
    return {entity: operator_config("replace", {"new_value": PLACEHOLDER_OF[kind]}) for entity, kind in KIND_OF.items()}


class _Engine:
    """The recognizers and the anonymizer, built once (see ``_engine``)."""

    def __init__(self):
        from presidio_analyzer import LocalRecognizer, Pattern, RecognizerResult
        from presidio_analyzer.predefined_recognizers import (
            CreditCardRecognizer,
            EmailRecognizer,
            EsNieRecognizer,
            EsNifRecognizer,
            IbanRecognizer,
            IpRecognizer,
            PhoneRecognizer,
            UrlRecognizer,
            UsSsnRecognizer,
        )
        from presidio_anonymizer import AnonymizerEngine
        from presidio_anonymizer.entities import OperatorConfig

        _quiet_presidio()
        upper_ascii = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")

        class Email(EmailRecognizer):
            def validate_result(self, pattern_text):  # no public-suffix lookup: it may go to the network
                return None

        class Iban(IbanRecognizer):  # the presidio pattern is upper-case only; ASCII upper keeps offsets
            def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):
                return super().analyze(text.translate(upper_ascii), entities, nlp_artifacts)

        class Phone(PhoneRecognizer):  # libphonenumber, minus dates, postcodes, amounts and "2024/123456"
            def analyze(self, text, entities, nlp_artifacts=None):
                return [r for r in super().analyze(text, entities, nlp_artifacts) if _not_a_number_of_other_kind(
                    text, r.start, r.end)]

        class PersonalUrl(UrlRecognizer):  # only URLs that carry a token, an id or an e-mail
            def analyze(self, text, entities, nlp_artifacts=None, regex_flags=None):
                found = super().analyze(text, entities, nlp_artifacts, regex_flags)
                for r in found:  # a sentence's closing punctuation is not part of the URL
                    r.end = r.start + len(text[r.start:r.end].rstrip(".,;:!?)]}'\""))
                return [r for r in found if _url_is_personal(text[r.start:r.end])]

        class Own(LocalRecognizer):  # this module's finders (OWN_FINDERS) as presidio recognizers
            def __init__(self, entity):
                super().__init__(supported_entities=[entity], name=f"cobertura-{entity.lower()}")
                self.score, self.find = OWN_FINDERS[entity]

            def load(self):
                pass

            def analyze(self, text, entities, nlp_artifacts=None):
                return [RecognizerResult(self.supported_entities[0], s, e, self.score) for s, e in self.find(text)]

        self.result_type = RecognizerResult
        self.recognizers = [
            Email(), Own("EMAIL_ADDRESS"), Phone(supported_regions=PHONE_REGIONS), Own("PHONE_NUMBER"),
            CreditCardRecognizer(patterns=[Pattern("card", CARD_RX, 0.5)]), Iban(), PersonalUrl(), IpRecognizer(),
            EsNifRecognizer(patterns=[Pattern("dni", DNI_RX, 0.5)],
                            replacement_pairs=[("-", ""), (" ", ""), (".", "")]),
            EsNieRecognizer(patterns=[Pattern("nie", NIE_RX, 0.5)]), UsSsnRecognizer(),
            Own("BR_CPF"), Own("BR_CNPJ"), Own("ID"), Own("LONG_NUMBER"), Own("PERSON"), Own("URL"),
        ]
        self.anonymizer, self.operators = AnonymizerEngine(), _operators(OperatorConfig)

    def spans(self, text: str) -> list[tuple[int, int, str, float]]:
        found = []
        for recognizer in self.recognizers:
            entity = recognizer.supported_entities[0]
            for r in recognizer.analyze(text, [entity], None):
                if r.score >= MIN_SCORE and r.end > r.start:
                    found.append((r.start, r.end, r.entity_type, r.score))
        return found + _recurrences(text, found)

    def mask(self, text: str) -> Masked:
        spans = _merge(self.spans(text))
        results = [self.result_type(entity, start, end, score) for start, end, entity, score in spans]
        out = self.anonymizer.anonymize(text, results, self.operators, merge_entities_with_spaces=False)
        items = sorted(out.items, key=lambda item: item.start)
        if len(items) != len(spans):
            raise RuntimeError("anonymizer dropped a span")
        return Masked(out.text, tuple(KIND_OF[item.entity_type] for item in items))


def _recurrences(text: str, found: list[tuple[int, int, str, float]]) -> list[tuple[int, int, str, float]]:
    """Every other place where a detected value (or a word of a detected name) occurs again."""
    values: dict[str, str] = {}
    for start, end, entity, _ in found:
        words = WORD_RE.findall(text[start:end]) if entity == "PERSON" else []
        for value in [text[start:end], *(w for w in words if w.lower() not in PARTICLES | NOT_NAMES)]:
            values.setdefault(value, entity)
    return [(m.start(), m.end(), entity, 0.35) for value, entity in values.items() if len(value) >= 3
            for m in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", text)]


def _merge(spans: list[tuple[int, int, str, float]]) -> list[tuple[int, int, str, float]]:
    """Overlapping (or touching) spans become one span, their union, typed by its longest, then best-scored, member."""
    clusters: list[list[tuple[int, int, str, float]]] = []
    for span in sorted(spans):
        if clusters and span[0] <= max(s[1] for s in clusters[-1]):
            clusters[-1].append(span)
        else:
            clusters.append([span])
    return [(min(s[0] for s in c), max(s[1] for s in c), *max(c, key=lambda s: (s[1] - s[0], s[3]))[2:])
            for c in clusters]


_ENGINE: _Engine | None = None
_ENGINE_LOCK = threading.Lock()


def _engine() -> _Engine:
    global _ENGINE
    if _ENGINE is None:
        with _ENGINE_LOCK:
            if _ENGINE is None:
                _ENGINE = _Engine()
    return _ENGINE


def mask(text: str, language: str | None = None) -> Masked:
    """Replace personal data in ``text`` by placeholders; raise MaskingError (input-free) on any failure."""
    try:
        if not isinstance(text, str) or not (language is None or isinstance(language, str)):
            raise TypeError("text must be str and language str or None")
        return _engine().mask(text)
    except Exception as exc:  # noqa: BLE001 — fail closed
        failure = type(exc).__name__
    raise MaskingError(f"PII masking failed ({failure}); nothing may be stored")  # outside except: no chained input
