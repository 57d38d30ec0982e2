"""What an API key or token looks like, so none is ever stored as a tenant setting (keys come from the
process environment only): well-known key shapes, any long run of letters and digits that mixes cases and
digits, and the keys configured in this process."""
from __future__ import annotations

import re

from core.base.config import Settings

KEY_SHAPES = re.compile(
    r"(sk-[A-Za-z0-9_-]{16,}|AKIA[0-9A-Z]{16}|gh[pousr]_[A-Za-z0-9]{20,}|xox[abposr]-[A-Za-z0-9-]{10,}"
    r"|AIza[0-9A-Za-z_-]{30,}|\b[Bb]earer\s+[A-Za-z0-9._~+/-]{16,})"
)
LONG_TOKEN = re.compile(r"\b[A-Za-z0-9]{32,}\b")
#: a setting named like this would be a secret: refused with a pointer to the environment
SECRET_FIELD = re.compile(r"key|secret|token|password|credential", re.IGNORECASE)


def looks_like_secret(text: str, process: Settings | None = None) -> str | None:
    """Why ``text`` looks like an API key or token (None when it does not)."""
    if process is not None:
        for key in (process.anthropic_api_key, process.openai_key, process.embeddings_key):
            if key and key in text:
                return "it contains a key configured in this process's environment"
    if KEY_SHAPES.search(text):
        return "it has the shape of an API key or bearer token"
    for token in LONG_TOKEN.findall(text):
        if re.search(r"[a-z]", token) and re.search(r"[A-Z]", token) and re.search(r"\d", token):
            return "it holds a long random-looking token"
    return None
