"""The outbox's clock (B5): while the public endpoint runs, one delivery round for every tenant each minute, so a
confirmation e-mail that failed is retried on time (1, 5, 30, 120 minutes) even when no new booking comes.

The round runs in the turn pool's threads (the store's connections are per thread); a failing round is logged and
the next one runs as planned: delivery problems never reach a visitor."""
from __future__ import annotations

import asyncio
import logging

from fastapi import FastAPI

LOG = logging.getLogger("cobertura.outbox")


async def run(app: FastAPI, every: float) -> None:
    loop = asyncio.get_running_loop()
    while True:
        await asyncio.sleep(every)
        try:
            await loop.run_in_executor(app.state.executor, app.state.rt.booking.outbox.deliver_all)
        except Exception:  # a broken round must not end the loop: the next minute tries again
            LOG.exception("The outbox's delivery round failed; the next one runs in %s s.", every)


def start(app: FastAPI, every: float) -> asyncio.Task | None:
    return asyncio.create_task(run(app, every)) if every > 0 else None
