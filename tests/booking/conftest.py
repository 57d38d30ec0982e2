from __future__ import annotations

from datetime import datetime, timezone

import pytest

from core.base.config import load_settings
from core.booking.schedule import DEMO_SCHEDULE
from core.runtime import open_runtime
from core.tenancy.context import local_operator
from core.tenancy.tenants import create_tenant
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, MovableClock

#: Tuesday 1 December 2026, 22:00 in Madrid (21:00 UTC): tomorrow is a working Wednesday
NOW = datetime(2026, 12, 1, 21, 0, tzinfo=timezone.utc)


@pytest.fixture
def clock():
    return MovableClock(NOW)


@pytest.fixture
def brt(tmp_path, clock):
    """A runtime on a movable clock whose tenant ``shop`` has the demo schedule (Europe/Madrid)."""
    runtime = open_runtime(load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")}), embedder=HashEmbedder(),
                           tuning=TEST_TUNING, clock=clock)
    create_tenant(runtime.store, "shop", "Shop")
    runtime.booking.save_schedule(local_operator(runtime.store, "shop"), DEMO_SCHEDULE)
    yield runtime
    runtime.close()


@pytest.fixture
def shop(brt):
    return local_operator(brt.store, "shop")


@pytest.fixture
def rival(brt):
    create_tenant(brt.store, "rival", "Rival")
    ctx = local_operator(brt.store, "rival")
    brt.booking.save_schedule(ctx, DEMO_SCHEDULE)
    return ctx
