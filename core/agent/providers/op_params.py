"""Reading an operation's parameters from a visitor's message by their JSON Schema (the offline responder, #18).

Each property of the schema is read by what the schema says it is, and only then: ``format: email`` (an e-mail
address), ``pattern`` (a substring matching the pattern without its anchors, standing alone: never inside a word,
a code or an address), ``enum`` (a value named in the message, accents and case aside), ``integer``/``number`` (a
number standing alone), and a free-text string with ``minLength`` (an address) written after a cue that follows a
word of the property ("… la dirección a Calle Mayor 5", "… address to 12 Baker Street", "endereço: Rua X 1"),
up to the end of its sentence. Conservative by design: two different candidates and no cue to tell them apart, a
value the property's schema rejects, or one that reads as an instruction to the assistant leave the parameter
missing (the operation's tool then asks for it by name); nothing outside the schema's properties is ever read.
Pure functions.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from jsonschema import Draft202012Validator, FormatChecker

from core.agent.injection import instruction
from core.agent.providers.op_words import related_words
from core.base.language import fold, stopwords

EMAIL = re.compile(r"(?<![\w.!#$%&'*+/=?^`{|}~-])[A-Za-z0-9][A-Za-z0-9.!#$%&'*+/=?^_`{|}~-]*@[A-Za-z0-9]"
                   r"(?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)+")
NUMBER = re.compile(r"(?<![\w@.,/-])[+-]?\d+(?:[.,]\d+)?(?![\w@/-]|[.,]\d)")
_WORD = re.compile(r"\w+")
#: courtesy that reads like a cue ("por favor a ..."): blanked before anything is read
_COURTESY = re.compile(r"\b(?:por\s+favor|porfa|please|pls|obrigad[oa]|gracias|thanks|thank\s+you)\b", re.IGNORECASE)
_COURTESY_WORDS = frozenset("gracias obrigado obrigada thanks thank please favor".split())
#: words right before an e-mail that mark it as the old value ("de ana@old.es a ...", "from", "o antigo")
_OLD = frozenset(fold(w) for w in "de desde from do da antiguo antigua viejo vieja actual anterior old current "
                 "previous antigo antiga atual".split())
#: words right before a value that mark it as the new one ("a", "to", "para", "por", "nuevo", "es", ":")
_NEW = frozenset(fold(w) for w in "a al to para pelo pela por nuevo nueva new novo nova es is e é into".split())
#: a free-text value starts after one of these, once a word of its property was written ("dirección ... a X")
_FREE_CUE = re.compile(r"(?:\s(?:a|al|to|para|pelo|pela|por|es|is|é|será|sera|will\s+be)\s+|\s*(?::|=|->|→)\s*)",
                       re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?;\n](?:\s|$)|[!?\n]")
_LINK = re.compile(r"(?:[\s,]+(?:del|de|da|do|of|for|para|en|no|na|in|el|la|the|o|a|mi|my|meu|minha))*[\s,]*$")
_ARTICLES = frozenset("el la los las un una the a an o os as um uma".split())
MAX_FREE_TEXT = 200
_CHECKER = FormatChecker()


@_CHECKER.checks("email")
def _is_email(value) -> bool:
    return not isinstance(value, str) or bool(EMAIL.fullmatch(value))


@dataclass(frozen=True)
class Read:
    """What a message gave for a schema: ``params`` (name -> value, schema-valid), the ``missing`` required
    names, and the spans of every value the message offered for a property, chosen or not (what matching an
    operation leaves out: values say nothing about which operation is meant)."""

    params: dict = field(default_factory=dict)
    missing: tuple[str, ...] = ()
    spans: tuple[tuple[int, int], ...] = ()


def _valid(spec: dict, value) -> bool:
    try:
        return not any(Draft202012Validator(spec, format_checker=_CHECKER).iter_errors(value))
    except Exception:  # a property schema jsonschema cannot use: nothing is read for it
        return False


def _words_of(name: str, spec: dict) -> set[str]:
    """The folded words that name a property: its name, title and description (cue words for its value)."""
    text = " ".join([name.replace("_", " ").replace("-", " "), str(spec.get("title", "")),
                     str(spec.get("description", ""))])
    stop = stopwords("es")  # the three analyzed languages' stop words
    return related_words({w for w in _WORD.findall(fold(text)) if len(w) > 2 and w not in stop})


def _before(text: str, start: int, count: int = 3) -> list[str]:
    return _WORD.findall(fold(text[max(0, start - 60): start]))[-count:]


def _choose(text: str, found: list[tuple[int, int, object]], cues: set[str]) -> tuple[int, int, object] | None:
    """One value among the candidates: the only one; else the only one named by its property just before it
    ("pedido 1001"), else the only one marked new ("a X", "to X") and not old ("de X"); else none."""
    distinct = {repr(value) for _, _, value in found}
    if len(distinct) == 1:
        return found[0]
    for test in (lambda before: bool(cues & set(before)), lambda before: bool(before) and before[-1] in _NEW):
        chosen = [f for f in found if test(_before(text, f[0], 2))]
        if len({repr(value) for _, _, value in chosen}) == 1:
            return chosen[0]
    return None


def _emails(text: str, spec: dict) -> list[tuple[int, int, object]]:
    found = [(m.start(), m.end(), m.group()) for m in EMAIL.finditer(text)]
    fresh = [f for f in found if not _OLD & set(_before(text, f[0], 1))]
    return fresh if fresh and len(fresh) < len(found) else found


def _anchorless(pattern: str) -> str:
    core = re.sub(r"^(?:\^|\\A)", "", pattern)
    return re.sub(r"(?<!\\)(?:\$|\\Z|\\z)$", "", core)


def _by_pattern(text: str, spec: dict) -> list[tuple[int, int, object]]:
    try:
        finder = re.compile(rf"(?<![\w@.\-/])(?:{_anchorless(spec['pattern'])})(?![\w@\-/])")
    except re.error:
        return []
    out = []
    for m in finder.finditer(text):
        value = _typed(m.group(), spec)
        if value is not None:
            out.append((m.start(), m.end(), value))
    return out


def _typed(raw: str, spec: dict):
    """``raw`` as the property's type (a number for integer/number properties), None when it is not one."""
    kind = spec.get("type")
    if kind == "integer":
        return int(raw) if re.fullmatch(r"[+-]?\d{1,15}", raw) else None
    if kind == "number":
        return float(raw.replace(",", ".")) if re.fullmatch(r"[+-]?\d{1,15}(?:[.,]\d+)?", raw) else None
    return raw


def _numbers(text: str, spec: dict) -> list[tuple[int, int, object]]:
    return [(m.start(), m.end(), v) for m in NUMBER.finditer(text) if (v := _typed(m.group(), spec)) is not None]


def _enum(text: str, spec: dict) -> list[tuple[int, int, object]]:
    folded, out = fold(text), []
    for value in spec["enum"]:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            continue
        words = [re.escape(w) for w in re.split(r"[\s_-]+", fold(str(value))) if w]
        if not words:
            continue
        for m in re.finditer(r"(?<!\w)" + r"[\s_-]+".join(words) + r"(?!\w)", folded):
            out.append((m.start(), m.end(), value))
    return out


def _free_text(text: str, spec: dict, cues: set[str], others: set[str]) -> list[tuple[int, int, object]]:
    """The text after a cue that follows a word of the property, to the end of its sentence or to a word of another
    property ("… a Calle X 5 del pedido 1001": the order is not the address)."""
    folded = fold(text)
    for m in _WORD.finditer(folded):
        if m.group() not in cues:
            continue
        end = _SENTENCE_END.search(text, m.end())
        stop = end.start() if end else len(text)
        cue = _FREE_CUE.search(text, m.end(), stop)
        if not cue:
            continue
        other = next((w for w in _WORD.finditer(folded, cue.end(), stop) if w.group() in others - cues), None)
        if other:
            stop = _LINK.search(folded[cue.end(): other.start()]).start() + cue.end()
        span = _free_span(text, cue.end(), stop)
        if span is not None:
            return [(span[0], span[1], text[span[0]: span[1]])]
    return []


def _free_span(text: str, start: int, stop: int) -> tuple[int, int] | None:
    """Where the value written in ``text[start:stop]`` is, its articles and quotes off; None when what is there
    reads as no value: a clause ("a la que me lo enviáis"), a question, an instruction, plain lower-case words."""
    quotes = " \t\"'«»“”‘’"
    while start < stop and text[start] in quotes:
        start += 1
    while stop > start and text[stop - 1] in quotes + ",.:":
        stop -= 1
    while (first := re.match(r"(\w+)\s+", text[start:stop])) and fold(first.group(1)) in _ARTICLES:
        start += first.end()
    value = text[start:stop]
    words = value.split()
    lead = _WORD.findall(fold(words[0])) if words else []
    if not lead or lead[0] in stopwords("es") or "?" in value or len(value) > MAX_FREE_TEXT or instruction(value):
        return None
    plain = [w for w in _WORD.findall(fold(value)) if w in stopwords("es") or w in _COURTESY_WORDS]
    if not (re.search(r"\d", value) or sum(w[:1].isupper() for w in words) >= 2 and not plain):
        return None  # an address has a number; a name is names in capitals ("Ana García"), never "Mejor no, Gracias"
    return start, stop


def _kind(spec: dict) -> str:
    if spec.get("format") == "email":
        return "email"
    if "enum" in spec:
        return "enum"
    if "pattern" in spec:
        return "pattern"
    if spec.get("type") in ("integer", "number"):
        return "number"
    if spec.get("type") == "string" and spec.get("minLength"):
        return "free"
    return ""


def _blank(text: str, spans) -> str:
    for a, b in spans:
        text = text[:a] + " " * (b - a) + text[b:]
    return text


def _candidates(kind: str, text: str, spec: dict, cues: set[str], others: set[str]) -> list[tuple[int, int, object]]:
    if kind == "free":
        return _free_text(text, spec, cues, others)
    return {"email": _emails, "enum": _enum, "pattern": _by_pattern, "number": _numbers}[kind](text, spec)


def read(schema: dict, message: str) -> Read:
    """Every property of ``schema`` that ``message`` gives, by the property's schema; the required ones it does not."""
    properties = {n: s for n, s in (schema.get("properties") or {}).items() if isinstance(s, dict)}
    text = _COURTESY.sub(lambda m: " " * len(m.group()), message)
    kinds = {name: _kind(spec) for name, spec in properties.items()}
    emails = sum(k == "email" for k in kinds.values())
    words = {name: _words_of(name, spec) for name, spec in properties.items()}
    params, spans, seen = {}, [], []
    # free text first (its numbers are not the order's), then the rest over what it left
    for name in sorted(properties, key=lambda n: kinds[n] != "free"):
        spec, kind = properties[name], kinds[name]
        if not kind or (kind == "email" and emails > 1):  # two e-mail properties: which is which is not read
            continue
        cues, others = words[name], set().union(*(w for n, w in words.items() if n != name))
        searched = _blank(text, spans)
        found = [f for f in _candidates(kind, searched, spec, cues, others) if _valid(spec, f[2])]
        seen.extend((a, b) for a, b, _ in found)
        # e-mails: the property's name right before one says nothing ("mi correo a X y a Y"); only old/new marks do
        chosen = _choose(searched, found, set() if kind == "email" else cues) if found else None
        if chosen is not None:
            params[name] = chosen[2]
            spans.append((chosen[0], chosen[1]))
        if kind == "email":  # the other e-mails are no order number either
            spans.extend((a, b) for a, b, _ in found)
    missing = tuple(n for n in schema.get("required", []) if n not in params)
    return Read(params, missing, tuple(seen))
