"""The outbox of booking e-mails against a real SMTP server (aiosmtpd on loopback): the message arrives in the
booking's language with its calendar invitation, retries back off on the store's clock and give up after five
attempts, no SMTP settings keep every message pending, TLS never falls back to plain text, tenants and roles are
kept apart. Also the COBERTURA_SMTP_* settings."""
from __future__ import annotations

import threading
from datetime import datetime, timedelta, timezone

import pytest
from icalendar import Calendar

from core.base.config import ConfigError, load_settings
from core.base.errors import PermissionDenied
from core.base.store import Store
from core.booking import mailer
from core.booking.model import BookingError
from core.booking.outbox import BACKOFF_MINUTES, MAX_ATTEMPTS, MessageNotFound, Outbox
from core.booking.schedule import DEMO_SCHEDULE
from core.runtime import open_runtime
from core.tenancy.context import local_customer, local_operator
from core.tenancy.tenants import create_tenant
from tests.booking.smtp_server import Inbox, Logins, attachment, certificate, server_tls, smtp_server, trusting
from tests.conftest import TEST_TUNING
from tests.fakes import HashEmbedder, MovableClock
from tests.servers import free_port

T0 = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
SENDER = "Taller Demo <citas@taller.example>"
# Wednesday 2 December 2026, 10:00-10:30 in Madrid (CET, UTC+1)
BOOKING = {"id": "bk_1", "code": "K7M2QX", "start_utc": "2026-12-02T09:00:00+00:00",
           "end_utc": "2026-12-02T09:30:00+00:00", "name": "Ana Pérez", "email": "ana@example.com"}


@pytest.fixture
def clock():
    return MovableClock(T0)


@pytest.fixture
def store(tmp_path, clock):
    store = Store(tmp_path / "cobertura.db", clock)
    create_tenant(store, "taller", "Taller Demo")
    create_tenant(store, "otro", "Otro")
    yield store
    store.close()


@pytest.fixture
def ctx(store):
    return local_operator(store, "taller")


def smtp_settings(tmp_path, port: int, **extra) -> object:
    env = {"COBERTURA_DATA_DIR": str(tmp_path / "data"), "COBERTURA_SMTP_HOST": "127.0.0.1",
           "COBERTURA_SMTP_PORT": str(port), "COBERTURA_SMTP_SECURITY": "none", "COBERTURA_SMTP_FROM": SENDER,
           "COBERTURA_SMTP_TIMEOUT": "5", **extra}
    return load_settings(env)


def no_smtp(tmp_path):
    return load_settings({"COBERTURA_DATA_DIR": str(tmp_path / "data")})


def text(message) -> str:
    return message.get_body(("plain",)).get_content().replace("\r\n", "\n")


def invitation(message) -> Calendar:
    return Calendar.from_ical(attachment(message).get_content())


# == delivery =================================================================================================
def test_confirmation_arrives_in_spanish_with_the_invitation(tmp_path, store, ctx):
    inbox = Inbox()
    with smtp_server(inbox) as port:
        row = Outbox(store, smtp_settings(tmp_path, port)).booking_message(ctx, "confirmation", BOOKING,
                                                                            DEMO_SCHEDULE, "es")
    assert row["status"] == "sent" and row["attempts"] == 1 and row["last_error"] == ""
    assert row["sent_at"] == "2026-12-01T10:00:00+00:00" and row["booking_id"] == "bk_1"
    assert inbox.envelopes == [("citas@taller.example", ["ana@example.com"])]
    message = inbox.messages[0]
    assert message["Subject"] == "Cita confirmada: miércoles 2 de diciembre, 10:00 (K7M2QX)"
    assert message["To"] == "ana@example.com" and message["From"] == SENDER
    assert message["Message-ID"] == f"<{row['id']}@taller.example>"
    body = text(message)
    assert body.startswith("Hola Ana Pérez:\n\nTu cita en Taller Demo está confirmada.")
    assert "Cuándo: miércoles 2 de diciembre, de 10:00 a 10:30, hora de Madrid (Europe/Madrid)" in body
    assert "Código de reserva: K7M2QX" in body
    part = attachment(message)
    assert part.get_param("method") == "REQUEST" and part.get_filename() == "invite.ics"
    calendar = invitation(message)
    assert calendar["METHOD"] == "REQUEST"
    event = calendar.walk("VEVENT")[0]
    assert event.decoded("DTSTART").astimezone(timezone.utc) == datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
    assert event.decoded("DTEND").astimezone(timezone.utc) == datetime(2026, 12, 2, 9, 30, tzinfo=timezone.utc)
    assert event["DTSTART"].params["TZID"] == "Europe/Madrid"
    assert str(event["UID"]) == "booking-bk_1@cobertura" and int(event["SEQUENCE"]) == 0
    assert str(event["SUMMARY"]) == "Cita en Taller Demo"
    assert str(event["ORGANIZER"]) == "mailto:citas@taller.example"
    assert str(event["ATTENDEE"]) == "mailto:ana@example.com" and event["ATTENDEE"].params["CN"] == "Ana Pérez"
    assert [tz["TZID"] for tz in calendar.walk("VTIMEZONE")] == ["Europe/Madrid"]


def test_cancellation_and_reschedule_update_the_same_calendar_event(tmp_path, store, ctx):
    inbox = Inbox()
    moved = {**BOOKING, "start_utc": "2026-12-03T15:00:00+00:00", "end_utc": "2026-12-03T15:30:00+00:00"}
    with smtp_server(inbox) as port:
        outbox = Outbox(store, smtp_settings(tmp_path, port))
        outbox.booking_message(ctx, "confirmation", BOOKING, DEMO_SCHEDULE, "en")
        outbox.booking_message(ctx, "reschedule", moved, DEMO_SCHEDULE, "en", previous=BOOKING)
        outbox.booking_message(ctx, "cancellation", moved, DEMO_SCHEDULE, "en")
    first, second, third = inbox.messages
    assert second["Subject"] == "Appointment moved: Thursday 3 December, 16:00 (K7M2QX)"
    body = text(second)
    assert "Now: Thursday 3 December, 16:00 to 16:30, Madrid time (Europe/Madrid)" in body
    assert "Before: Wednesday 2 December, 10:00 to 10:30, Madrid time (Europe/Madrid)" in body
    assert third["Subject"] == "Appointment cancelled: Thursday 3 December, 16:00 (K7M2QX)"
    assert attachment(third).get_param("method") == "CANCEL" and attachment(third).get_filename() == "cancel.ics"
    events = [invitation(m).walk("VEVENT")[0] for m in inbox.messages]
    assert {str(e["UID"]) for e in events} == {"booking-bk_1@cobertura"}
    assert [int(e["SEQUENCE"]) for e in events] == [0, 1, 2]
    assert [str(e["STATUS"]) for e in events] == ["CONFIRMED", "CONFIRMED", "CANCELLED"]
    assert events[1].decoded("DTSTART").astimezone(timezone.utc) == datetime(2026, 12, 3, 15, tzinfo=timezone.utc)


def test_a_booking_without_an_email_sends_nothing(tmp_path, store, ctx):
    outbox = Outbox(store, no_smtp(tmp_path))
    assert outbox.booking_message(ctx, "confirmation", {**BOOKING, "email": ""}, DEMO_SCHEDULE) is None
    assert outbox.list(ctx) == []


def test_a_refusing_server_is_retried_with_backoff_then_failed_after_five_attempts(tmp_path, store, ctx, clock):
    inbox = Inbox(refuse=True)
    with smtp_server(inbox) as port:
        outbox = Outbox(store, smtp_settings(tmp_path, port))
        row = outbox.booking_message(ctx, "confirmation", BOOKING, DEMO_SCHEDULE, "es")
        assert row["status"] == "pending" and row["attempts"] == 1 and inbox.attempts == 1
        assert "refused the message (554 5.7.1 Message refused by policy)" in row["last_error"]
        for attempt, wait in enumerate(BACKOFF_MINUTES, start=1):
            row = outbox.message(ctx, row["id"])
            assert row["next_attempt_at"] == (clock.now() + timedelta(minutes=wait)).isoformat()
            clock.advance(minutes=wait, seconds=-1)
            assert outbox.deliver_due(ctx)["retrying"] == 0 and inbox.attempts == attempt  # not due yet
            clock.advance(seconds=1)
            result = outbox.deliver_due(ctx)
            assert inbox.attempts == attempt + 1
        assert result == {**result, "failed": 1, "retrying": 0, "sent": 0, "pending": 0}
        failed = outbox.failures(ctx)
        assert [f["id"] for f in failed] == [row["id"]]
        assert failed[0]["attempts"] == MAX_ATTEMPTS and failed[0]["status"] == "failed"
        assert "554" in failed[0]["last_error"]
        clock.advance(days=3)
        outbox.deliver_due(ctx)
        assert inbox.attempts == MAX_ATTEMPTS  # a failed message waits for a person
        inbox.refuse = False
        again = outbox.retry(ctx, row["id"])
    assert again["status"] == "sent" and again["attempts"] == 1 and again["last_error"] == ""
    assert outbox.failures(ctx) == [] and len(inbox.messages) == 1
    assert inbox.messages[0]["Message-ID"] == f"<{row['id']}@taller.example>"  # the same message, retried
    with pytest.raises(BookingError, match="already sent"):
        outbox.retry(ctx, row["id"])


def test_without_smtp_settings_messages_wait_pending_and_go_out_once_configured(tmp_path, store, ctx, clock):
    outbox = Outbox(store, no_smtp(tmp_path))
    row = outbox.booking_message(ctx, "confirmation", BOOKING, DEMO_SCHEDULE, "pt")
    assert row["status"] == "pending" and row["attempts"] == 0
    assert row["last_error"].startswith("SMTP is not configured (set COBERTURA_SMTP_HOST")
    for _ in range(10):
        clock.advance(days=1)
        result = outbox.deliver_due(ctx)
    assert result["configured"] is False and result["pending"] == 1 and result["failed"] == 0
    assert "COBERTURA_SMTP_HOST" in result["error"]
    assert outbox.message(ctx, row["id"])["attempts"] == 0 and outbox.failures(ctx) == []
    inbox = Inbox()
    with smtp_server(inbox) as port:
        result = Outbox(store, smtp_settings(tmp_path, port)).deliver_due(ctx)
    assert result["sent"] == 1 and result["pending"] == 0
    assert inbox.messages[0]["Subject"] == "Agendamento confirmado: quarta-feira, 2 de dezembro, 10:00 (K7M2QX)"
    assert outbox.message(ctx, row["id"])["status"] == "sent"


def test_an_unreachable_server_ends_the_round_and_keeps_the_rest_untouched(tmp_path, store, ctx):
    port = free_port()  # nothing listens there
    outbox = Outbox(store, smtp_settings(tmp_path, port))
    first = outbox.enqueue(ctx, "confirmation", "ana@example.com", "Cita confirmada", "Hola")
    second = outbox.enqueue(ctx, "confirmation", "luis@example.com", "Cita confirmada", "Hola")
    result = outbox.deliver_due(ctx)
    assert result["retrying"] == 1 and result["pending"] == 2
    assert result["error"] == (f"Could not reach the SMTP server 127.0.0.1:{port} (Connection refused): check "
                               "COBERTURA_SMTP_HOST and COBERTURA_SMTP_PORT.")
    assert outbox.message(ctx, first["id"])["attempts"] == 1
    untouched = outbox.message(ctx, second["id"])
    assert untouched["attempts"] == 0 and untouched["next_attempt_at"] == second["next_attempt_at"]


def test_two_deliverers_at_once_send_each_message_once(tmp_path, store, ctx):
    inbox = Inbox(delay=0.3)
    with smtp_server(inbox) as port:
        settings = smtp_settings(tmp_path, port)
        for n in range(4):
            Outbox(store, settings).enqueue(ctx, "confirmation", f"c{n}@example.com", f"Cita {n}", "Hola")
        results = []
        threads = [threading.Thread(target=lambda: results.append(Outbox(store, settings).deliver_due(ctx)))
                   for _ in range(2)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert sorted(m["Subject"] for m in inbox.messages) == ["Cita 0", "Cita 1", "Cita 2", "Cita 3"]
    assert sum(r["sent"] for r in results) == 4


# == TLS and login ============================================================================================
def test_starttls_is_required_when_configured_and_never_falls_back(tmp_path, store, ctx):
    inbox = Inbox()
    with smtp_server(inbox) as port:  # a server that offers no STARTTLS
        outbox = Outbox(store, smtp_settings(tmp_path, port, COBERTURA_SMTP_SECURITY="starttls"))
        row = outbox.enqueue(ctx, "confirmation", "ana@example.com", "Cita confirmada", "Hola")
        outbox.deliver_due(ctx)
    assert inbox.attempts == 0 and inbox.messages == []
    last_error = outbox.message(ctx, row["id"])["last_error"]
    assert "STARTTLS extension not supported by server" in last_error and "nothing was sent in plain text" in last_error


def test_starttls_with_login_and_a_wrong_password(tmp_path, store, ctx, monkeypatch):
    cert, key = certificate(tmp_path)
    monkeypatch.setattr(mailer, "tls_context", lambda: trusting(cert))
    inbox = Inbox()
    with smtp_server(inbox, tls_context=server_tls(cert, key), require_starttls=True,
                     authenticator=Logins("citas", "s3cret"), auth_require_tls=True) as port:
        good = Outbox(store, smtp_settings(tmp_path, port, COBERTURA_SMTP_SECURITY="starttls",
                                           COBERTURA_SMTP_USER="citas", COBERTURA_SMTP_PASSWORD="s3cret"))
        sent = good.booking_message(ctx, "confirmation", BOOKING, DEMO_SCHEDULE, "es")
        bad = Outbox(store, smtp_settings(tmp_path, port, COBERTURA_SMTP_SECURITY="starttls",
                                          COBERTURA_SMTP_USER="citas", COBERTURA_SMTP_PASSWORD="wrong"))
        refused = bad.booking_message(ctx, "cancellation", BOOKING, DEMO_SCHEDULE, "es")
    assert sent["status"] == "sent" and len(inbox.messages) == 1
    assert refused["status"] == "pending" and "refused the login (535" in refused["last_error"]
    assert "check COBERTURA_SMTP_USER and COBERTURA_SMTP_PASSWORD" in refused["last_error"]
    assert "wrong" not in refused["last_error"]


def test_implicit_tls(tmp_path, store, ctx, monkeypatch):
    cert, key = certificate(tmp_path)
    monkeypatch.setattr(mailer, "tls_context", lambda: trusting(cert))
    inbox = Inbox()
    with smtp_server(inbox, ssl_context=server_tls(cert, key)) as port:
        row = Outbox(store, smtp_settings(tmp_path, port, COBERTURA_SMTP_SECURITY="ssl")).booking_message(
            ctx, "confirmation", BOOKING, DEMO_SCHEDULE, "en")
    assert row["status"] == "sent" and inbox.messages[0]["Subject"].startswith("Appointment confirmed:")


def test_an_untrusted_certificate_is_refused(tmp_path, store, ctx):
    cert, key = certificate(tmp_path)
    inbox = Inbox()
    with smtp_server(inbox, ssl_context=server_tls(cert, key)) as port:
        row = Outbox(store, smtp_settings(tmp_path, port, COBERTURA_SMTP_SECURITY="ssl")).booking_message(
            ctx, "confirmation", BOOKING, DEMO_SCHEDULE, "en")
    assert row["status"] == "pending" and inbox.attempts == 0
    assert "The TLS connection to 127.0.0.1" in row["last_error"] and "CERTIFICATE_VERIFY_FAILED" in row["last_error"]


# == tenants, roles, input ====================================================================================
def test_tenants_and_roles_are_kept_apart(tmp_path, store, ctx):
    outbox = Outbox(store, no_smtp(tmp_path))
    row = outbox.enqueue(ctx, "confirmation", "ana@example.com", "Cita confirmada", "Hola")
    other = local_operator(store, "otro")
    assert outbox.list(other) == [] and [r["id"] for r in outbox.list(ctx)] == [row["id"]]
    with pytest.raises(MessageNotFound) as foreign:
        outbox.retry(other, row["id"])
    with pytest.raises(MessageNotFound) as unknown:
        outbox.retry(other, "msg_0000000000000000")
    assert str(foreign.value).replace(row["id"], "ID") == str(unknown.value).replace("msg_0000000000000000", "ID")
    customer = local_customer(store, "taller", "cliente-1")
    for call in (lambda: outbox.list(customer), lambda: outbox.failures(customer),
                 lambda: outbox.retry(customer, row["id"])):
        with pytest.raises(PermissionDenied):
            call()
    # a customer's booking still queues its own confirmation
    assert outbox.booking_message(customer, "confirmation", BOOKING, DEMO_SCHEDULE)["status"] == "pending"
    with pytest.raises(BookingError, match="pending, sent, failed"):
        outbox.list(ctx, "lost")


@pytest.mark.parametrize("recipient", ["", "ana", "ana@", "@example.com", "ana@example.com\r\nBcc: x@evil.example",
                                       "ana@example.com, luis@example.com", "ana @example.com"])
def test_a_bad_recipient_is_refused(tmp_path, store, ctx, recipient):
    with pytest.raises(BookingError, match="not an e-mail address"):
        Outbox(store, no_smtp(tmp_path)).enqueue(ctx, "confirmation", recipient, "Cita", "Hola")


def test_a_named_recipient_and_an_unknown_kind(tmp_path, store, ctx):
    outbox = Outbox(store, no_smtp(tmp_path))
    row = outbox.enqueue(ctx, "reschedule", '"Pérez, Ana" <ana@example.com>', "Cita\ncambiada", "Hola")
    assert row["subject"] == "Cita cambiada" and row["recipient"] == '"Pérez, Ana" <ana@example.com>'
    with pytest.raises(BookingError, match="confirmation, cancellation, reschedule"):
        outbox.enqueue(ctx, "reminder", "ana@example.com", "Cita", "Hola")


# == settings =================================================================================================
def test_smtp_settings_defaults(tmp_path):
    base = {"COBERTURA_DATA_DIR": str(tmp_path)}
    unset = load_settings(base)
    assert unset.smtp_host == "" and not mailer.configured(unset)
    plain = load_settings({**base, "COBERTURA_SMTP_HOST": "smtp.example.com", "COBERTURA_SMTP_FROM": SENDER})
    assert (plain.smtp_port, plain.smtp_security, plain.smtp_timeout) == (587, "starttls", 10.0)
    assert mailer.configured(plain)
    ssl_mode = load_settings({**base, "COBERTURA_SMTP_HOST": "smtp.example.com", "COBERTURA_SMTP_SECURITY": "SSL",
                              "COBERTURA_SMTP_USER": "citas@example.com", "COBERTURA_SMTP_PASSWORD": "x"})
    assert (ssl_mode.smtp_port, ssl_mode.smtp_security, ssl_mode.smtp_from) == (465, "ssl", "citas@example.com")
    assert ssl_mode.smtp_password == "x" and "smtp_password" not in repr(ssl_mode)  # kept out of logs


@pytest.mark.parametrize("env, message", [
    ({"COBERTURA_SMTP_SECURITY": "tls"}, "COBERTURA_SMTP_SECURITY must be starttls .default., ssl or none, not 'tls'"),
    ({"COBERTURA_SMTP_PORT": "smtp"}, "COBERTURA_SMTP_PORT must be a port number from 1 to 65535, not 'smtp'"),
    ({"COBERTURA_SMTP_PORT": "70000"}, "COBERTURA_SMTP_PORT must be a port number"),
    ({"COBERTURA_SMTP_HOST": "smtp.example.com:587"}, "give the port in COBERTURA_SMTP_PORT"),
    ({"COBERTURA_SMTP_HOST": "smtp://smtp.example.com"}, "must be a host name or address"),
    ({"COBERTURA_SMTP_TIMEOUT": "0"}, "COBERTURA_SMTP_TIMEOUT must be seconds from 1 to 300, not '0'"),
    ({"COBERTURA_SMTP_USER": "citas"}, "COBERTURA_SMTP_USER and COBERTURA_SMTP_PASSWORD go together"),
    ({"COBERTURA_SMTP_FROM": "citas"}, "COBERTURA_SMTP_FROM must be an e-mail address"),
    ({"COBERTURA_SMTP_FROM": "a@x.example, b@x.example"}, "COBERTURA_SMTP_FROM must be an e-mail address"),
    ({"COBERTURA_SMTP_FROM": ""}, "COBERTURA_SMTP_HOST is set but not COBERTURA_SMTP_FROM"),
    ({"COBERTURA_SMTP_SECURITY": "none", "COBERTURA_SMTP_USER": "citas", "COBERTURA_SMTP_PASSWORD": "x"},
     "would send COBERTURA_SMTP_PASSWORD unencrypted to smtp.example.com"),
])
def test_bad_smtp_settings_say_what_to_do(tmp_path, env, message):
    base = {"COBERTURA_DATA_DIR": str(tmp_path), "COBERTURA_SMTP_HOST": "smtp.example.com",
            "COBERTURA_SMTP_FROM": SENDER}
    with pytest.raises(ConfigError, match=message):
        load_settings({**base, **env})


# == through the booking service ==============================================================================
def test_a_booking_made_through_the_service_mails_its_confirmation_and_its_cancellation(tmp_path, clock):
    inbox = Inbox()
    with smtp_server(inbox) as port:
        rt = open_runtime(smtp_settings(tmp_path, port), embedder=HashEmbedder(), tuning=TEST_TUNING, clock=clock)
        try:
            create_tenant(rt.store, "taller", "Taller Demo")
            ctx = local_operator(rt.store, "taller")
            rt.booking.save_schedule(ctx, DEMO_SCHEDULE)
            result = rt.booking.create(ctx, {"nombre": "Ana Pérez", "correo": "ana@example.com",
                                             "start": "2026-12-02T10:00"}, lang="es")
            assert result.ok, result.message
            code = result.booking["code"]
            rt.booking.cancel(ctx, code)
            rows = rt.booking.outbox.list(ctx)
        finally:
            rt.close()
    assert [(r["kind"], r["status"]) for r in rows] == [("cancellation", "sent"), ("confirmation", "sent")]
    confirmation, cancellation = inbox.messages
    assert confirmation["Subject"] == f"Cita confirmada: miércoles 2 de diciembre, 10:00 ({code})"
    event = invitation(confirmation).walk("VEVENT")[0]
    assert event.decoded("DTSTART").astimezone(timezone.utc) == datetime(2026, 12, 2, 9, 0, tzinfo=timezone.utc)
    assert invitation(cancellation)["METHOD"] == "CANCEL"
    assert str(invitation(cancellation).walk("VEVENT")[0]["UID"]) == str(event["UID"])


def test_deliver_all_runs_a_round_for_every_tenant(tmp_path, store):
    inbox = Inbox()
    with smtp_server(inbox) as port:
        outbox = Outbox(store, smtp_settings(tmp_path, port))
        for slug in ("taller", "otro"):
            outbox.enqueue(local_operator(store, slug), "confirmation", f"{slug}@example.com", "Cita", "Hola")
        create_tenant(store, "vacio", "Vacío")
        result = outbox.deliver_all()
    assert sorted(result) == ["otro", "taller"] and all(r["sent"] == 1 for r in result.values())
    assert sorted(rcpts[0] for _, rcpts in inbox.envelopes) == ["otro@example.com", "taller@example.com"]
