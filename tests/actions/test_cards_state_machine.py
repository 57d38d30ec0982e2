"""A hypothesis state machine over the life of cards (C1-C3): propose (the built-in e-mail change and an HTTP address
change on the real local shop), approve and reject by the card's customer, by staff, by another customer, by another
tenant's customer and staff, by an anonymous visitor; click again; advance the fake clock; toggle each kill switch
(also between the approval and the execution); change the state behind the card's back.

A model predicts every answer. Invariants after every step: each card executes at most once, and only when at its
click it was unexpired, every switch was off and its state equalled the snapshot; the executor received exactly the
frozen parameters, the card's own customer and the key ``card-<id>``; foreign clickers always get CardNotFound; a
final status never changes again and every repeated click returns the stored body."""
from __future__ import annotations

import dataclasses
from collections import Counter
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import HealthCheck, settings, strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, multiple, rule, run_state_machine_as_test

from core.actions import builtin
from core.actions.cards import CardNotFound
from core.agent.factory import make_agent
from core.agent.protocol import ToolCall
from core.agent.registry import ToolEnv, TurnEvidence
from core.tenancy import settings as tenant_settings
from tests.actions.card_world import PROFILES, open_world
from tests.actions.shop_server import ORDERS, shop_server
from tests.fakes import MovableClock, ScriptedProvider

EMAILS = ("one@new.example", "two@new.example", "alice@old.example", "bob@old.example")
ADDRESSES = ("Calle Nueva 2, Madrid", "Rua Nova 5, Porto", ORDERS["1001"]["address"])
STATUSES = ("pending", "processing", "shipped")
SWITCHES = ("global", "tenant", "actions")
ACTORS = ("owner", "staff", "other_customer", "other_tenant_customer", "other_tenant_staff", "anonymous")
FOREIGN = set(ACTORS) - {"owner", "staff"}
ALLOWED_STATUS = ("pending", "processing")
LIFETIME = timedelta(minutes=15)


@dataclasses.dataclass
class Expected:
    """The model's card: what it froze, and once decided its final status and the body every click gets."""

    id: str
    customer: str
    operation: str
    params: dict
    snapshot: dict
    created: object
    status: str = "proposed"
    body: dict | None = None


class Cards(RuleBasedStateMachine):
    world = None  # set by the test: one world (runtime, shop, recording executors) for every run
    tally: Counter = Counter()  # (operation, click, actor, outcome, flip) -> how often, over every run

    cards = Bundle("cards")

    def __init__(self) -> None:
        super().__init__()
        w = self.world
        self.rt, self.shop, self.clock = w.rt, w.shop, w.rt.store.clock
        self.rt.actions.settings = dataclasses.replace(self.rt.actions.settings, kill_switch=False)
        tenant_settings.set_kill_switch(w.admin, self.rt.store, False)
        self.rt.actions.set_switch(w.admin, False)
        self.shop.reset()
        for customer, email in PROFILES.items():
            builtin.save_profile(w.admin, self.rt.store, customer, email)
        self.emails = dict(PROFILES)
        self.switches = dict.fromkeys(SWITCHES, False)
        self.expected: dict[str, Expected] = {}
        self.seen = {source: len(r.executed) for source, r in w.recorders.items()}
        self.tally[("", "", "", "runs", "")] += 1
        self.clock.advance(days=1)  # every run starts on a fresh day: earlier runs' cards are long expired

    # -- who clicks ---------------------------------------------------------------------------------------------
    def ctx(self, actor: str, card: Expected):
        w = self.world
        other = "bob" if card.customer == "alice" else "alice"
        if actor == "owner":
            return w.alice if card.customer == "alice" else w.bob
        return {"staff": w.admin, "other_customer": w.alice if other == "alice" else w.bob,
                "other_tenant_customer": w.other_alice, "other_tenant_staff": w.other_admin,
                "anonymous": w.visitor()}[actor]

    def state_of(self, card: Expected) -> dict:
        if card.operation == builtin.UPDATE_EMAIL:
            return {"email": self.emails[card.customer]}
        return self.shop.state(card.params["order_id"])

    def stopped(self) -> bool:
        return any(self.switches.values())

    def set_switch(self, which: str, on: bool) -> None:
        w = self.world
        if which == "global":
            self.rt.actions.settings = dataclasses.replace(self.rt.actions.settings, kill_switch=on)
        elif which == "tenant":
            tenant_settings.set_kill_switch(w.admin, self.rt.store, on)
        else:
            self.rt.actions.set_switch(w.admin, on, "drill")
        self.switches[which] = on

    # -- rules ----------------------------------------------------------------------------------------------------
    @rule(target=cards, customer=st.sampled_from(["alice", "bob"]), email=st.sampled_from(EMAILS))
    def propose_email(self, customer, email):
        current = self.emails[customer]
        allowed = not self.stopped() and current.lower() != email.lower()
        return self._propose(customer, builtin.UPDATE_EMAIL, {"new_email": email}, {"email": current}, allowed)

    @rule(target=cards, customer=st.sampled_from(["alice", "bob"]), order=st.sampled_from(sorted(ORDERS)),
          address=st.sampled_from(ADDRESSES))
    def propose_address(self, customer, order, address):
        state = self.shop.state(order)
        allowed = not self.stopped() and state["status"] in ALLOWED_STATUS
        return self._propose(customer, "change_delivery_address", {"order_id": order, "address": address}, state,
                             allowed)

    def _propose(self, customer: str, operation: str, params: dict, state: dict, allowed: bool):
        """The write tool of the agent, as a turn calls it, then the proposals recorded as the turn pipeline does."""
        ctx = self.world.alice if customer == "alice" else self.world.bob
        env = ToolEnv(ctx, self.rt, [], TurnEvidence(), language="es")
        agent = make_agent(self.rt, ScriptedProvider(), ctx=ctx)
        agent.tools.run(env, ToolCall("call-1", operation, params))
        assert bool(env.evidence.cards) == allowed, env.evidence.calls
        if not allowed:
            return multiple()
        card = self.rt.actions.record(ctx, "", env.evidence.cards)[0]
        assert card.status == "proposed" and card.params == params and card.snapshot == state
        self.expected[card.id] = Expected(card.id, customer, operation, params, state, self.clock.now())
        return card.id

    @rule(card_id=cards, actor=st.sampled_from(sorted(FOREIGN)), approve=st.booleans())
    def click_as_a_stranger(self, card_id, actor, approve):
        """Another customer, another tenant's customer or staff, an anonymous visitor: exactly like a missing card."""
        card = self.expected[card_id]
        ctx = self.ctx(actor, card)
        for look in (lambda: self.rt.actions.decide(ctx, card_id, approve), lambda: self.rt.actions.card(ctx, card_id),
                     lambda: self.rt.actions.ledger(ctx, card_id)):
            with pytest.raises(CardNotFound):
                look()
        self.tally[(card.operation, "approve" if approve else "reject", actor, "not_found", "")] += 1

    @rule(card_id=cards)
    def approve_as_its_customer(self, card_id):
        self._approve(card_id, "owner", None)

    @rule(card_id=cards)
    def approve_as_staff(self, card_id):
        self._approve(card_id, "staff", None)

    @rule(card_id=cards, actor=st.sampled_from(["owner", "staff"]), flip=st.sampled_from(SWITCHES))
    def approve_while_a_switch_flips(self, card_id, actor, flip):
        self._approve(card_id, actor, flip)

    def _approve(self, card_id: str, actor: str, flip: str | None) -> None:
        card = self.expected[card_id]
        ctx = self.ctx(actor, card)
        reaches_state = card.operation != builtin.UPDATE_EMAIL and card.status == "proposed" and not (
            self.clock.now() >= card.created + LIFETIME or self.stopped())
        if flip and reaches_state:  # flipped by the state URL: after the claim, before the execution
            self.shop.on_state = lambda: self.set_switch(flip, True)
        try:
            expect = self._predict_approval(card, flip if reaches_state else None)
            decision = self.rt.actions.decide(ctx, card_id, True)
        finally:
            self.shop.on_state = None
        self._check(card, decision, expect)
        self.tally[(card.operation, "approve", actor, decision.outcome + ("+again" if decision.repeated else ""),
                    "flip" if flip and reaches_state else "")] += 1

    def _predict_approval(self, card: Expected, flip: str | None) -> tuple[str, str, bool, str]:
        """(outcome, status, repeated, why) of an approval; applies the effect of an execution to the model."""
        if card.status != "proposed":
            return ("consumed" if card.status == "rejected" else card.status), card.status, True, ""
        if self.clock.now() >= card.created + LIFETIME:
            return "expired", "expired", False, "expired"
        if self.stopped():
            return "refused", "refused", False, "not executed"
        if self.state_of(card) != card.snapshot:
            return "refused", "refused", False, "changed since the card was proposed"
        if flip:
            return "refused", "refused", False, "not executed"
        if card.operation == builtin.UPDATE_EMAIL:
            self.emails[card.customer] = card.params["new_email"]
        return "executed", "executed", False, ""

    def _check(self, card: Expected, decision, expect) -> None:
        outcome, status, repeated, why = expect
        assert (decision.outcome, decision.card.status, decision.repeated) == (outcome, status, repeated), (
            decision, card)
        if repeated:
            assert decision.as_dict() == card.body
            return
        assert why in decision.reason, (why, decision.reason)
        if why.startswith("changed"):  # the reason names every field that changed
            now = self.state_of(card)
            assert all(f"{k} was" in decision.reason for k in card.snapshot if card.snapshot[k] != now.get(k))
        if status == "executed":
            assert decision.card.result["ok"] is True
        card.status, card.body = status, decision.as_dict()

    @rule(card_id=cards, actor=st.sampled_from(["owner", "staff"]))
    def reject(self, card_id, actor):
        card = self.expected[card_id]
        ctx = self.ctx(actor, card)
        if card.status != "proposed":
            expect = ("consumed" if card.status in ("executed", "failed") else card.status), card.status, True, ""
        elif self.clock.now() >= card.created + LIFETIME:
            expect = "expired", "expired", False, "expired"
        else:
            expect = "rejected", "rejected", False, "rejected"
        decision = self.rt.actions.decide(ctx, card_id, False)
        self._check(card, decision, expect)
        again = "+again" if decision.repeated else ""
        self.tally[(card.operation, "reject", actor, decision.outcome + again, "")] += 1

    @rule(minutes=st.sampled_from([1, 5, 9, 14, 16]))
    def advance_clock(self, minutes):
        self.clock.advance(minutes=minutes)
        self.tally[("", "", "", "clock", "")] += 1

    @rule(card_id=cards, seconds=st.sampled_from([-1, 0]))
    def move_the_clock_to_the_cards_last_moment(self, card_id, seconds):
        """To one second before the card expires (still valid), or to its expiry (no longer), when that is ahead."""
        moment = self.expected[card_id].created + LIFETIME + timedelta(seconds=seconds)
        if moment > self.clock.now():
            self.clock.moment = moment
            self.tally[("", "", "", "clock", "")] += 1

    @rule(which=st.sampled_from(SWITCHES))
    def toggle_switch(self, which):
        self.set_switch(which, not self.switches[which])

    @rule()
    def every_switch_off_again(self):
        for which in SWITCHES:
            self.set_switch(which, False)

    @rule(customer=st.sampled_from(["alice", "bob"]), email=st.sampled_from(EMAILS))
    def change_email_behind_the_cards(self, customer, email):
        builtin.save_profile(self.world.admin, self.rt.store, customer, email)
        self.emails[customer] = email

    @rule(order=st.sampled_from(sorted(ORDERS)), status=st.sampled_from(STATUSES), address=st.sampled_from(ADDRESSES))
    def change_order_behind_the_cards(self, order, status, address):
        self.shop.set(order, status=status, address=address)

    # -- invariants ---------------------------------------------------------------------------------------------
    def executed(self) -> list[dict]:
        return [call for source, r in self.world.recorders.items() for call in r.executed[self.seen[source]:]]

    @invariant()
    def count_the_step(self):
        self.tally[("", "", "", "steps", "")] += 1

    @invariant()
    def each_card_executes_at_most_once_with_the_frozen_parameters(self):
        calls = self.executed()
        keys = [call["key"] for call in calls]
        assert len(keys) == len(set(keys)), keys
        for call in calls:
            card = self.expected[call["key"].removeprefix("card-")]
            assert card.status == "executed"
            assert (call["operation"], call["params"], call["customer_id"]) == (card.operation, card.params,
                                                                                  card.customer)
        assert {call["key"] for call in calls} == {f"card-{c.id}" for c in self.expected.values()
                                                   if c.status == "executed"}

    @invariant()
    def every_status_is_the_models_and_final_ones_never_change(self):
        if not self.expected:
            return
        rows = self.rt.store.query(f"SELECT id, status FROM cards WHERE id IN ({', '.join('?' * len(self.expected))})",
                                   list(self.expected))
        assert {row["id"]: row["status"] for row in rows} == {c.id: c.status for c in self.expected.values()}
        runs = self.rt.store.query("SELECT card_id, COUNT(*) AS n FROM card_executions WHERE card_id IN "
                                   f"({', '.join('?' * len(self.expected))}) GROUP BY card_id", list(self.expected))
        assert all(row["n"] == 1 for row in runs)

    @invariant()
    def the_profiles_are_the_models(self):
        rows = self.rt.store.query("SELECT tenant_id, customer_id, email FROM customer_profiles")
        acme = {r["customer_id"]: r["email"] for r in rows if r["tenant_id"] == self.world.admin.tenant_id}
        globex = {r["customer_id"]: r["email"] for r in rows if r["tenant_id"] == self.world.other_admin.tenant_id}
        assert acme == self.emails and globex == PROFILES  # another tenant's customers are never touched

    def teardown(self):
        self.shop.on_state = None


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    clock = MovableClock(datetime(2026, 12, 1, 9, 0, tzinfo=timezone.utc))
    with shop_server() as shop:
        opened = open_world(tmp_path_factory.mktemp("machine") / "data", shop, clock=clock)
        yield opened
        opened.close()


def test_cards_state_machine(world):
    Cards.world, Cards.tally = world, Counter()
    run_state_machine_as_test(Cards, settings=settings(
        max_examples=200, stateful_step_count=30, derandomize=True, deadline=None, database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much]))
    tally = Cards.tally
    outcomes = Counter()
    for (operation, _click, _actor, outcome, flip), n in tally.items():
        outcomes[(operation, outcome + ("+flip" if flip else ""))] += n
        outcomes[(operation, outcome.removesuffix("+again"), "any")] += n
    print("\n[cards state machine] " + ", ".join(f"{key[0] or 'steps'}/{key[1]}={n}" for key, n in
                                                 sorted(outcomes.items()) if len(key) == 2))
    # not vacuous: every path was taken, for both operations, first clicks and repeated ones
    for operation in (builtin.UPDATE_EMAIL, "change_delivery_address"):
        for outcome in ("executed", "expired", "refused", "rejected", "consumed", "not_found"):
            assert outcomes[(operation, outcome, "any")], (operation, outcome)
        for outcome in ("executed", "refused", "executed+again", "refused+again"):
            assert outcomes[(operation, outcome)], (operation, outcome)
    assert outcomes[("change_delivery_address", "refused+flip")]
