"""What the offline responder reads from a turn's transcript: the visitor's question, the knowledge passages and
unknown words the search returned, and the results of the tools called since the question. Pure functions."""
from __future__ import annotations

import json
from typing import Sequence

from core.agent.protocol import Message

REVISION_MARK = "Your answer was NOT shown"


def question_of(messages: Sequence[Message]) -> tuple[int, str, bool]:
    """Index and text of the visitor's current question, and whether a revision was requested after it."""
    revision = False
    for i in range(len(messages) - 1, -1, -1):
        message = messages[i]
        if message.role != "user":
            continue
        if message.content.startswith(REVISION_MARK):
            revision = True
            continue
        return i, message.content, revision
    return -1, "", revision


def passages(messages: Sequence[Message], since: int) -> list[dict]:
    out = []
    for message in messages[since + 1:]:
        if message.role != "tool" or message.is_error:
            continue
        try:
            data = json.loads(message.content)
        except json.JSONDecodeError:
            continue
        out.extend(data.get("results", []) or data.get("passages", []))
    return out


def unknown_words(messages: Sequence[Message], since: int) -> list[str]:
    """The question's words the search tool found in no trained chunk."""
    out: list[str] = []
    for message in messages[since + 1:]:
        if message.role == "tool" and not message.is_error:
            try:
                out += json.loads(message.content).get("unknown_words", []) or []
            except (json.JSONDecodeError, AttributeError):
                continue
    return out


def results(messages: Sequence[Message]) -> list[tuple[str, dict]]:
    """(tool name, result) of each tool message among ``messages``, in order (an unreadable result as {})."""
    out = []
    for message in messages:
        if message.role != "tool":
            continue
        try:
            data = json.loads(message.content)
        except json.JSONDecodeError:
            data = {}
        out.append((message.name, data if isinstance(data, dict) else {}))
    return out
