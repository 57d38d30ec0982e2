"""Rate limits per site key and per client address (P3): a token bucket each, in this process's memory.

Each API process counts on its own; behind a load balancer the effective limit is per process (put a shared
limiter in the proxy if that matters)."""
from __future__ import annotations

import threading
import time
from typing import Callable

from api.errors import ApiError

#: Buckets untouched this long are forgotten, so memory stays bounded under many addresses.
IDLE_SECONDS = 600.0


class RateLimiter:
    """``per_minute`` requests a minute per key, with bursts up to ``per_minute``."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic):
        self.capacity, self.rate, self.clock = float(per_minute), per_minute / 60.0, clock
        self._buckets: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()
        self._swept = clock()

    def take(self, key: str) -> float:
        """Spend one request for ``key``: 0.0 when allowed, else the seconds to wait before the next one."""
        now = self.clock()
        with self._lock:
            if now - self._swept > IDLE_SECONDS:
                self._buckets = {k: v for k, v in self._buckets.items() if now - v[1] < IDLE_SECONDS}
                self._swept = now
            tokens, last = self._buckets.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.rate)
            if tokens < 1.0:
                self._buckets[key] = (tokens, now)
                return (1.0 - tokens) / self.rate
            self._buckets[key] = (tokens - 1.0, now)
            return 0.0


def enforce(limiter: RateLimiter, key: str, what: str, of: str) -> None:
    """Take one request of ``key`` from ``limiter``, or answer 429 with Retry-After: "Too many ``of`` from this
    ``what``" (of: questions, ratings, clicks; what: address, site)."""
    wait = limiter.take(key)
    if wait:
        seconds = max(1, int(wait + 0.999))
        raise ApiError(429, "rate_limited", f"Too many {of} from this {what}; try again in {seconds} s.", True,
                       {"Retry-After": str(seconds)})
