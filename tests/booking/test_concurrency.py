"""Never double-booked (B3): many processes, each with its own connection, racing for the same five slots.

200 create attempts from 4 processes on 5 slots of one day must end in exactly 5 bookings, no two overlapping (an
SQL self-join over the table), no "database is locked", and every loser answered "taken" with free times of that
day. Holds race the same way: two visitors, one slot, one hold.
"""
from __future__ import annotations

import multiprocessing
import sqlite3
import time
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core.base.clock import Clock
from core.base.config import load_settings
from core.base.store import Store
from core.booking.schedule import DEMO_SCHEDULE
from core.booking.service import Booking
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant

PROCESSES, ATTEMPTS = 4, 50
TARGETS = ["2026-12-02T09:00", "2026-12-02T10:00", "2026-12-02T11:00", "2026-12-02T12:00", "2026-12-02T13:00"]


class Fixed(Clock):
    def now(self) -> datetime:
        return datetime(2026, 12, 1, 21, 0, tzinfo=timezone.utc)


def _service(data_dir: str) -> tuple[Booking, object]:
    settings = load_settings({"COBERTURA_DATA_DIR": data_dir})
    store = Store(settings.db_path, Fixed())
    return Booking(store, settings), local_operator(store, "shop")


def _creates(data_dir: str, worker: int, barrier) -> list[dict]:
    service, ctx = _service(data_dir)
    barrier.wait()
    out = []
    for n in range(ATTEMPTS):
        raw = {"name": f"Cliente {worker}-{n}", "email": f"c{worker}.{n}@example.com",
               "start": TARGETS[(worker + n) % len(TARGETS)]}
        try:
            result = service.create(ctx, raw, channel="web")
            out.append({"status": result.status, "alternatives": len(result.alternatives)})
        except sqlite3.OperationalError as exc:  # "database is locked" would land here
            out.append({"status": f"error: {exc}", "alternatives": 0})
    service.store.close()
    return out


def _holds(data_dir: str, visitor: str, barrier) -> str:
    service, ctx = _service(data_dir)
    barrier.wait()
    try:
        return service.place_hold(ctx, TARGETS[0], visitor)["status"]
    except Exception as exc:  # the loser: SlotTaken
        return type(exc).__name__
    finally:
        service.store.close()


def _prepare(tmp_path: Path) -> str:
    data_dir = str(tmp_path / "data")
    settings = load_settings({"COBERTURA_DATA_DIR": data_dir})
    settings.data_dir.mkdir(parents=True, exist_ok=True)
    store = Store(settings.db_path, Fixed())
    create_tenant(store, "shop", "Shop")
    Booking(store, settings).save_schedule(local_operator(store, "shop"), DEMO_SCHEDULE)
    store.close()
    return data_dir


@pytest.fixture(scope="module")
def workers():
    """One pool of spawned processes (and a manager for their barriers) for the module: spawning is the slow part."""
    spawn = multiprocessing.get_context("spawn")
    with spawn.Manager() as manager, spawn.Pool(PROCESSES) as pool:
        yield manager, pool


def test_200_creates_in_4_processes_on_5_slots_make_exactly_5_bookings(tmp_path, workers):
    data_dir = _prepare(tmp_path)
    manager, pool = workers
    barrier = manager.Barrier(PROCESSES)
    started = time.monotonic()
    results = pool.starmap(_creates, [(data_dir, w, barrier) for w in range(PROCESSES)])
    elapsed = time.monotonic() - started
    flat = [r for worker in results for r in worker]
    assert len(flat) == PROCESSES * ATTEMPTS
    statuses = [r["status"] for r in flat]
    assert statuses.count("booked") == 5
    assert statuses.count("taken") == PROCESSES * ATTEMPTS - 5, sorted(set(statuses))
    assert all(r["alternatives"] >= 1 for r in flat if r["status"] == "taken")  # every loser got free times
    db = sqlite3.connect(Path(data_dir) / "cobertura.db")
    overlaps = db.execute("SELECT COUNT(*) FROM bookings a JOIN bookings b ON a.tenant_id = b.tenant_id "
                          "AND a.id < b.id AND a.status = 'confirmed' AND b.status = 'confirmed' "
                          "AND a.start_utc < b.end_utc AND a.end_utc > b.start_utc").fetchone()[0]
    starts = sorted(row[0] for row in db.execute("SELECT start_utc FROM bookings WHERE status = 'confirmed'"))
    db.close()
    print(f"\n{PROCESSES} processes, {len(flat)} creates on {len(TARGETS)} slots in {elapsed:.1f} s: "
          f"{statuses.count('booked')} booked, {statuses.count('taken')} taken (each with alternatives), "
          f"{sum(s.startswith('error') for s in statuses)} errors, {overlaps} overlapping pairs")
    assert overlaps == 0
    assert len(starts) == 5 and len(set(starts)) == 5


def test_two_visitors_one_slot_one_hold(tmp_path, workers):
    data_dir = _prepare(tmp_path)
    manager, pool = workers
    barrier = manager.Barrier(2)
    outcomes = pool.starmap(_holds, [(data_dir, "visitor-a", barrier), (data_dir, "visitor-b", barrier)], chunksize=1)
    assert sorted(outcomes) == ["SlotTaken", "held"]
