"""The offline responder's operations (#18, SPEC A3/C1): with no LLM, a message that asks to *do* what an offered
read or write operation does calls it, with every parameter its schema lets us read from the message; the answer
to a read is its live data, cited as live.

- **Which operation.** The message and each example phrasing of an operation (and its name) are compared as
  feature sets (``core.agent.providers.op_words``: concepts across es/pt/en, other stems), each feature weighted
  by how few of the offered operations use it; the score is the weighted F1 of the best example. An operation is
  chosen from ``MIN_MATCH`` up and when no other comes within ``MIN_MARGIN`` of it.
- **Asking to do, or asking how.** "¿Cómo cambio mi e-mail?", "¿Puedo cambiar mi e-mail?", "How can I change my
  email?" ask *how* or *whether*: they go to the knowledge, unless they also give a value for the operation
  ("¿Puedo cambiar mi e-mail a ana@x.es?") or say they want it done ("quiero", "can you", "pode mudar"). A
  write is never proposed on a negated request ("no quiero cambiar…"). A false card costs the customer a
  rejection; a missed one costs a rephrasing: the bar is set for the first.
- **The parameters** (``core.agent.providers.op_params``). All found: the call has them all; some missing: the
  call has what was found, and the operation's tool answers with the missing names (it ends the turn asking).
- **The answer.** A read that returned ``found``: the live framing, then the data's fields as "key: value" lines,
  each cited ``[[cite:live-N]]`` (the gate checks them against that result: ``live_data``). ``empty``: the fixed
  "nothing found" sentence, cited with the empty result's id. ``error``: nothing (the turn is a fault, never a
  gap). After a write, the loop ends the turn on its card or question; anything else goes on to the knowledge.
Pure functions; thresholds chosen on the phrasings of tests/agent/providers/test_offline_operations.py.
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Sequence

from core.agent import prompts
from core.agent.protocol import Message, ToolSpec
from core.agent.providers.op_params import EMAIL, Read, read
from core.agent.providers.op_words import ACTIONS, features
from core.agent.providers.transcript import results
from core.base.language import detect, fold

KINDS = ("read", "write")
#: the best example's weighted F1 an operation needs to be called
MIN_MATCH = 0.62
#: and the lead it needs over the next operation (two this close: the message does not say which)
MIN_MARGIN = 0.12
MAX_FIELDS = 16
_NOISE = re.compile(rf"{EMAIL.pattern}|https?://\S+|<[^<>]{{0,200}}>")
_CLAUSE = re.compile(r"[.!?;:\n]+(?=\s|$)|[¿¡]")
MAX_VALUE = 300

_HOW = re.compile(
    r"\bcomo\s+(?:(?:se|me|lo|la|le|eu|o|a)\s+)?(?:puedo|podria|podemos|debo|devo|tengo|tenho|hago|faco|posso|"
    r"consigo|\w+(?:ar|er|ir))\b|\bcomo\s+se\s+\w+|\bcomo\s+\w{3,}o\b"
    r"|\b(?:puedo|podria\s+yo|se\s+puede|es\s+posible|hay\s+(?:alguna\s+)?(?:forma|manera)|me\s+dejan|permiten)\b"
    r"|\b(?:posso|e\s+possivel|da\s+para|tem\s+como|existe\s+(?:alguma\s+)?(?:forma|maneira))\b"
    r"|\bhow\s+(?:do|can|could|would|should|to|does|may|might)\b|\b(?:can|could|may|might)\s+i\b"
    r"|\bis\s+it\s+possible\b|\bis\s+there\s+(?:a|any)\s+way\b|\b(?:am\s+i|are\s+we)\s+(?:able|allowed)\b"
    r"|\bwhere\s+(?:can|do|should)\s+i\b")
#: asking whether, what would happen, or what it costs: a question even when it says it wants ("necesito saber si…")
_WHETHER = re.compile(
    r"\b(?:saber|know|sei)\s+(?:si|if|whether|se)\b|\bque\s+(?:pasa|ocurre|sucede|acontece)\s+(?:si|se)\b"
    r"|\bwhat\s+(?:happens|if)\b|\bcuanto\s+(?:cuesta|vale|cobrais|cobran|se\s+tarda|tarda)\b"
    r"|\bquanto\s+(?:custa|cobram|demora)\b|\bhow\s+(?:much|long)\b|\b(?:is|are)\s+there\s+(?:a\s+)?(?:fee|charge)"
    # asking what the rules are: "What is your cancellation policy?", "¿Cuál es la política…?", "Qual é a regra…?"
    r"|\bwhat\s+(?:is|are|'s)\s+(?:your|the)\b|\bcual(?:es)?\s+(?:es|son)\b|\bqua(?:l|is)\s+(?:e|sao)\b"
    r"|\b(?:politica|politicas|policy|policies|condiciones|condicoes|conditions|terms|normas|regras|rules)\b")
_WANT = re.compile(
    r"\b(?:quiero|quisiera|queria|necesito|deseo|desearia|me\s+gustaria|puedes|podrias|puede\s+usted|"
    r"podria\s+usted|podeis|podriais|hazme|ayudame\s+a|quero|gostaria|preciso|desejo|pode|podes|poderia|podia|"
    r"i\s+want|i'd\s+like|id\s+like|i\s+would\s+like|i\s+need|i\s+wish|can\s+you|could\s+you|would\s+you|"
    r"will\s+you|help\s+me)\b")
_NEGATED = re.compile(
    r"\b(?:no|nao|not|never|nunca|jamas|don't|dont|doesn't)\s+(?:\w+\s+){0,2}?(?:quiero|quero|want|need|necesito|"
    r"preciso|cambi\w*|mud\w*|alter\w*|chang\w*|updat\w*|actualiz\w*|atualiz\w*|modific\w*|cancel\w*|anul\w*)")


@dataclass(frozen=True)
class Step:
    """What the offline responder does next for an operation: call ``tool`` with ``arguments``, or say ``text``
    (an empty text says nothing: the loop's fault path takes the turn)."""

    tool: str = ""
    arguments: dict | None = None
    text: str | None = None


@dataclass(frozen=True)
class Match:
    spec: ToolSpec
    score: float
    found: Read


def operations(tools: Sequence[ToolSpec]) -> list[ToolSpec]:
    return [spec for spec in tools if spec.kind in KINDS]


def asks_how(question: str) -> bool:
    """The message asks how or whether something can be done, and does not say it wants it done."""
    folded = fold(question)
    return bool(_WHETHER.search(folded)) or bool(_HOW.search(folded)) and not _WANT.search(folded)


def says_want(question: str) -> bool:
    """The message says it wants something done ("quiero", "necesito", "can you", "pode")."""
    return bool(_WANT.search(fold(question)))


def asks_whether(question: str) -> bool:
    """The message asks whether, what would happen, or what it costs ("¿Cuánto cuesta…?", "What happens if…")."""
    return bool(_WHETHER.search(fold(question)))


def negated(question: str) -> bool:
    return bool(_NEGATED.search(fold(question)))


def _phrasings(spec: ToolSpec) -> list[str]:
    """Its example phrasings; its name only when it has none (a name packs words no one asks together:
    'update contact email' would match "¿Cuál es vuestro e-mail de contacto?")."""
    return list(spec.examples) or [spec.name.replace("_", " ")]


@lru_cache(maxsize=256)
def _example_features(phrasing: str, schema: str) -> frozenset[str]:
    """An example's features, the parameter values it shows left out ("… a Calle Mayor 5, 28013 Madrid")."""
    found = read(json.loads(schema), phrasing)
    return features(_masked(phrasing, found.spans), detect(phrasing))


def _examples(spec: ToolSpec) -> list[frozenset[str]]:
    schema = json.dumps(spec.parameters or {}, sort_keys=True, default=str)
    return [_example_features(p, schema) for p in _phrasings(spec)]


def _weights(specs: Sequence[ToolSpec]) -> tuple[dict[str, float], float]:
    """Each feature's weight: rarer among the offered operations weighs more; a feature none uses weighs most."""
    counts: dict[str, int] = {}
    for spec in specs:
        for f in set().union(*_examples(spec)):
            counts[f] = counts.get(f, 0) + 1
    n = len(specs)
    return {f: math.log((n + 1) / (c + 1)) + 1.0 for f, c in counts.items()}, math.log(n + 1) + 1.0


def _f1(asked: frozenset[str], example: frozenset[str], weights: dict[str, float], unknown: float) -> float:
    if not asked or not example:
        return 0.0
    both = sum(weights.get(f, unknown) for f in asked & example)
    precision = both / sum(weights.get(f, unknown) for f in asked)
    recall = both / sum(weights.get(f, unknown) for f in example)
    return 2 * precision * recall / (precision + recall) if both else 0.0


def _acts(asked: frozenset[str], spec: ToolSpec) -> bool:
    """The message names the change its write operation makes ('cambiar', 'update', 'cancelar'), when the
    examples name one: "¿Cuál es vuestro e-mail de contacto?" shares the words of "Update my contact email",
    and asks for something else."""
    named = frozenset().union(*(example & ACTIONS for example in _examples(spec)))
    return not named or bool(asked & named)


def _masked(question: str, spans: Sequence[tuple[int, int]]) -> str:
    """The message without the values it gives, its e-mail addresses, links and markup."""
    for a, b in [*spans, *(m.span() for m in _NOISE.finditer(question))]:
        question = question[:a] + " " * (b - a) + question[b:]
    return question


def _clauses(text: str) -> list[str]:
    return [c for c in _CLAUSE.split(text) if c.strip()] or [text]


def score(question: str, lang: str, spec: ToolSpec, specs: Sequence[ToolSpec],
          weighted: tuple[dict[str, float], float] | None = None) -> tuple[float, Read, frozenset[str]]:
    """How well ``question`` asks for ``spec`` among the offered ``specs`` (0-1), and the parameters it gives; its
    values are left out of the comparison (an address's street names say nothing about which operation is meant);
    and the message's features."""
    found = read(spec.parameters or {}, question)
    weights, unknown = weighted or _weights(specs)
    best, asked = 0.0, frozenset()
    for clause in _clauses(_masked(question, found.spans)):  # the clause that asks: the rest may greet, explain,
        said = features(clause, lang)                          # or try to instruct
        value = max((_f1(said, example, weights, unknown) for example in _examples(spec)), default=0.0)
        if value > best or not asked:
            best, asked = max(best, value), said if value >= best else asked
    return best, found, asked


def match(question: str, lang: str, tools: Sequence[ToolSpec]) -> Match | None:
    """The operation ``question`` asks to run, with what it gives for the parameters; None when it asks for none
    (or asks only how or whether, or two operations fit about as well)."""
    specs = operations(tools)
    if not specs:
        return None
    weighted = _weights(specs)
    ranked = sorted(((*score(question, lang, spec, specs, weighted), spec) for spec in specs), key=lambda r: -r[0])
    best, found, asked, spec = ranked[0]
    runner_up = ranked[1][0] if len(ranked) > 1 else 0.0
    if best < MIN_MATCH or best - runner_up < MIN_MARGIN:
        return None
    if asks_how(question) and not found.params:
        return None
    if spec.kind == "write" and (negated(question) or not _acts(asked, spec)):
        return None
    return Match(spec, best, found)


def _label(spec: ToolSpec, name: str) -> str:
    prop = (spec.parameters or {}).get("properties", {}).get(name, {})
    return fold(str(prop.get("title") or name.replace("_", " ")))


def answer_to_ask(question: str, earlier: Sequence[Message], tools: Sequence[ToolSpec]) -> Match | None:
    """The reply to the question that asked for an operation's missing parameters ("1001", "nueva@x.es", "Calle
    Mayor 5, Madrid"): the operation the previous message asked for, with its values and the reply's. Only when
    the last answer asked for every one of them by name; a free-text value may then be the whole reply."""
    users = [m.content for m in earlier if m.role == "user"]
    if not users or not earlier or earlier[-1].role != "assistant":
        return None
    first = match(users[-1], detect(users[-1]), tools)
    asked = fold(earlier[-1].content)
    if first is None or not first.found.missing or not all(_label(first.spec, n) in asked for n in first.found.missing):
        return None
    schema = first.spec.parameters or {}
    given = dict(read(schema, question).params)
    for name in first.found.missing:
        if name not in given:  # "Calle Mayor 5, Madrid" alone: read as if written after its label
            given.update({k: v for k, v in read(schema, f"{_label(first.spec, name)}: {question}").params.items()
                          if k == name})
    fresh = {k: v for k, v in given.items() if k in first.found.missing}
    if not fresh:
        return None
    params = {**first.found.params, **fresh}
    return Match(first.spec, first.score, Read(params, tuple(n for n in first.found.missing if n not in params)))


def next_step(question: str, lang: str, since: Sequence[Message], tools: Sequence[ToolSpec],
              earlier: Sequence[Message] = ()) -> Step | None:
    """What to do about operations at this point of the turn (``since``: the messages after the question,
    ``earlier``: the conversation before it); None for the knowledge path (today's path, unchanged)."""
    specs = {spec.name: spec for spec in operations(tools)}
    if not specs:
        return None
    said = [m.content for m in earlier if m.role == "user"]
    if said and not re.search(r"[^\W\d_]{2,}", question):  # "1002": the conversation's language, not a guess
        lang = detect(said[-1])
    done = [(name, result) for name, result in results(since) if name in specs]
    if done:
        name, result = done[-1]
        if specs[name].kind != "read":
            return None  # a write that made no card (refused, wrong state): the knowledge may still answer
        status = result.get("status")
        if status == "found":
            return Step(text=compose_found(lang, result))
        if status == "empty" and result.get("cite_as"):
            return Step(text=f"{prompts.message('live_empty', lang)} {result['cite_as']}")
        return Step(text="") if status == "error" else None
    called = {c.name for m in since if m.role == "assistant" for c in m.tool_calls}
    if called:
        return None  # operations are tried first, before the knowledge is searched
    chosen = match(question, lang, tools) or answer_to_ask(question, earlier, tools)
    return Step(tool=chosen.spec.name, arguments=dict(chosen.found.params)) if chosen else None


def _scalar(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if isinstance(value, bool) or value is None else str(value)
    text = re.sub(r"\s+", " ", text).strip()
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE].rsplit(" ", 1)[0] + " …"


def fields(data: Any, prefix: str = "") -> list[tuple[str, str]]:
    """The data's fields as (key, value) pairs: nested objects as 'key.sub', lists of values joined, a list of
    objects item by item (1.key, 2.key ...); empty values left out; at most ``MAX_FIELDS``."""
    out: list[tuple[str, str]] = []
    if isinstance(data, dict):
        items = list(data.items())
    elif isinstance(data, list) and all(not isinstance(v, (dict, list)) for v in data):
        items = [("", ", ".join(_scalar(v) for v in data))] if data else []
    elif isinstance(data, list):
        items = [(str(i), v) for i, v in enumerate(data, 1)]
    else:
        items = [("", data)]
    for key, value in items:
        name = f"{prefix}.{key}" if prefix and key else prefix or str(key)
        if isinstance(value, (dict, list)) and value:
            out += fields(value, name)
        elif value not in (None, "", [], {}):
            out.append((name, _scalar(value)))
        if len(out) >= MAX_FIELDS:
            break
    return out[:MAX_FIELDS]


def compose_found(lang: str, result: dict) -> str:
    """A read's live data as the answer: the live framing, then one cited "key: value" line per field."""
    cite = result.get("cite_as", "")
    data = result.get("data")
    if data in (None, "", [], {}):
        data = {k: v for k, v in result.items() if k not in (
            "note", "status", "operation", "title", "fetched_at", "live_id", "cite_as", "message")}
    lines = [f"- {key}: {value} {cite}" if key else f"{value} {cite}" for key, value in fields(data)]
    return f"{prompts.message('live_framing', lang)}\n\n" + "\n".join(lines) if lines else ""
