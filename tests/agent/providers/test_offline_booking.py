"""The offline responder's booking flow (#19, seed 04): a booking request calls check_availability with the mode and
the day read from the message; the answer lists the free times, each line cited live, and says how to book (on the
web: in the booking window); on the phone a follow-up naming one of the times books it with create_booking and
answers with the tool's read-back; questions ABOUT booking stay with the knowledge. Hand-made specs and results
(the shapes core.booking.tools returns); the answers are judged by the real citation gate."""
from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings, strategies as st

from core.agent import prompts
from core.agent.protocol import Message, ToolCall, ToolSpec
from core.agent.providers import booking, booking_words as words
from core.agent.providers.offline import OfflineResponder
from core.base.language import detect
from core.grounding.gate import Evidence, check

SEARCH = ToolSpec("search_knowledge", "Search", {"type": "object", "properties": {"query": {"type": "string"}}})
EXAMPLES = ("Quiero reservar una cita", "Quiero pedir cita para la revisión", "¿Tenéis hueco el martes?",
            "¿Hay disponibilidad mañana?", "¿Qué huecos libres tenéis?", "Dame cita para lo primero que tengas",
            "Necesito una cita esta semana", "Quero marcar uma revisão", "Quero agendar um horário",
            "Tem vaga amanhã?", "Quais horários livres têm?", "Can I book an appointment tomorrow?",
            "I'd like to book an appointment", "Do you have any free slots on Tuesday?", "What times are available?",
            "When is your first available appointment?")
AVAILABILITY = ToolSpec("check_availability", "Free times", {"type": "object", "properties": {
    "mode": {"type": "string", "enum": ["day", "week", "first"]}, "date": {"type": "string"}}}, "booking", EXAMPLES)
CREATE = ToolSpec("create_booking", "Book", {"type": "object", "properties": {
    "start": {"type": "string", "title": "fecha y hora"}, "name": {"type": "string", "title": "nombre"},
    "email": {"type": "string", "title": "e-mail"}, "phone": {"type": "string", "title": "teléfono"}},
    "required": ["start", "name", "email"]}, "booking")
CODE = {"type": "string", "pattern": "^[A-Z]{2}[0-9]{4}$", "title": "código de la cita"}
CANCEL = ToolSpec("cancel_booking", "Cancel a booking", {"type": "object", "properties": {"booking_code": CODE},
                                                         "required": ["booking_code"]}, "write", (
    "Quiero anular mi cita", "Cancela mi reserva AB1234", "Quero cancelar a minha marcação", "Cancel my appointment"))
MOVE = ToolSpec("reschedule_booking", "Move a booking", {"type": "object", "properties": {
    "booking_code": CODE, "new_start": {"type": "string", "pattern": r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$"}},
    "required": ["booking_code", "new_start"]}, "write", (
    "Quiero cambiar la hora de mi cita", "Cambia mi reserva a otro día", "Reschedule my appointment"))
ORDER = ToolSpec("order_status", "Order status", {"type": "object", "properties": {"order_id": {
    "type": "string", "pattern": "^[0-9]{4,8}$", "title": "número de pedido"}}, "required": ["order_id"]}, "read", (
    "¿Dónde está mi pedido?", "Estado de mi pedido", "Where is my order?"))
WEB = [SEARCH, AVAILABILITY, CANCEL, MOVE, ORDER]
PHONE = [*WEB, CREATE]
HOW_WEB = ("Las horas son en hora de Madrid (Europe/Madrid). Elige una en la ventana de reserva y confírmala allí con "
           "tu nombre, tu e-mail y tu teléfono.")
HOW_PHONE = ("Las horas son en hora de Madrid (Europe/Madrid). Dime cuál prefieres, con tu nombre, tu e-mail y tu "
             "teléfono, y la reservo.")


def slot(day: str, at: str) -> dict:
    return {"start": f"{day}T{at}+01:00", "date": day, "time": at}


def found(days: dict[str, tuple[str, list[str]]], how: str = HOW_WEB, live_id: str = "live-1") -> dict:
    """A check_availability result as core.booking.tools returns it (after the registry numbered it)."""
    return {"status": "found", "title": "Horas libres", "fetched_at": "2026-12-01T21:00:00+00:00", "mode": "day",
            "timezone": "Europe/Madrid", "zone_label": "hora de Madrid (Europe/Madrid)", "today": "2026-12-01",
            "days": [{"date": d, "label": label, "slots": [slot(d, t) for t in times]}
                     for d, (label, times) in days.items()],
            "how_to_book": how, "live_id": live_id, "cite_as": f"[[cite:{live_id}]]"}


WED = {"2026-12-02": ("miércoles 2 de diciembre", ["09:00", "10:00", "11:00", "16:00"])}
WEEK = {"2026-12-02": ("miércoles 2 de diciembre", ["09:00", "10:00"]),
        "2026-12-03": ("jueves 3 de diciembre", ["10:00", "12:00"])}
EMPTY = {"status": "empty", "title": "Horas libres", "days": [], "live_id": "live-1", "cite_as": "[[cite:live-1]]",
         "say_exactly": {lang: f"{prompts.message('live_empty', lang)} [[cite:live-1]]" for lang in prompts.LANGUAGES}}


def after(history: list[Message], *calls: tuple[str, dict, dict]) -> list[Message]:
    """The transcript with these (tool, arguments, result) rounds after the question."""
    out = list(history)
    for n, (tool, arguments, result) in enumerate(calls, 1):
        call = ToolCall(f"c{n}", tool, arguments)
        out += [Message("assistant", "", tool_calls=(call,)),
                Message("tool", json.dumps(result, ensure_ascii=False), tool_call_id=f"c{n}", name=tool)]
    return out


def reply(messages: list[Message], tools=WEB):
    return OfflineResponder().complete("", messages, tools)


def calls(messages, tools=WEB) -> list[tuple[str, dict]]:
    return [(c.name, c.arguments) for c in reply(messages, tools).tool_calls]


def passes_the_gate(text: str, *results: dict) -> bool:
    live = {r["live_id"]: json.dumps({k: v for k, v in r.items() if k not in ("live_id", "cite_as")},
                                     ensure_ascii=False) for r in results}
    verdict = check(text, Evidence({}, frozenset(), tuple(live.values()), {}, live), prompts.exempt_sentences())
    return verdict.ok


# ---------------------------------------------------------------- which messages ask for a booking
@pytest.mark.parametrize("message, arguments", [
    ("Quiero reservar una cita", {"mode": "first"}),
    ("Quiero reservar una cita para mañana", {"mode": "day", "date": "mañana"}),
    ("¿Tenéis hueco el martes?", {"mode": "day", "date": "el martes"}),
    ("lo primero que tengas", {"mode": "first"}),
    ("Dame cita, lo primero que tengas", {"mode": "first"}),
    ("Quero marcar uma revisão", {"mode": "first"}),
    ("Tem vaga amanhã?", {"mode": "day", "date": "amanhã"}),
    ("Can I book an appointment tomorrow?", {"mode": "day", "date": "tomorrow"}),
    ("I need an appointment next week", {"mode": "week", "date": "next week"}),
    ("¿Tenéis algún hueco libre esta semana?", {"mode": "week"}),
    ("Quiero una cita el jueves por la tarde", {"mode": "day", "date": "el jueves"}),
    ("¿Hay citas libres el 15 de diciembre?", {"mode": "day", "date": "el 15 de diciembre"}),
    ("Necesito cita para pasar la ITV de la bici", {"mode": "first"}),
    ("¿Puedo pedir cita para mañana?", {"mode": "day", "date": "mañana"}),
    ("Tem disponibilidade na sexta-feira?", {"mode": "day", "date": "na sexta-feira"}),
    ("Book me in for Friday", {"mode": "day", "date": "Friday"}),
])
def test_a_booking_request_checks_availability_with_the_mode_and_day_it_names(message, arguments):
    assert calls([Message("user", message)]) == [("check_availability", arguments)]


@pytest.mark.parametrize("message", [
    # about booking: how, whether, what it costs, whether one must — the knowledge answers
    "¿Cómo cancelo una cita?", "¿Cuánto cuesta la revisión?", "¿Cómo puedo reservar una cita?",
    "¿Puedo reservar por teléfono?", "How do I book an appointment?", "¿Qué pasa si no llego a mi cita?",
    "¿Hay que reservar cita para la revisión?", "¿La reserva es gratuita?", "Como posso marcar uma revisão?",
    # opening hours, other topics sharing a word
    "¿Qué horario tenéis el sábado?", "¿Abrís el sábado?", "Is shipping free?", "¿Tenéis bicis de montaña "
    "disponibles?", "Tengo una cita con el médico y no puedo recoger mi pedido", "What is the first thing to do?",
    # negated
    "No quiero reservar nada",
])
def test_a_question_about_booking_or_anything_else_goes_to_the_knowledge(message):
    assert [name for name, _ in calls([Message("user", message)])] == ["search_knowledge"]


@pytest.mark.parametrize("message, operation", [("Quiero cambiar la hora de mi cita", "reschedule_booking"),
                                               ("Cancela mi reserva AB1234", "cancel_booking")])
def test_cancelling_or_moving_a_booking_is_the_operations_card_not_availability(message, operation):
    assert [name for name, _ in calls([Message("user", message)])] == [operation]


def test_without_the_booking_tool_nothing_changes():
    assert [name for name, _ in calls([Message("user", "Quiero reservar una cita")], [SEARCH])] == ["search_knowledge"]


# ---------------------------------------------------------------- the answer: the free times, cited live
def test_the_free_times_are_listed_day_by_day_cited_and_end_with_how_to_book():
    question = [Message("user", "¿Tenéis hueco mañana?")]
    result = found(WED)
    text = reply(after(question, ("check_availability", {"mode": "day", "date": "mañana"}, result))).text
    assert text.split("\n\n") == [prompts.message("live_framing", "es"),
                                  "- miércoles 2 de diciembre: 09:00, 10:00, 11:00, 16:00 [[cite:live-1]]",
                                  f"{HOW_WEB} [[cite:live-1]]"]
    assert passes_the_gate(text, result)


def test_a_week_lists_each_day_on_its_line():
    question = [Message("user", "¿Tenéis algo esta semana para una cita?")]
    result = found(WEEK)
    text = reply(after(question, ("check_availability", {"mode": "week"}, result))).text
    assert "- miércoles 2 de diciembre: 09:00, 10:00 [[cite:live-1]]\n- jueves 3 de diciembre: 10:00, 12:00" in text
    assert passes_the_gate(text, result)


def test_a_time_the_gate_cannot_find_in_the_result_would_not_pass():
    result = found(WED)
    assert not passes_the_gate("- miércoles 2 de diciembre: 09:30 [[cite:live-1]]", result)


def test_nothing_free_that_day_says_so_then_lists_the_first_free_times_from_then_on():
    question = [Message("user", "¿Tenéis hueco el martes?")]
    first = ("check_availability", {"mode": "day", "date": "el martes"}, EMPTY)
    assert calls(after(question, first)) == [("check_availability", {"mode": "first", "date": "el martes"})]
    later = found(WEEK, live_id="live-2")
    text = reply(after(question, first, ("check_availability", {"mode": "first", "date": "el martes"}, later))).text
    assert text.startswith(f"{prompts.message('live_empty', 'es')} [[cite:live-1]]\n\n")
    assert "jueves 3 de diciembre: 10:00, 12:00 [[cite:live-2]]" in text


def test_a_day_the_service_cannot_read_falls_back_to_the_first_free_times():
    question = [Message("user", "¿Tenéis hueco el 31 de febrero para una cita?")]
    error = {"status": "error", "message": "date: '31 de febrero' is not a date I can read"}
    assert calls(after(question, ("check_availability", {"mode": "day", "date": "31 de febrero"}, error))) == [
        ("check_availability", {"mode": "first"})]


def test_a_second_failure_says_nothing_the_turn_is_a_fault():
    question = [Message("user", "Quiero reservar una cita")]
    error = {"status": "error", "message": "The calendar cannot be read."}
    answer = reply(after(question, ("check_availability", {"mode": "first"}, error)))
    assert answer.text == "" and not answer.tool_calls


@pytest.mark.parametrize("lang, question", [("pt", "Quero marcar uma revisão amanhã"),
                                            ("en", "Can I book an appointment tomorrow?")])
def test_the_framing_is_in_the_customers_language(lang, question):
    text = reply(after([Message("user", question)], ("check_availability", {}, found(WED)))).text
    assert text.startswith(prompts.message("live_framing", lang))


# ---------------------------------------------------------------- the phone: book one of the offered times
def conversation(*turns: str) -> list[Message]:
    """user / assistant / user ... messages: the earlier turns, then the current question."""
    return [Message("user" if n % 2 == 0 else "assistant", text) for n, text in enumerate(turns)]


LISTED = ("Según nuestros datos en vivo:\n\n- miércoles 2 de diciembre: 09:00, 10:00, 11:00, 16:00 [1]\n\n"
          f"{HOW_PHONE} [1]")

LISTED_WEEK = ("Según nuestros datos en vivo:\n\n- miércoles 2 de diciembre: 09:00, 10:00 [1]\n"
               f"- jueves 3 de diciembre: 10:00, 12:00 [1]\n\n{HOW_PHONE} [1]")


def test_on_the_phone_a_time_of_the_list_with_the_details_is_booked():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "A las 10:00. Soy Ana García, ana@example.com, 600 123 123")
    assert calls(talk, PHONE) == [("check_availability", {"mode": "day", "date": "mañana"})]  # re-read first
    done = after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED, HOW_PHONE)))
    assert calls(done, PHONE) == [("create_booking", {"start": "2026-12-02T10:00", "name": "Ana García",
                                                      "email": "ana@example.com", "phone": "600 123 123"})]
    booked = {"status": "booked", "booking": {"code": "B397JT"}, "say_exactly": {
        "es": "Reserva confirmada: miércoles 2 de diciembre a las 10:00, hora de Madrid (Europe/Madrid). Código de "
              "reserva: B397JT. [[cite:live-2]]", "en": "Booking confirmed: … [[cite:live-2]]"}}
    text = reply(after(done, ("create_booking", {}, booked)), PHONE).text
    assert text == booked["say_exactly"]["es"]


def test_on_the_web_the_same_follow_up_only_lists_the_times_the_visitor_picks_in_the_window():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "A las 10:00. Soy Ana García, ana@example.com")
    done = after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED)))
    answer = reply(done, WEB)
    assert not answer.tool_calls and HOW_WEB in answer.text


def test_a_time_that_is_not_free_is_answered_with_the_free_times():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "Mejor a las 12:30, soy Ana García, ana@example.com")
    answer = reply(after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED, HOW_PHONE))),
                   PHONE)
    assert not answer.tool_calls and "09:00, 10:00, 11:00, 16:00" in answer.text and HOW_PHONE in answer.text


def test_a_time_offered_on_several_days_asks_which_day_by_listing_only_those():
    talk = conversation("¿Tenéis hueco esta semana para una cita?", LISTED_WEEK,
                        "A las 10:00, Ana García, ana@example.com")
    answer = reply(after(talk, ("check_availability", {"mode": "week"}, found(WEEK, HOW_PHONE))), PHONE)
    assert not answer.tool_calls
    assert "miércoles 2 de diciembre: 10:00 [[cite:live-1]]" in answer.text
    assert "jueves 3 de diciembre: 10:00 [[cite:live-1]]" in answer.text and "12:00" not in answer.text


def test_the_day_of_a_follow_up_wins_over_the_requests():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "¿Y el jueves a las 12:00? Soy Ana García, ana@example.com")
    assert calls(talk, PHONE) == [("check_availability", {"mode": "day", "date": "el jueves"})]


def test_the_reply_to_the_question_for_the_details_books_the_time_said_before():
    asked = "Para reservar el miércoles 2 de diciembre a las 10:00 necesito: e-mail. ¿Me lo dices?"
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "A las 10:00, soy Ana García", asked,
                        "ana.garcia@example.com")
    done = after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED, HOW_PHONE)))
    assert calls(done, PHONE) == [("create_booking", {"start": "2026-12-02T10:00", "name": "Ana García",
                                                      "email": "ana.garcia@example.com"})]


def test_a_one_word_name_is_read_only_when_the_name_was_asked_for():
    asked = "Para reservar el miércoles 2 de diciembre a las 10:00 necesito: nombre. ¿Me lo dices?"
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "A las 10:00, ana@example.com", asked, "Ana")
    done = after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED, HOW_PHONE)))
    assert calls(done, PHONE) == [("create_booking", {"start": "2026-12-02T10:00", "name": "Ana",
                                                      "email": "ana@example.com"})]
    assert words.details_of("Ana").given() == {} and words.details_of("Vale", name_asked=True).given() == {}


def test_details_without_a_time_go_to_the_tool_which_asks_for_the_time_by_name():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "Soy Ana García, ana@example.com")
    assert calls(talk, PHONE) == [("create_booking", {"name": "Ana García", "email": "ana@example.com"})]


def test_a_time_taken_meanwhile_is_answered_with_the_tools_alternatives():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "A las 10:00, soy Ana García, ana@example.com")
    taken = {"status": "taken", "alternatives": [], "say_exactly": {
        "es": "Esa hora ya no está libre. Horas libres el miércoles 2 de diciembre: 11:00. [[cite:live-2]] ¿Cuál te "
              "viene bien?"}}
    done = after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED, HOW_PHONE)),
                 ("create_booking", {"start": "2026-12-02T10:00"}, taken))
    assert reply(done, PHONE).text == taken["say_exactly"]["es"]


def test_a_refused_create_lists_the_free_times_again():
    talk = conversation("¿Tenéis hueco mañana?", LISTED, "A las 10:00, soy Ana García, ana@example.com")
    refused = {"status": "not_offered", "message": "Not booked: book only a slot from the list you offered"}
    done = after(talk, ("check_availability", {"mode": "day", "date": "mañana"}, found(WED, HOW_PHONE)),
                 ("create_booking", {"start": "2026-12-02T10:00"}, refused))
    assert HOW_PHONE in reply(done, PHONE).text


def test_a_short_reply_is_answered_in_the_language_of_the_request():
    talk = conversation("Quero marcar uma revisão amanhã", "…", "às 10h00")
    said = {"status": "booked", "say_exactly": {"pt": "Marcação confirmada. [[cite:live-2]]", "en": "Booked."}}
    done = after(talk, ("check_availability", {}, found(WED, HOW_PHONE)), ("create_booking", {}, said))
    assert reply(done, PHONE).text == "Marcação confirmada. [[cite:live-2]]"


@pytest.mark.parametrize("follow_up, arguments", [
    ("¿Y el jueves?", {"mode": "day", "date": "el jueves"}), ("lo primero que tengas", {"mode": "first"}),
    ("¿Y la semana que viene?", {"mode": "week", "date": "la semana que viene"}),
    ("Mejor a las 17:00", {"mode": "day", "date": "mañana"}),
])
def test_a_short_follow_up_of_a_booking_request_checks_again(follow_up, arguments):
    assert calls(conversation("¿Tenéis hueco mañana?", LISTED, follow_up)) == [("check_availability", arguments)]


@pytest.mark.parametrize("follow_up", ["¿Mi pedido 1001 llega el martes?", "¿Y cuánto cuesta?", "Gracias",
                                       "Quiero cambiar mi e-mail a ana@example.com"])
def test_another_matter_after_a_booking_request_is_no_follow_up(follow_up):
    [(name, _)] = calls(conversation("¿Tenéis hueco mañana?", LISTED, follow_up), PHONE)
    assert name not in ("check_availability", "create_booking")


def test_a_time_long_after_the_booking_request_is_no_booking():
    talk = conversation("¿Tenéis hueco mañana?", "…", "¿Dónde está la tienda?", "…", "¿Hacéis envíos?", "…",
                        "¿Y las devoluciones?", "…", "¿Aceptáis tarjeta?", "…", "A las 10:00")
    assert [name for name, _ in calls(talk, PHONE)] == ["search_knowledge"]


# ---------------------------------------------------------------- the words
@pytest.mark.parametrize("message, day", [
    ("mañana por la mañana", "mañana"), ("por la mañana", None), ("el 15 de diciembre a las 10", "el 15 de diciembre"),
    ("Next Friday at 5 pm", "Next Friday"), ("na próxima sexta-feira", "próxima sexta-feira"), ("15/12", "15/12"),
    ("2026-12-15", "2026-12-15"), ("a las 15", None), ("December 15th", "December 15th"), ("o dia 3", "o dia 3"),
    ("pasado mañana", "pasado mañana"), ("la semana que viene", "la semana que viene"),
])
def test_the_day_is_found_as_written(message, day):
    found_day = words.day_of(message)
    assert (found_day.text if found_day else None) == day


@pytest.mark.parametrize("message, times", [
    ("a las 10:30", ["10:30"]), ("10h30 por favor", ["10:30"]), ("às 10h30", ["10:30"]),
    ("a las 5 de la tarde", ["17:00"]), ("at 9", ["09:00"]), ("Next Friday at 5 pm", ["17:00"]),
    ("a las 10 y media", ["10:30"]), ("el 15 de diciembre", []), ("mi teléfono es 600 123 123", []),
    ("2026-12-15", []),
])
def test_times_of_day_are_read_in_24_hours(message, times):
    assert words.times_of(message) == times


@pytest.mark.parametrize("message, details", [
    ("A las 10:30, soy Ana García, ana@example.com, 600 123 123",
     {"name": "Ana García", "email": "ana@example.com", "phone": "600 123 123"}),
    ("me llamo María de la Fuente y mi correo es m@example.es", {"name": "María de la Fuente",
                                                                "email": "m@example.es"}),
    ("I'm John Smith, phone +44 20 7946 0958", {"name": "John Smith", "phone": "+44 20 7946 0958"}),
    ("sou o João da Silva, 912 345 678", {"name": "João da Silva", "phone": "912 345 678"}),
    ("Ana García, ana@example.com", {"name": "Ana García", "email": "ana@example.com"}),
    ("Vale, Perfecto", {}), ("soy de Madrid", {}), ("el 15/12/2026 a las 10", {}),
])
def test_the_customers_details_are_read(message, details):
    assert words.details_of(message).given() == details


def test_a_request_with_a_time_plans_to_book_it_on_the_phone():
    plan = booking.plan("Quiero reservar una cita para mañana a las 10:00", detect("Quiero reservar"), PHONE)
    assert plan is not None and plan.arguments == {"mode": "day", "date": "mañana"} and plan.time == "10:00"
    assert plan.book and booking.plan("¿Dónde está mi pedido 1001?", "es", PHONE) is None


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=160) | st.sampled_from(["a las 10:30 el martes", "soy Ana, a@b.co, +34 600 1", "23h59",
                                                 "12 pm mañana por la mañana", "el 99/99", "at 0 am"]))
def test_reading_any_text_never_raises_and_gives_real_times(text):
    assert all(re.fullmatch(r"(?:[01]\d|2[0-3]):[0-5]\d", t) for t in words.times_of(text))
    day, found = words.day_of(text), words.details_of(text)
    assert day is None or text[day.span[0]: day.span[1]].strip() == day.text
    assert set(found.given()) <= {"name", "email", "phone"}
    booking.plan(text, "es", PHONE, conversation("¿Tenéis hueco mañana?", LISTED))


# ---------------------------------------------------------------- #19 review: whole dates, earlier offers, one booking
@pytest.mark.parametrize("message, date", [
    ("Quiero reservar una cita para el 30/11", "el 30/11"), ("¿Tenéis hueco el 3/12/2026?", "el 3/12/2026"),
    ("Quiero una cita el 15-01", "el 15-01"), ("Can I book an appointment on 30/11?", "30/11"),
    ("Quero marcar uma revisão para o dia 5/1", "o dia 5/1"), ("¿Hay citas libres el 15-01-2027?", "el 15-01-2027"),
])
def test_a_day_and_month_in_numbers_is_passed_whole(message, date):
    assert calls([Message("user", message)]) == [("check_availability", {"mode": "day", "date": date})]


@pytest.mark.parametrize("message, lang", [("Quiero reservar una cita para el 30/11", "es"),
                                           ("Quero marcar uma revisão para o dia 30/11", "pt"),
                                           ("Can I book an appointment on 30/11?", "en")])
def test_a_day_that_has_passed_is_said_before_the_times_from_today(message, lang):
    checked = {**found(WED), "day_passed": "2026-11-30"}
    text = reply(after([Message("user", message)], ("check_availability", {}, checked))).text
    assert text.startswith(f"{prompts.message('booking_day_passed', lang)}\n\n{prompts.message('live_framing', lang)}")
    assert passes_the_gate(text, checked)


@pytest.mark.parametrize("message, times, details", [
    ("el 30/11 a las 10", ["10:00"], {}), ("el 15-01 a las 9:30, soy Ana García", ["09:30"], {"name": "Ana García"}),
    ("llamadme al 600-123-123", [], {"phone": "600-123-123"}),
])
def test_a_numeric_date_is_no_time_and_no_phone(message, times, details):
    assert words.times_of(message) == times and words.details_of(message).given() == details


SAT = {"2026-12-05": ("sábado 5 de diciembre", ["10:00", "11:00", "12:00", "13:00"])}
MON = {"2026-12-07": ("lunes 7 de diciembre", ["09:00", "10:00", "16:00"])}
LISTED_SAT = ("Según nuestros datos en vivo:\n\n- sábado 5 de diciembre: 10:00, 11:00, 12:00, 13:00 [1]\n\n"
              f"{HOW_PHONE} [1]")


@pytest.mark.parametrize("earlier, message, arguments, result", [
    # another day than the one read out: that day's times, nothing booked in this turn
    (("¿Tenéis hueco el sábado?", LISTED_SAT), "El lunes a las 9:00, soy Luis Gil, luis@example.com",
     {"mode": "day", "date": "El lunes"}, MON),
    (("¿Tenéis hueco el sábado?", LISTED_SAT), "¿Y el lunes a las 16:00? Luis Gil, luis@example.com",
     {"mode": "day", "date": "el lunes"}, MON),
    # a first message with a time: nothing was read out yet
    ((), "Quiero reservar una cita para el lunes a las 9:00, soy Luis Gil, luis@example.com",
     {"mode": "day", "date": "el lunes"}, MON),
    ((), "Can I book an appointment on Monday at 9:00? I'm John Smith, john@example.com",
     {"mode": "day", "date": "on Monday"}, MON),
])
def test_a_time_not_read_out_in_an_earlier_turn_is_listed_not_booked(earlier, message, arguments, result):
    talk = conversation(*earlier, message)
    assert calls(talk, PHONE) == [("check_availability", arguments)]
    checked = found(result, HOW_PHONE)
    answer = reply(after(talk, ("check_availability", arguments, checked)), PHONE)
    assert not answer.tool_calls and "lunes 7 de diciembre: 09:00, 10:00, 16:00 [[cite:live-1]]" in answer.text
    assert passes_the_gate(answer.text, checked)


def test_the_same_time_once_read_out_is_booked_in_the_next_turn():
    listed_mon = "Según nuestros datos en vivo:\n\n- lunes 7 de diciembre: 09:00, 10:00, 16:00 [1]"
    talk = conversation("¿Tenéis hueco el sábado?", LISTED_SAT, "El lunes a las 9:00, soy Luis Gil, luis@example.com",
                        listed_mon, "A las 9:00")
    done = after(talk, ("check_availability", {"mode": "day", "date": "El lunes"}, found(MON, HOW_PHONE)))
    assert calls(done, PHONE) == [("create_booking", {"start": "2026-12-07T09:00", "name": "Luis Gil",
                                                      "email": "luis@example.com"})]


READ_BACK = ("Reserva confirmada: sábado 5 de diciembre a las 10:00, hora de Madrid (Europe/Madrid). "
             "Código de reserva: B397JT. [1]")
BOOKED = [{"date": "2026-12-05", "label": "sábado 5 de diciembre", "time": "10:00", "code": "B397JT"}]


@pytest.mark.parametrize("request_, message, lang", [
    ("¿Tenéis hueco el sábado?", "A las 12:00, soy Luis Gil, luis@example.com", "es"),
    ("¿Tenéis hueco el sábado?", "A las 11:00", "es"),
    ("Tem vaga no sábado?", "Às 12:00, sou o João Silva", "pt"),
    ("Do you have a free slot on Saturday?", "At 11:00 please", "en"),
])
def test_after_a_confirmed_booking_another_time_books_nothing_and_says_the_booking(request_, message, lang):
    talk = conversation(request_, LISTED_SAT, "A las 10:00, soy Luis Gil, luis@example.com", READ_BACK, message)
    checked = {**found(SAT, HOW_PHONE), "booked": BOOKED}
    answer = reply(after(talk, ("check_availability", {"mode": "day", "date": "el sábado"}, checked)), PHONE)
    assert not answer.tool_calls
    assert answer.text == (f"{prompts.message('booking_already', lang)}\n\n- sábado 5 de diciembre, 10:00: B397JT "
                           f"[[cite:live-1]]\n\n{prompts.message('booking_change', lang)}")
    assert passes_the_gate(answer.text, checked)


@pytest.mark.parametrize("request_, message, lang", [
    ("¿Tenéis hueco el sábado?", "A las 16:00", "es"), ("¿Tenéis hueco el sábado?", "A las 9:00, soy Luis Gil", "es"),
    ("Tem vaga no sábado?", "Às 16:00", "pt"), ("Do you have a free slot on Saturday?", "At 16:00", "en"),
])
def test_a_time_not_among_the_free_ones_is_said_to_be_not_free_before_the_list(request_, message, lang):
    talk = conversation(request_, LISTED_SAT, message)
    checked = found(SAT, HOW_PHONE)
    answer = reply(after(talk, ("check_availability", {"mode": "day", "date": "el sábado"}, checked)), PHONE)
    first, framing, rest = answer.text.split("\n\n", 2)
    assert not answer.tool_calls and (first, framing) == (prompts.message("booking_not_free", lang),
                                                          prompts.message("live_framing", lang))
    assert rest.startswith("- sábado 5 de diciembre: 10:00, 11:00, 12:00, 13:00 [[cite:live-1]]")
    assert passes_the_gate(answer.text, checked)


@pytest.mark.parametrize("line, day, at, heard", [
    ("- miércoles 2 de diciembre: 09:00, 10:00 [1]", "2026-12-02", "10:00", True),
    ("- quarta-feira, 2 de dezembro: 12:00 [1]", "2026-12-02", "12:00", True),  # a reply in another language
    ("- Wednesday 2 December: 12:00 [1]", "2026-12-02", "12:00", True),
    ("- miércoles 2 de diciembre: 09:00, 10:00 [1]", "2026-12-02", "16:00", False),  # not that time
    ("- lunes 7 de diciembre: 09:00 [1]", "2026-12-01", "09:00", False),  # "[1]" is no day of the month
    ("- miércoles 2 de enero: 12:00 [2]", "2026-12-02", "12:00", False),  # another month
    ("- viernes 12 de diciembre: 10:00 [1]", "2026-12-02", "10:00", False),
])
def test_a_slot_counts_as_read_out_by_its_day_month_and_time_on_one_line(line, day, at, heard):
    assert words.says_slot(line, day, at) is heard
