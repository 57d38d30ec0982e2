"""The e-mails a booking sends (confirmation, cancellation, reschedule) in Spanish, Portuguese and English.

Each function takes the booking row as stored (``code``, ``start_utc``, ``end_utc``, ``name``, ``email``) and the
business's :class:`~core.booking.schedule.Schedule`, and returns ``(subject, body)``: the day, the times and the
zone as the business's clock shows them (``zoneinfo``, DST included), and the code the customer quotes to change
or cancel. A language other than es/pt/en gets English.
"""
from __future__ import annotations

from core.booking.model import Slot, day_label, zone_label
from core.booking.schedule import Schedule

KINDS = ("confirmation", "cancellation", "reschedule")

_TEXT = {
    "es": {
        "hello": "Hola {name}:", "hello_anon": "Hola:", "with": " en {business}",
        "when": "{day}, de {start} a {end}, {zone}", "code": "Código de reserva: {code}",
        "confirmation": ("Cita confirmada: {label} ({code})",
                         "Tu cita{with} está confirmada.\n\nCuándo: {when}\n{code_line}\n\nSi necesitas cambiarla o "
                         "cancelarla, indícanos el código {code}.\nTe adjuntamos la invitación para tu calendario."),
        "cancellation": ("Cita cancelada: {label} ({code})",
                         "Tu cita{with} del {when} está cancelada.\n{code_line}\n\nSi quieres otra cita, escríbenos "
                         "y te ofreceremos las horas libres.\nLa invitación adjunta la quita de tu calendario."),
        "reschedule": ("Cita cambiada: {label} ({code})",
                       "Tu cita{with} ha cambiado de hora.\n\nAhora: {when}\n{before}{code_line}\n\nLa invitación "
                       "adjunta actualiza tu calendario."),
        "before": "Antes: {when}\n", "summary": "Cita", "summary_with": "Cita en {business}",
    },
    "pt": {
        "hello": "Olá, {name}.", "hello_anon": "Olá.", "with": " em {business}",
        "when": "{day}, das {start} às {end}, {zone}", "code": "Código do agendamento: {code}",
        "confirmation": ("Agendamento confirmado: {label} ({code})",
                         "O seu agendamento{with} está confirmado.\n\nQuando: {when}\n{code_line}\n\nSe precisar de "
                         "alterar ou cancelar, informe-nos o código {code}.\nSegue em anexo o convite para o seu "
                         "calendário."),
        "cancellation": ("Agendamento cancelado: {label} ({code})",
                         "O seu agendamento{with} de {when} foi cancelado.\n{code_line}\n\nSe quiser outro horário, "
                         "escreva-nos e indicaremos os horários livres.\nO convite em anexo remove-o do seu "
                         "calendário."),
        "reschedule": ("Agendamento alterado: {label} ({code})",
                       "O seu agendamento{with} mudou de horário.\n\nAgora: {when}\n{before}{code_line}\n\nO convite "
                       "em anexo atualiza o seu calendário."),
        "before": "Antes: {when}\n", "summary": "Agendamento", "summary_with": "Agendamento em {business}",
    },
    "en": {
        "hello": "Hello {name},", "hello_anon": "Hello,", "with": " with {business}",
        "when": "{day}, {start} to {end}, {zone}", "code": "Booking code: {code}",
        "confirmation": ("Appointment confirmed: {label} ({code})",
                         "Your appointment{with} is confirmed.\n\nWhen: {when}\n{code_line}\n\nTo change or cancel "
                         "it, give us the code {code}.\nThe invitation for your calendar is attached."),
        "cancellation": ("Appointment cancelled: {label} ({code})",
                         "Your appointment{with} on {when} is cancelled.\n{code_line}\n\nIf you would like another "
                         "appointment, write to us and we will offer you the free times.\nThe attached invitation "
                         "removes it from your calendar."),
        "reschedule": ("Appointment moved: {label} ({code})",
                       "Your appointment{with} has moved.\n\nNow: {when}\n{before}{code_line}\n\nThe attached "
                       "invitation updates your calendar."),
        "before": "Before: {when}\n", "summary": "Appointment", "summary_with": "Appointment with {business}",
    },
}


def language(lang: str | None) -> str:
    """es, pt or en (``"pt-BR"`` -> pt; anything else -> en)."""
    code = (lang or "").strip().lower()[:2]
    return code if code in _TEXT else "en"


def _one_line(value: object) -> str:
    return " ".join(str(value or "").split())


def _when(booking: dict, schedule: Schedule, lang: str) -> tuple[str, str]:
    """(the sentence "day, from - to (zone)", the subject's "day, HH:MM") in the business's zone."""
    slot = Slot.stored(booking["start_utc"], booking["end_utc"])
    start, end = slot.start.astimezone(schedule.zone), slot.end.astimezone(schedule.zone)
    when = _TEXT[lang]["when"].format(day=day_label(start.date(), lang), start=f"{start:%H:%M}", end=f"{end:%H:%M}",
                                      zone=zone_label(schedule.timezone, lang))
    return when, f"{day_label(start.date(), lang)}, {start:%H:%M}"


def _compose(kind: str, booking: dict, schedule: Schedule, lang: str | None, business: str,
             previous: dict | None = None) -> tuple[str, str]:
    lang = language(lang)
    text = _TEXT[lang]
    when, label = _when(booking, schedule, lang)
    code, name, business = _one_line(booking.get("code")), _one_line(booking.get("name")), _one_line(business)
    before = text["before"].format(when=_when(previous, schedule, lang)[0]) if previous else ""
    subject, body = text[kind]
    fields = {"label": label, "code": code, "when": when, "before": before,
              "with": text["with"].format(business=business) if business else "",
              "code_line": text["code"].format(code=code)}
    hello = text["hello"].format(name=name) if name else text["hello_anon"]
    signature = f"\n\n{business}" if business else ""
    return subject.format(**fields), f"{hello}\n\n{body.format(**fields)}{signature}\n"


def confirmation(booking: dict, schedule: Schedule, lang: str = "es", business: str = "") -> tuple[str, str]:
    """(subject, body) of the e-mail that confirms a new booking."""
    return _compose("confirmation", booking, schedule, lang, business)


def cancellation(booking: dict, schedule: Schedule, lang: str = "es", business: str = "") -> tuple[str, str]:
    """(subject, body) of the e-mail that says a booking is cancelled."""
    return _compose("cancellation", booking, schedule, lang, business)


def reschedule(booking: dict, schedule: Schedule, lang: str = "es", business: str = "",
               previous: dict | None = None) -> tuple[str, str]:
    """(subject, body) of the e-mail that gives a booking's new time; ``previous`` (the row's old ``start_utc`` and
    ``end_utc``) adds the time it had before."""
    return _compose("reschedule", booking, schedule, lang, business, previous)


def summary(lang: str = "es", business: str = "") -> str:
    """The invitation's title in the customer's calendar: "Cita en Taller Demo"."""
    text = _TEXT[language(lang)]
    business = _one_line(business)
    return text["summary_with"].format(business=business) if business else text["summary"]
