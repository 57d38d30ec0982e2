"""What a claim states once its conversational framing is set aside (A3).

A model answering in conversation wraps facts in framing the source never writes: answer particles
("Yeah, ...", "Well, ..."), a few hedges that vouch for the fact rather than doubt it ("I know that ...",
"I've heard that ...", "I'm not sure, but ..."), and facts asked as questions ("Did you know that ESPN
won an Emmy?"). The gate judges the fact inside: a question of the "did you know that ..." kind states
its clause. Kept out on purpose (each let unsupported answers through on the dev split): a bare "No,"
(it answers negatively: its negation stays part of the claim), agreement and opinion ("I agree", "me
too", "I think", "I believe", "I love that"), and reactions ("That is wild!"), which stay claims.
Pure: regular expressions over the claim text, its case kept (names are read from it).
"""
from __future__ import annotations

import re

_I = r"(?:i|we)"
#: answer particles and discourse fillers that open a claim (not "no": a negative answer stays negative)
_PARTICLE = re.compile(
    r"^(?:(?:oh|well|yeah|yea|yes|yep|yup|sure|so|and|but|hmm+|wow|true|indeed|right|ok|okay|haha|lol|"
    r"of course|actually|honestly|definitely|absolutely|exactly|totally|interesting|cool|nice|"
    r"s[ií]|claro|bueno|pues|vale|vaya|sim|bem|ent[aã]o)(?:\s*[,!.;:]+\s*|\s+))+", re.IGNORECASE)
#: hedges that open a clause and vouch for it: what the speaker knows, heard or read, and "not sure, but"
_HEDGE = re.compile(
    rf"^(?:{_I}\s+(?:do\s+|did\s+|really\s+|also\s+)?(?:know|knew|heard|hear|read)(?:\s+that)?(?:\s*,\s*|\s+)"
    rf"|{_I}\s*(?:'ve|have)\s+(?:heard|read)(?:\s+that)?\s+"
    rf"|(?:(?:i\s*'?\s*m|i am|im)\s+)?(?:honestly\s+|really\s+)?not\s+(?:really\s+|totally\s+|entirely\s+|quite\s+)?"
    rf"sure\s*,?\s*(?:but|though|however)\s*,?\s*"
    rf"|(?:they|people)\s+(?:are\s+)?(?:say|saying|said)(?:\s+that)?\s+|it\s+is\s+said\s+that\s+|apparently\s*,?\s*"
    rf"|(?:s[eé]|sabemos)\s+que\s+|no\s+estoy\s+segur[oa]\s*,?\s*pero\s+"
    rf"|sei\s+que\s+|n[aã]o\s+tenho\s+certeza\s*,?\s*mas\s+)", re.IGNORECASE)
_TRAILING = re.compile(r",?\s+and\s+(?:everything|stuff|so\s+on|all\s+that)\s*(?=[.!?]*$)", re.IGNORECASE)
_INNER_HEDGE = re.compile(rf"(?<=,)\s*(?:but\s+|and\s+)?{_I}\s+know\s+(?:that\s+)?", re.IGNORECASE)
#: a fact asked as a question: "Did you know (that) X?", "Have you heard that X?", "¿Sabías que X?"
_ASKED = re.compile(
    r"^(?:do|did)\s+you\s+(?:know|think|wonder)\s+why\s+(?P<why>[^\W\d_]+\s+[^\W\d_].*?)\s*\?*\s*$"
    r"|^(?:(?:did|do)\s+you\s+(?:ever\s+)?know|you\s+know)"
    r"(?:\s*,\s*|\s+)(?:that\s+|(?!(?:what|why|who|whom|whose|how|where|when|which|if|whether|about|of|anything|"
    r"any|much|more|it|this|that|them|him|her)\b))(?P<fact>.+?)\s*\?*\s*$"
    r"|^(?:did|do|have|had)\s+you\s+(?:ever\s+)?(?:hear|heard|read|realize|realise|notice|learn)\s+that\s+"
    r"(?P<heard>.+?)\s*\?*\s*$"
    r"|^(?:¿\s*)?(?:sab[ií]as|sabes|sab[ií]a usted|voc[eê]\s+sabia|sabia)\s+(?:que|qu[eé])\s+(?P<fact2>.+?)\s*\?*\s*$",
    re.IGNORECASE | re.DOTALL)


def _strip(text: str) -> str:
    previous = None
    while previous != text:
        previous = text
        text = _PARTICLE.sub("", text, count=1).lstrip(" ,")
        text = _HEDGE.sub("", text, count=1).lstrip(" ,")
    return text


def stated(text: str) -> tuple[str, bool]:
    """(the claim with its framing removed, whether it was a fact asked as a question)."""
    core = _strip(text.strip())
    asked = _ASKED.match(core)
    if asked:
        core = _strip(next(g for g in asked.groups() if g))
    core = _INNER_HEDGE.sub(" ", _TRAILING.sub("", core))
    return core, bool(asked)
