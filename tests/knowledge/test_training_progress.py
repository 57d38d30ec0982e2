"""Training progress (K3): a report after every embedding batch, counts that only grow, the time left on a clock."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from core.base.clock import Clock
from core.base.progress import Estimate, duration
from core.knowledge import sources
from core.knowledge.training import plan_source
from core.knowledge.training_progress import Tracker, TrainingProgress, embed_groups
from core.runtime import open_runtime
from tests.fakes import HashEmbedder

T0 = datetime(2026, 5, 1, 9, 0, tzinfo=timezone.utc)
PARAGRAPH = ("Los envíos a Canarias tardan de 5 a 8 días laborables. El coste depende del peso del paquete. "
             "Los pedidos de más de 50 € viajan gratis. Se entregan de lunes a viernes.")


class FakeClock(Clock):
    """A clock that stands still until a test moves it."""

    def __init__(self, now: datetime = T0):
        self.moment = now

    def now(self) -> datetime:
        return self.moment

    def advance(self, seconds: float) -> None:
        self.moment += timedelta(seconds=seconds)


class SlowEmbedder(HashEmbedder):
    """The hashing embedder, on a clock that moves one second per text embedded (a model's pace, made exact)."""

    def __init__(self, clock: FakeClock):
        super().__init__()
        self.clock = clock

    def passages(self, texts):
        self.clock.advance(len(texts))
        return super().passages(texts)


@pytest.fixture
def clock():
    return FakeClock()


@pytest.fixture
def slow(settings, clock):
    runtime = open_runtime(settings, embedder=SlowEmbedder(clock), clock=clock)
    yield runtime
    runtime.close()


def test_the_estimate_goes_by_the_pace_so_far(clock):
    estimate = Estimate(clock, total=100)
    assert estimate.left(0) is None  # nothing done: no pace yet
    clock.advance(10)
    assert estimate.elapsed() == 10 and estimate.left(25) == 30  # 25 units in 10 s: 75 more take 30 s
    clock.advance(10)
    assert estimate.left(80) == 5 and estimate.left(100) == 0.0
    assert Estimate(clock, total=10).left(5) is None  # no time passed yet


@pytest.mark.parametrize("seconds, said", [(None, ""), (0.2, "less than a second"), (42.4, "about 42 s"),
                                           (300, "about 5 min"), (2 * 3600, "about 2.0 h")])
def test_a_duration_as_people_say_it(seconds, said):
    assert duration(seconds) == said


def test_the_tracker_counts_sources_by_their_last_chunk(clock):
    seen: list[TrainingProgress] = []
    tracker = Tracker(seen.append, clock, [("a", [10, 10]), ("empty", []), ("b", [20])])
    tracker.report()
    clock.advance(4)
    tracker.embedded(1, 10)  # half of a: no source done, a is the one at hand
    tracker.embedded(1, 10)  # a done, and the empty source after it with it; b at hand
    tracker.embedded(1, 20)
    tracker.report("done")
    assert [(s.sources_done, s.chunks_done, s.path, s.phase) for s in seen] == [
        (0, 0, "a", "embedding"), (0, 1, "a", "embedding"), (2, 2, "b", "embedding"), (3, 3, "b", "embedding"),
        (3, 3, "b", "done")]
    assert [s.seconds_left for s in seen] == [None, 12.0, 4.0, 0.0, 0.0]  # 10 of 40 chars in 4 s: 30 more in 12 s
    assert seen[1].fraction == pytest.approx(1 / 3) and Tracker(None, clock, []).snapshot().fraction == 1.0


def test_embed_groups_keeps_a_chunk_with_its_sentences_and_reports_each_call(clock):
    embedder, calls = HashEmbedder(), []
    tracker = Tracker(lambda step: calls.append(step.chunks_done), clock, [("s", [1, 1, 1, 1])])
    groups = [["a1", "a2", "a3"], ["b1"], ["c1", "c2", "c3", "c4", "c5"], ["d1", "d2"]]
    out = embed_groups(embedder.passages, groups, tracker, batch=4)
    assert [len(v) for v in out] == [3, 1, 5, 2]  # one array per group, whole groups per call
    assert calls == [2, 3, 4] and embedder.calls == 3  # a+b (4 texts), c alone (over the batch), d
    whole = embedder.passages([t for g in groups for t in g])
    assert (abs(whole[4:9] - out[2]).max()) == 0  # the same vectors as one call over every text


def test_training_reports_every_embedding_batch_with_counts_that_only_grow(slow, ctx, clock):
    for n in range(6):
        sources.save(ctx, slow.store, f"envios/zona-{n}", title=f"Envíos a la zona {n}", content=PARAGRAPH * (n + 1))
    plans = {s.path: plan_source(s) for s in sources.list_sources(ctx, slow.store)}
    texts = sum(len(c.texts) for plan in plans.values() for c in plan)
    slow.index.batch_sources, slow.index.embed_batch = 2, 8
    seen: list[TrainingProgress] = []
    embedder = slow.index.embedder
    report = slow.index.train(ctx, progress=seen.append)
    embedding = [s for s in seen if s.phase == "embedding"]
    assert len(embedding) == embedder.calls + 1  # the start, then one report per call to the embedder
    assert embedder.calls >= 6 and embedder.embedded == texts  # several calls per batch of two sources
    chunks = [s.chunks_done for s in embedding]
    assert chunks == sorted(set(chunks)) and chunks[0] == 0  # strictly growing
    done = [s.sources_done for s in embedding]
    assert done == sorted(done) and done[-1] == 6 and len(set(done)) == 7  # every source counted on its own
    assert embedding[-1].chunks_done == embedding[-1].chunks_total == report.chunks == sum(map(len, plans.values()))
    assert {s.sources_total for s in seen} == {6} and [s.phase for s in seen[-2:]] == ["finishing", "done"]
    paths = [s.path for s in embedding]
    assert paths[0] == "envios/zona-0" and paths[-1] == "envios/zona-5" and set(paths) == set(plans)
    # one second per text: the time left is the texts' share of the characters still to embed, to the second
    assert embedding[0].seconds_left is None and embedding[-1].seconds_left == 0.0
    assert [s.elapsed for s in embedding] == sorted(s.elapsed for s in embedding)
    assert embedding[-1].elapsed == texts
    middle = embedding[len(embedding) // 2]
    assert 0 < middle.seconds_left < texts


def test_the_time_left_follows_the_clock_exactly(slow, ctx, clock):
    for n in range(4):  # four sources of one sentence each, equally long: one text each, one call each
        sources.save(ctx, slow.store, f"faq/p{n}", title=f"Pregunta {n}", content=f"Respuesta número {n} del caso.")
    slow.index.embed_batch = 1
    seen: list[TrainingProgress] = []
    slow.index.train(ctx, progress=seen.append)
    assert [(s.chunks_done, s.elapsed, s.seconds_left) for s in seen if s.phase == "embedding"] == [
        (0, 0.0, None), (1, 1.0, 3.0), (2, 2.0, 2.0), (3, 3.0, 1.0), (4, 4.0, 0.0)]
    assert seen[-1].describe() == "Trained 4/4 source(s), 4 chunk(s)"
    assert seen[2].describe() == "Training 2/4 source(s) · 2/4 chunk(s) embedded · about 2 s left · faq/p2"


def test_nothing_to_train_reports_a_full_bar(rt, ctx):
    seen: list[TrainingProgress] = []
    rt.index.train(ctx, progress=seen.append)
    assert [(s.sources_total, s.chunks_total, s.fraction, s.phase) for s in seen] == [
        (0, 0, 1.0, "embedding"), (0, 0, 1.0, "finishing"), (0, 0, 1.0, "done")]
