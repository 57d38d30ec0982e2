"""The booking e-mails' texts (core/booking/messages.py): es/pt/en, the business's zone read from zoneinfo (DST
included), the code, no name or business handled, other languages in English."""
from __future__ import annotations

import pytest

from core.booking import messages
from core.booking.model import zone_label
from core.booking.schedule import DEMO_SCHEDULE, Schedule

BOOKING = {"id": "bk_1", "code": "K7M2QX", "start_utc": "2026-12-02T09:00:00+00:00",
           "end_utc": "2026-12-02T09:30:00+00:00", "name": "Ana Pérez", "email": "ana@example.com"}
MOVED = {**BOOKING, "start_utc": "2026-12-03T15:00:00+00:00", "end_utc": "2026-12-03T15:30:00+00:00"}


def schedule(zone: str) -> Schedule:
    return Schedule.from_dict({"timezone": zone, "weekly": {"mon": [["09:00", "18:00"]]}})


def test_spanish():
    subject, body = messages.confirmation(BOOKING, DEMO_SCHEDULE, "es", "Taller Demo")
    assert subject == "Cita confirmada: miércoles 2 de diciembre, 10:00 (K7M2QX)"
    assert body == ("Hola Ana Pérez:\n\nTu cita en Taller Demo está confirmada.\n\n"
                    "Cuándo: miércoles 2 de diciembre, de 10:00 a 10:30, hora de Madrid (Europe/Madrid)\n"
                    "Código de reserva: K7M2QX\n\nSi necesitas cambiarla o cancelarla, indícanos el código K7M2QX.\n"
                    "Te adjuntamos la invitación para tu calendario.\n\nTaller Demo\n")
    subject, body = messages.cancellation(BOOKING, DEMO_SCHEDULE, "es", "Taller Demo")
    assert subject == "Cita cancelada: miércoles 2 de diciembre, 10:00 (K7M2QX)"
    assert "Tu cita en Taller Demo del miércoles 2 de diciembre, de 10:00 a 10:30, hora de Madrid (Europe/Madrid) " \
           "está cancelada." in body
    subject, body = messages.reschedule(MOVED, DEMO_SCHEDULE, "es", "Taller Demo", previous=BOOKING)
    assert subject == "Cita cambiada: jueves 3 de diciembre, 16:00 (K7M2QX)"
    assert "Ahora: jueves 3 de diciembre, de 16:00 a 16:30, hora de Madrid (Europe/Madrid)\n" \
           "Antes: miércoles 2 de diciembre, de 10:00 a 10:30, hora de Madrid (Europe/Madrid)\n" in body


def test_portuguese_in_sao_paulo():
    sao_paulo = schedule("America/Sao_Paulo")
    subject, body = messages.confirmation(BOOKING, sao_paulo, "pt-BR", "Oficina")
    assert subject == "Agendamento confirmado: quarta-feira, 2 de dezembro, 06:00 (K7M2QX)"
    assert body.startswith("Olá, Ana Pérez.\n\nO seu agendamento em Oficina está confirmado.\n\n"
                           "Quando: quarta-feira, 2 de dezembro, das 06:00 às 06:30, "
                           f"{zone_label('America/Sao_Paulo', 'pt')}\nCódigo do agendamento: K7M2QX\n")
    assert messages.cancellation(BOOKING, sao_paulo, "pt")[0].startswith("Agendamento cancelado: ")
    assert "Agora: quinta-feira, 3 de dezembro, das 12:00 às 12:30" in messages.reschedule(MOVED, sao_paulo, "pt")[1]


def test_english_and_the_clock_change_in_new_york():
    new_york = schedule("America/New_York")
    winter = messages.confirmation(BOOKING, new_york, "en")  # EST: UTC-5
    summer = messages.confirmation({**BOOKING, "start_utc": "2027-07-01T09:00:00+00:00",
                                    "end_utc": "2027-07-01T09:30:00+00:00"}, new_york, "en")  # EDT: UTC-4
    assert winter[0] == "Appointment confirmed: Wednesday 2 December, 04:00 (K7M2QX)"
    assert summer[0] == "Appointment confirmed: Thursday 1 July, 05:00 (K7M2QX)"
    assert "When: Wednesday 2 December, 04:00 to 04:30, New York time (America/New_York)\nBooking code: K7M2QX" \
        in winter[1]
    assert winter[1].startswith("Hello Ana Pérez,\n\nYour appointment is confirmed.")  # no business name given


@pytest.mark.parametrize("lang, greeting", [("es", "Hola:"), ("pt", "Olá."), ("en", "Hello,"), ("fr", "Hello,"),
                                            ("", "Hello,"), (None, "Hello,")])
def test_no_name_and_unknown_languages(lang, greeting):
    subject, body = messages.confirmation({**BOOKING, "name": "  "}, DEMO_SCHEDULE, lang)
    assert body.startswith(greeting + "\n\n") and "K7M2QX" in subject


def test_a_name_cannot_break_the_text():
    _, body = messages.confirmation({**BOOKING, "name": "Ana\r\nBcc: x {code} {when}"}, DEMO_SCHEDULE, "es",
                                    "Taller {with}\nDemo")
    assert body.startswith("Hola Ana Bcc: x {code} {when}:\n\nTu cita en Taller {with} Demo está confirmada.")


@pytest.mark.parametrize("lang, title", [("es", "Cita en Taller Demo"), ("pt", "Agendamento em Taller Demo"),
                                         ("en", "Appointment with Taller Demo")])
def test_invitation_title(lang, title):
    assert messages.summary(lang, "Taller Demo") == title
    assert messages.summary(lang) == title.split(" ")[0]
