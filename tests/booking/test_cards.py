"""Cancel and reschedule are confirmation cards (B4, C1-C4): proposed only for an identified customer's own
booking, re-checked at the click, run once through the booking service."""
from __future__ import annotations

from core.agent.registry import ToolEnv, TurnEvidence
from core.tenancy.context import local_customer


def _propose(brt, ctx, name: str, arguments: dict):
    tool = next(t for t in brt.actions.tools(ctx, "es") if t.name == name)
    env = ToolEnv(ctx, brt, [], TurnEvidence(), conversation_id="conv-1", language="es")
    result = tool.handler(env, arguments)
    return env, result


def _booking(brt, shop, customer: str, start: str = "2026-12-02T10:00") -> dict:
    return brt.booking.create(shop, {"name": "Ana", "email": "ana@example.com", "start": start},
                              customer_id=customer).booking


def test_a_customer_cancels_their_booking_through_an_approved_card(brt, shop):
    row = _booking(brt, shop, "cust-1")
    ana = local_customer(brt.store, "shop", "cust-1")
    env, result = _propose(brt, ana, "cancel_booking", {"booking_code": row["code"]})
    assert result["status"] == "found" and len(env.evidence.cards) == 1
    assert brt.booking.booking(shop, row["code"])["status"] == "confirmed"  # nothing changed by proposing
    card = brt.actions.record(ana, "conv-1", env.evidence.cards)[0]
    decision = brt.actions.decide(ana, card.id, True)
    assert decision.outcome == "executed"
    assert brt.booking.booking(shop, row["code"])["status"] == "cancelled"
    again = brt.actions.decide(ana, card.id, True)
    assert again.outcome == "executed" and brt.booking.bookings(shop, status="cancelled") == [
        brt.booking.booking(shop, row["code"])]


def test_another_customers_booking_cannot_be_cancelled(brt, shop):
    row = _booking(brt, shop, "cust-1")
    bea = local_customer(brt.store, "shop", "cust-2")
    env, result = _propose(brt, bea, "cancel_booking", {"booking_code": row["code"]})
    assert env.evidence.cards == [] and result["status"] == "error"
    assert "not_found" in env.evidence.notice["text"]
    assert brt.booking.booking(shop, row["code"])["status"] == "confirmed"


def test_a_reschedule_card_is_refused_at_the_click_when_the_time_was_taken_meanwhile(brt, shop):
    row = _booking(brt, shop, "cust-1")
    ana = local_customer(brt.store, "shop", "cust-1")
    env, _ = _propose(brt, ana, "reschedule_booking", {"booking_code": row["code"], "new_start": "2026-12-02T16:00"})
    card = brt.actions.record(ana, "conv-1", env.evidence.cards)[0]
    assert brt.booking.create(shop, {"name": "Eve", "email": "eve@example.com", "start": "2026-12-02T16:00"}).ok
    decision = brt.actions.decide(ana, card.id, True)
    assert decision.outcome == "refused"
    assert brt.booking.booking(shop, row["code"])["start_utc"] == "2026-12-02T09:00:00+00:00"


def test_a_reschedule_card_moves_the_booking_once_approved(brt, shop):
    row = _booking(brt, shop, "cust-1")
    ana = local_customer(brt.store, "shop", "cust-1")
    env, _ = _propose(brt, ana, "reschedule_booking", {"booking_code": row["code"], "new_start": "2026-12-02T16:00"})
    assert env.evidence.cards and env.evidence.cards[0]["preview"]
    card = brt.actions.record(ana, "conv-1", env.evidence.cards)[0]
    assert brt.actions.decide(ana, card.id, True).outcome == "executed"
    assert brt.booking.booking(shop, row["code"])["start_utc"] == "2026-12-02T15:00:00+00:00"


def test_a_taken_time_is_not_even_proposed(brt, shop):
    row = _booking(brt, shop, "cust-1")
    brt.booking.create(shop, {"name": "Eve", "email": "eve@example.com", "start": "2026-12-02T16:00"})
    ana = local_customer(brt.store, "shop", "cust-1")
    env, result = _propose(brt, ana, "reschedule_booking", {"booking_code": row["code"],
                                                            "new_start": "2026-12-02T16:00"})
    assert env.evidence.cards == [] and result["status"] == "error" and env.evidence.notice["fault"] is False


def test_without_a_schedule_the_operations_are_not_offered(brt, shop):
    ana = local_customer(brt.store, "shop", "cust-1")
    assert {"cancel_booking", "reschedule_booking"} <= {t.name for t in brt.actions.tools(ana)}
    brt.booking.remove_schedule(shop)
    assert not {"cancel_booking", "reschedule_booking"} & {t.name for t in brt.actions.tools(ana)}
