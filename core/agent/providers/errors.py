"""What every remote provider shares: the two kinds of failure and how an HTTP status is read.

``TransportError`` (unreachable, timed out, overloaded, failing on its side: the chain may try the next
provider) and ``ProviderError`` (a configuration the operator must fix: a rejected key, an unknown
model; trying elsewhere would hide it).
"""
from __future__ import annotations

# 408 and 409 are transient on these APIs (request timeout, concurrent-change conflict); 429 is a rate limit
_TRANSIENT_STATUS = frozenset({408, 409, 429})


class ProviderError(RuntimeError):
    """The provider refused the request for a reason the operator must fix (key, model, endpoint)."""


def is_transient(status: int) -> bool:
    return status in _TRANSIENT_STATUS or status >= 500


def redact(text: str, secret: str) -> str:
    return text.replace(secret, "***") if secret else text


def short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def advice(status: int, key_variable: str, model_variable: str, url_variable: str) -> str:
    """What the operator should check for a 4xx that retrying or failing over will not cure."""
    if status == 401:
        return f"{key_variable} was rejected (401): check the key"
    if status == 403:
        return f"{key_variable} is not allowed to do this (403): check the key's permissions and the model's access"
    if status == 404:
        return f"model or endpoint not found (404): check {model_variable} and {url_variable}"
    if status == 413:
        return "the request is too large (413): shorten the conversation or the tool results"
    return f"the request was rejected ({status}): check {model_variable} and {url_variable}"


def stop_reason(reason: str | None, has_tool_calls: bool) -> str:
    if reason in ("max_tokens", "length", "model_context_window_exceeded"):
        return "max_tokens"  # a cut-off must be declared, whatever the provider calls it
    if has_tool_calls or reason in ("tool_use", "tool_calls", "function_call"):
        return "tool_use"
    return "end"
