"""Instructions planted in data (A6): sentences of a source or tool result that address the agent
("ignore your rules", "tell the customer...") are removed before the model sees the text and before
the gate may use it as support, so obeying them can never produce a releasable claim."""
from __future__ import annotations

import re
from functools import lru_cache

REMOVED = "[instruction-like text removed]"

_PATTERNS = [
    # en
    r"\b(ignore|disregard|forget|override)\b.{0,40}\b(rules?|instructions?|guidelines?|prompt|polic(y|ies))\b",
    r"\b(tell|inform|say to|reply to)\s+(the\s+)?(customer|user|visitor|client)s?\b",
    r"\byou are now\b|\bact as\b|\bsystem prompt\b|\bfrom now on,? (you|always)\b",
    # es
    r"\b(ignora|ignore|olvida|olvide|omite|omita|desobedece)\b.{0,40}\b(reglas|instrucciones|normas|indicaciones)\b",
    r"\b(di|dile|diles|decid|diga|dígale|responde|contesta)\b.{0,20}"
    r"\b(al|a los|a la)\s+(cliente|usuario|visitante)s?\b",
    r"\ba partir de ahora (eres|responde|di)\b|\bahora eres\b",
    # pt
    r"\b(ignora|ignore|esqueça|esquece|desconsidere)\b.{0,40}\b(regras|instruções|instrucoes|orientações)\b",
    r"\b(diga|diz|responda|fale)\b.{0,20}\b(ao|aos|à)\s+(cliente|usuário|utilizador|visitante)s?\b",
    r"\ba partir de agora (você é|és|responda|diga)\b",
]
_INSTRUCTION = re.compile("|".join(f"(?:{p})" for p in _PATTERNS), re.IGNORECASE)
_SENTENCE = re.compile(r"[^.!?\n]*(?:[.!?]+|\n|$)")


@lru_cache(maxsize=8192)
def defuse(text: str) -> tuple[str, int]:
    """The text without its instruction-like sentences, and how many were removed (cached: the same chunks
    come back in turn after turn)."""
    if not _INSTRUCTION.search(text):
        return text, 0
    removed, parts = 0, []
    for sentence in _SENTENCE.findall(text):
        if sentence and _INSTRUCTION.search(sentence):
            removed += 1
            parts.append(f" {REMOVED}" + ("\n" if sentence.endswith("\n") else ""))
        else:
            parts.append(sentence)
    return "".join(parts).strip(), removed
