"""How far long work has got (training, QA runs, imports) and an estimate of the time left.

Plain data and arithmetic for any caller: the CLI prints it, the admin app draws it. Time comes from the
injected clock (``core.base.clock``), so a test moves it by hand."""
from __future__ import annotations

from core.base.clock import Clock


class Estimate:
    """The time left for ``total`` units of work at the pace of the units done so far."""

    def __init__(self, clock: Clock, total: float):
        self.clock, self.total = clock, max(0.0, float(total))
        self.started = clock.now()

    def elapsed(self) -> float:
        """Seconds since the work started, by the clock."""
        return max(0.0, (self.clock.now() - self.started).total_seconds())

    def left(self, done: float) -> float | None:
        """Seconds left at the pace so far; None while nothing is done or no time has passed (no pace yet)."""
        elapsed = self.elapsed()
        if done >= self.total:
            return 0.0
        if done <= 0 or elapsed <= 0:
            return None
        return elapsed * (self.total - done) / done


def duration(seconds: float | None) -> str:
    """A time left as people say it: 'about 40 s', 'about 3 min', '' when unknown."""
    if seconds is None:
        return ""
    if seconds < 1:
        return "less than a second"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"
