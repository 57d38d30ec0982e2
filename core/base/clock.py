"""The one clock (the only module that reads the wall clock).

The runtime builds one :class:`Clock` and hands it to the store (``store.clock``), the backlog and
everything that stamps, expires or counts days; tests pass a clock of their own to move time.
"""
from __future__ import annotations

from datetime import datetime, timezone


def iso(moment: datetime) -> str:
    """A moment as the one format stored in the database: ISO-8601 UTC, to the second."""
    return moment.astimezone(timezone.utc).isoformat(timespec="seconds")


class Clock:
    """The wall clock. Subclass (or pass any object with ``now()``) to control time in tests."""

    def now(self) -> datetime:
        return datetime.now(timezone.utc)

    def stamp(self) -> str:
        """Now, as stored in the database."""
        return iso(self.now())

    def timestamp(self) -> float:
        """Now, as seconds since the epoch (JWT ``iat``/``exp``)."""
        return self.now().timestamp()


#: The process's clock where nothing injected another (the runtime passes its own down).
SYSTEM = Clock()
