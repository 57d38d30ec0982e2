"""One card, many clicks, against a real local HTTP shop that counts requests and holds each write ~200 ms so the
clicks overlap (C2, C3): 50 threads of one runtime and 50 processes each with its own runtime on the same data dir
execute the card exactly once and all get the same body; expiry (the fake clock), a state changed since the card and
a kill switch flipped between the approval and the execution each refuse it with their own reason and send nothing;
every later click answers the same body. Each test prints its measured figures (``pytest -s``)."""
from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import threading
import time
from collections import Counter
from datetime import datetime, timezone

import pytest

from core.actions.http import HttpExecutor
from core.actions.model import OpSource
from core.agent.factory import make_agent
from core.base.config import load_settings
from core.runtime import open_runtime
from core.tenancy import settings as tenant_settings
from core.tenancy.context import local_customer
from tests.actions.card_clicker import click
from tests.actions.card_world import open_world
from tests.actions.shop_server import Recording, shop_server
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, MovableClock, ScriptedProvider

CLICKS = 50
HOLD = 0.2
NEW_ADDRESS = "Calle Nueva 2, Madrid"


@pytest.fixture(scope="module")
def shop():
    with shop_server(hold=HOLD) as running:
        yield running


@pytest.fixture
def clock():
    return MovableClock(datetime.now(timezone.utc).replace(microsecond=0))


@pytest.fixture
def world(tmp_path, shop, clock):
    shop.reset()
    opened = open_world(tmp_path / "data", shop, clock=clock)
    yield opened
    opened.close()


def propose(world, order_id: str = "1001", address: str = NEW_ADDRESS) -> str:
    """The identified customer asks, the model proposes the address change: the card's id."""
    model = ScriptedProvider(("change_delivery_address", {"order_id": order_id, "address": address}))
    result = world.rt.turns.run(world.alice, make_agent(world.rt, model, ctx=world.alice),
                                f"Cambia la dirección del pedido {order_id}", channel="identified")
    assert result.status == "card" and result.cards[0]["status"] == "proposed", result.answer
    assert world.shop.write_count() == 0
    return result.cards[0]["id"]


def events(world, card_id: str) -> Counter:
    return Counter(row["event"] for row in world.rt.actions.ledger(world.admin, card_id))


def executions(world, card_id: str) -> int:
    return len(world.rt.store.query("SELECT card_id FROM card_executions WHERE card_id = ?", [card_id]))


def assert_once(world, card_id: str, bodies: list[dict], outcomes: list[tuple[str, bool]]) -> None:
    """Exactly one request, one execution row, one body for everybody, one first decision and 49 repeats."""
    assert world.shop.write_count() == 1 and world.shop.writes[0]["idempotency_key"] == f"card-{card_id}"
    assert world.shop.writes[0]["body"] == {"address": NEW_ADDRESS}
    assert executions(world, card_id) == 1
    assert len({json.dumps(body, sort_keys=True) for body in bodies}) == 1 and len(bodies) == CLICKS
    body = bodies[0]["card"]
    assert body["status"] == "executed" and body["result"]["ok"] is True and body["id"] == card_id
    assert Counter(outcomes) == {("executed", False): 1, ("executed", True): CLICKS - 1}
    assert events(world, card_id) == {"proposed": 1, "approved": 1, "recheck": 1, "executed": 1,
                                      "repeated": CLICKS - 1}


def report(what: str, **figures) -> None:
    print(f"\n[cards concurrency] {what}: " + ", ".join(f"{k}={v}" for k, v in figures.items()))


# == 50 concurrent approvals ===================================================================================
def test_fifty_threads_approving_one_card_execute_it_once(world):
    card_id = propose(world)
    barrier, results = threading.Barrier(CLICKS), [None] * CLICKS

    def one(n: int) -> None:
        barrier.wait()
        started = time.monotonic()
        decision = world.rt.actions.decide(world.alice, card_id, True)
        results[n] = (decision, started, time.monotonic())

    threads = [threading.Thread(target=one, args=(n,)) for n in range(CLICKS)]
    began = time.monotonic()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    elapsed = time.monotonic() - began
    assert all(results), "a click never answered"
    assert_once(world, card_id, [d.as_dict() for d, _, _ in results], [(d.outcome, d.repeated) for d, _, _ in results])
    winner_done = next(end for d, _, end in results if not d.repeated)
    overlapped = sum(start < winner_done for d, start, _ in results if d.repeated)
    assert overlapped >= CLICKS // 2  # the clicks really overlapped the execution (it is held 200 ms)
    report("threads", clicks=CLICKS, requests=world.shop.write_count(), executions=executions(world, card_id),
           distinct_bodies=1, clicked_during_execution=overlapped, wall_s=f"{elapsed:.2f}",
           slowest_click_s=f"{max(end - start for _, start, end in results):.2f}")


def test_fifty_processes_approving_one_card_execute_it_once(world, tmp_path):
    card_id = propose(world)
    ready, go = tmp_path / "ready", tmp_path / "go"
    ready.mkdir()
    # forkserver: every clicker is a fork of a fresh interpreter (never of this threaded test process) that imported
    # the modules once; spawn (CARDS_TEST_START=spawn) imports everything in each of the 50 (~2.5 s of CPU each)
    method = os.environ.get("CARDS_TEST_START", "forkserver")
    mp = multiprocessing.get_context(method)
    if method == "forkserver":
        mp.set_forkserver_preload(["tests.actions.card_clicker"])
    outs = [tmp_path / f"out-{n}.json" for n in range(CLICKS)]
    data_dir = str(world.rt.settings.data_dir)
    procs = [mp.Process(target=click, args=(data_dir, "alice", card_id, str(ready), str(go), str(out)))
             for out in outs]
    began = time.monotonic()
    try:
        for proc in procs:
            proc.start()
        while len(list(ready.iterdir())) < CLICKS:
            assert all(p.exitcode in (None, 0) for p in procs), "a clicker died before the start"
            assert time.monotonic() - began < 300, "the clickers did not all get ready"
            time.sleep(0.02)
        up = time.monotonic() - began
        go.touch()
        for proc in procs:
            proc.join(timeout=90)
        elapsed = time.monotonic() - began
    finally:
        for proc in procs:  # only the clickers this test started, if one hangs
            if proc.is_alive():
                proc.terminate()
                proc.join(timeout=10)
    assert [p.exitcode for p in procs] == [0] * CLICKS
    results = [json.loads(out.read_text()) for out in outs]
    assert len({r["pid"] for r in results}) == CLICKS
    assert_once(world, card_id, [r["body"] for r in results], [(r["outcome"], r["repeated"]) for r in results])
    winner_done = next(r["finished"] for r in results if not r["repeated"])
    overlapped = sum(r["started"] < winner_done for r in results if r["repeated"])
    assert overlapped >= CLICKS // 2  # the clicks of the other processes came while the winner was executing
    spread = max(r["started"] for r in results) - min(r["started"] for r in results)
    report("processes", start=method, clicks=CLICKS, processes=len({r["pid"] for r in results}),
           requests=world.shop.write_count(), executions=executions(world, card_id), distinct_bodies=1,
           clicked_during_execution=overlapped, start_spread_s=f"{spread:.3f}",
           ready_after_s=f"{up:.2f}", wall_s=f"{elapsed:.2f}",
           open_runtime_s=f"{min(r['open_s'] for r in results):.2f}-{max(r['open_s'] for r in results):.2f}")


# == refusals: each with its reason, nothing sent, the same body again ==========================================
def again_and_again(world, card_id: str, first) -> None:
    for who in (world.alice, world.admin, world.alice):
        later = world.rt.actions.decide(who, card_id, True)
        assert later.repeated and later.as_dict() == first.as_dict()
    assert world.rt.actions.decide(world.alice, card_id, False).as_dict() == first.as_dict()


def test_an_expired_card_is_refused_as_expired_and_sends_nothing(world, clock):
    fresh, late = propose(world), propose(world, "1002")
    clock.advance(minutes=14, seconds=59)
    assert world.rt.actions.decide(world.alice, fresh, True).outcome == "executed"
    clock.advance(seconds=1)  # 15 minutes after the proposal: the card's last moment has passed
    before = world.shop.write_count(), world.shop.state_reads
    first = world.rt.actions.decide(world.alice, late, True)
    assert first.outcome == "expired" and first.as_dict()["card"]["status"] == "expired" and "expired" in first.reason
    assert (world.shop.write_count(), world.shop.state_reads) == before  # not even the state was read
    assert executions(world, late) == 0
    again_and_again(world, late, first)
    assert world.shop.write_count() == 1
    report("expiry", requests_after_expiry=0, executions=executions(world, late))


@pytest.mark.parametrize("field, value", [("address", "Plaza Mayor 3, Madrid"), ("status", "shipped")])
def test_a_state_changed_since_the_card_refuses_it_naming_the_field(world, field, value):
    card_id = propose(world)
    world.shop.set("1001", **{field: value})
    first = world.rt.actions.decide(world.alice, card_id, True)
    assert first.outcome == "refused" and first.card.status == "refused"
    assert f"{field} was" in first.reason and repr(value) in first.reason and "changed" in first.reason
    assert world.shop.write_count() == 0 and world.recorders[OpSource.HTTP].executed == []
    again_and_again(world, card_id, first)
    assert world.shop.write_count() == 0
    assert events(world, card_id)["refused"] == 1


def _flip(world, which: str, on: bool) -> None:
    if which == "global":
        world.rt.actions.settings = dataclasses.replace(world.rt.actions.settings, kill_switch=on)
    elif which == "tenant":
        tenant_settings.set_kill_switch(world.admin, world.rt.store, on)
    else:
        world.rt.actions.set_switch(world.admin, on, "incident 42")


@pytest.mark.parametrize("which", ["global", "tenant", "actions"])
def test_a_kill_switch_flipped_between_approval_and_execution_stops_the_card(world, which):
    card_id = propose(world)
    assert world.rt.actions.stopped(world.admin) is None
    world.shop.on_state = lambda: _flip(world, which, True)  # runs after the claim, before the execution
    first = world.rt.actions.decide(world.alice, card_id, True)
    world.shop.on_state = None
    said = world.rt.actions.stopped(world.admin)  # the switch's own reason, one per switch
    assert said and first.outcome == "refused" and first.reason == f"not executed: {said}"
    assert ("COBERTURA_KILL_SWITCH" in said) == (which == "global")
    assert world.shop.state_reads == 2 and world.shop.write_count() == 0  # read at the proposal and at the click
    assert world.recorders[OpSource.HTTP].executed == []  # 0 executions: the executor was never called
    assert [e for e in (r["event"] for r in world.rt.actions.ledger(world.admin, card_id))] == [
        "proposed", "approved", "recheck", "refused"]
    again_and_again(world, card_id, first)
    _flip(world, which, False)  # switched on again: the refused card stays refused
    again_and_again(world, card_id, first)
    assert world.shop.write_count() == 0 and world.recorders[OpSource.HTTP].executed == []


@pytest.mark.parametrize("which", ["tenant", "actions"])
def test_a_kill_switch_on_at_the_click_refuses_before_reading_anything(world, which):
    card_id = propose(world)
    _flip(world, which, True)
    first = world.rt.actions.decide(world.alice, card_id, True)
    assert first.outcome == "refused" and first.reason == f"not executed: {world.rt.actions.stopped(world.admin)}"
    assert world.shop.state_reads == 1  # the one read of the proposal
    assert executions(world, card_id) == 0 and world.shop.write_count() == 0
    again_and_again(world, card_id, first)


class _BrokenStateReader:
    """An executor whose state read fails with an unexpected error (a bug, not an ActionFault)."""

    def current_state(self, ctx, op, params, customer_id):
        raise RuntimeError("the state reader has a bug")

    def execute(self, ctx, op, params, customer_id, idempotency_key):
        raise AssertionError("a card whose state could not be read must never execute")


def test_a_state_read_that_breaks_after_the_claim_does_not_leave_the_card_executing(world):
    card_id = propose(world)
    recorder = world.recorders[OpSource.HTTP]
    real, recorder.inner = recorder.inner, _BrokenStateReader()  # the executor breaks after the proposal
    try:
        first = world.rt.actions.decide(world.alice, card_id, True)  # the click claimed the card: it must settle it
        assert first.card.status in ("refused", "failed") and world.shop.write_count() == 0
        started = time.monotonic()
        again = world.rt.actions.decide(world.alice, card_id, True)  # not "in_progress" after waiting 35 s
        assert again.repeated and again.as_dict() == first.as_dict() and time.monotonic() - started < 5
    finally:
        recorder.inner = real


def test_the_global_kill_switch_of_another_process_refuses_the_card(world):
    card_id = propose(world)
    settings = load_settings({"COBERTURA_DATA_DIR": str(world.rt.settings.data_dir), "COBERTURA_KILL_SWITCH": "1"})
    http = Recording(HttpExecutor(settings))
    stopped = open_runtime(settings, embedder=HashEmbedder(), tuning=TEST_TUNING, executors={OpSource.HTTP: http})
    try:
        first = stopped.actions.decide(local_customer(stopped.store, "acme", "alice"), card_id, True)
        assert first.outcome == "refused" and "COBERTURA_KILL_SWITCH=1" in first.reason
        assert http.executed == [] and http.states == 0 and world.shop.write_count() == 0
    finally:
        http.inner.close()
        stopped.close()
    again_and_again(world, card_id, first)  # the switch off in this process: still the stored refusal
    assert world.shop.write_count() == 0
