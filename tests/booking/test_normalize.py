"""Input normalisation for create_booking (B3): whatever a model sends becomes one flat dict of known fields, is
checked with every missing field named and every problem said for the model, and days in the customer's words are
read relative to today in the business's zone. Table-driven, plus hypothesis: never raises, idempotent."""
from __future__ import annotations

import json
import time as clock
import unicodedata
from datetime import date, datetime, time, timezone

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from core.booking.fields import ALIASES, FIELDS, MAX_DEPTH, is_placeholder
from core.booking.normalize import normalize, past_message, read_day, read_time, validate
from core.booking.schedule import DEMO_SCHEDULE, Schedule

MADRID = DEMO_SCHEDULE
WEEKLY = {n: ((time(9), time(18)),) for n in range(7)}
SAO_PAULO = Schedule("America/Sao_Paulo", WEEKLY, country="BR")
NEW_YORK = Schedule("America/New_York", WEEKLY, country="US")
NOW = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)  # Tuesday 1 December 2026, 11:00 in Madrid
TUESDAY = date(2026, 12, 1)
ANA = {"name": "Ana López", "email": "ana@taller.es"}

# -- normalize: the seed's shapes ---------------------------------------------------------------------------------
INNER = {"nombre": "Ana López", "correo": "ana@taller.es", "telefono": "600 111 222", "fecha": "2026-12-02",
         "hora": "10:00"}
FLAT = {"name": "Ana López", "email": "ana@taller.es", "phone": "600 111 222", "date": "2026-12-02", "time": "10:00"}


@pytest.mark.parametrize("raw", [
    INNER,
    json.dumps(INNER),                                        # the whole input as JSON text
    json.dumps(json.dumps(INNER)),                            # JSON encoded twice
    {"arguments": json.dumps(INNER)},                         # OpenAI-style arguments string
    {"input": INNER},                                         # Anthropic-style input object
    {"booking": INNER},
    {"data": json.dumps(INNER)},
    [INNER],                                                  # a list of one object
    {"arguments": json.dumps({"booking": json.dumps(INNER)})},  # JSON inside JSON inside a wrapper
    {"type": "tool_use", "id": "toolu_1", "name": "create_booking", "input": INNER},  # the envelope's name is the tool
    {"function": {"name": "create_booking", "arguments": json.dumps(INNER)}},
    {"params": {"customer": {"nombre": "Ana López", "correo": "ana@taller.es", "telefono": "600 111 222"},
                "slot": {"fecha": "2026-12-02", "hora": "10:00"}}},
    {"nombre": "Ana López", "correo": "ana@taller.es", "telefono": "undefined",
     "details": {"phone": "600 111 222", "date": "2026-12-02", "time": "10:00"}},  # a placeholder claims nothing
    b'{"input": {"nombre": "Ana L\\u00f3pez", "correo": "ana@taller.es", "telefono": "600 111 222", '
    b'"fecha": "2026-12-02", "hora": "10:00"}}',
])
def test_every_shape_the_seed_names_unwraps_to_one_flat_dict(raw):
    assert normalize(raw) == FLAT


@pytest.mark.parametrize("word", [
    "undefined", "null", "None", "nil", "no", "N/A", "na", "-", "—", "sin teléfono", "Sin Telefono", "sin email",
    "sem telefone", "sem email", "no tengo", "Não tenho", "not provided", "", "   ", "\t\n", "UNDEFINED", "'null'",
    "\"undefined\"", "[object Object]",
])
def test_words_that_mean_no_value_are_missing(word):
    assert normalize({"name": "Ana", "phone": word, "notes": word}) == {"name": "Ana"}


@pytest.mark.parametrize("value", [None, True, False, float("nan"), float("inf"), [], {}, [None], object()])
def test_non_text_non_number_values_are_missing(value):
    assert normalize({"name": "Ana", "phone": value}) == {"name": "Ana"}


@pytest.mark.parametrize("field, keys", [
    ("name", ["nombre", "nome", "name", "full_name", "Full Name", "fullName", "cliente"]),
    ("email", ["correo", "email", "e-mail", "E-Mail", "mail", "correo_electronico", "Correo electrónico"]),
    ("phone", ["telefono", "teléfono", "telefone", "phone", "mobile", "móvil", "celular", "phone_number"]),
    ("date", ["fecha", "data", "date", "día"]),
    ("time", ["hora", "time", "horario"]),
    ("start", ["start", "datetime", "slot", "inicio", "start_time", "fecha_hora", "starts_at"]),
    ("notes", ["notas", "notes", "comentario", "observaciones", "observações"]),
    ("idempotency_key", ["idempotency_key", "idempotencyKey", "idempotency-key"]),
])
def test_field_names_in_spanish_portuguese_and_english(field, keys):
    for key in keys:
        assert normalize({key: "x1"}) == {field: "x1"}, key


def test_only_a_tool_name_beside_the_arguments_is_dropped():
    assert normalize({"name": "Ana", "input": {"email": "ana@taller.es"}}) == {"name": "Ana", "email": "ana@taller.es"}
    assert normalize({"name": "functions.create_booking", "arguments": {"nombre": "Jean-Pierre"}}) == {
        "name": "Jean-Pierre"}
    assert normalize({"name": "createBooking", "input": "{}"}) == {}


def test_numbers_become_text_and_first_and_last_names_join():
    assert normalize({"first_name": "Ana", "apellidos": "López García", "phone": 34600111222}) == {
        "name": "Ana López García", "phone": "34600111222"}
    assert normalize({"nombre": "Ana", "last_name": "Pérez"}) == {"name": "Ana"}


def test_the_outer_value_wins_and_text_is_cleaned():
    raw = {"name": "  Ana \u200b López\n", "booking": {"name": "Otra", "email": "ana@taller.es"},
           "notes": "traer\tlas llaves\x00"}
    assert normalize(raw) == {"name": "Ana López", "email": "ana@taller.es", "notes": "traer las llaves"}


def test_caps_bound_depth_size_and_self_reference():
    deep: dict = {"name": "Ana"}
    for _ in range(MAX_DEPTH + 5):
        deep = {"input": deep}
    assert normalize(deep) == {}
    shallow = {"name": "Ana"}
    for _ in range(MAX_DEPTH - 2):
        shallow = {"input": shallow}
    assert normalize(shallow) == {"name": "Ana"}
    loop: dict = {"email": "ana@taller.es"}
    loop["self"] = loop
    assert normalize(loop) == {"email": "ana@taller.es"}
    started = clock.perf_counter()
    assert normalize("[" * 50_000 + "]" * 50_000) == {}
    assert normalize([{"x": [list(range(1000))] * 100}] * 100 + [{"name": "late"}]) == {}
    assert normalize({"notes": "n" * 5000})["notes"] == "n" * 1000
    assert clock.perf_counter() - started < 2


# -- normalize: properties ------------------------------------------------------------------------------------------
KEYS = sorted(ALIASES) + ["arguments", "input", "booking", "data", "first_name", "apellido", "x", ""]
scalars = (st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=40)
           | st.sampled_from(["undefined", "null", "sin teléfono", "—", " N/A ", "{", "[1,", "\"\"", "\ud7ff\u0301"]))
json_values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                           | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=10), inner, max_size=5)
                           | inner.map(lambda v: json.dumps(v, ensure_ascii=False)), max_leaves=25)
junk = json_values | json_values.map(json.dumps) | st.binary(max_size=60) | st.text(max_size=200)
PROPERTY = settings(max_examples=150, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow])


@PROPERTY
@given(raw=junk)
def test_normalize_never_raises_returns_known_text_fields_and_is_idempotent(raw):
    once = normalize(raw)
    assert set(once) <= set(FIELDS) and all(isinstance(v, str) and v for v in once.values())
    assert normalize(once) == once
    assert normalize(json.dumps(once)) == once
    assert normalize({"arguments": json.dumps(once)}) == once


@PROPERTY
@given(key=st.sampled_from(sorted(ALIASES)), value=st.text(alphabet=st.characters(categories=["L", "N"]),
                                                           min_size=1, max_size=20),
       wrap=st.sampled_from(["plain", "arguments", "input", "list", "twice"]))
def test_any_alias_in_any_wrapper_is_found(key, value, wrap):
    inner = {key: value}
    raw = {"plain": inner, "arguments": {"arguments": json.dumps(inner)}, "input": {"input": inner},
           "list": [inner], "twice": json.dumps(json.dumps(inner))}[wrap]
    expected = unicodedata.normalize("NFC", value)  # compatibility ideographs and decomposed accents compose
    assert normalize(raw) == ({} if is_placeholder(expected) else {ALIASES[key]: expected})


# -- validate ---------------------------------------------------------------------------------------------------------
def test_a_complete_booking_is_checked_to_utc_and_e164():
    checked = validate(normalize({"arguments": json.dumps(INNER)}), MADRID, NOW)
    assert checked.ok and checked.start == datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)  # 10:00 CET = 09:00 UTC
    assert checked.values == {"name": "Ana López", "email": "ana@taller.es", "phone": "+34600111222", "notes": ""}


@pytest.mark.parametrize("fields, missing", [
    ({}, ("name", "email", "start")),
    ({"name": "Ana", "phone": "undefined"}, ("email", "start")),
    ({**ANA, "date": "2026-12-02"}, ("time",)),
    ({**ANA, "time": "10:00"}, ("date",)),
    ({"email": "sin email", "start": "2026-12-02T10:00"}, ("name", "email")),
])
def test_missing_required_fields_are_named(fields, missing):
    checked = validate(normalize(fields), MADRID, NOW)
    assert checked.missing == missing and not checked.ok


@pytest.mark.parametrize("fields, words", [
    ({**ANA, "email": "ana@", "start": "2026-12-02T10:00"}, ["email 'ana@'", "ask the customer"]),
    ({**ANA, "email": "ana taller.es", "start": "2026-12-02T10:00"}, ["email"]),
    ({**ANA, "phone": "12", "start": "2026-12-02T10:00"}, ["phone '12' is not a valid phone number for ES",
                                                           "ask for it again"]),
    ({**ANA, "name": "12345", "start": "2026-12-02T10:00"}, ["name '12345'"]),
    ({**ANA, "start": "whenever works"}, ["YYYY-MM-DDTHH:MM", "Europe/Madrid", "2026-12-01"]),
    ({**ANA, "date": "el día de mi cumple", "time": "10:00"}, ["date", "YYYY-MM-DD", "2026-12-01"]),
    ({**ANA, "date": "2026-12-02", "time": "25:00"}, ["time '25:00'", "HH:MM"]),
    ({**ANA, "start": "2027-03-28T02:30"}, ["does not exist in Europe/Madrid", "another time"]),
])
def test_problems_are_sentences_for_the_model(fields, words):
    checked = validate(normalize(fields), MADRID, NOW)
    said = " ".join(checked.problems)
    assert not checked.ok and all(word in said for word in words), said


@pytest.mark.parametrize("phone, schedule, e164", [
    ("600 111 222", MADRID, "+34600111222"), ("+351 912 345 678", MADRID, "+351912345678"),
    ("0034 600-111-222", MADRID, "+34600111222"), ("(212) 555-0123", NEW_YORK, "+12125550123"),
    ("11 91234-5678", SAO_PAULO, "+5511912345678"),
])
def test_phones_become_e164_with_the_schedule_country_by_default(phone, schedule, e164):
    assert validate({**ANA, "phone": phone, "start": "2026-12-02T10:00"}, schedule, NOW).values["phone"] == e164


@pytest.mark.parametrize("email, kept", [
    ("ANA@Taller.ES", "ANA@taller.es"), ("Ana <ana@taller.es>", "ana@taller.es"),
    ("mailto:ana@taller.es", "ana@taller.es"), ("ana @ taller.es", "ana@taller.es"),
    ("josé@correo.es", "josé@correo.es"),
])
def test_emails_are_read_strictly_with_the_domain_lower_cased(email, kept):
    assert validate({**ANA, "email": email, "start": "2026-12-02T10:00"}, MADRID, NOW).values["email"] == kept


@pytest.mark.parametrize("fields, schedule, utc", [
    ({"start": "2026-12-02T10:00"}, MADRID, datetime(2026, 12, 2, 9, 0)),           # winter: +01:00
    ({"start": "2027-06-02 10:00"}, MADRID, datetime(2027, 6, 2, 8, 0)),            # summer: +02:00
    ({"start": "2026-12-02T10:00:00+00:00"}, MADRID, datetime(2026, 12, 2, 10, 0)),  # an offset is kept
    ({"start": "2026-12-02T10:00Z"}, MADRID, datetime(2026, 12, 2, 10, 0)),
    ({"date": "2026-12-02", "time": "10:00"}, SAO_PAULO, datetime(2026, 12, 2, 13, 0)),
    ({"date": "2027-03-15", "time": "9:30"}, NEW_YORK, datetime(2027, 3, 15, 13, 30)),  # EDT from 14 March
    ({"date": "2027-03-12", "time": "9:30"}, NEW_YORK, datetime(2027, 3, 12, 14, 30)),  # EST before
    ({"start": "2026-10-25T02:30"}, MADRID, datetime(2026, 10, 25, 0, 30)),          # the autumn fold: first one
    ({"start": "mañana a las 5 de la tarde"}, MADRID, datetime(2026, 12, 2, 16, 0)),
    ({"date": "amanhã", "time": "15h"}, MADRID, datetime(2026, 12, 2, 14, 0)),
    ({"date": "next Friday", "time": "3 pm"}, NEW_YORK, datetime(2026, 12, 4, 20, 0)),
    ({"date": "2026-12-02T10:30"}, MADRID, datetime(2026, 12, 2, 9, 30)),            # a whole moment as the date
    ({"start": "15/12/2026 10:00"}, MADRID, datetime(2026, 12, 15, 9, 0)),
])
def test_the_start_is_read_in_the_business_zone_to_utc(fields, schedule, utc):
    checked = validate({**ANA, **fields}, schedule, NOW)
    assert checked.ok, checked.problems
    assert checked.start == utc.replace(tzinfo=timezone.utc)


def test_a_time_the_spring_change_skips_is_a_problem_in_every_zone():
    for schedule, start in ((MADRID, "2027-03-28T02:30"), (NEW_YORK, "2027-03-14T02:30"),
                            (Schedule("America/Santiago", WEEKLY, country="CL"), "2026-09-06T00:30")):
        checked = validate({**ANA, "start": start}, schedule, NOW)
        assert checked.start is None and schedule.timezone in checked.problems[0]


def test_a_past_start_is_no_problem_of_validate_and_the_message_states_today_in_the_zone():
    checked = validate({**ANA, "start": "2026-11-28T10:00"}, MADRID, NOW)
    assert checked.ok and checked.start < NOW  # the caller answers it with past_message
    assert past_message(date(2026, 11, 28), MADRID, NOW) == (
        "The booking date (2026-11-28) is in the past. Today in Europe/Madrid is 2026-12-01. The model probably "
        "reused an old date: ask the customer for a new date.")
    late = datetime(2026, 12, 1, 23, 30, tzinfo=timezone.utc)  # already 2 December in Madrid, still 1st in UTC
    assert "Today in Europe/Madrid is 2026-12-02" in past_message(date(2026, 12, 1), MADRID, late)
    assert "Hoy en Europe/Madrid es 2026-12-01" in past_message(date(2026, 11, 28), MADRID, NOW, "es")
    assert "Hoje em Europe/Madrid é 2026-12-01" in past_message(date(2026, 11, 28), MADRID, NOW, "pt")
    today = past_message(datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc), MADRID, NOW)
    assert "already passed" in today and "11:00 on 2026-12-01 in Europe/Madrid" in today


@PROPERTY
@given(raw=junk)
def test_validate_never_raises_on_junk(raw):
    checked = validate(normalize(raw), MADRID, NOW)
    assert checked.start is None or checked.start.tzinfo is not None
    assert all(isinstance(p, str) and p.endswith(".") for p in checked.problems)
    assert set(checked.missing) <= {"name", "email", "start", "date", "time"}


# -- read_day / read_time -----------------------------------------------------------------------------------------
@pytest.mark.parametrize("text, day", [
    ("mañana", date(2026, 12, 2)), ("Mañana", date(2026, 12, 2)), ("manana", date(2026, 12, 2)),
    ("pasado mañana", date(2026, 12, 3)), ("hoy", TUESDAY), ("esta tarde", TUESDAY),
    ("el martes", date(2026, 12, 8)),  # said on a Tuesday: the coming one, not today
    ("el jueves", date(2026, 12, 3)), ("el próximo lunes", date(2026, 12, 7)),
    ("el lunes que viene", date(2026, 12, 7)),
    ("el martes por la tarde", date(2026, 12, 8)), ("el viernes a las 10:00", date(2026, 12, 4)),
    ("amanhã", date(2026, 12, 2)), ("depois de amanhã", date(2026, 12, 3)), ("na terça", date(2026, 12, 8)),
    ("na quinta-feira", date(2026, 12, 3)), ("terça às 15h", date(2026, 12, 8)), ("no sábado", date(2026, 12, 5)),
    ("tomorrow", date(2026, 12, 2)), ("next Friday", date(2026, 12, 4)), ("on Saturday", date(2026, 12, 5)),
    ("15 de diciembre", date(2026, 12, 15)), ("15 de dezembro", date(2026, 12, 15)),
    ("December 15", date(2026, 12, 15)),
    ("el 15", date(2026, 12, 15)), ("el día 30", date(2026, 12, 30)), ("15 de enero", date(2027, 1, 15)),
    ("3/12", date(2026, 12, 3)), ("3.12", date(2026, 12, 3)), ("03/12/2026", date(2026, 12, 3)),
    ("3/1", date(2027, 1, 3)), ("2026-12-15", date(2026, 12, 15)), ("2026-12-15T10:00:00+01:00", date(2026, 12, 15)),
    ("la semana que viene", date(2026, 12, 7)), ("next week", date(2026, 12, 7)),
    ("30/11", date(2026, 11, 30)),        # yesterday, not next year: answered as a past date
    ("28 de noviembre de 2026", date(2026, 11, 28)),
])
def test_read_day_reads_es_pt_en_relative_to_today(text, day):
    assert read_day(text, TUESDAY) == day


def test_read_day_counts_today_for_a_date_without_its_year():
    saturday = date(2026, 12, 5)
    assert read_day("5 de diciembre", saturday) == saturday
    assert read_day("sábado 5 de diciembre", saturday) == saturday
    assert read_day("el 3", saturday) == date(2027, 1, 3)  # a day of the month alone: the next one
    assert read_day("29/2", date(2027, 12, 1)) == date(2028, 2, 29)
    assert read_day("mañana", datetime(2026, 12, 5, 23, 0)) == date(2026, 12, 6)  # a datetime counts as its day


@pytest.mark.parametrize("text", ["", "   ", "hola", "32/12", "31/02", "2026-02-30", "2026-13-01", "diciembre",
                                  "10:00", "a las 10", "¿?", "undefined", None, 20261215])
def test_read_day_answers_none_for_what_is_not_a_day(text):
    assert read_day(text, TUESDAY) is None


@pytest.mark.parametrize("text, at", [
    ("10:00", time(10)), ("9:30", time(9, 30)), ("10.30", time(10, 30)), ("10h", time(10)), ("15h30", time(15, 30)),
    ("10", time(10)), ("10:00:00", time(10)), ("3 pm", time(15)), ("3:30pm", time(15, 30)), ("12 am", time(0)),
    ("12 pm", time(12)), ("a las 10", time(10)), ("a las 5 de la tarde", time(17)), ("às 15h", time(15)),
    ("at 9 am", time(9)), ("10 de la mañana", time(10)),
])
def test_read_time(text, at):
    assert read_time(text) == at


@pytest.mark.parametrize("text", ["25:00", "10:75", "13 pm", "ten", "", "mañana", None, "10:00 y 11:00"])
def test_read_time_answers_none_for_what_is_not_a_time(text):
    assert read_time(text) is None


@PROPERTY
@given(text=st.text(max_size=120), days=st.integers(min_value=-3000, max_value=3000))
def test_read_day_never_raises(text, days):
    today = date.fromordinal(TUESDAY.toordinal() + days)
    found = read_day(text, today)
    assert found is None or isinstance(found, date)
    assert read_time(text) is None or isinstance(read_time(text), time)
