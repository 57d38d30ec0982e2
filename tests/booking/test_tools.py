"""The agent's booking tools over the real booking service (B4, seed 04): check_availability is live data of the
turn, fills the web booking window or records the phone's offer; create_booking books on the phone only a time of
that offer and answers every status in the model's words (the read-back to say, the details to ask for by name,
the day's free times after a clash); a calendar that cannot be read is a fault. Then whole turns with the offline
responder: the web lists the times and sends the window; a phone call books one of them."""
from __future__ import annotations

import json
from zoneinfo import ZoneInfo

import pytest

from core.agent import prompts
from core.agent.factory import make_agent
from core.agent.protocol import ToolCall
from core.agent.providers.offline import OfflineResponder
from core.agent.registry import ToolEnv, ToolRegistry, TurnEvidence
from core.booking.model import CalendarUnavailable
from core.booking.tools import AVAILABILITY, CREATE, KIND, booking_tools
from core.grounding.gate import Evidence, check
from core.tenancy.context import local_caller, local_customer

MADRID = ZoneInfo("Europe/Madrid")
WED = "2026-12-02"  # tomorrow in Madrid at the fixtures' NOW (Tuesday 1 December, 22:00 there)
WED_TIMES = ["09:00", "10:00", "11:00", "12:00", "13:00", "16:00", "17:00", "18:00"]


@pytest.fixture
def caller(brt):
    return local_caller(brt.store, "shop", "600111222")


def conversation(brt, ctx) -> str:
    from core.channels import conversations

    return conversations.start(ctx, brt.store, ctx.channel).id


def env(ctx, language: str = "es", conversation_id: str = "") -> ToolEnv:
    return ToolEnv(ctx, None, [], TurnEvidence(), conversation_id=conversation_id, language=language)


def run(brt, turn: ToolEnv, tool: str, **arguments) -> dict:
    registry = ToolRegistry(booking_tools(brt.booking))
    return json.loads(registry.run(turn, ToolCall("c1", tool, arguments)).content)


def gate_passes(text: str, turn: ToolEnv) -> bool:
    evidence = turn.evidence
    return check(text, Evidence({}, frozenset(), tuple(evidence.live), {}, evidence.live_texts(),
                                evidence.live_empty()), prompts.exempt_sentences()).ok


# ---------------------------------------------------------------- where each tool is offered, how it reads
def test_availability_is_offered_everywhere_a_customer_can_pick_and_create_only_on_the_phone(brt, shop, caller):
    registry = ToolRegistry(booking_tools(brt.booking))
    customer = local_customer(brt.store, "shop", "c1")
    assert [t.name for t in registry.offered(env(shop))] == [AVAILABILITY]  # the CLI / admin: the window
    assert [t.name for t in registry.offered(env(customer))] == [AVAILABILITY]
    assert [t.name for t in registry.offered(env(caller))] == [AVAILABILITY, CREATE]
    specs = {s.name: s for s in registry.specs(env(caller, "pt"))}
    assert specs[AVAILABILITY].kind == KIND and "Quero marcar uma revisão" in specs[AVAILABILITY].examples
    assert specs[CREATE].parameters["properties"]["name"]["title"] == "nome"  # the customer is asked by these names
    assert specs[AVAILABILITY].parameters["properties"]["mode"]["enum"] == ["day", "week", "first"]


def test_a_tenant_without_a_schedule_gets_no_booking_tools(brt):
    from core.tenancy.context import local_operator
    from core.tenancy.tenants import create_tenant

    create_tenant(brt.store, "plain", "Plain")
    assert brt.booking.tools(local_operator(brt.store, "plain")) == []


# ---------------------------------------------------------------- check_availability
def test_on_the_web_the_free_times_are_live_data_and_fill_the_booking_window(brt, shop):
    turn = env(shop)
    result = run(brt, turn, AVAILABILITY, mode="day", date="mañana")
    assert result["status"] == "found" and result["cite_as"] == "[[cite:live-1]]"
    [day] = result["days"]
    assert day["date"] == WED and day["label"] == "miércoles 2 de diciembre"
    assert [s["time"] for s in day["slots"]] == WED_TIMES and day["slots"][1]["start"] == "2026-12-02T10:00+01:00"
    assert result["zone_label"] == "hora de Madrid (Europe/Madrid)" and result["today"] == "2026-12-01"
    assert "ventana de reserva" in result["how_to_book"] and "hora de Madrid (Europe/Madrid)" in result["how_to_book"]
    window = turn.evidence.booking_window
    assert window["hold_minutes"] == brt.booking.hold_minutes and [s["time"] for s in window["slots"]] == WED_TIMES
    assert window["zone_label"] == "hora de Madrid (Europe/Madrid)"
    assert gate_passes(f"- miércoles 2 de diciembre: 10:00, 11:00 [[cite:live-1]]\n\n{result['how_to_book']} "
                       "[[cite:live-1]]", turn)
    assert not gate_passes("- miércoles 2 de diciembre: 10:30 [[cite:live-1]]", turn)  # no such time was returned


def test_on_the_phone_the_times_are_this_conversations_offer_and_no_window(brt, caller):
    talk = conversation(brt, caller)
    turn = env(caller, conversation_id=talk)
    result = run(brt, turn, AVAILABILITY, mode="first")
    assert result["status"] == "found" and turn.evidence.booking_window is None
    assert "Dime cuál prefieres" in result["how_to_book"]
    listed = [s["start"] for d in result["days"] for s in d["slots"]]
    assert len(listed) == 5 and [s.start.astimezone(MADRID).isoformat(timespec="minutes")
                                 for s in brt.booking.offered(caller, talk)] == listed


def test_a_closed_day_is_an_explicit_empty_result(brt, shop):
    turn = env(shop)
    result = run(brt, turn, AVAILABILITY, mode="day", date="2026-12-08")  # a holiday of the demo schedule
    assert result["status"] == "empty" and result["days"] == [] and turn.evidence.live_empty() == {"live-1"}
    assert result["say_exactly"]["es"] == f"{prompts.message('live_empty', 'es')} [[cite:live-1]]"
    assert turn.evidence.booking_window is None


@pytest.mark.parametrize("asked, note", [("2026-11-28", "The day asked (2026-11-28) has passed: today in Europe/Madrid "
                                                        "is 2026-12-01"),
                                         ("2027-06-01", "past the booking horizon: bookings are taken up to 60 days "
                                                        "ahead (until 2027-01-30)")])
def test_a_day_passed_or_past_the_horizon_is_said_to_the_model(brt, shop, asked, note):
    result = run(brt, env(shop), AVAILABILITY, mode="day", date=asked)
    assert note in result["message"]


@pytest.mark.parametrize("arguments, says", [({"mode": "day", "date": "el día de la marmota"}, "not a date"),
                                             ({"mode": "yearly"}, "not a mode")])
def test_arguments_the_service_refuses_come_back_to_the_model_to_fix(brt, shop, arguments, says):
    turn = env(shop)
    result = run(brt, turn, AVAILABILITY, **arguments)
    assert result["status"] == "error" and says in result["message"] and "mode 'first'" in result["message"]
    assert turn.evidence.faults == 0 and turn.evidence.notice is None


class Unreachable:
    name = "caldav"

    def busy(self, start, end):
        raise CalendarUnavailable("The calendar at https://cal.example could not be reached")


def test_a_calendar_that_cannot_be_read_is_a_fault_and_no_time_is_offered(brt, shop):
    brt.booking.calendar_factory = lambda found: Unreachable()
    turn = env(shop)
    result = run(brt, turn, AVAILABILITY, mode="first")
    assert result["status"] == "error" and "could not be reached" in result["message"]
    assert turn.evidence.faults == 1 and turn.evidence.notice["fault"] is True
    assert turn.evidence.notice["text"] == prompts.message("action_failed", "es").format(title="Horas libres")
    assert turn.evidence.booking_window is None and turn.evidence.live_ids == {}


# ---------------------------------------------------------------- create_booking (phone)
def offer(brt, caller) -> tuple[str, ToolEnv]:
    talk = conversation(brt, caller)
    turn = env(caller, conversation_id=talk)
    run(brt, turn, AVAILABILITY, mode="day", date="mañana")
    return talk, turn


def test_an_offered_time_is_booked_and_read_back_with_date_time_zone_and_code(brt, caller):
    talk, turn = offer(brt, caller)
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana García", email="ana@example.com",
                 phone="600 123 123")
    assert result["status"] == "booked"
    booking = result["booking"]
    assert (booking["date"], booking["time"], booking["timezone"]) == (WED, "10:00", "Europe/Madrid")
    said = result["say_exactly"]["es"]
    assert said.startswith("Reserva confirmada: miércoles 2 de diciembre a las 10:00, hora de Madrid "
                           f"(Europe/Madrid). Código de reserva: {booking['code']}.")
    assert said.endswith("[[cite:live-2]]") and gate_passes(said, turn)
    assert "Wednesday 2 December at 10:00, Madrid time (Europe/Madrid)" in result["say_exactly"]["en"]
    [row] = brt.booking.bookings(caller)
    assert (row["channel"], row["customer_id"], row["conversation_id"]) == ("phone", "phone:600111222", talk)
    assert row["phone"] == "+34600123123"


def test_every_read_back_passes_the_citation_gate_whatever_its_code(brt):
    import random
    from datetime import date

    from core.booking import bookings, tools
    from core.booking.model import day_label, zone_label

    rng = random.Random(19)  # the codes the service draws, from its alphabet (the gate once missed 1 in 7 of them)
    for lang in tools.LANGS:
        for _ in range(150):
            code = "".join(rng.choice(bookings._CODE_ALPHABET) for _ in range(6))
            said = tools.text(lang)["booked"].format(day=day_label(date(2026, 12, 2), lang), time="16:00", code=code,
                                                     zone=zone_label("Europe/Madrid", lang))
            turn = env(None)
            live = json.dumps({"status": "booked", "say": {lang: said}}, ensure_ascii=False)
            turn.evidence.live_ids["live-1"] = {"text": live, "status": "found"}
            turn.evidence.live.append(live)
            assert gate_passes(f"{said} [[cite:live-1]]", turn), said


def test_a_retried_call_returns_the_first_booking(brt, caller):
    _, turn = offer(brt, caller)
    details = {"name": "Ana García", "email": "ana@example.com"}
    first = run(brt, turn, CREATE, start=f"{WED}T10:00", **details)
    again = run(brt, turn, CREATE, start=f"{WED}T10:00:00+01:00", **details)  # the same time, written otherwise
    assert first["status"] == again["status"] == "booked" and again.get("repeated") is True
    assert again["booking"]["code"] == first["booking"]["code"] and len(brt.booking.bookings(caller)) == 1


def test_a_time_never_offered_in_this_conversation_is_refused(brt, caller):
    turn = env(caller, conversation_id=conversation(brt, caller))
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana García", email="ana@example.com")
    assert result["status"] == "not_offered" and "check_availability" in result["message"]
    assert brt.booking.bookings(caller) == []


def test_missing_details_are_asked_for_by_name_and_the_turn_ends_on_the_question(brt, caller):
    _, turn = offer(brt, caller)
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana García", email="undefined", phone="sin teléfono")
    assert result["status"] == "missing" and result["missing"] == ["email"]
    [question] = turn.evidence.clarify
    assert question["question"] == ("Para reservar el miércoles 2 de diciembre a las 10:00 necesito: e-mail. "
                                    "¿Me lo dices?")
    assert brt.booking.bookings(caller) == []


def test_an_invalid_phone_is_asked_for_again(brt, caller):
    _, turn = offer(brt, caller)
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana", email="ana@example.com", phone="12")
    assert result["status"] == "invalid" and "phone" in result["problems"][0]
    assert turn.evidence.clarify[0]["question"].startswith("Para reservar el miércoles 2 de diciembre a las 10:00 "
                                                           "necesito de nuevo: teléfono")


def test_without_a_time_the_customer_is_asked_for_the_date_and_time(brt, caller):
    _, turn = offer(brt, caller)
    run(brt, turn, CREATE, name="Ana García", email="ana@example.com")
    assert turn.evidence.clarify[0]["question"] == "Para reservar necesito: fecha y hora. ¿Me lo dices?"


def test_a_time_taken_meanwhile_answers_with_that_days_free_times_which_are_offered_in_turn(brt, caller):
    talk, turn = offer(brt, caller)
    other = brt.booking.create(caller, {"name": "Luis", "email": "luis@example.com", "start": f"{WED}T10:00"})
    assert other.ok
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana García", email="ana@example.com")
    assert result["status"] == "taken" and [a["time"] for a in result["alternatives"]] == [
        "09:00", "11:00", "12:00", "13:00", "16:00"]
    said = result["say_exactly"]["es"]
    assert said.startswith("Esa hora ya no está libre. Horas libres el miércoles 2 de diciembre: 09:00, 11:00, 12:00, "
                           "13:00, 16:00. [[cite:live-2]]") and said.endswith("¿Cuál te viene bien?")
    assert gate_passes(said, turn)
    assert run(brt, turn, CREATE, start=f"{WED}T11:00", name="Ana García", email="ana@example.com")["status"] == \
        "booked"


def test_a_time_that_has_passed_states_today_in_the_business_zone(brt, caller, clock):
    _, turn = offer(brt, caller)
    clock.advance(days=2)
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana García", email="ana@example.com")
    assert result["status"] == "past" and "2026-12-03" in result["message"] and "Europe/Madrid" in result["message"]


def test_a_calendar_that_cannot_be_written_is_a_fault(brt, caller):
    _, turn = offer(brt, caller)
    brt.booking.calendar_factory = lambda found: Unreachable()
    result = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana García", email="ana@example.com")
    assert result["status"] == "error" and turn.evidence.notice["fault"] is True
    assert brt.booking.bookings(caller) == []


# ---------------------------------------------------------------- whole turns, offline responder
def test_a_web_visitor_asking_for_an_appointment_gets_the_times_and_the_booking_window(brt, shop):
    result = brt.turns.run(shop, make_agent(brt, OfflineResponder(), ctx=shop), "Quiero reservar una cita para mañana")
    assert result.status == "answered" and result.gap_id is None
    assert "- miércoles 2 de diciembre: 09:00, 10:00, 11:00, 12:00, 13:00, 16:00, 17:00, 18:00 [1]" in result.answer
    assert "Elige una en la ventana de reserva" in result.answer
    assert result.citations[0]["path"] == "live/check_availability" and result.citations[0]["live"] is True
    assert result.booking_window["days"][0]["date"] == WED and result.booking_window["hold_minutes"] > 0
    assert {c["verdict"] for c in result.trace.gate[-1]["claims"]} <= {"exempt", "live_data"}
    assert brt.booking.bookings(shop) == []  # the visitor books in the window, never the agent


def test_a_phone_caller_is_offered_times_then_books_one_and_hears_it_read_back(brt, caller):
    agent = make_agent(brt, OfflineResponder(), ctx=caller)
    first = brt.turns.run(caller, agent, "¿Tenéis hueco mañana?", channel="phone")
    assert first.status == "answered" and first.booking_window is None and "Dime cuál prefieres" in first.answer
    second = brt.turns.run(caller, agent, "A las 16:00. Soy Ana García, ana@example.com, 600 123 123",
                           conversation_id=first.conversation_id)
    [row] = brt.booking.bookings(caller)
    assert second.status == "answered" and second.answer == (
        f"Reserva confirmada: miércoles 2 de diciembre a las 16:00, hora de Madrid (Europe/Madrid). Código de reserva: "
        f"{row['code']}. [1]")
    assert second.citations[0]["path"] == "live/create_booking"
    assert (row["name"], row["email"], row["channel"]) == ("Ana García", "ana@example.com", "phone")


def test_a_phone_caller_missing_the_e_mail_is_asked_for_it_and_the_reply_books(brt, caller):
    agent = make_agent(brt, OfflineResponder(), ctx=caller)
    first = brt.turns.run(caller, agent, "Quiero reservar una cita para mañana", channel="phone")
    asked = brt.turns.run(caller, agent, "A las 12:00, soy Ana García", conversation_id=first.conversation_id)
    assert asked.status == "clarify" and "necesito: e-mail" in asked.answer and asked.gap_id is None
    done = brt.turns.run(caller, agent, "ana.garcia@example.com", conversation_id=first.conversation_id)
    assert done.status == "answered" and done.answer.startswith("Reserva confirmada: miércoles 2 de diciembre a las "
                                                                "12:00")
    assert [r["email"] for r in brt.booking.bookings(caller)] == ["ana.garcia@example.com"]


def test_a_question_about_booking_is_not_answered_with_times(brt, shop):
    result = brt.turns.run(shop, make_agent(brt, OfflineResponder(), ctx=shop), "¿Cómo cancelo una cita?")
    assert [t["tool"] for t in result.trace.tools][:1] == ["search_knowledge"] and result.booking_window is None


# ---------------------------------------------------------------- #19 review: whole dates, earlier offers, one booking
def test_on_the_phone_the_availability_names_the_booking_this_conversation_made(brt, caller):
    talk, turn = offer(brt, caller)
    assert "booked" not in run(brt, turn, AVAILABILITY, mode="day", date="mañana")
    code = run(brt, turn, CREATE, start=f"{WED}T10:00", name="Ana", email="ana@example.com")["booking"]["code"]
    result = run(brt, env(caller, conversation_id=talk), AVAILABILITY, mode="day", date="mañana")
    assert result["booked"] == [{"date": WED, "label": "miércoles 2 de diciembre", "time": "10:00", "code": code}]
    assert "already has a confirmed booking" in result["message"]
    other = run(brt, env(caller, conversation_id=conversation(brt, caller)), AVAILABILITY, mode="day", date="mañana")
    assert "booked" not in other  # another conversation's booking is not this one's


@pytest.mark.parametrize("question, date, asked", [
    ("Quiero reservar una cita para el 30/11", "el 30/11", "2026-11-30"),
    ("¿Tenéis hueco el 3/12/2026?", "el 3/12/2026", None), ("Quiero una cita el 15-01", "el 15-01", None)])
def test_a_numeric_date_reaches_the_service_whole(brt, shop, question, date, asked):
    result = brt.turns.run(shop, make_agent(brt, OfflineResponder(), ctx=shop), question)
    call = next(t for t in result.trace.tools if t["tool"] == AVAILABILITY)
    assert result.status == "answered" and call["arguments"] == {"mode": "day", "date": date}
    said = run(brt, env(shop), AVAILABILITY, **call["arguments"])
    if asked:  # a past day is answered as past (not as next month's 30th), then the times from today
        assert f"The day asked ({asked}) has passed" in said["message"] and said["day_passed"] == asked
        assert result.answer.startswith(f"{prompts.message('booking_day_passed', 'es')}\n\n")
        assert "miércoles 2 de diciembre: 09:00" in result.answer
    else:
        assert said["status"] == "found" and "day_passed" not in said and not result.answer.startswith(
            prompts.message("booking_day_passed", "es"))


def test_a_phone_caller_naming_another_day_hears_its_times_and_books_in_the_next_turn(brt, caller):
    agent = make_agent(brt, OfflineResponder(), ctx=caller)
    first = brt.turns.run(caller, agent, "¿Tenéis hueco el sábado?", channel="phone")
    assert "sábado 5 de diciembre: 10:00, 11:00, 12:00, 13:00 [1]" in first.answer
    other = brt.turns.run(caller, agent, "El lunes a las 9:00, soy Luis Gil, luis@example.com",
                          conversation_id=first.conversation_id)
    assert other.status == "answered" and "lunes 7 de diciembre: 09:00, 10:00" in other.answer
    assert [t["tool"] for t in other.trace.tools] == [AVAILABILITY] and brt.booking.bookings(caller) == []
    booked = brt.turns.run(caller, agent, "A las 9:00", conversation_id=first.conversation_id)
    [row] = brt.booking.bookings(caller)
    assert booked.answer.startswith("Reserva confirmada: lunes 7 de diciembre a las 09:00")
    assert (row["name"], row["email"]) == ("Luis Gil", "luis@example.com")


@pytest.mark.parametrize("later", ["A las 12:00, soy Luis Gil, luis@example.com", "A las 16:00",
                                   "El lunes a las 9:00, soy Luis Gil, luis@example.com"])
def test_after_a_confirmed_booking_a_further_time_books_nothing_and_names_the_booking(brt, caller, later):
    agent = make_agent(brt, OfflineResponder(), ctx=caller)
    first = brt.turns.run(caller, agent, "¿Tenéis hueco el sábado?", channel="phone")
    done = brt.turns.run(caller, agent, "A las 10:00, soy Luis Gil, luis@example.com",
                         conversation_id=first.conversation_id)
    [row] = brt.booking.bookings(caller)
    assert done.answer.startswith("Reserva confirmada: sábado 5 de diciembre a las 10:00")
    again = brt.turns.run(caller, agent, later, conversation_id=first.conversation_id)
    assert [r["code"] for r in brt.booking.bookings(caller)] == [row["code"]]
    assert again.status == "answered" and CREATE not in [t["tool"] for t in again.trace.tools]
    assert again.answer == (f"{prompts.message('booking_already', 'es')}\n\n- sábado 5 de diciembre, 10:00: "
                            f"{row['code']} [1]\n\n{prompts.message('booking_change', 'es')}")


def test_a_phone_caller_naming_a_time_not_free_hears_so_before_the_free_times(brt, caller):
    agent = make_agent(brt, OfflineResponder(), ctx=caller)
    first = brt.turns.run(caller, agent, "¿Tenéis hueco el sábado?", channel="phone")
    again = brt.turns.run(caller, agent, "A las 16:00", conversation_id=first.conversation_id)
    assert again.status == "answered" and again.answer.startswith(
        f"{prompts.message('booking_not_free', 'es')}\n\n{prompts.message('live_framing', 'es')}\n\n- sábado 5 de "
        "diciembre: 10:00, 11:00, 12:00, 13:00 [1]")
    assert brt.booking.bookings(caller) == []
