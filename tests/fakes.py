"""Test doubles: a deterministic embedder (no model, no network), a scripted model, a clock that stands still."""
from __future__ import annotations

import hashlib
import re
from datetime import datetime, timedelta
from typing import Sequence

import numpy as np

from core.base.clock import Clock
from core.base.language import fold


class HashEmbedder:
    """Bag of folded words and word prefixes hashed into a small vector: same words, close vectors."""

    name = "hash-test"
    dim = 128

    def __init__(self) -> None:
        self.calls = 0
        self.embedded = 0

    def _one(self, text: str) -> np.ndarray:
        vec = np.zeros(self.dim, dtype=np.float32)
        for word in re.findall(r"\w+", fold(text)):
            for feature in (word, word[:5]):
                h = int(hashlib.md5(feature.encode()).hexdigest()[:8], 16)
                vec[h % self.dim] += 1.0 if (h >> 8) % 2 else -1.0
        norm = np.linalg.norm(vec)
        return vec / norm if norm else vec

    def _many(self, texts: Sequence[str]) -> np.ndarray:
        self.calls += 1
        self.embedded += len(texts)
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.vstack([self._one(t) for t in texts])

    def passages(self, texts: Sequence[str]) -> np.ndarray:
        return self._many(list(texts))

    def queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._many(list(texts))


class ScriptedProvider:
    """Replays a script of replies (tool calls and texts), recording what it was sent; for tests."""

    name = "scripted"
    model = "script-1"

    def __init__(self, *replies) -> None:
        self.queue = list(replies)
        self.calls: list[dict] = []

    def enqueue(self, *replies) -> ScriptedProvider:
        self.queue.extend(replies)
        return self

    def complete(self, system, messages, tools, *, max_tokens=1024, timeout=60.0):
        from core.agent.protocol import Reply, ToolCall

        self.calls.append({"system": system, "messages": list(messages), "tools": [t.name for t in tools]})
        if not self.queue:
            raise AssertionError("ScriptedProvider ran out of replies")
        item = self.queue.pop(0)
        if isinstance(item, Exception):
            raise item
        if callable(item):  # a reply built from what was sent (e.g. cite the id a tool returned)
            item = item(messages)
        if isinstance(item, str):
            return Reply(item, (), self.name, self.model)
        if isinstance(item, Reply):
            return item
        name, arguments = item  # ("search_knowledge", {"query": ...})
        return Reply("", (ToolCall(f"call-{len(self.calls)}", name, arguments),), self.name, self.model,
                     stop_reason="tool_use")


class MovableClock(Clock):
    """A clock that stands at ``moment`` until a test moves it (``clock.moment = ...``, ``clock.advance(hours=1)``)."""

    def __init__(self, moment: datetime):
        self.moment = moment

    def now(self) -> datetime:
        return self.moment

    def advance(self, **delta) -> None:
        self.moment += timedelta(**delta)
