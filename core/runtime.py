"""The shared parts of one process (store, embedder, indexes, retriever), built from settings."""
from __future__ import annotations

from dataclasses import dataclass, field

from core.actions.service import Actions
from core.base.clock import SYSTEM, Clock
from core.base.config import Settings, load_settings
from core.base.store import Store
from core.booking.service import Booking
from core.channels import handoff
from core.channels.turn import Turns
from core.channels.webhooks import Notifier
from core.gaps import feedback  # noqa: F401  (registers the purge of the feedback texts with the retention)
from core.gaps.backlog import Backlog
from core.knowledge.browse import Knowledge
from core.knowledge.embeddings import Embedder, make_embedder
from core.knowledge.retrieval import Retriever, Tuning
from core.knowledge.training import Index


@dataclass
class Runtime:
    settings: Settings
    store: Store
    index: Index
    retriever: Retriever
    knowledge: Knowledge
    backlog: Backlog
    notifier: Notifier
    actions: Actions
    booking: Booking
    turns: Turns = field(init=False)

    def __post_init__(self) -> None:
        self.turns = Turns(self)

    def close(self) -> None:
        self.actions.close()
        self.notifier.close()
        self.index.keywords.close()
        self.store.close()


def open_runtime(settings: Settings | None = None, embedder: Embedder | None = None, tuning: Tuning | None = None,
                 notifier: Notifier | None = None, clock: Clock = SYSTEM, executors: dict | None = None,
                 calendar_factory=None) -> Runtime:
    """Open (and migrate) everything under the settings' data directory (``executors``: the action executors by
    source, for tests; otherwise the built-in, HTTP and MCP ones of core.actions; ``calendar_factory``: the
    calendar of a tenant's connection row, for tests; otherwise the embedded one or its CalDAV calendar)."""
    settings = settings or load_settings()
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = Store(settings.db_path, clock)
    index = Index(settings, store, embedder or make_embedder(settings))
    backlog = Backlog(store, index.embedder)
    backlog.on_merge.append(lambda ctx, old, new: handoff.follow_merged_gap(ctx, store, old, new))
    backlog.adopt_raw_events()
    backlog.purge_all()  # retention on start (and hourly while recording, and `python -m core purge`)
    notifier = notifier or Notifier(store)
    actions = Actions(store, settings, executors)
    booking = Booking(store, settings, calendar_factory)
    booking.register_operations(actions)  # cancel and reschedule a booking: confirmation cards like any write
    return Runtime(settings, store, index, Retriever(index, tuning), Knowledge(index), backlog, notifier, actions,
                   booking)
